package sqlite

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/freshbench/freshbench/target"
)

func openURL(t *testing.T, raw string, set map[string]string) (target.Target, error) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := Open(context.Background(), u, target.Options{Settings: set})
	if err == nil {
		t.Cleanup(func() { tgt.Close() })
	}
	return tgt, err
}

// TestSettings checks the table given by the URL or the setting (never
// both, differently), a bad value as a bad setting, and the effective
// settings with their defaults.
func TestSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	tgt, err := openURL(t, "sqlite://"+path, map[string]string{"table": "via_set", "synchronous": "full"})
	if err != nil {
		t.Fatal(err)
	}
	if got := tgt.(target.Describer).Settings(); got["table"] != "via_set" || got["synchronous"] != "FULL" {
		t.Errorf("effective settings %v, want table via_set, synchronous FULL", got)
	}
	if _, err := openURL(t, "sqlite://"+path+"?table=via_url", map[string]string{"table": "via_set"}); !errors.Is(err, target.ErrBadURL) {
		t.Errorf("table via_url in the URL and via_set in the settings: err = %v, want one wrapping ErrBadURL", err)
	}
	if _, err := openURL(t, "sqlite://"+path, map[string]string{"synchronous": "sometimes"}); !errors.Is(err, target.ErrBadSetting) {
		t.Errorf("synchronous=sometimes: err = %v, want one wrapping ErrBadSetting", err)
	}
	tgt, err = openURL(t, "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := tgt.(target.Describer).Settings()
	for _, k := range knobs() {
		if got[k.Name] != k.Default {
			t.Errorf("effective %s = %q, want its default %q", k.Name, got[k.Name], k.Default)
		}
	}
}
