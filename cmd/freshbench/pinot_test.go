package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
)

// A corpus whose fields flatten onto one of freshbench's columns is
// refused before anything is made, in one line naming the corpus, the
// event of the sample and the fix; so is one whose fields of two events
// flatten onto one column. Pinot is not asked anything: the URLs reach
// no server.
func TestRunPinotSampleRefused(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string { return writeFile(t, dir, name, text) }
	own := file("own.jsonl", "{\"a\":1}\n{\"_event\":{\"time\":1}}\n")
	split := file("split.jsonl", "{\"a_b\":1}\n{\"a\":{\"b\":2}}\n")
	args := func(events string) []string {
		return shortRunIn(dir, "--target", "pinot://127.0.0.1:1/t?controller=127.0.0.1:2", "--via", "kafka://127.0.0.1:9/t", "--events", events)
	}
	wantUsageError(t, args(own), "--events "+own+": pinot table t: event 2 of the sample: two fields of the event flatten to the column _event_time; rename the field")
	wantUsageError(t, args(split), "--events "+split+": pinot table t: events 1 and 2 of the sample: the fields a_b and a.b flatten to one column a_b; rename the field")
}

// A corpus of nested events replayed through Kafka into Pinot is stored in
// the columns the flat rule makes of it: what Pinot answers over SQL of
// the nested fields is what the corpus holds (a count and a sum over
// them, an array's JSON, a field of mixed types as its text), every line
// is acknowledged and visible, and the layout, printed and recorded, names
// the columns.
func TestRunCorpusIntoPinotColumns(t *testing.T) {
	t.Parallel() // a table and topic of its own; no rate or latency asserted
	pinotURL := testenv.URL(t, "FRESHBENCH_TEST_PINOT_URL", "scripts/pinot.sh")
	broker := strings.TrimSuffix(testenv.URL(t, "FRESHBENCH_TEST_KAFKA_URL", "scripts/kafka.sh"), "/")
	table := fmt.Sprintf("fb_cmd_pinotcols_%d", time.Now().UnixNano()%1e9)
	u, err := url.Parse(pinotURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + table
	tgt, err := all.Registry().Open(context.Background(), u.String(), target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := tgt.Teardown(ctx); err != nil {
			t.Errorf("teardown: %v", err)
		}
		tgt.Close()
	})

	dir := t.TempDir()
	const lines = 300
	var b strings.Builder
	var u3, zips int
	for i := range lines {
		code := fmt.Sprint(i % 10)
		if i%2 == 1 {
			code = `"c` + code + `"`
		}
		fmt.Fprintf(&b, "{\"n\":%d,\"user\":{\"name\":\"u%d\",\"geo\":{\"zip\":%d}},\"items\":[{\"sku\":\"s%d\"}],\"code\":%s}\n", i, i%7, 1000+i%13, i%5, code)
		if i%7 == 3 {
			u3++
		}
		zips += 1000 + i%13
	}
	p := filepath.Join(dir, "orders.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := freshbench(t, "run", "--target", u.String(), "--via", broker+"/"+table,
		"--events", p, "--events-once", "--rate", "300", "--duration", "60s", "--warmup", "0s", "--drain", "30s",
		"--poll-interval", "100ms", "--metrics-addr", "127.0.0.1:0", "--quiet", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	r := readResult(t, out)
	var acked, visible int64
	for _, cp := range r.Target().Completeness {
		acked, visible = acked+cp.Acknowledged, visible+cp.Visible
	}
	if acked != lines || visible != lines {
		t.Fatalf("acknowledged %d, visible %d; want all %d lines", acked, visible, lines)
	}
	l := r.Config.TargetLayout
	for _, want := range []string{"first 300 events", "user_geo_zip DOUBLE", "user_name STRING", "items STRING", "n DOUBLE", "a STRING of each value's text: code", "joined with _"} {
		if !strings.Contains(l, want) {
			t.Errorf("layout %q does not say %q", l, want)
		}
	}
	if !strings.Contains(stdout, "layout: "+l) {
		t.Errorf("stdout does not print the layout:\n%s", stdout)
	}

	sql := func(q string) string {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"sql": q})
		resp, err := http.Post("http://"+u.Host+"/query/sql", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a struct {
			ResultTable struct {
				Rows [][]json.RawMessage `json:"rows"`
			} `json:"resultTable"`
			Exceptions []any `json:"exceptions"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || len(a.Exceptions) > 0 || len(a.ResultTable.Rows) != 1 {
			t.Fatalf("%s: %v %v %v", q, err, a.Exceptions, a.ResultTable.Rows)
		}
		return string(a.ResultTable.Rows[0][0])
	}
	for q, want := range map[string]string{
		`SELECT COUNT(*) FROM ` + table + ` WHERE user_name = 'u3'`:    fmt.Sprint(u3),
		`SELECT SUM(user_geo_zip) FROM ` + table:                       fmt.Sprintf("%d.0", zips),
		`SELECT items FROM ` + table + ` WHERE n = 7`:                  `"[{\"sku\":\"s2\"}]"`,
		`SELECT code FROM ` + table + ` WHERE n = 7`:                   `"c7"`,
		`SELECT code FROM ` + table + ` WHERE n = 8`:                   `"8"`,
		`SELECT COUNT(*) FROM ` + table + ` WHERE user_geo_zip > 1006`: fmt.Sprint(countZipsAbove(lines, 1006)),
	} {
		if got := sql(q); got != want {
			t.Errorf("%s: %s; want %s, from the corpus", q, got, want)
		}
	}
}

// countZipsAbove counts the corpus's lines whose user.geo.zip is above z.
func countZipsAbove(lines, z int) int {
	n := 0
	for i := range lines {
		if 1000+i%13 > z {
			n++
		}
	}
	return n
}
