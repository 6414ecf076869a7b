package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target/sim"
)

// A freshness poll that fails is not left out of the lag: the lag was at
// least the age of the newest event last seen, and that lower bound is
// recorded and counted as censored; the failures are counted by kind
// (issue 12, item 8).
func TestFreshnessFailedPollsAreLowerBounds(t *testing.T) {
	start := time.Now().Add(-10 * time.Second)
	clock := NewClock(start)
	newest := start.Add(time.Second).UnixMicro() // 9 s old
	calls := 0
	f := newFakeReader()
	f.freshness = func(context.Context, string) (int64, bool, error) {
		calls++
		switch {
		case calls == 1:
			return newest, true, nil
		case calls%2 == 0:
			return 0, false, fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
		default:
			return 0, false, fmt.Errorf("query: %w", context.DeadlineExceeded)
		}
	}
	series := stats.NewSeries(start, 0)
	fr := NewFreshness("target", f, []string{"g"}, Budget{Interval: 10 * time.Millisecond}, clock, everything(), series, stats.NopObserver{})
	for range 5 {
		fr.sample(context.Background(), "g")
	}
	res := fr.Result()
	if res.Samples != 1 {
		t.Errorf("%d samples, want 1 poll that answered", res.Samples)
	}
	if got := res.Errors["connection_refused"]; got == nil || got.Count != 2 {
		t.Errorf("connection_refused %v, want 2", got)
	}
	if got := res.Errors["timeout"]; got == nil || got.Count != 2 {
		t.Errorf("timeout %v, want 2", got)
	}
	if n := res.Lag.Count(); n != 5 {
		t.Errorf("lag holds %d values, want 5: the answered poll and 4 failed ones as lower bounds", n)
	}
	if res.Censored != 4 {
		t.Errorf("censored %d, want the 4 failed polls", res.Censored)
	}
	// Four of the five values are lower bounds, all above the one answer:
	// every percentile from the answer's on is "> X", never a value
	// (issue 27); the least of them is the answer itself.
	if s := res.LagSummary(); !s.LowerBound(s.P50Ms) || !s.LowerBound(s.MaxMs) || s.LowerBound(s.MinMs) && s.MinMs < s.LowerFromMs {
		t.Errorf("lag summary %+v: want p50 and max marked as lower bounds", s)
	}
	// HDR keeps 3 significant digits: a value reads back up to 0.1 % low.
	if lo := res.Lag.Quantile(0); lo < 9*time.Second*999/1000 {
		t.Errorf("lag min %s, want every value at least the 9s age of the newest event seen", lo)
	}
	var inSeries int64
	for _, p := range series.Points() {
		inSeries += p.FreshnessN
	}
	if inSeries != 5 {
		t.Errorf("series holds %d freshness samples, want 5 (a stall shows as a rising lag)", inSeries)
	}
}

// Before any event was seen, a failed poll's lower bound is the age of
// the run, as for an answer that sees nothing.
func TestFreshnessFailedPollBeforeAnyAnswer(t *testing.T) {
	start := time.Now().Add(-2 * time.Second)
	f := newFakeReader()
	f.freshness = func(context.Context, string) (int64, bool, error) { return 0, false, errors.New("boom") }
	fr := NewFreshness("target", f, []string{"g"}, Budget{Interval: 10 * time.Millisecond}, NewClock(start), everything(), stats.NewSeries(start, 0), stats.NopObserver{})
	fr.sample(context.Background(), "g")
	res := fr.Result()
	if res.Censored != 1 || res.Lag.Count() != 1 || res.Lag.Quantile(1) < 2*time.Second*999/1000 {
		t.Errorf("censored %d, lag count %d, lag %s; want 1, 1, at least 2s", res.Censored, res.Lag.Count(), res.Lag.Quantile(1))
	}
}

// A freshness poll that stops at its own bound names that bound, not the
// target's request timeout (issue 12, item 16: a 10 s PostgreSQL stall
// was reported as "request timeout 30s").
func TestFreshnessTimeoutNamesPollBound(t *testing.T) {
	start := time.Now()
	fr := NewFreshness("target", blockingReader{}, []string{"g"}, Budget{Interval: 10 * time.Millisecond}, NewClock(start), everything(), stats.NewSeries(start, 0), stats.NopObserver{})
	fr.timeout = 40 * time.Millisecond
	fr.sample(context.Background(), "g")
	res := fr.Result()
	e := res.Errors["timeout"]
	if e == nil || e.Count != 1 {
		t.Fatalf("errors %v, want one timeout", res.Errors)
	}
	if !strings.Contains(e.Sample, "40ms") || strings.Contains(e.Sample, "30s") {
		t.Errorf("error %q, want it to name the poll's bound of 40ms, not the target's request timeout", e.Sample)
	}
}

// When the target's own, shorter timeout fires first, its message stands.
func TestFreshnessTargetTimeoutKeepsItsMessage(t *testing.T) {
	start := time.Now()
	f := newFakeReader()
	f.freshness = func(ctx context.Context, _ string) (int64, bool, error) {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
		defer cancel()
		<-ctx.Done()
		return 0, false, fmt.Errorf("timed out (request timeout 5ms): %w", ctx.Err())
	}
	fr := NewFreshness("target", f, []string{"g"}, Budget{Interval: 10 * time.Millisecond}, NewClock(start), everything(), stats.NewSeries(start, 0), stats.NopObserver{})
	fr.timeout = time.Minute
	fr.sample(context.Background(), "g")
	e := fr.Result().Errors["timeout"]
	if e == nil || !strings.Contains(e.Sample, "request timeout 5ms") {
		t.Errorf("error %v, want the target's own message", e)
	}
}

// A target that keeps nothing has no freshness: the result says so and
// records no lag (issue 12, item 20: discard:// showed a lag p50 of 306 s).
func TestFreshnessNotMeasuredOnDiscard(t *testing.T) {
	start := time.Now().Add(-time.Second)
	series := stats.NewSeries(start, 0)
	fr := NewFreshness("target", sim.New(sim.Config{Discard: true}), []string{"a", "b"}, Budget{Interval: 10 * time.Millisecond}, NewClock(start), everything(), series, stats.NopObserver{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	fr.Run(ctx)
	res := fr.Result()
	if res.NotMeasured == "" {
		t.Errorf("not measured reason empty; want one on a target that keeps nothing")
	}
	if res.Lag.Count() != 0 || res.Samples != 0 || res.Censored != 0 || len(res.Errors) != 0 {
		t.Errorf("lag count %d, samples %d, censored %d, errors %v; want nothing measured",
			res.Lag.Count(), res.Samples, res.Censored, res.Errors)
	}
	for _, p := range series.Points() {
		if p.FreshnessN != 0 {
			t.Errorf("series interval at %gs holds %d freshness samples, want none", p.StartS, p.FreshnessN)
		}
	}
}

// An answer that shows an older view than an earlier answer showed (a
// newest event older than one already seen, or no event after some were
// seen) is counted as a step back, with the largest, per reader and
// generator: Druid's broker once answered that none of the run's events
// was there, ~30 s after its indexer was killed, and the lag went from
// 0.1 s to the age of the run for one poll with nothing to say why. A
// failed poll is a lower bound, not a step back; a second generator's
// older events are not one either.
func TestFreshnessCountsStepsBack(t *testing.T) {
	start := time.Now().Add(-10 * time.Second)
	at := func(d time.Duration) int64 { return start.Add(d).UnixMicro() }
	answers := map[string][]struct {
		newest int64
		ok     bool
		err    error
	}{
		"g": {{at(5 * time.Second), true, nil}, {at(6 * time.Second), true, nil}, {0, false, nil}, // back to nothing
			{at(4 * time.Second), true, nil},  // back 2 s
			{0, false, errors.New("boom")},    // failed: a lower bound
			{at(7 * time.Second), true, nil}}, // forward
		"h": {{at(time.Second), true, nil}, {at(2 * time.Second), true, nil}},
	}
	f := newFakeReader()
	f.freshness = func(_ context.Context, gen string) (int64, bool, error) {
		a := answers[gen][0]
		answers[gen] = answers[gen][1:]
		return a.newest, a.ok, a.err
	}
	fr := NewFreshness("target", f, []string{"g", "h"}, Budget{Interval: 10 * time.Millisecond}, NewClock(start), everything(), stats.NewSeries(start, 0), stats.NopObserver{})
	for _, g := range []string{"g", "g", "h", "g", "g", "h", "g", "g"} {
		fr.sample(context.Background(), g)
	}
	res := fr.Result()
	if res.StepsBack != 2 {
		t.Errorf("%d steps back, want 2: the answer that saw nothing after events, and the one 2 s older than seen", res.StepsBack)
	}
	// Nothing after events seen up to 6 s into the run: back 6 s.
	if d := time.Duration(res.StepBackMaxMs * float64(time.Millisecond)); d < 6*time.Second-time.Millisecond || d > 6*time.Second+time.Millisecond {
		t.Errorf("largest step back %v, want 6s", d)
	}
}
