package bench

import (
	"github.com/freshbench/freshbench/results"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/stats"
)

// lookDriverBehind feeds a looker of run one second at a time until a
// look ends the step, at most 40 s: 1,000 events/s asked for, 900
// acknowledged, a shortfall of 10 % with 2 of 16 slots busy and answers
// in 3 ms.
func lookDriverBehind(run Config) (*looker, []stats.Point) {
	lk := &looker{rule: stats.DefaultRule(), run: run, hold: 30}
	var series []stats.Point
	for i := range 40 {
		series = append(series, stats.Point{StartS: float64(i), WidthS: 1, TargetEvents: 1000, AckedEvents: 900, Batches: 18,
			Inflight: 2, WriteMeanMs: 3 + 0.1*float64(i%3), ServiceMeanMs: 3 + 0.1*float64(i%3),
			FreshnessLagMs: 50, FreshnessLagMinMs: 40, FreshnessN: 5})
		if lk.until(series, nil) {
			break
		}
	}
	return lk, series
}

// A look that finds the driver behind (the achieved rate short while
// the in-flight slots stay free and the service time is flat) ends the
// step: held longer it would say no more of the target. Seen failing
// before (the looker held on while the verdict was not yet known): "the
// look did not end the step".
func TestLookerEndsADriverLimitedStep(t *testing.T) {
	run := Config{Ingest: ingest.Config{Warmup: time.Second, Duration: time.Second + 5*time.Minute, BatchSize: 50, MaxInflight: 16}}
	lk, _ := lookDriverBehind(run)
	if lk.decided == nil || lk.looks != 1 {
		t.Fatalf("after %d look(s), decided %v: the look did not end the step", lk.looks, lk.decided != nil)
	}
}

// The final verdict of a step a driver-limited look ended is the look's:
// the driver fell behind (so the search stops naming it), said with what
// ended the step, however the step went on after the look; only the
// audit can overrule it, and lost writes make it not sustainable.
func TestLookerFinalKeepsTheLook(t *testing.T) {
	run := Config{Ingest: ingest.Config{Warmup: time.Second, Duration: time.Second + 5*time.Minute, BatchSize: 50, MaxInflight: 16}}
	lk, series := lookDriverBehind(run)
	if lk.decided == nil || !lk.decided.verdict.DriverLimited {
		t.Fatalf("the look did not end the step as driver-limited: %+v", lk.decided)
	}
	// After the look the driver caught up: the rest of the step, judged
	// afresh, would tell another story.
	for range 5 {
		series = append(series, stats.Point{StartS: float64(len(series)), WidthS: 1, TargetEvents: 1000, AckedEvents: 1000, Batches: 20,
			Inflight: 2, WriteMeanMs: 3, ServiceMeanMs: 3, FreshnessLagMs: 50, FreshnessLagMinMs: 40, FreshnessN: 5})
	}
	step := &results.Result{Series: series, Summary: results.Summary{Audited: true, TargetEventsPerSec: 1000, AchievedEventsPerSec: 990}}
	v := lk.decided.final(step, lk.rule)
	t.Logf("audited, none missing: %s", v)
	if !v.DriverLimited || !v.Undecided {
		t.Errorf("final verdict %s, want the driver named as the look found it", v)
	}
	if r := v.Reason(); !strings.HasPrefix(r, "the step ended at look 1 after ") || strings.Count(r, "the driver fell behind") != 1 {
		t.Errorf("final verdict %q does not say once what ended the step", r)
	}
	// Failed polls behind a driver that fell behind do not overrule it.
	step.Endpoints = []*results.Endpoint{{Name: results.TargetEndpoint, Freshness: results.Freshness{Lag: stats.NewHistogram(), Censored: 50}}}
	step.Endpoints[0].Freshness.Lag.Record(time.Second)
	v = lk.decided.final(step, lk.rule)
	t.Logf("failed polls: %s", v)
	if !v.DriverLimited {
		t.Errorf("final verdict %s after failed polls, want the driver named", v)
	}
	step.Summary.Missing = 7
	v = lk.decided.final(step, lk.rule)
	t.Logf("7 missing: %s", v)
	if v.Undecided || v.Sustainable || v.DriverLimited || !strings.Contains(v.Reason(), "7 acknowledged events missing after the drain") {
		t.Errorf("final verdict %s, want lost writes to fail the step", v)
	}
	step.Summary.Missing, step.Summary.Audited = 0, false
	v = lk.decided.final(step, lk.rule)
	t.Logf("not audited: %s", v)
	if !v.DriverLimited || !strings.Contains(v.Reason(), "completeness not audited") {
		t.Errorf("final verdict %s, want the driver named and the missing audit said", v)
	}
}

// rateLooker is a looker of a run at rate events/s in batches of 50,
// with inflight batches in flight at most, that first looks after hold
// seconds.
func rateLooker(rate float64, inflight int, hold float64) *looker {
	run := Config{Ingest: ingest.Config{Rate: pace.Rate{PerSecond: rate, Unit: pace.Events}, Warmup: time.Second,
		Duration: time.Second + 5*time.Minute, BatchSize: 50, MaxInflight: inflight, DocSize: 1000}}
	return &looker{rule: stats.DefaultRule(), run: run, hold: hold}
}

// A driver behind its own schedule has not yet handed out the units due
// since it fell behind, so the series holds no target for them: a look
// holds the acknowledged events to what the schedule made due, sent or
// not. Here 1,000 events/s are asked for and the driver sends 500/s,
// each unit later than the last (its intended times reach only half the
// time held) with its slots free and its answers prompt: the driver's
// limit. Seen failing before (the target counted from the series alone):
// "achieved 100.0 % of the target rate, decision not sustainable" — the
// write latency, counted from the intended times, grew, and the target
// was blamed (a driver capped at a tenth of a core against a
// noop server: "not sustainable: write latency grows 510.7 ms/s").
func TestLookerCountsUnitsDueButNotSent(t *testing.T) {
	lk := rateLooker(1000, 16, 10)
	var series []stats.Point
	for i := range 40 {
		// Units intended in second j went out at 2j: second i holds the
		// target of second i/2's units, the rest none yet.
		series = append(series, stats.Point{StartS: float64(i), WidthS: 1, AckedEvents: 500, Inflight: 2,
			WriteMeanMs: 1000 * float64(i) / 2, ServiceMeanMs: 3 + 0.1*float64(i%3),
			FreshnessLagMs: 500 * float64(i), FreshnessLagMinMs: 500 * float64(i), FreshnessN: 5})
		for j := range series {
			if 2*j <= i && 2*j+2 > i {
				series[j].TargetEvents, series[j].Batches, series[j].LateBatches = 1000, 20, 20
			}
		}
		if lk.until(series, nil) {
			break
		}
	}
	if lk.decided == nil {
		t.Fatalf("after %d look(s), no look ended the step", lk.looks)
	}
	v := lk.decided.verdict
	t.Logf("held %.0f s: achieved %.1f %%, %s", lk.decided.heldS, 100*v.Achieved, v)
	if v.Achieved > 0.6 || !v.DriverLimited {
		t.Errorf("achieved %.1f %% of the target rate, decision %s; want about 50 %%, the driver named", 100*v.Achieved, v.Decision())
	}
}

// A driver a batch or two behind its schedule at a look (its timers late
// on a busy machine) is within the tolerance a shortfall gets, the
// events the in-flight bound holds: the look judges the units it sent.
// Seen failing on acd1ae5, where every unit due counted: "achieved 96.7%
// of the target rate … 100 events due not yet sent", the driver named.
func TestLookerToleratesADriverABatchBehind(t *testing.T) {
	lk := rateLooker(500, 8, 6)
	var series []stats.Point
	for i := range 40 {
		series = append(series, stats.Point{StartS: float64(i), WidthS: 1, TargetEvents: 500, AckedEvents: 500, Batches: 10,
			Inflight: 2, WriteMeanMs: 3 + 0.1*float64(i%3), ServiceMeanMs: 3 + 0.1*float64(i%3),
			FreshnessLagMs: 50, FreshnessLagMinMs: 40, FreshnessN: 5})
		// At the look, the newest whole second's last 2 batches are not
		// yet sent: 100 of the 3,000 events due over 6 s.
		if i > 0 {
			series[i-1].TargetEvents, series[i-1].AckedEvents, series[i-1].Batches = 400, 400, 8
		}
		if lk.until(series, nil) {
			break
		}
		if i > 0 {
			series[i-1].TargetEvents, series[i-1].AckedEvents, series[i-1].Batches = 500, 500, 10
		}
	}
	if lk.decided == nil {
		t.Fatalf("after %d look(s), no look ended the step", lk.looks)
	}
	if v := lk.decided.verdict; !v.Sustainable {
		t.Errorf("a driver 100 events behind at the look, 400 in flight allowed: %s; want sustainable", v)
	}
}
