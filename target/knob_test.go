package target

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

func testKnobs() Knobs {
	return Knobs{
		{Name: "n", Default: "1", Help: "a count", Parse: ParseInt(1)},
		{Name: "d", Default: "1s", Help: "a duration", Parse: ParseDuration(0)},
		{Name: "mode", Default: "fast", Help: "a choice", Parse: OneOf("fast", "safe")},
		{Name: "free", Help: "any text"},
	}
}

func TestResolve(t *testing.T) {
	s, err := testKnobs().Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s["n"] != 1 || s["d"] != time.Second || s["mode"] != "fast" || s["free"] != "" {
		t.Errorf("defaults = %v", s)
	}
	s, err = testKnobs().Resolve(map[string]string{"n": "7", "mode": "SAFE", "free": "x y"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Text(); got["n"] != "7" || got["mode"] != "safe" || got["d"] != "1s" || got["free"] != "x y" {
		t.Errorf("text = %v", got)
	}
	for set, want := range map[string]string{
		"n=abc":  `n="abc": want a whole number ≥ 1`,
		"n=0":    `n="0": want a whole number ≥ 1`,
		"mode=x": `mode="x": want one of fast, safe`,
		"nn=1":   `"nn": the settings are d, free, mode, n`,
	} {
		k, v, _ := strings.Cut(set, "=")
		_, err := testKnobs().Resolve(map[string]string{k: v})
		if !errors.Is(err, ErrBadSetting) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one wrapping ErrBadSetting with %q", set, err, want)
		}
	}
	if err := Knobs(nil).Check(map[string]string{"x": "1"}); !errors.Is(err, ErrBadSetting) || !strings.Contains(err.Error(), "takes no settings") {
		t.Errorf("a setting for a target without knobs: %v", err)
	}
	bad := Knobs{{Name: "n", Default: "x", Parse: ParseInt(0)}}
	if _, err := bad.Resolve(nil); err == nil || errors.Is(err, ErrBadSetting) {
		t.Errorf("a default that does not parse: err = %v, want the target's error, not the user's", err)
	}
}

func TestWithQuery(t *testing.T) {
	q := url.Values{"n": {"3"}, "sslmode": {"x"}}
	set, err := testKnobs().WithQuery(q, map[string]string{"mode": "safe"})
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 2 || set["n"] != "3" || set["mode"] != "safe" {
		t.Errorf("merged = %v, want n from the query and mode from the settings, nothing else", set)
	}
	if _, err := testKnobs().WithQuery(q, map[string]string{"n": "3"}); err != nil {
		t.Errorf("the same value both ways: %v", err)
	}
	if _, err := testKnobs().WithQuery(q, map[string]string{"n": "4"}); !errors.Is(err, ErrBadURL) {
		t.Errorf("different values: err = %v, want one wrapping ErrBadURL", err)
	}
	if _, err := testKnobs().WithQuery(url.Values{"n": {"x"}}, nil); !errors.Is(err, ErrBadURL) {
		t.Errorf("a bad value in the URL: err = %v, want one wrapping ErrBadURL", err)
	}
}

func TestCheckQuery(t *testing.T) {
	if err := testKnobs().checkQuery(url.Values{"n": {"1"}, "mode": {"safe"}}); err != nil {
		t.Errorf("knobs only: %v", err)
	}
	err := testKnobs().checkQuery(url.Values{"n": {"1"}, "mdoe": {"safe"}})
	if !errors.Is(err, ErrBadURL) || !strings.Contains(err.Error(), `"mdoe"`) {
		t.Errorf("a misspelt parameter: err = %v, want ErrBadURL naming it", err)
	}
}

func TestResolveURL(t *testing.T) {
	s, err := testKnobs().ResolveURL(url.Values{"n": {"3"}}, map[string]string{"mode": "safe"})
	if err != nil {
		t.Fatal(err)
	}
	if s["n"] != 3 || s["mode"] != "safe" || s["d"] != time.Second {
		t.Errorf("settings = %v, want n from the query, mode from the settings, d by default", s)
	}
	for name, c := range map[string]struct {
		q    url.Values
		set  map[string]string
		want error
	}{
		"a parameter that is not a knob": {q: url.Values{"mdoe": {"safe"}}, want: ErrBadURL},
		"a knob given two ways":          {q: url.Values{"n": {"3"}}, set: map[string]string{"n": "4"}, want: ErrBadURL},
		"a bad value in the URL":         {q: url.Values{"n": {"x"}}, want: ErrBadURL},
		"a setting that is not a knob":   {set: map[string]string{"nn": "1"}, want: ErrBadSetting},
		"a bad value in the settings":    {set: map[string]string{"n": "0"}, want: ErrBadSetting},
	} {
		if _, err := testKnobs().ResolveURL(c.q, c.set); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want one wrapping %v", name, err, c.want)
		}
	}
}

// TestRegistryChecksSettingsBeforeOpening checks that an unknown setting
// is refused without calling the opener (no connection for a typo).
func TestRegistryChecksSettingsBeforeOpening(t *testing.T) {
	r := NewRegistry()
	opened := false
	r.Register(Driver{Name: "fake", Schemes: []string{"fake", "fake2"}, Knobs: testKnobs(),
		Open: func(context.Context, *url.URL, Options) (Target, error) { opened = true; return nil, nil }})
	_, err := r.Open(context.Background(), "fake://x", Options{Settings: map[string]string{"typo": "1"}})
	if !errors.Is(err, ErrBadSetting) || opened {
		t.Errorf("err = %v, opened = %v; want ErrBadSetting before opening", err, opened)
	}
	if _, err := r.Open(context.Background(), "fake2://x", Options{Settings: map[string]string{"n": "1"}}); err != nil || !opened {
		t.Errorf("a known setting: err = %v, opened = %v", err, opened)
	}
	if d := r.Drivers(); len(d) != 1 || d[0].Name != "fake" {
		t.Errorf("drivers = %v, want fake once", d)
	}
	help := r.SettingsHelp()
	for _, k := range testKnobs() {
		if !strings.Contains(help, k.Name+" (default ") || !strings.Contains(help, k.Help) {
			t.Errorf("help %q misses %s", help, k.Name)
		}
	}
}

func TestParseHostPort(t *testing.T) {
	for _, v := range []string{"", "127.0.0.1:9000", "db.local:1", "[::1]:9000"} {
		if got, err := ParseHostPort(v); err != nil || got != v {
			t.Errorf("%q: %v, %v; want it as given", v, got, err)
		}
	}
	for _, v := range []string{"host", "127.0.0.1:", "http://h:1", "h:1/x", "h:1?q"} {
		if _, err := ParseHostPort(v); err == nil || !strings.Contains(err.Error(), "want host:port") {
			t.Errorf("%q: %v; want an error saying host:port", v, err)
		}
	}
}
