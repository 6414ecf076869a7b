package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/report/internal/svg"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// histogram returns n samples around base with a tail, deterministically.
func histogram(n int, base time.Duration, seed uint64) *stats.Histogram {
	h := stats.NewHistogram()
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < n; i++ {
		d := base + time.Duration(r.ExpFloat64()*float64(base)/4)
		if i%100 == 0 {
			d *= 5 // a tail for the percentile curves
		}
		h.Record(d)
	}
	return h
}

// runResult builds a run at rate events/s over 30 s with a 2 s outage at
// 15 s, as a results file would hold it.
func runResult(rate float64, seed uint64) *results.Result {
	const warmup, duration = 5, 30
	var series []stats.Point
	for s := 0; s < duration+1; s++ {
		p := stats.Point{StartS: float64(s), WidthS: 1, WriteP99Ms: 12, WriteMaxMs: 20, FreshnessLagMs: 310, FreshnessN: 5}
		if s < duration {
			p.TargetEvents, p.Batches = int64(rate), int64(rate)/50
			p.AckedEvents, p.AckedBytes = int64(rate), int64(rate)*1000
		}
		if s == 15 || s == 16 {
			p.AckedEvents, p.AckedBytes, p.FailedEvents = 0, 0, int64(rate)
			p.WriteP99Ms, p.WriteMaxMs, p.FreshnessLagMs = 5000, 5000, 2300
		}
		if s == 17 {
			p.LateBatches = 4
		}
		series = append(series, p)
	}
	measured := &results.Phase{
		Name: results.PhaseMeasured, Batches: 1000, LateBatches: 4, Dispatched: 50000, Acked: 48000, AckedBytes: 48e6, Failed: 2000,
		Errors:       map[string]*stats.ErrorCount{"timeout": {Count: 2000, Sample: "<script>alert('x')</script> write timed out"}},
		WriteLatency: histogram(1000, 8*time.Millisecond, seed), ServiceTime: histogram(1000, 5*time.Millisecond, seed+1),
		Lateness: histogram(1000, 100*time.Microsecond, seed+2),
	}
	warm := &results.Phase{Name: results.PhaseWarmup, Batches: 200, Acked: 10000, WriteLatency: histogram(200, 9*time.Millisecond, seed+3)}
	res := &results.Result{
		SchemaVersion: results.SchemaVersion, Kind: results.KindRun, Command: "run",
		Tool: results.Tool{Name: "freshbench", Version: "v0.9.0-test"},
		Environment: results.Environment{
			Host: "bench-host-1", OS: "linux", Arch: "amd64", Cores: 16, GoVersion: "go1.26.8",
			Target: "elasticsearch", TargetURL: "elasticsearch://es-test:9200/events", TargetVersion: "Elasticsearch 8.19.0",
		},
		Config: results.Config{
			Rate: fmt.Sprint(rate), RateUnit: "events/s", RatePerSecond: rate, BatchSize: 50, DurationS: duration, WarmupS: warmup,
			Generators: 2, MaxInflight: 16, DocSize: 1000, Seed: 7, WriteTimeoutS: 30, ProbeRate: 20, PollIntervalS: 0.2, DrainS: 30,
			TargetSettings: map[string]string{"refresh_interval": "1s", "shards": "3"},
		},
		StartedAt:  time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		EndedAt:    time.Date(2025, 3, 1, 12, 1, 0, 0, time.UTC),
		Generators: []string{"111", "222"},
		Phases:     []*results.Phase{warm, measured},
		Endpoints: []*results.Endpoint{{
			Name: results.TargetEndpoint, URL: "elasticsearch://es-test:9200/events",
			Freshness: results.Freshness{
				Lag: histogram(125, 310*time.Millisecond, seed+4), QueryService: histogram(125, 2*time.Millisecond, seed+5), Samples: 125,
				Errors: map[string]*stats.ErrorCount{"connection_refused": {Count: 3, Sample: "dial tcp: connection refused"}},
			},
			Visibility: results.Visibility{
				Latency: histogram(500, 420*time.Millisecond, seed+6), QueryService: histogram(500, 3*time.Millisecond, seed+7),
				ResolutionMs: 200, Probes: 500, Seen: 498, NeverSeen: 2,
			},
			Completeness: []results.Completeness{
				{Generator: "111", Acknowledged: 29000, Visible: 28998, Missing: 2, MissingSample: []int64{17, 4242}},
				{Generator: "222", Acknowledged: 29000, Visible: 29000},
			},
		}},
		Series: series,
	}
	res.Summary = results.Summary{
		MeasuredS: duration - warmup, TargetEventsPerSec: rate, AchievedEventsPerSec: rate * 0.92,
		TargetMBPerSec: rate / 1000, AchievedMBPerSec: rate * 0.92 / 1000,
		EventsAcked: 58000, EventsFailed: 2000, Batches: 1000, LateBatches: 4,
		WriteLatency: measured.WriteLatency.Summarize(), ServiceTime: measured.ServiceTime.Summarize(),
		FreshnessLag: res.Target().Freshness.Lag.Summarize(), VisibilityLatency: res.Target().Visibility.Latency.Summarize(),
		VisibilityResolution: 200, ProbeQueryService: res.Target().Visibility.QueryService.Summarize(),
		Errors: measured.Errors, Missing: 2, Audited: true,
	}
	return res
}

// peakResult is a peak search of four steps; the third is the peak.
func peakResult() *results.Result {
	peak := runResult(3000, 100)
	peak.Kind, peak.Command = results.KindPeak, "peak"
	sustainable := []bool{true, true, true, false}
	for i, rate := range []float64{1000, 2000, 3000, 4000} {
		st := runResult(rate, uint64(10*i))
		st.Kind, st.Command = results.KindStep, "peak step"
		v := &stats.Verdict{Sustainable: sustainable[i], Achieved: 1}
		if !v.Sustainable {
			v.Reasons = []string{"achieved 81.0% of the target rate (< 98%)", "freshness lag grows 950 ms/s over the second half"}
			st.Summary.AchievedEventsPerSec = 3240
			st.Summary.FreshnessLag.P95Ms = 8200
		}
		st.Verdict = v
		peak.Steps = append(peak.Steps, st)
	}
	peak.Peak = &results.Peak{Found: true, Step: 2, Rate: "3000", AchievedEventsPerSec: 2760, AchievedMBPerSec: 2.76, Reason: "step 4000 was not sustainable", ElapsedS: 140}
	return peak
}

func render(t *testing.T, res *results.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, res); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	return b.String()
}

func TestHTMLRun(t *testing.T) {
	out := render(t, runResult(2000, 1))
	for _, want := range []string{
		"elasticsearch://es-test:9200/events", "Elasticsearch 8.19.0", "v0.9.0-test", "bench-host-1",
		"Achieved rate", "1,840", "92.0% of target 2,000", // headline throughput
		"Write latency p99", "Freshness lag p95", "Visibility latency p95", "Completeness", "99.997",
		"Throughput over time", "Write latency over time", "Freshness lag over time",
		"Write service time", "Visibility latency", "99.9%", // percentile curves and their axis
		"band-outage", "mark-late", // the outage and the late batches are marked
		"connection_refused", "dial tcp: connection refused", "4242",
		"refresh_interval", "target setting shards",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(out, "<svg"); n != 7 {
		t.Errorf("%d charts, want 7 (throughput, 2 over time, 4 percentile curves)", n)
	}
	if !strings.Contains(out, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; write timed out") {
		t.Error("the error sample is not shown escaped")
	}
	if strings.Contains(out, "Peak search") {
		t.Error("a run without steps shows a peak section")
	}
	checkPage(t, out)
}

func TestHTMLPeak(t *testing.T) {
	out := render(t, peakResult())
	for _, want := range []string{
		"Peak search", "Peak sustainable", "2,760", "step 3 of 4", "step 4000 was not sustainable",
		"Achieved vs target per step", "Latency per step", "peak-mark", "not sustainable",
		"freshness lag grows 950 ms/s over the second half", "8200",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("peak report lacks %q", want)
		}
	}
	if n := strings.Count(out, `<tr class="peak">`); n != 1 {
		t.Errorf("%d rows marked as the peak, want 1", n)
	}
	if n := strings.Count(out, "<svg"); n != 9 {
		t.Errorf("%d charts, want 9", n)
	}
	checkPage(t, out)
}

// A peak search that keeps its series only in its steps still gets charts:
// those of the peak step.
func TestHTMLPeakDetailFromStep(t *testing.T) {
	res := peakResult()
	res.Series, res.Phases = nil, nil
	out := render(t, res)
	if !strings.Contains(out, "show step 3 (target 3000)") {
		t.Error("the report does not say which step its charts show")
	}
	if strings.Contains(out, "no per-interval series") {
		t.Error("the step's series was not used")
	}
	checkPage(t, out)
}

// A result read back from JSON has histograms decoded and nothing else
// that the in-memory one had; it must render the same figures.
func TestHTMLFromFile(t *testing.T) {
	b, err := json.Marshal(peakResult())
	if err != nil {
		t.Fatal(err)
	}
	var res results.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	out := render(t, &res)
	if !strings.Contains(out, "Peak sustainable") || !strings.Contains(out, "99.9%") {
		t.Error("decoded result renders without its peak or percentile curves")
	}
	checkPage(t, out)
}

func TestHTMLEmpty(t *testing.T) {
	out := render(t, &results.Result{})
	for _, want := range []string{"no per-interval series", "no samples", "not audited"} {
		if !strings.Contains(out, want) {
			t.Errorf("empty report lacks %q", want)
		}
	}
	checkPage(t, out)
	if err := HTML(&bytes.Buffer{}, nil); err == nil {
		t.Error("HTML(nil) succeeded")
	}
}

func TestHTMLEndedEarly(t *testing.T) {
	res := runResult(1000, 3)
	res.EndedEarly, res.EndReason = true, "interrupted"
	res.Target().Completeness, res.Summary.Audited = nil, false
	out := render(t, res)
	if !strings.Contains(out, "ended early (interrupted)") || !strings.Contains(out, "Not audited: the run ended early.") {
		t.Error("an interrupted run is not flagged")
	}
	checkPage(t, out)
}

// voidElements have no end tag in HTML.
var voidElements = map[string]bool{"meta": true, "link": true, "br": true, "img": true, "hr": true, "input": true}

// checkPage checks what any report must be: one self-contained,
// well-nested HTML document with every untrusted string escaped.
func checkPage(t *testing.T, out string) {
	t.Helper()
	if !strings.HasPrefix(out, "<!DOCTYPE html>") {
		t.Error("no doctype")
	}
	if !strings.HasSuffix(strings.TrimSpace(out), "</html>") {
		t.Error("does not end with </html>")
	}
	for _, bad := range []string{"http://", "https://", "<script", "<link", "@import", "url(", "<img", "<iframe"} {
		if strings.Contains(out, bad) {
			t.Errorf("report contains %q: it must not load or run anything from outside", bad)
		}
	}
	for _, bad := range []string{"NaN", "+Inf", "%!", "<no value>"} {
		if strings.Contains(out, bad) {
			t.Errorf("report contains %q: a formatting error", bad)
		}
	}
	// Tags must nest. Style content is skipped: CSS is not markup.
	body := out
	if i, j := strings.Index(body, "<style>"), strings.Index(body, "</style>"); i >= 0 && j > i {
		body = body[:i] + body[j+len("</style>"):]
	}
	var stack []string
	for _, m := range regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>`).FindAllStringSubmatch(body, -1) {
		name := strings.ToLower(m[2])
		switch {
		case voidElements[name]:
		case m[1] == "":
			stack = append(stack, name)
		case len(stack) == 0 || stack[len(stack)-1] != name:
			t.Fatalf("</%s> closes %v", name, stack)
		default:
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Errorf("unclosed elements: %v", stack)
	}
}

// An hour-long series (the most a Series holds) must still give a page
// of reasonable size.
func TestHTMLLongSeries(t *testing.T) {
	res := runResult(1000, 5)
	res.Config.DurationS = 3600
	pts := make([]stats.Point, 3600)
	for i := range pts {
		pts[i] = stats.Point{StartS: float64(i), WidthS: 1, TargetEvents: 1000, AckedEvents: 1000, WriteP99Ms: 10, WriteMaxMs: 12, FreshnessLagMs: 300, FreshnessN: 5}
	}
	res.Series = pts
	out := render(t, res)
	if len(out) > 1<<20 {
		t.Errorf("report of an hour-long series is %d bytes, want under 1 MiB", len(out))
	}
	if !strings.Contains(out, ">60min<") {
		t.Error("a long run's time axis is not in minutes")
	}
	checkPage(t, out)
}

// The charts show what the figures are: the percentile curve passes
// through the percentiles it marks, failures are drawn only where they
// happened, and an outage does not flatten a latency timeline onto zero.
func TestHTMLChartShapes(t *testing.T) {
	// 990 fast samples and a slow tail: 99 % falls on the jump.
	h := stats.NewHistogram()
	for i := range 1000 {
		d := 10 * time.Millisecond
		if i >= 990 {
			d = 2 * time.Second
		}
		h.Record(d)
	}
	c := percentileChart("Write latency", "", "c-write", h).SVG
	var line string
	for _, l := range c.Lines {
		line = l.D
	}
	for _, m := range c.Marks {
		// A dot's path starts r = 3.5 left of its centre.
		var x, y float64
		if _, err := fmt.Sscanf(m.D, "M%g %g", &x, &y); err != nil {
			t.Fatalf("mark %q: %v", m.D, err)
		}
		at := svg.Num(x+3.5) + " " + svg.Num(y)
		if !strings.Contains(line, at) {
			t.Errorf("%s: the curve does not pass through its dot at %s:\n%s", m.Title, at, line)
		}
	}

	res := runResult(2000, 1) // failures in seconds 15 and 16 only
	tp := throughputChart(res).SVG
	for _, l := range tp.Lines {
		if !strings.HasPrefix(l.Class, "c-failed") {
			continue
		}
		// One step over both seconds: it leaves the zero line once and
		// comes back once, and is not drawn along it elsewhere.
		atZero := strings.Count(l.D, " "+svg.Num(tp.PlotBottom)+"L") + strings.Count(l.D, " "+svg.Num(tp.PlotBottom)+"M")
		if strings.HasSuffix(l.D, " "+svg.Num(tp.PlotBottom)) {
			atZero++
		}
		if strings.Count(l.D, "M") != 1 || atZero != 2 {
			t.Errorf("failed events: %d pieces and %d points on the zero line, want one step over the two failing seconds: %s", strings.Count(l.D, "M"), atZero, l.D)
		}
	}
	// Write latency p99 goes from 12 ms to 5 s in the outage: by decades.
	// Freshness lag goes from 310 ms to 2.3 s: linear still reads.
	if got := writeLatencyChart(res).SVG.YLabel; got != "latency (log)" {
		t.Errorf("write latency timeline with an outage: y axis %q, want a log axis", got)
	}
	if got := freshnessChart(res).SVG.YLabel; got != "seconds" {
		t.Errorf("freshness timeline: y axis %q, want linear seconds", got)
	}
}

func TestHTMLConfigRate(t *testing.T) {
	for _, c := range []struct {
		rate, unit string
		per        float64
		want       string
	}{
		{"2000 events/s", "events/s", 2000, "2000 events/s"},
		{"10MB/s", "bytes/s", 1e7, "10MB/s (10000000 bytes/s)"},
		{"", "events/s", 500, "500 events/s"},
	} {
		res := &results.Result{Config: results.Config{Rate: c.rate, RateUnit: c.unit, RatePerSecond: c.per}}
		if got := configFacts(res)[0]; got.Label != "rate" || got.Value != c.want {
			t.Errorf("rate %q: %q = %q, want %q", c.rate, got.Label, got.Value, c.want)
		}
	}
}

// A query load that ran alone wrote nothing: its page shows the queries,
// the configuration and the environment, and no ingest section.
func TestHTMLQueriesAlone(t *testing.T) {
	q := queryResult(100, 9)
	q.Beside = nil
	res := &results.Result{
		SchemaVersion: results.SchemaVersion, Kind: results.KindQuery, Command: "query",
		Environment: results.Environment{Target: "sqlite", TargetURL: "sqlite:///tmp/q.db", TargetVersion: "SQLite 3.50.0", Host: "bench-host-2"},
		Config:      results.Config{DurationS: 20, WarmupS: 2, TargetSettings: map[string]string{"synchronous": "NORMAL"}},
		Series:      []stats.Point{{StartS: 0, WidthS: 1, QueryCount: 100, QueryP99Ms: 9}, {StartS: 1, WidthS: 1, QueryCount: 98, QueryP99Ms: 11}},
		Endpoints:   []*results.Endpoint{{Name: results.TargetEndpoint, URL: "sqlite:///tmp/q.db", Queries: q}},
	}
	out := render(t, res)
	for _, want := range []string{
		"Achieved QPS", "100.0% of target 100", "Query latency p95", "Query latency p99", "Query errors", "of 800 queries · 3 unsent",
		"open loop at 100 QPS (at most 256 in flight)", "point=6,newest=4", "10 rows", "synchronous",
		`<section id="queries">`, `<section id="config">`, `<section id="environment">`, "bench-host-2", "seed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("query-only report lacks %q", want)
		}
	}
	for _, bad := range []string{
		`id="throughput"`, "Throughput over time", `id="latency-time"`, `id="percentiles"`, `id="phases"`, `id="errors"`, `id="completeness"`,
		"Achieved rate", "Write latency", "Freshness lag", "Visibility latency", "Completeness", "events/s", "batch",
	} {
		if strings.Contains(out, bad) {
			t.Errorf("query-only report shows %q, but nothing was written", bad)
		}
	}
	if n := strings.Count(out, "<svg"); n != 2 {
		t.Errorf("%d charts, want 2 (query latency and service time)", n)
	}
	checkPage(t, out)

	res.EndedEarly, res.EndReason = true, "interrupted"
	if out := render(t, res); !strings.Contains(out, "ended early (interrupted)") || strings.Contains(out, "audited") {
		t.Error("an interrupted query-only run is not flagged, or is said not to be audited")
	}

	// With an ingest beside, the queries join the ingest's sections.
	run := runResult(5000, 1)
	run.Kind, run.Target().Queries = results.KindQuery, queryResult(100, 9)
	out = render(t, run)
	for _, want := range []string{"Throughput over time", "Achieved rate", `id="completeness"`, `<section id="queries">`} {
		if !strings.Contains(out, want) {
			t.Errorf("report of queries beside an ingest lacks %q", want)
		}
	}
}
