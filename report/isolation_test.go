package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/results"
)

// isolationResult is a run of the isolation experiment: bursts at 20–30 s
// and 60–70 s of a 100 s run, on the target and one standby.
func isolationResult() *results.Result {
	r := runResult(2000, 7)
	r.Config.WriteShape = "burst 5x at 20s for 10s"
	f := func(v float64) *float64 { return &v }
	q := func(n int64, p50, p95, p99 float64) results.Quantiles {
		return results.Quantiles{N: n, P50Ms: p50, P95Ms: p95, P99Ms: p99}
	}
	window := func(name string, from, to float64, k float64) *results.IsolationWindow {
		return &results.IsolationWindow{Name: name, FromS: from, ToS: to, WriteLatency: q(200, 5*k, 9*k, 12*k),
			Endpoints: []*results.WindowByEndpoint{
				{Endpoint: "target", QueryLatency: q(1000, 3*k, 8*k, 11*k), FreshnessLag: q(50, 900*k, 1100*k, 1200*k), Visibility: q(40, 800*k, 1000*k, 1100*k)},
				{Endpoint: "read1", QueryLatency: q(1000, 3, 8, 11), QueryErrors: map[string]int64{"point": 2}, FreshnessLag: q(50, 950*k, 1300*k, 1400*k)},
			}}
	}
	r.Isolation = &results.Isolation{Factor: 5, BurstS: 10, Band: 1.5, ResolutionS: 1,
		Windows: []*results.IsolationWindow{window(results.WindowBaseline, 10, 20, 1), window(results.WindowIngestBurst, 20, 30, 4),
			window(results.WindowIngestRecovery, 30, 60, 1.2), window(results.WindowQueryBurst, 60, 70, 2), window(results.WindowQueryRecovery, 70, 100, 1)},
		Bursts: []*results.IsolationBurst{
			{Load: "ingest", FromS: 20, ToS: 30, WriteP95Ratio: f(4), Endpoints: []*results.BurstEndpoint{
				{Endpoint: "target", QueryP95Ratio: f(4), QueryP99Ratio: f(4), FreshnessRatio: f(4), VisibilityRatio: f(4), Recovered: true, RecoveryS: 7},
				{Endpoint: "read1", QueryP95Ratio: f(1), QueryP99Ratio: f(1), FreshnessRatio: f(4), Recovered: false, RecoveryS: 30},
			}},
			{Load: "query", FromS: 60, ToS: 70, Endpoints: []*results.BurstEndpoint{
				{Endpoint: "target", QueryP95Ratio: f(2), FreshnessRatio: f(2), Recovered: false, RecoveryNotKnown: true, RecoveryS: 4},
				{Endpoint: "read1", QueryP95Ratio: f(1), FreshnessRatio: f(2), Recovered: true, RecoveryS: 0},
			}},
		}}
	return r
}

// The console and the page say what each burst did in the words of the
// method: ratios, a recovery time, "not recovered by the end" as a lower
// bound, "not yet known" without samples, "not known" for a ratio
// without a baseline.
func TestIsolationReports(t *testing.T) {
	r := isolationResult()
	var b bytes.Buffer
	ConsoleIsolation(&b, r)
	out := b.String()
	for _, want := range []string{
		"Each load ×5 for 10s in turn", "within 1.5× the baseline's",
		"> 30s, not recovered by the end", "not yet known (≥ 4s; no samples after)", "not known",
		"point 2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	if row := regexp.MustCompile(`\n\s+ingest\s+target\s+20s–30s\s+×4\s+×4\s+×4\s+×4\s+×4\s+7s\n`); !row.MatchString(out) {
		t.Errorf("console lacks the ingest burst's row on the target:\n%s", out)
	}
	page := render(t, r)
	for _, want := range []string{`<section id="isolation">`, `class="band-burst"`, "ingest ×5", "query ×5", "&gt; 30s, not recovered by the end"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	var c bytes.Buffer
	Compare(&c, []string{"a", "b"}, []*results.Result{r, isolationResult()})
	for _, want := range []string{"ingest burst on read1: recovery s", "> 30s", "query burst on target: query p95 ×"} {
		if !strings.Contains(c.String(), want) {
			t.Errorf("compare lacks %q:\n%s", want, c.String())
		}
	}
}
