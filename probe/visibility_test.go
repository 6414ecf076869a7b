package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
	"github.com/freshbench/freshbench/timeline"
)

// everything is a measured window that holds every instant of a test.
func everything() *timeline.Timeline {
	now := time.Now()
	return timeline.Between(now.Add(-time.Hour), now.Add(-time.Hour), now.Add(time.Hour))
}

// pollsToCover is how many polls it takes to query n pending probes of
// one generator once each.
func pollsToCover(n int) int { return (n + maxIDsPerQuery - 1) / maxIDsPerQuery }

// Lost probes must not hide newer ones: with 600 pending probes of which
// the 100 newest are visible all along, every visible one is seen within
// the polls it takes to query 600 ids once (issue 12, item 9: the 500
// oldest were queried forever and the newest never).
func TestVisibilityNewerProbesAreNotBlockedByLostOnes(t *testing.T) {
	f := newFakeReader()
	f.visible = func(_, id string, _ int) bool {
		var i int
		fmt.Sscanf(id, "p%d", &i)
		return i >= 500
	}
	v := NewVisibility("target", f, Budget{Interval: 10 * time.Millisecond}, everything(), stats.NopObserver{})
	added := time.Now()
	for i := 0; i < 600; i++ {
		v.Add("g", fmt.Sprintf("p%d", i), 0, added)
	}
	for range pollsToCover(600) {
		v.pollOnce(context.Background())
	}
	res := v.Finish()
	if res.Seen != 100 || res.NeverSeen != 500 {
		t.Errorf("after %d polls: %d seen, %d never seen; want the 100 visible probes seen and the 500 lost ones not",
			pollsToCover(600), res.Seen, res.NeverSeen)
	}
}

// Every pending probe is queried within the polls it takes to go through
// the probes pending when it arrived, however many lost probes stay
// pending and however many new ones keep arriving.
func TestVisibilityQueriesEveryPendingProbeWithinBound(t *testing.T) {
	f := newFakeReader() // nothing is ever visible: every probe stays pending
	v := NewVisibility("target", f, Budget{Interval: 10 * time.Millisecond}, everything(), stats.NopObserver{})
	type arrival struct{ poll, bound int }
	arrivals := map[string]arrival{}
	next := 0
	add := func(poll, n int) {
		for range n {
			id := fmt.Sprintf("p%d", next)
			next++
			// The probe goes behind the Pending() already waiting.
			arrivals[id] = arrival{poll: poll, bound: pollsToCover(v.Pending() + 1)}
			v.Add("g", id, 0, time.Now())
		}
	}
	const polls = 30
	add(0, 1700)
	firstQueried := map[string]int{}
	for p := 1; p <= polls; p++ {
		v.pollOnce(context.Background())
		calls := f.callsFor("g")
		for _, id := range calls[len(calls)-1].ids {
			if _, ok := firstQueried[id]; !ok {
				firstQueried[id] = p
			}
		}
		add(p, 170) // more probes arrive than one poll could query alone
	}
	late := 0
	for id, a := range arrivals {
		due := a.poll + a.bound
		if due > polls {
			continue
		}
		if q, ok := firstQueried[id]; !ok || q > due {
			if late < 5 {
				t.Errorf("probe %s arrived before poll %d behind %d pending ids; first queried at poll %d (0 = never), want by poll %d",
					id, a.poll+1, (a.bound-1)*maxIDsPerQuery, q, due)
			}
			late++
		}
	}
	if late > 0 {
		t.Errorf("%d of %d probes were not queried within the bound", late, len(arrivals))
	}
}

// The resolution of the visibility latency is what the polls achieved,
// not 1.5 poll intervals: a probe query that takes time for each of
// several generators spaces the polls of each generator further apart
// (issue 12, item 10). The reported gaps are the fake's own: for each
// seen probe, from the start of the last query that missed it to the end
// of the query that saw it. In a synctest bubble: the fake's query time
// is then exact, and a busy machine cannot stretch a gap past the 10 ms
// the Visibility's own may differ by.
func TestVisibilityResolutionIsMeasured(t *testing.T) {
	synctest.Test(t, testVisibilityResolutionIsMeasured)
}

func testVisibilityResolutionIsMeasured(t *testing.T) {
	f := newFakeReader()
	f.queryDelay = 15 * time.Millisecond
	// Probe i of a generator turns visible at that generator's call 2 + i%3,
	// so each was missed by at least one query before it was seen.
	f.visible = func(_, id string, call int) bool {
		var g, i int
		fmt.Sscanf(id, "g%d-p%d", &g, &i)
		return call >= 2+i%3
	}
	poll := time.Millisecond
	v := NewVisibility("target", f, Budget{Interval: poll}, everything(), stats.NopObserver{})
	gens := []string{"g0", "g1", "g2"}
	for gi, g := range gens {
		for i := range 30 {
			v.Add(g, fmt.Sprintf("g%d-p%d", gi, i), 0, time.Now())
		}
	}
	for range 5 {
		v.pollOnce(context.Background())
	}
	res := v.Finish()
	if res.Seen != 90 {
		t.Fatalf("%d of 90 probes seen after 5 polls", res.Seen)
	}
	var want []time.Duration // the true gap of every seen probe
	for _, g := range gens {
		calls := f.callsFor(g)
		for k := 1; k < len(calls); k++ {
			for id := range calls[k].seen {
				if !calls[k-1].seen[id] {
					want = append(want, calls[k].done.Sub(calls[k-1].sent))
				}
			}
		}
	}
	if len(want) != 90 {
		t.Fatalf("fake saw %d first sightings, want 90", len(want))
	}
	longest := want[0]
	for _, w := range want {
		longest = max(longest, w)
	}
	// The query of each of the other generators lies inside each gap.
	floor := time.Duration(len(gens)) * f.queryDelay
	maxMs := float64(longest.Microseconds()) / 1000
	if res.ResolutionMaxMs < maxMs*(1-0.001) || res.ResolutionMaxMs > maxMs+10 {
		t.Errorf("resolution max %.1f ms, want the longest gap the fake saw, %.1f ms (1.5 poll intervals: %.1f ms)",
			res.ResolutionMaxMs, maxMs, 1.5*float64(poll.Microseconds())/1000)
	}
	if res.ResolutionMs < float64(floor.Milliseconds()) || res.ResolutionMs > res.ResolutionMaxMs {
		t.Errorf("resolution (p99 gap) %.1f ms, want at least %d generators × %s query time and at most the max %.1f ms",
			res.ResolutionMs, len(gens), f.queryDelay, res.ResolutionMaxMs)
	}
	if res.Gap == nil {
		t.Fatalf("no gaps recorded")
	}
	if n := res.Gap.Count(); n != 90 {
		t.Errorf("%d gaps recorded, want one per seen probe (90)", n)
	}
}

// Probes never seen are not left out of the latency: each enters it at
// its age when the measurement ended, a lower bound, and is counted as
// censored (issue 12, item 8).
func TestVisibilityNeverSeenEnterLatencyAsLowerBounds(t *testing.T) {
	f := newFakeReader()
	f.visible = func(_, id string, _ int) bool { return strings.HasPrefix(id, "seen") }
	v := NewVisibility("target", f, Budget{Interval: 10 * time.Millisecond}, everything(), stats.NopObserver{})
	old := time.Now().Add(-3 * time.Second)
	for i := range 4 {
		v.Add("g", fmt.Sprintf("seen%d", i), 0, time.Now())
		v.Add("g", fmt.Sprintf("lost%d", i), 0, old)
	}
	v.pollOnce(context.Background())
	res := v.Finish()
	if res.Seen != 4 || res.NeverSeen != 4 {
		t.Fatalf("%d seen, %d never seen; want 4 and 4", res.Seen, res.NeverSeen)
	}
	if n := res.Latency.Count(); n != 8 {
		t.Errorf("latency holds %d values, want 8: 4 seen and 4 never seen as lower bounds", n)
	}
	if res.Censored != 4 {
		t.Errorf("censored %d, want the 4 never-seen probes", res.Censored)
	}
	if got := res.Latency.Quantile(1); got < 3*time.Second*999/1000 {
		t.Errorf("latency max %s, want at least the never-seen probes' age of 3s", got)
	}
}

// A probe whose write failed is dropped, not counted as never seen, and
// so not as a lower bound either.
func TestVisibilityDroppedProbeIsNotCensored(t *testing.T) {
	v := NewVisibility("target", newFakeReader(), Budget{Interval: 10 * time.Millisecond}, everything(), stats.NopObserver{})
	v.Add("g", "a", 0, time.Now())
	v.Add("g", "b", 0, time.Now())
	v.Drop("g", "a", 0)
	res := v.Finish()
	if res.Dropped != 1 || res.NeverSeen != 1 || res.Censored != 1 || res.Latency.Count() != 1 {
		t.Errorf("dropped %d, never seen %d, censored %d, latency count %d; want 1, 1, 1, 1",
			res.Dropped, res.NeverSeen, res.Censored, res.Latency.Count())
	}
}

// A target that keeps nothing has no visibility to measure: the result
// says so instead of counting every probe as never seen (item 20), and
// the probes do not pile up in memory.
func TestVisibilityNotMeasuredOnDiscard(t *testing.T) {
	tgt := sim.New(sim.Config{Discard: true})
	v := NewVisibility("target", tgt, Budget{Interval: 10 * time.Millisecond}, everything(), stats.NopObserver{})
	for i := range 10 {
		v.Add("g", fmt.Sprintf("p%d", i), 0, time.Now())
	}
	v.pollOnce(context.Background())
	v.Add("g", "later", 0, time.Now())
	res := v.Finish()
	if res.NotMeasured == "" {
		t.Errorf("not measured reason empty; want one on a target that keeps nothing")
	}
	if res.NeverSeen != 0 || res.Latency.Count() != 0 || v.Pending() != 0 {
		t.Errorf("never seen %d, latency count %d, pending %d; want 0, 0, 0", res.NeverSeen, res.Latency.Count(), v.Pending())
	}
}

// A probe query that stops at the poll's own bound says so, not the
// target's longer request timeout (issue 12, item 16).
func TestVisibilityTimeoutNamesPollBound(t *testing.T) {
	f := &blockingReader{}
	v := NewVisibility("target", f, Budget{Interval: 10 * time.Millisecond}, everything(), stats.NopObserver{})
	v.timeout = 30 * time.Millisecond
	v.Add("g", "a", 0, time.Now())
	v.pollOnce(context.Background())
	res := v.Finish()
	e := res.Errors["timeout"]
	if e == nil || e.Count != 1 {
		t.Fatalf("errors %v, want one timeout", res.Errors)
	}
	if !strings.Contains(e.Sample, "30ms") || strings.Contains(e.Sample, "request timeout 30s") {
		t.Errorf("error %q, want it to name the poll's bound of 30ms, not the target's request timeout", e.Sample)
	}
}

// blockingReader answers nothing until its context ends, then reports
// the way a target with a 30 s request timeout does.
type blockingReader struct{}

func (blockingReader) wait(ctx context.Context) error {
	<-ctx.Done()
	return fmt.Errorf("query: timed out (request timeout 30s): %w", ctx.Err())
}

func (b blockingReader) Freshness(ctx context.Context, _ string) (int64, bool, error) {
	return 0, false, b.wait(ctx)
}

func (b blockingReader) Visible(ctx context.Context, _ string, _ []string) (map[string]bool, error) {
	return nil, b.wait(ctx)
}

func (b blockingReader) Count(ctx context.Context, _ string) (int64, error) { return 0, b.wait(ctx) }

func (b blockingReader) Seqs(ctx context.Context, _ string, _ func(int64)) error { return b.wait(ctx) }

var _ target.Reader = blockingReader{}

// An error from the target that is not ErrNotKept stays an error.
func TestVisibilityOtherErrorsAreCounted(t *testing.T) {
	f := &errReader{err: errors.New("boom")}
	v := NewVisibility("target", f, Budget{Interval: 10 * time.Millisecond}, everything(), stats.NopObserver{})
	v.Add("g", "a", 0, time.Now())
	v.pollOnce(context.Background())
	res := v.Finish()
	if res.NotMeasured != "" || res.Errors["request_failed"] == nil || res.NeverSeen != 1 {
		t.Errorf("not measured %q, errors %v, never seen %d; want measured, one request_failed, 1 never seen",
			res.NotMeasured, res.Errors, res.NeverSeen)
	}
}

type errReader struct{ err error }

func (e *errReader) Freshness(context.Context, string) (int64, bool, error) { return 0, false, e.err }
func (e *errReader) Visible(context.Context, string, []string) (map[string]bool, error) {
	return nil, e.err
}
func (e *errReader) Count(context.Context, string) (int64, error)    { return 0, e.err }
func (e *errReader) Seqs(context.Context, string, func(int64)) error { return e.err }
