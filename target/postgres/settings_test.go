package postgres

import (
	"errors"
	"net/url"
	"testing"

	"github.com/freshbench/freshbench/target"
)

// TestTableSetting checks that the table can be named by the setting as
// well as by the URL, and that the two never disagree silently.
func TestTableSetting(t *testing.T) {
	u, _ := url.Parse("postgres://u@127.0.0.1:1/db")
	cfg, err := parseConfig(u, target.Options{Settings: map[string]string{"table": "via_set"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.table != "via_set" {
		t.Errorf("table = %q with the setting table=via_set, want via_set", cfg.table)
	}
	if got := newStore(nil, cfg).Settings()["table"]; got != "via_set" {
		t.Errorf("effective setting table = %q, want via_set", got)
	}

	u, _ = url.Parse("postgres://u@127.0.0.1:1/db?table=via_url")
	if _, err := parseConfig(u, target.Options{Settings: map[string]string{"table": "via_set"}}); !errors.Is(err, target.ErrBadURL) {
		t.Errorf("table=via_url in the URL and table=via_set in the settings: err = %v, want one wrapping ErrBadURL", err)
	}
	cfg, err = parseConfig(u, target.Options{Settings: map[string]string{"table": "via_url"}})
	if err != nil || cfg.table != "via_url" {
		t.Errorf("the same table in both places: table %q, err %v", cfg.table, err)
	}
}

// TestBadSettingValues checks that a value a knob cannot parse is an error
// wrapping target.ErrBadSetting, so that the command exits 2.
func TestBadSettingValues(t *testing.T) {
	u, _ := url.Parse("postgres://u@127.0.0.1:1/db")
	for k, v := range map[string]string{
		"max_conns": "abc", "write_method": "bulk", "gin": "maybe", "unlogged": "perhaps",
		"table": "bad-name", "synchronous_commit": "sometimes",
	} {
		_, err := parseConfig(u, target.Options{Settings: map[string]string{k: v}})
		if !errors.Is(err, target.ErrBadSetting) {
			t.Errorf("%s=%s: err = %v, want one wrapping ErrBadSetting", k, v, err)
		}
	}
}

// TestEffectiveSettings checks the settings a results file records when
// none is given: every knob, with its default.
func TestEffectiveSettings(t *testing.T) {
	u, _ := url.Parse("postgres://u@127.0.0.1:1/db")
	cfg, err := parseConfig(u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := newStore(nil, cfg).Settings()
	for _, k := range knobs() {
		if v, ok := got[k.Name]; !ok || v != k.Default {
			t.Errorf("effective %s = %q (present %v), want its default %q", k.Name, v, ok, k.Default)
		}
	}
	if len(got) != len(knobs()) {
		t.Errorf("effective settings %v, want exactly the knobs %v", got, knobs().Names())
	}
}
