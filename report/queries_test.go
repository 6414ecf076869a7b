package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// queryResult builds the query figures of an open-loop run at qps, as a
// results file would hold them.
func queryResult(qps float64, seed uint64) *results.Queries {
	kind := func(name string, weight int, base time.Duration, text string) *results.QueryKind {
		lat, svc := histogram(400, base, seed), histogram(400, base*3/4, seed+1)
		return &results.QueryKind{
			Kind: name, Weight: weight, TargetQPS: qps * float64(weight) / 10, Text: text,
			Queries: 400, AchievedQPS: qps * float64(weight) / 10, Rows: 4000, Failed: 2,
			Errors:  map[string]*stats.ErrorCount{"timeout": {Count: 2, Sample: "point query: <b>no response</b> within 10s"}},
			Latency: lat.Summarize(), ServiceTime: svc.Summarize(), LatencyHistogram: lat, ServiceTimeHistogram: svc,
		}
	}
	point := kind("point", 6, 4*time.Millisecond, `SELECT doc FROM events WHERE doc->>'processBy' = $1 LIMIT $2`+"\n-- $1 = 'worker-042', $2 = 10")
	newest := kind("newest", 4, 2*time.Millisecond, "POST /fb/_search\n{\"size\": 10}")
	newest.Errors = nil
	total := &results.QueryKind{Kind: "all", TargetQPS: qps, Queries: 800, AchievedQPS: qps, Rows: 8000, Failed: 2,
		Errors: point.Errors, LatencyHistogram: stats.NewHistogram(), ServiceTimeHistogram: stats.NewHistogram()}
	for _, k := range []*results.QueryKind{point, newest} {
		total.LatencyHistogram.Merge(k.LatencyHistogram)
		total.ServiceTimeHistogram.Merge(k.ServiceTimeHistogram)
	}
	total.Latency, total.ServiceTime = total.LatencyHistogram.Summarize(), total.ServiceTimeHistogram.Summarize()
	return &results.Queries{
		Mode: "open", TargetQPS: qps, MaxInflight: 256, Mix: "point=6,newest=4", Limit: 10, TimeoutS: 10,
		MeasuredS: 20, AchievedQPS: qps, Unsent: 3, Total: total, Kinds: []*results.QueryKind{point, newest},
		Beside: &results.Beside{TargetEventsPerSec: 5000, AchievedEventsPerSec: 4990,
			FreshnessLag: stats.Summary{Count: 100, P50Ms: 812, P95Ms: 1234, P99Ms: 1500}, WriteLatency: stats.Summary{Count: 10, P99Ms: 42}},
	}
}

func TestQueriesInReports(t *testing.T) {
	res := runResult(5000, 1)
	res.Target().Queries = queryResult(200, 7)
	best := res.Target().Queries
	best.Verdict = &results.QueryVerdict{Met: true, LatencyMs: 9.5}
	worse := queryResult(400, 8)
	worse.Verdict = &results.QueryVerdict{LatencyMs: 250, Reason: "p95 latency 250.0 ms is not under 200ms"}
	res.Kind, res.QuerySweep = results.KindSweep, &results.QuerySweep{SLO: "p95<200ms", Found: true, Best: 0, QPS: 200, AchievedQPS: 200,
		Reason: "at 400 QPS: p95 latency 250.0 ms is not under 200ms", Steps: []*results.Queries{best, worse}}

	// The results file carries the query figures, histograms included.
	path := filepath.Join(t.TempDir(), "r.json")
	if err := results.WriteFile(path, res); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if q := back.Target().Queries; q == nil || q.Kinds[0].LatencyHistogram.Count() != 400 || q.Kinds[0].Text != res.Target().Queries.Kinds[0].Text ||
		back.QuerySweep == nil || len(back.QuerySweep.Steps) != 2 || back.QuerySweep.Steps[1].Total.LatencyHistogram.Count() != 800 {
		t.Fatalf("queries did not survive the results file: %+v", back.Target().Queries)
	}

	var page bytes.Buffer
	if err := HTML(&page, back); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{
		`<section id="queries">`, "Open loop at 200 QPS", "point=6,newest=4",
		"doc-&gt;&gt;&#39;processBy&#39;", // the query text, escaped
		"&lt;b&gt;no response&lt;/b&gt;",  // an error sample, escaped
		"Query latency", "QPS sweep", "Highest QPS with p95&lt;200ms: 200", "missed", "4,990 of 5,000 events/s", "812 · 1234 · 1500 ms",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	if strings.Contains(html, "<b>no response</b>") {
		t.Error("HTML report does not escape an error sample")
	}

	var con bytes.Buffer
	ConsoleQueries(&con, back)
	out := con.String()
	for _, want := range []string{
		"query sweep: 2 step(s) held to p95<200ms", "highest QPS with p95<200ms (*): 200", "open loop at 200 QPS",
		"beside the ingest: 4,990 of 5,000 events/s; freshness lag p50 812, p95 1234, p99 1500 ms", "point query timeout: 2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}

	// Without query results the section is absent.
	page.Reset()
	if err := HTML(&page, runResult(5000, 1)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), `id="queries"`) {
		t.Error("a run without queries shows a query section")
	}
	con.Reset()
	ConsoleQueries(&con, &results.Result{})
	if con.Len() != 0 {
		t.Errorf("console of a run without queries: %q", con.String())
	}
}

// The renderers go by the kind a file says (filled in from what an older
// file holds): a query load alone read from a version 2 file shows no
// ingest, and a peak search stopped before its first step is still shown
// as a peak search, not as a run of nothing.
func TestRenderedByKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.json")
	v2 := `{"schema_version":2,"command":"query","config":{"duration_s":10},"queries":{"mode":"open","target_qps":50,"mix":"point:1","total":{"kind":"all"},"kinds":[{"kind":"point"}]}}`
	if err := os.WriteFile(path, []byte(v2), 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ConsoleQueries(&out, q)
	if !strings.HasPrefix(out.String(), "freshbench query: ") {
		t.Errorf("a query load alone is not introduced as one:\n%s", out.String())
	}
	if page := render(t, q); strings.Contains(page, "Throughput over time") {
		t.Error("the page of a query load alone shows an ingest section")
	}

	peak := &results.Result{SchemaVersion: results.SchemaVersion, Kind: results.KindPeak, Command: "peak", EndedEarly: true, EndReason: "interrupted",
		Peak: &results.Peak{Step: -1, Reason: "interrupted before step 1 (1000 events/s)"}}
	out.Reset()
	Console(&out, peak)
	if !strings.Contains(out.String(), "0 step(s)") || !strings.Contains(out.String(), "interrupted before step 1") {
		t.Errorf("a peak search with no step yet is not shown as a peak search:\n%s", out.String())
	}
	if page := render(t, peak); !strings.Contains(page, "interrupted before step 1") {
		t.Error("the page of a peak search with no step yet does not say why it stopped")
	}
}
