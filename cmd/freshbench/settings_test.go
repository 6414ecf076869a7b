package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/target/all"
)

// TestBadSettingExitsTwo checks that a setting the user can fix, unknown
// or with a bad value, is a usage error (exit 2) naming the setting.
func TestBadSettingExitsTwo(t *testing.T) {
	for _, c := range []struct {
		set, want string
	}{
		{"capacity=abc", `capacity="abc"`},
		{"capacty=10", `"capacty"`},
	} {
		wantUsageError(t, []string{"run", "--target", "sim://", "--set", c.set, "--duration", "2s", "--warmup", "1s"}, c.want)
	}
	wantUsageError(t, []string{"run", "--target", "sim://?capacity=10", "--set", "capacity=20", "--duration", "2s", "--warmup", "1s"},
		`capacity="10" in the URL but "20" in the settings`)
}

// TestSettingsHelp checks that -h lists every setting of every target.
func TestSettingsHelp(t *testing.T) {
	_, _, stderr := freshbench(t, "run", "-h")
	for _, d := range all.Registry().Drivers() {
		for _, k := range d.Knobs {
			if !strings.Contains(stderr, "  "+k.Name+" (default ") || !strings.Contains(stderr, k.Help) {
				t.Errorf("run -h does not describe %s setting %s", d.Name, k.Name)
			}
		}
	}
}

// TestMappingMismatchExitsTwo checks that an index the mapping setting
// cannot use is bad input: the query workload with mapping=dynamic, and
// a run with mapping=dynamic on an index made with freshbench's mapping.
func TestMappingMismatchExitsTwo(t *testing.T) {
	t.Parallel() // a server, index, topic or data directory of its own; no rate or latency asserted
	host := serverHost(t, "FRESHBENCH_TEST_ELASTICSEARCH_URL")
	if host == "" {
		testenv.Unavailable(t, "FRESHBENCH_TEST_ELASTICSEARCH_URL is not set: start a server with `scripts/elasticsearch.sh start`")
	}
	idx := fmt.Sprintf("fb-cmd-mapping-%d", time.Now().UnixNano())
	raw := "elasticsearch://" + host + "/" + idx
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, "http://"+host+"/"+idx, nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	})
	wantUsageError(t, []string{"query", "--target", raw, "--recreate", "--set", "mapping=dynamic", "--qps", "5", "--duration", "2s", "--warmup", "0s"},
		"the query workload needs freshbench's mapping")
	// Now an index with freshbench's mapping, and its fields mapped.
	// Its requests may take their time: a starved server took over 30 s
	// (the default bound) to create an index.
	if code, _, stderr := freshbench(t, shortRun("--target", raw, "--recreate", "--write-timeout", "2m", "--rate", "100", "--quiet", "--out", filepath.Join(t.TempDir(), "r.json"))...); code != 0 {
		t.Fatalf("run with freshbench's mapping: exit %d: %s", code, stderr)
	}
	wantUsageError(t, shortRun("--target", raw, "--set", "mapping=dynamic"), "set mapping=freshbench, the mapping it was created with")
}
