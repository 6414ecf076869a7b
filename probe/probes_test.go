package probe

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/stats"
)

// visibleFrom is a fakeReader that sees every probe from its call-th
// Visible call on.
func visibleFrom(call int) *fakeReader {
	f := newFakeReader()
	f.visible = func(_, _ string, c int) bool { return c >= call }
	return f
}

// Polled in turn, an endpoint that saw a probe before a later query of
// the target's missed it showed it first, and the converse; the probe is
// visible everywhere at the latest sighting, and one never seen on some
// endpoint is a lower bound there and everywhere. In a synctest bubble:
// the reader's own times and the Visibility's are then one clock that
// moves only with the test's sleeps, so a thread descheduled between
// them on a busy machine cannot stretch the millisecond they must agree
// within.
func TestProbesOrderAndEverywhere(t *testing.T) { synctest.Test(t, testProbesOrderAndEverywhere) }

func testProbesOrderAndEverywhere(t *testing.T) {
	ctx := context.Background()
	target, early, late, never := visibleFrom(2), visibleFrom(1), visibleFrom(3), visibleFrom(1000)
	w := everything()
	vs := []*Visibility{
		NewVisibility("target", target, Budget{Interval: time.Millisecond}, w, stats.NopObserver{}),
		NewVisibility("early", early, Budget{Interval: time.Millisecond}, w, stats.NopObserver{}),
		NewVisibility("late", late, Budget{Interval: time.Millisecond}, w, stats.NopObserver{}),
		NewVisibility("never", never, Budget{Interval: time.Millisecond}, w, stats.NopObserver{}),
	}
	p := NewProbes(w, vs...)
	p.Add("g", "a", 0, time.Now())
	p.Add("g", "b", 0, time.Now())
	p.Drop("g", "b", 0)
	// Polls in the order of the instants: early sees "a" (call 1), then
	// the target misses it (call 1) and sees it (call 2); late misses it
	// twice after that, then sees it. Each a millisecond of the bubble's
	// clock after the one before, so that their instants differ.
	poll := func(v *Visibility) {
		time.Sleep(time.Millisecond)
		v.pollOnce(ctx)
	}
	poll(vs[1])
	poll(vs[0])
	poll(vs[0])
	for range 3 {
		poll(vs[2])
	}
	poll(vs[3])
	if n := p.Pending(); n != 1 {
		t.Fatalf("%d sightings pending, want 1: never's", n)
	}
	seen, every := p.Finish()
	for i, want := range []struct{ before, after, seen int64 }{{0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {0, 1, 0}} {
		if v := seen[i]; v.BeforeTarget != want.before || v.AfterTarget != want.after || v.Seen != want.seen || v.Dropped != 1 {
			t.Errorf("%s: before %d after %d seen %d dropped %d, want %d, %d, %d, 1",
				[]string{"target", "early", "late", "never"}[i], v.BeforeTarget, v.AfterTarget, v.Seen, v.Dropped, want.before, want.after, want.seen)
		}
	}
	if every == nil || every.Probes != 2 || every.Dropped != 1 || every.Seen != 0 || every.NeverSeen != 1 || every.Censored != 1 {
		t.Fatalf("everywhere %+v: want 2 probes, 1 dropped, 1 never seen (never's)", every)
	}

	// Without the endpoint that never sees it, the probe is visible
	// everywhere when late sees it: at the latest sighting, whose
	// window is that of late's last query.
	target, early, late = visibleFrom(1), visibleFrom(1), visibleFrom(2)
	vs = []*Visibility{
		NewVisibility("target", target, Budget{Interval: time.Millisecond}, w, stats.NopObserver{}),
		NewVisibility("early", early, Budget{Interval: time.Millisecond}, w, stats.NopObserver{}),
		NewVisibility("late", late, Budget{Interval: time.Millisecond}, w, stats.NopObserver{}),
	}
	p = NewProbes(w, vs...)
	added := time.Now()
	p.Add("g", "a", 0, added)
	for _, i := range []int{0, 1, 2, 2} {
		time.Sleep(10 * time.Millisecond) // far above the histograms' microseconds
		vs[i].pollOnce(ctx)
	}
	calls := late.callsFor("g")
	seen, every = p.Finish()
	if every.Seen != 1 || every.Latency.Count() != 1 {
		t.Fatalf("everywhere %+v, want the probe seen", every)
	}
	// The reader's own times lie within the Visibility's, by far less
	// than a millisecond.
	last := calls[len(calls)-1]
	if got, want := every.Latency.Quantile(1), last.done.Sub(added); got < want-time.Millisecond || got > want+time.Millisecond {
		t.Errorf("visible everywhere after %s, want late's sighting %s", got, want)
	}
	if got, want := every.Gap.Quantile(1), last.done.Sub(calls[0].sent); got < want-time.Millisecond || got > want+time.Millisecond {
		t.Errorf("everywhere's gap %s, want from late's last miss to its sighting, %s", got, want)
	}
	if every.Latency.Quantile(1) < seen[0].Latency.Quantile(1) || every.Latency.Quantile(1) < seen[1].Latency.Quantile(1) {
		t.Error("visible everywhere before some endpoint saw it")
	}
}

// One endpoint, the target alone, has no everywhere of its own.
func TestProbesOneEndpoint(t *testing.T) {
	w := everything()
	v := NewVisibility("target", visibleFrom(1), Budget{Interval: time.Millisecond}, w, stats.NopObserver{})
	p := NewProbes(w, v)
	p.Add("g", "a", 0, time.Now())
	v.pollOnce(context.Background())
	seen, every := p.Finish()
	if every != nil || len(seen) != 1 || seen[0].Seen != 1 {
		t.Fatalf("one endpoint: everywhere %v, seen %+v", every, seen)
	}
}
