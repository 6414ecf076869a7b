package questdb

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/target"
)

// Settings that QuestDB cannot honour together are refused before
// connecting, naming the fix; the URL's ports and credentials reach the
// clients, and a password never reaches a message.
func TestParseConfig(t *testing.T) {
	for _, c := range []struct {
		url      string
		settings map[string]string
		want     string // "" when it parses
	}{
		{"questdb://127.0.0.1:8812/qdb", nil, ""},
		{"questdb://127.0.0.1/qdb?wal=false&ilp_transport=tcp&partition_by=none", nil, ""},
		{"questdb://127.0.0.1/qdb?wal=false", nil, "set ilp_transport=tcp"},
		{"questdb://127.0.0.1/qdb", map[string]string{"partition_by": "NONE"}, "must be partitioned"},
		{"questdb://127.0.0.1/qdb?http_port=0", nil, "want a port"},
		{"questdb://u:secret@127.0.0.1/qdb?table=x&bogus=1", nil, `query parameter "bogus"`},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseConfig(u, target.Options{Settings: c.settings})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %v: %v", c.url, c.settings, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %v: err = %v, want one saying %q", c.url, c.settings, err, c.want)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("%s: the password is in the message %q", c.url, err)
		case err != nil && !errors.Is(err, target.ErrBadSetting) && !errors.Is(err, target.ErrBadURL):
			t.Errorf("%s: err = %v, want a bad setting or URL", c.url, err)
		}
	}
	u, _ := url.Parse("questdb://bench:pw@127.0.0.2:18812/qdb?http_port=19900&tcp_port=19909&ilp_transport=tcp")
	cfg, err := parseConfig(u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cc := cfg.pool.ConnConfig
	if cfg.httpAddr != "127.0.0.2:19900" || cfg.tcpAddr != "127.0.0.2:19909" || cc.Host != "127.0.0.2" || cc.Port != 18812 ||
		cc.User != "bench" || cc.Password != "pw" || cfg.transport != transportTCP {
		t.Errorf("config: http %s, tcp %s, pg %s@%s:%d, transport %s", cfg.httpAddr, cfg.tcpAddr, cc.User, cc.Host, cc.Port, cfg.transport)
	}
	u, _ = url.Parse("questdb://127.0.0.1/qdb")
	cfg, _ = parseConfig(u, target.Options{})
	if cc := cfg.pool.ConnConfig; cc.User != defaultUser || cc.Password != defaultPassword || cc.Port != 8812 {
		t.Errorf("without credentials or port: %s:%s port %d, want QuestDB's defaults", cc.User, cc.Password, cc.Port)
	}
}
