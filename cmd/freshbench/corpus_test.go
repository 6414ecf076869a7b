package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes text to the file name in dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A bad corpus is refused before anything is sent: one line naming the
// file, the line and the fix, exit 2.
func TestRunBadCorpus(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string { return writeFile(t, dir, name, text) }
	stamped := file("stamped.jsonl", "{\"a\":1}\n{\"a\":2,\"_seq\":7}\n")
	array := file("array.jsonl", "{\"a\":1}\n\n[1]\n")
	broken := file("broken.jsonl", "{\"a\":\n")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"stamped field", shortRunIn(dir, "--events", stamped), "--events " + stamped + `: line 2: carries the field "_seq", which freshbench stamps into every event (_id, _event_time, generator_identifier, _seq, _revision, _update_time); rename or remove it`},
		{"not an object", shortRunIn(dir, "--events", array), "--events " + array + ": line 3: not a JSON object; write one object a line"},
		{"broken JSON", shortRunIn(dir, "--events", broken), "--events " + broken + ": line 1: not valid JSON"},
		{"missing file", shortRunIn(dir, "--events", filepath.Join(dir, "none.jsonl")), "--events " + filepath.Join(dir, "none.jsonl") + ": stat"},
		{"once without a corpus", shortRunIn(dir, "--events-once"), "--events-once: give the corpus with --events"},
	} {
		t.Run(c.name, func(t *testing.T) { wantUsageError(t, c.args, c.want) })
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Error("a refused corpus still created the database")
	}
}

// A corpus replayed once into SQLite: every line is an event, every event
// acknowledged and visible, and the results say so.
func TestRunCorpusOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const lines = 600
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "{\"order\":%d,\"items\":[{\"sku\":\"s%d\"}],\"user\":{\"name\":\"u%d\"}}\n", i, i%13, i%7)
	}
	p := filepath.Join(dir, "orders.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := freshbench(t, "run", "--duration", "60s", "--warmup", "0s", "--drain", "5s", "--rate", "2000",
		"--poll-interval", "50ms", "--metrics-addr", "127.0.0.1:0", "--quiet", "--data-dir", filepath.Join(dir, "data"),
		"--out", out, "--events", p, "--events-once")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	r := readResult(t, out)
	c := r.Config.Corpus
	if c == nil || c.Lines != lines || c.Replayed != lines || c.Passes != 1 || c.AtEnd != "stop" || len(c.Files) != 1 {
		t.Fatalf("results say of the corpus %+v, want %d lines replayed once", c, lines)
	}
	var acked, visible, missing int64
	for _, cp := range r.Target().Completeness {
		acked, visible, missing = acked+cp.Acknowledged, visible+cp.Visible, missing+cp.Missing
	}
	if acked != lines || visible != lines || missing != 0 {
		t.Fatalf("acknowledged %d visible %d missing %d, want all %d", acked, visible, missing, lines)
	}
	// What the target made of the user's events is said and recorded.
	if l := r.Config.TargetLayout; !strings.Contains(l, "each event whole in the JSON text column doc") || !strings.Contains(stdout, "layout: "+l) {
		t.Errorf("layout %q, stdout:\n%s\nwant the table's columns said and recorded", l, stdout)
	}
	if d := r.EndedAt.Sub(r.StartedAt); d > 30e9 {
		t.Fatalf("the run lasted %s: it did not end with its corpus", d)
	}
}

// A bad template is refused before anything is sent, naming the file, the
// line and the fix.
func TestRunBadTemplate(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "t.json")
	if err := os.WriteFile(bad, []byte("{\n  \"user\": \"{{name}}\",\n  \"age\": \"{{int 90 18}}\"\n}"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantUsageError(t, shortRunIn(dir, "--template", bad), "--template "+bad+": line 3: {{int 90 18}}: int 90 18: want 0 ≤ MIN ≤ MAX")
	wantUsageError(t, shortRunIn(dir, "--template", "rockbnch"), "--template rockbnch: open rockbnch")
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte("{\n  \"tags\": {\"$array\": \"10\", \"of\": \"{{word}}\"},\n  \"note\": \"{{fill 150}}\"\n}"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantUsageError(t, shortRunIn(dir, "--template", small), "--template "+small+": line 3: {{fill 150}}: the template's other values take up to")
	wantUsageError(t, shortRunIn(dir, "--template", "rockbench", "--events", bad), "--template and --events: give one")
}

// The shipped RockBench template streams into SQLite like the built-in
// shape: every event acknowledged and visible, the results naming it.
func TestRunTemplate(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := freshbenchVirtual(t, append(shortRun("--quiet", "--rate", "500", "--data-dir", filepath.Join(dir, "data"), "--out", out), "--template", "rockbench", "--metrics-addr=")...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if r.Config.Template != "rockbench" || r.Config.DocSize < 1000 || r.Config.DocSize > 1300 {
		t.Fatalf("results say template %q, doc size %d; want rockbench at about 1.25 KB", r.Config.Template, r.Config.DocSize)
	}
	var acked, visible int64
	for _, cp := range r.Target().Completeness {
		acked, visible = acked+cp.Acknowledged, visible+cp.Visible
	}
	if acked == 0 || visible != acked {
		t.Fatalf("acknowledged %d, visible %d; want all visible", acked, visible)
	}
}
