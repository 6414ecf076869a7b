package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ownWorkload writes a workload file of queries of one's own over a
// corpus of orders, and the corpus.
func ownWorkload(t *testing.T, dir, sqlite string) (workloadFile, corpusFile string) {
	t.Helper()
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "{\"order\":%d,\"customer\":{\"name\":\"c%d\",\"tier\":%d},\"items\":[\"sku%d\",\"sku%d\"]}\n", i, i%50, i%3, i%7, 7+i%5)
	}
	corpusFile = filepath.Join(dir, "orders.jsonl")
	if err := os.WriteFile(corpusFile, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	workloadFile = filepath.Join(dir, "w.yaml")
	text := "command: query\nqueries:\n  by-customer:\n    params:\n      who: customer.name\n" +
		"    sqlite: " + sqlite + "\n" +
		"  by-item:\n    params:\n      sku: {field: items, draw: recent}\n" +
		"    sqlite: SELECT doc FROM {table} WHERE EXISTS (SELECT 1 FROM json_each(doc, '$.items') WHERE value = :sku) LIMIT 5\n" +
		"flags:\n  mix: by-customer=1,by-item=1\n"
	if err := os.WriteFile(workloadFile, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return workloadFile, corpusFile
}

// Queries of one's own run beside a corpus's ingest, each with its own
// latency, errors and rows, their parameters drawn from what was written.
func TestQueryOwn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, c := ownWorkload(t, dir, "SELECT doc FROM {table} WHERE json_extract(doc, '$.customer.name') = :who")
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := freshbenchVirtual(t, "query", "--workload", w, "--events", c, "--rate", "1000", "--qps", "40",
		"--duration", "3s", "--warmup", "0s", "--settle", "100ms", "--drain", "2s", "--quiet", "--metrics-addr", "",
		"--data-dir", filepath.Join(dir, "data"), "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if r.Target().Queries == nil || len(r.Target().Queries.Kinds) != 2 {
		t.Fatalf("queries %+v, want the two of the file", r.Target().Queries)
	}
	for _, k := range r.Target().Queries.Kinds {
		// Every parameter was written and settled: each query finds rows.
		if k.Queries == 0 || k.Failed != 0 || k.Empty != 0 || k.Rows < k.Queries {
			t.Errorf("%s: %d queries, %d failed, %d empty, %d rows; want all answered with rows", k.Kind, k.Queries, k.Failed, k.Empty, k.Rows)
		}
		if !strings.Contains(k.Text, "-- parameters 1: ") {
			t.Errorf("%s: text %q does not show its parameter", k.Kind, k.Text)
		}
	}
	if !strings.Contains(stdout, "by-customer") || !strings.Contains(stdout, "by-item") {
		t.Errorf("the console does not name the queries:\n%s", stdout)
	}
}

// A bad query of one's own is refused before the run, naming the file,
// the line of the query and the fix.
func TestQueryOwnRefused(t *testing.T) {
	dir := t.TempDir()
	run := func(w string) []string {
		return []string{"query", "--workload", w, "--qps", "10", "--duration", "2s", "--warmup", "0s",
			"--metrics-addr", "", "--data-dir", filepath.Join(dir, "data"), "--out", filepath.Join(dir, "r.json")}
	}
	missing, _ := ownWorkload(t, t.TempDir(), "SELECT doc FROM {table} WHERE json_extract(doc, '$.customer.name') = :whom")
	wantUsageError(t, run(missing), "query by-customer: ("+missing+":3) sqlite text uses the parameter whom, which params does not define; add whom: FIELD under params")
	syntax, _ := ownWorkload(t, t.TempDir(), "SELEC doc FROM {table} WHERE json_extract(doc, '$.customer.name') = :who")
	wantUsageError(t, run(syntax), "query by-customer: ("+syntax+":3) sqlite cannot run it:")
	wantUsageError(t, run(syntax), "; fix its sqlite text")
	noText := filepath.Join(dir, "n.yaml")
	os.WriteFile(noText, []byte("queries:\n  q1:\n    params:\n      v: processBy\n    postgres: SELECT 1 WHERE :v = ''\nflags:\n  mix: q1\n"), 0o600)
	fresh := filepath.Join(dir, "fresh")
	wantUsageError(t, append(run(noText), "--data-dir", fresh), "query q1: ("+noText+":2) has no text for sqlite (it has postgres); add a sqlite: text under it")
	// Refused before the target is set up: nothing was made for a run
	// that does not happen (a table; on Druid a supervisor that would
	// read the topic on).
	if tables := tablesIn(t, filepath.Join(fresh, "freshbench.db")); len(tables) != 0 {
		t.Errorf("after the refusal the database holds %v; want nothing made", tables)
	}
	badKey := filepath.Join(dir, "k.yaml")
	os.WriteFile(badKey, []byte("queries:\n  q1:\n    mysql: SELECT 1\n"), 0o600)
	wantUsageError(t, run(badKey), badKey+":3: queries.q1.mysql: unknown key: want params or a database family (sqlite, postgres, questdb, druid, pinot, elasticsearch, opensearch, sim)")
	unknown := filepath.Join(dir, "u.yaml")
	os.WriteFile(unknown, []byte("flags:\n  mix: q2\n"), 0o600)
	wantUsageError(t, run(unknown), `unknown kind "q2"`)
}

// tablesIn names the tables of the SQLite database at path, none when it
// does not exist.
func tablesIn(t *testing.T, path string) []string {
	t.Helper()
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// --miss-share reaches queries of one's own: a miss gives each string
// parameter a value never written, so that it finds no row; a number
// parameter keeps a written value, so a query of numbers alone never
// misses.
func TestQueryOwnMisses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, c := ownWorkload(t, dir, "SELECT doc FROM {table} WHERE json_extract(doc, '$.customer.name') = :who")
	text, err := os.ReadFile(w)
	if err != nil {
		t.Fatal(err)
	}
	text = []byte(strings.Replace(string(text), "  by-item:", "  by-tier:\n    params:\n      tier: customer.tier\n"+
		"    sqlite: SELECT doc FROM {table} WHERE json_extract(doc, '$.customer.tier') = :tier LIMIT 5\n  by-item:", 1))
	text = []byte(strings.Replace(string(text), "mix: by-customer=1,by-item=1", "mix: by-customer=1,by-tier=1", 1))
	if err := os.WriteFile(w, text, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := freshbenchVirtual(t, "query", "--workload", w, "--events", c, "--rate", "1000", "--qps", "100",
		"--duration", "3s", "--warmup", "0s", "--settle", "100ms", "--drain", "2s", "--quiet", "--metrics-addr", "",
		"--miss-share", "0.5", "--data-dir", filepath.Join(dir, "data"), "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	r := readResult(t, out)
	if r.Target().Queries == nil || len(r.Target().Queries.Kinds) != 2 {
		t.Fatalf("queries %+v, want the two of the mix", r.Target().Queries)
	}
	for _, k := range r.Target().Queries.Kinds {
		switch k.Kind {
		case "by-customer":
			// Half of about 150 queries: within five standard deviations.
			if k.Queries < 100 || k.Misses < k.Queries/2-30 || k.Misses > k.Queries/2+30 || k.Empty != k.Misses || k.Failed != 0 {
				t.Errorf("by-customer: %d queries, %d misses, %d empty, %d failed; want about half missed, each empty", k.Queries, k.Misses, k.Empty, k.Failed)
			}
		case "by-tier":
			if k.Queries == 0 || k.Misses != 0 || k.Empty != 0 || k.Failed != 0 {
				t.Errorf("by-tier: %d queries, %d misses, %d empty, %d failed; want none missed (a number parameter keeps a written value)", k.Queries, k.Misses, k.Empty, k.Failed)
			}
		}
	}
}
