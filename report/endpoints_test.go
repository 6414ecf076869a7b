package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// endpointResult is runResult read from a standby too: one down for a
// while (failed polls and probe queries, probes never seen), with a
// password in its URL, and the probes visible everywhere.
func endpointResult(seed uint64) *results.Result {
	res := runResult(2000, seed)
	e := &results.Endpoint{
		Name: "read1", URL: "postgres://bench:s3cret@standby:5434/db?table=events",
		Freshness: results.Freshness{
			Lag: histogram(110, 900*time.Millisecond, seed+20), QueryService: histogram(110, 2*time.Millisecond, seed+21), Samples: 110, Censored: 15,
			StepsBack: 2, StepBackMaxMs: 31810,
			Errors: map[string]*stats.ErrorCount{"connection_refused": {Count: 15, Sample: "dial tcp 127.0.0.1:15434: connection refused"}},
		},
		Visibility: results.Visibility{
			Latency: histogram(500, 950*time.Millisecond, seed+22), QueryService: histogram(480, 3*time.Millisecond, seed+23),
			Gap: histogram(480, 200*time.Millisecond, seed+24), Probes: 500, Seen: 480, NeverSeen: 20, Censored: 20,
			Unseen: histogram(20, 6*time.Second, seed+27),
			Errors: map[string]*stats.ErrorCount{"connection_refused": {Count: 12, Sample: "dial tcp 127.0.0.1:15434: connection refused"}},
		},
		Completeness: res.Target().Completeness,
	}
	e.Visibility.SetResolution()
	every := &results.Visibility{Latency: histogram(500, 990*time.Millisecond, seed+25), Gap: histogram(480, 250*time.Millisecond, seed+26), Probes: 500, Seen: 480, NeverSeen: 20, Censored: 20,
		Unseen: histogram(20, 6*time.Second, seed+28)}
	every.SetResolution()
	res.Endpoints, res.VisibleEverywhere = []*results.Endpoint{res.Target(), e}, every
	res.Phase(results.PhaseMeasured).UnsentWait = stats.NewHistogram()
	res.Summary = results.Summarize(res, res.Summary.MeasuredS)
	return res
}

func TestConsoleReadEndpoints(t *testing.T) {
	var b bytes.Buffer
	Console(&b, endpointResult(1))
	out := b.String()
	for _, want := range []string{
		"freshness lag (target)", "read endpoints (ms;", "seen before/after target",
		"15 of 125", // read1's failed polls of all its polls
		"read1: postgres://bench:xxxxx@standby:5434/db?table=events; completeness 2 missing",
		"everywhere: 20 probes not seen on every endpoint",
		"freshness query on read1 connection_refused: 15", "probe query on read1 connection_refused: 12",
		"freshness query on target connection_refused: 3",
		"freshness: 2 polls on read1 showed an older view than an earlier one had (events already seen went out of sight again, up to 31810 ms back)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Error("the console shows a read endpoint's password")
	}
	rows := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 7 {
			rows[f[0]] = true
		}
	}
	if !rows["target"] || !rows["read1"] || !rows["everywhere"] {
		t.Errorf("rows of the endpoints table: %v, want target, read1 and everywhere", rows)
	}
	b.Reset()
	Console(&b, runResult(2000, 1))
	if out := b.String(); strings.Contains(out, "read endpoints") || strings.Contains(out, "(target)") || strings.Contains(out, " on target") {
		t.Errorf("a run without read endpoints speaks of them:\n%s", out)
	}
}

func TestHTMLReadEndpoints(t *testing.T) {
	out := render(t, endpointResult(2))
	for _, want := range []string{
		`<section id="endpoints">`, "Read endpoints", "Visibility latency on read1", "Visible everywhere",
		"postgres://bench:xxxxx@standby:5434/db?table=events", "freshness query on read1", "15 of 125",
		"2 polls on read1 showed an older view",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Error("the report shows a read endpoint's password")
	}
	if n := strings.Count(out, "<svg"); n != 9 {
		t.Errorf("%d charts, want 9: a run's 7, read1's visibility and everywhere's", n)
	}
	checkPage(t, out)
	if out := render(t, runResult(2000, 1)); strings.Contains(out, `id="endpoints"`) {
		t.Error("a run without read endpoints has an endpoints section")
	}
}

func TestCompareReadEndpoints(t *testing.T) {
	var b bytes.Buffer
	Compare(&b, []string{"with", "without"}, []*results.Result{endpointResult(3), runResult(2000, 4)})
	out := b.String()
	for _, want := range []string{"read1 freshness lag p50 ms", "read1 visibility latency p95 ms", "visible everywhere p95 ms"} {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), want) {
				line = l
			}
		}
		// The run without read endpoints has none of their figures.
		if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), want)); len(f) != 3 || f[1] != "-" || f[0] == "-" {
			t.Errorf("row %q: %q", want, line)
		}
	}
}
