package all

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/target"
)

// TestKnobDefaults checks every shipped target's declarations: each knob
// has a name and a meaning, none is declared twice, and the defaults parse.
func TestKnobDefaults(t *testing.T) {
	for _, d := range Registry().Drivers() {
		seen := map[string]bool{}
		for _, k := range d.Knobs {
			if k.Name == "" || k.Help == "" || seen[k.Name] {
				t.Errorf("%s: knob %q has no name or help, or is declared twice", d.Name, k.Name)
			}
			seen[k.Name] = true
		}
		s, err := d.Knobs.Resolve(nil)
		if err != nil {
			t.Errorf("%s: defaults: %v", d.Name, err)
		}
		if len(s) != len(d.Knobs) {
			t.Errorf("%s: %d effective settings for %d knobs", d.Name, len(s), len(d.Knobs))
		}
	}
}

// TestDeclaredCapabilities holds each driver's declared capabilities to
// its targets: a driver that declares updates opens a target.Updater
// with its default settings, and one that does not, none. Drivers that
// need a server to open are checked when the test has one.
func TestDeclaredCapabilities(t *testing.T) {
	urls := map[string]func(t *testing.T) string{
		"sqlite":        func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "caps.db") },
		"sim":           func(*testing.T) string { return "sim://" },
		"discard":       func(*testing.T) string { return "discard://" },
		"elasticsearch": func(*testing.T) string { return "elasticsearch://127.0.0.1:1/caps" }, // opening sends nothing
		"opensearch":    func(*testing.T) string { return "opensearch://127.0.0.1:1/caps" },
		"druid":         func(*testing.T) string { return "druid://127.0.0.1:1/caps" }, // opening sends nothing
		"pinot":         func(*testing.T) string { return "pinot://127.0.0.1:1/caps?controller=127.0.0.1:2" },
		"postgres": func(t *testing.T) string {
			return testenv.URL(t, "FRESHBENCH_TEST_POSTGRES_URL", "scripts/postgres.sh")
		},
		"questdb": func(t *testing.T) string {
			return testenv.URL(t, "FRESHBENCH_TEST_QUESTDB_URL", "scripts/questdb.sh")
		},
	}
	r := Registry()
	for _, d := range r.Drivers() {
		for _, scheme := range d.Schemes {
			raw, ok := urls[scheme]
			if !ok {
				if !strings.Contains(scheme, "+") && scheme != "postgresql" {
					t.Errorf("%s: no URL to check scheme %s with: add one", d.Name, scheme)
				}
				continue
			}
			t.Run(scheme, func(t *testing.T) {
				tgt, err := r.Open(context.Background(), raw(t), target.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer tgt.Close()
				if _, ok := tgt.(target.Updater); ok != d.Updates {
					t.Errorf("%s declares updates %v, but its target is an Updater: %v", d.Name, d.Updates, ok)
				}
			})
		}
	}
	if d, ok := r.Lookup("sim"); !ok || !d.InProcess {
		t.Errorf("sim: %+v, %v; want a driver that lives in-process", d, ok)
	}
	if d, ok := r.Lookup("postgres"); !ok || d.InProcess {
		t.Errorf("postgres: %+v, %v; want a driver that does not live in-process", d, ok)
	}
}
