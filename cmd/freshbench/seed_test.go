package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/docgen"
)

func TestSeedBadInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no size", []string{"seed", "--data-dir", dir}, "want the size of the data set: --events N or --bytes SIZE"},
		{"both sizes", []string{"seed", "--data-dir", dir, "--events", "10", "--bytes", "1MB"}, "--events and --bytes: give one of them"},
		{"negative events", []string{"seed", "--data-dir", dir, "--events", "-5"}, "--events -5: want a positive number"},
		{"unparseable bytes", []string{"seed", "--data-dir", dir, "--bytes", "lots"}, `--bytes: size "lots"`},
		{"small documents", []string{"seed", "--data-dir", dir, "--events", "10", "--doc-size", "100"}, "--doc-size 100: want 400..1000000 bytes"},
		{"seed 0", []string{"seed", "--data-dir", dir, "--events", "10", "--seed", "0"}, "--seed 0: want a non-zero number"},
		{"no parallelism", []string{"seed", "--data-dir", dir, "--events", "10", "--parallel", "0"}, "--parallel 0"},
		{"negative wait", []string{"seed", "--data-dir", dir, "--events", "10", "--wait", "-1s"}, "--wait -1s"},
		{"unknown shape", []string{"seed", "--data-dir", dir, "--events", "10", "--doc-shape", "flat"}, "--doc-shape flat: want rockbench or nested"},
		{"nested too small", []string{"seed", "--data-dir", dir, "--events", "10", "--doc-shape", "nested"}, fmt.Sprintf("--doc-size 1000: want at least %d bytes for the nested shape", docgen.MinSize(docgen.ShapeNested))},
		{"unknown target", []string{"seed", "--events", "10", "--target", "nosuch://x"}, `--target: bad target URL: unknown scheme "nosuch"`},
	} {
		t.Run(c.name, func(t *testing.T) { wantUsageError(t, c.args, c.want) })
	}
}

// The command says what it will write, writes it, and a second call says
// that nothing is left to write.
func TestSeedCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	args := []string{"seed", "--data-dir", dir, "--bytes", "2.5MB", "--doc-size", "500", "--quiet"}
	code, out, errOut := freshbench(t, args...)
	if code != 0 {
		t.Fatalf("exit code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	t.Log("\n" + out)
	for _, want := range []string{
		"5000 events of 500 B (2.50 MB) in 1 stream(s)",
		"holds 0 of them",
		"to write: 5000 events (2.50 MB)",
		"wrote 5000 events (2.50 MB)",
		"visible: 5000 of 5000 events",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("first seed does not say %q", want)
		}
	}
	code, out, _ = freshbench(t, args...)
	if code != 0 || !strings.Contains(out, "holds 5000 of them: 1 stream(s) complete") || !strings.Contains(out, "nothing to write") || strings.Contains(out, "wrote") {
		t.Errorf("second seed: exit code %d\n%s", code, out)
	}
	code, out, _ = freshbench(t, "seed", "--data-dir", dir, "--events", "8000", "--doc-size", "500", "--dry-run")
	if code != 0 || !strings.Contains(out, "holds 5000 of them: 0 stream(s) complete, 1 partial") || !strings.Contains(out, "to write: 3000 events") || strings.Contains(out, "wrote") {
		t.Errorf("dry run of a larger data set: exit code %d\n%s", code, out)
	}
}

// --doc-shape nested seeds the 20K-QPS study's documents, whose query
// fields the query workload filters on.
func TestSeedNestedShape(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	code, out, errOut := freshbench(t, "seed", "--data-dir", dir, "--events", "200", "--doc-shape", "nested", "--doc-size", "9KB", "--quiet")
	if code != 0 || !strings.Contains(out, "visible: 200 of 200 events") {
		t.Fatalf("exit code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "freshbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, nested int
	var avg float64
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE json_type(doc, '$.emails') = 'array' AND json_extract(doc, '$.processBy') IS NOT NULL), avg(length(doc)) FROM freshbench_events`).Scan(&n, &nested, &avg); err != nil {
		t.Fatal(err)
	}
	if n != 200 || nested != 200 || avg < 8700 || avg > 9300 {
		t.Errorf("%d documents, %d with processBy and an emails array, %.0f bytes on average; want 200 nested documents of about 9,000 bytes", n, nested, avg)
	}
}
