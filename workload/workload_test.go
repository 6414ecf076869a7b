package workload

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const sample = `description: a test
source: nowhere
command: run
flags:
  rate: 4000
  --batch-size: 50
  levels: [1000, 2000]
  set:
    refresh_interval: 1s
    shards: 2
  read-endpoint:
    - opensearch://a:1/i
    - opensearch://b:1/i
`

// A file keeps each flag with its line, a list as its items and a
// mapping as key=value pairs; dashes before a name are allowed.
func TestParse(t *testing.T) {
	f, err := Parse("w.yaml", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if f.Description != "a test" || f.Source != "nowhere" || f.Command != "run" {
		t.Errorf("header %+v", f)
	}
	want := []Entry{
		{Name: "rate", Values: []string{"4000"}, Line: 5},
		{Name: "batch-size", Values: []string{"50"}, Line: 6},
		{Name: "levels", Values: []string{"1000", "2000"}, List: true, Line: 7},
		{Name: "set", Values: []string{"refresh_interval=1s", "shards=2"}, Line: 8},
		{Name: "read-endpoint", Values: []string{"opensearch://a:1/i", "opensearch://b:1/i"}, List: true, Line: 11},
	}
	if len(f.Flags) != len(want) {
		t.Fatalf("flags %+v", f.Flags)
	}
	for i, e := range want {
		g := f.Flags[i]
		if g.Name != e.Name || !slices.Equal(g.Values, e.Values) || g.List != e.List || g.Line != e.Line {
			t.Errorf("flag %d: %+v, want %+v", i, g, e)
		}
	}
	if got := f.Flags[2].Joined(); got != "1000,2000" {
		t.Errorf("levels joined %q", got)
	}
}

// A bad file is refused with the line and the field that is wrong.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"flags:\n  rate: 1\nrate: 2\n", "w.yaml:3: rate: unknown field: want description, source, command, flags or queries"},
		{"command: seed\n", `w.yaml:1: command: "seed" is not one of run, peak, query`},
		{"flags:\n  rate: 1\n  rate: 2\n", "w.yaml:3: rate: given twice (first at line 2)"},
		{"flags:\n  set:\n    a: [1]\n", "w.yaml:3: set: a: want a single value"},
		{"flags: [1, 2]\n", "w.yaml:1: flags: want a mapping"},
		{"flags:\n  rate: [1\n", "w.yaml: yaml: line "},
		{"- 1\n", "w.yaml:1: want a mapping"},
	} {
		_, err := Parse("w.yaml", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}

// A scale multiplies rates (in any unit, lists and increments alike),
// durations and event counts, and nothing else; a factor stays.
func TestScale(t *testing.T) {
	f, err := Parse("w.yaml", []byte(`flags:
  rate: 10MB/s
  levels: [4000, 8000]
  step: x1.5
  start: "2000"
  max-rate: 15000
  duration: 45m
  warmup: 1s
  events: 1000000
  batch-size: 500
  doc-size: 1KB
  qps: 200
  write-shape: burst 5x at 60m for 30m; burst 0x at 100m for 1000s
  query-shape: sine 1x±0.5 every 10m
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Scale(0.001); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"rate": "0.01MB/s", "levels": "4,8", "step": "x1.5", "start": "2", "max-rate": "15", "duration": "2.7s",
		"warmup": "1ms", "events": "1000", "batch-size": "500", "doc-size": "1KB", "qps": "0.2",
		"write-shape": "burst 5x at 3.6s for 1.8s; burst 0x at 6s for 1s", "query-shape": "sine 1x±0.5 every 600ms",
	}
	for _, e := range f.Flags {
		if got := e.Joined(); got != want[e.Name] {
			t.Errorf("%s scaled to %q, want %q", e.Name, got, want[e.Name])
		}
	}
	bad, _ := Parse("w.yaml", []byte("flags:\n  duration: soon\n"))
	var we *Error
	if err := bad.Scale(2); !errors.As(err, &we) || we.Line != 2 || we.Field != "duration" {
		t.Errorf("scaling a bad duration: %v", err)
	}
	if err := f.Scale(0); err == nil {
		t.Error("scale 0 accepted")
	}
}

// Every preset parses, names its command, says what it replays, and
// scales.
func TestPresets(t *testing.T) {
	presets, err := Presets()
	if err != nil {
		t.Fatal(err)
	}
	if len(presets) < 4 {
		t.Fatalf("%d presets", len(presets))
	}
	for _, p := range presets {
		if p.Command == "" || p.Description == "" || p.Source == "" || len(p.Flags) == 0 {
			t.Errorf("%s: %+v: want a command, a description, a source and flags", p.Name(), p)
		}
		if err := p.Scale(0.01); err != nil {
			t.Errorf("%s: %v", p.Name(), err)
		}
	}
	if _, err := Preset("nope"); err == nil || !strings.Contains(err.Error(), "rockbench-2020") {
		t.Errorf("an unknown preset: %v", err)
	}
	if _, err := Preset("../workload"); err == nil {
		t.Error("a path accepted as a preset name")
	}
}
