package probe

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

// seqReader answers Seqs with a fixed list of stored _seq.
func seqReader(stored []int64) *fakeReader {
	f := newFakeReader()
	f.seqs = func(ctx context.Context, _ string, fn func(int64)) error {
		for _, s := range stored {
			fn(s)
		}
		return nil
	}
	return f
}

// The audit agrees with a plain set comparison for random mixes of
// batches acknowledged out of order, items that failed, events lost by the
// target, duplicates and events stored without an acknowledgement, at
// sizes that cross the ledger's internal block boundaries.
func TestLedgerAuditMatchesSets(t *testing.T) {
	for trial := range 40 {
		r := rand.New(rand.NewPCG(uint64(trial), 7))
		n := 1 + r.IntN(300_000)
		if trial%4 == 0 {
			n = 1 + r.IntN(3000)
		}
		batch := 1 + r.IntN(700)
		failShare := []float64{0, 0, 0.001, 0.3, 1}[r.IntN(5)]
		loseShare := []float64{0, 0.0001, 0.05}[r.IntN(3)]

		l := NewLedger()
		acked := map[int64]bool{}
		var batches, failedBatches [][]int64
		for lo := 0; lo < n; lo += batch {
			var seqs, failed []int64
			for s := lo; s < min(lo+batch, n); s++ {
				if r.Float64() >= failShare {
					seqs = append(seqs, int64(s))
					acked[int64(s)] = true
				} else {
					failed = append(failed, int64(s))
				}
			}
			batches, failedBatches = append(batches, seqs), append(failedBatches, failed)
		}
		// In-flight writes complete out of order.
		order := r.Perm(len(batches))
		for _, i := range order {
			l.Acked("g", batches[i])
			l.NotAcknowledged("g", failedBatches[i])
		}
		l.Acked("g", batches[0]) // an acknowledgement repeated counts once

		var stored []int64
		want := results.Completeness{Generator: "g", Acknowledged: int64(len(acked))}
		for s := int64(0); s < int64(n)+50; s++ {
			switch {
			case acked[s] && r.Float64() < loseShare:
				want.Missing++
				if len(want.MissingSample) < 20 {
					want.MissingSample = append(want.MissingSample, s)
				}
				continue
			case acked[s]:
			case s < int64(n) && r.Float64() < 0.001: // stored although its write failed
				want.Unacknowledged++
			case s >= int64(n) && r.Float64() < 0.1: // never written by this run
				want.Unexpected++
			default:
				continue
			}
			stored = append(stored, s)
			want.Visible++
			if r.Float64() < 0.001 {
				stored = append(stored, s)
				want.Duplicates++
			}
		}
		r.Shuffle(len(stored), func(i, j int) { stored[i], stored[j] = stored[j], stored[i] })

		if got := l.AckedCount("g"); got != want.Acknowledged {
			t.Fatalf("trial %d: acked count %d, want %d", trial, got, want.Acknowledged)
		}
		got, err := l.Audit(context.Background(), seqReader(stored), "g")
		if err != nil {
			t.Fatal(err)
		}
		if got.Generator != want.Generator || got.Acknowledged != want.Acknowledged || got.Visible != want.Visible ||
			got.Missing != want.Missing || got.Unacknowledged != want.Unacknowledged || got.Unexpected != want.Unexpected || got.Duplicates != want.Duplicates ||
			!slices.Equal(got.MissingSample, want.MissingSample) {
			t.Fatalf("trial %d (n=%d batch=%d fail=%g lose=%g):\n got %+v\nwant %+v", trial, n, batch, failShare, loseShare, got, want)
		}
	}
}

// A negative _seq from a target is not an acknowledged event; it is
// counted as visible and unexpected, not dropped.
func TestLedgerAuditNegativeSeq(t *testing.T) {
	l := NewLedger()
	l.Acked("g", []int64{0, 1, -3})
	got, err := l.Audit(context.Background(), seqReader([]int64{0, 1, -5}), "g")
	if err != nil {
		t.Fatal(err)
	}
	if got.Acknowledged != 2 || got.Visible != 2 || got.Missing != 0 {
		t.Errorf("%+v; want 2 acknowledged, 2 visible, 0 missing (negative _seq ignored)", got)
	}
}

// An audit that cannot read the target fails with the generator named.
func TestLedgerAuditError(t *testing.T) {
	l := NewLedger()
	l.Acked("g", []int64{0})
	_, err := l.Audit(context.Background(), &errReader{err: errors.New("boom")}, "g")
	if err == nil || !errors.Is(err, err) || err.Error() != "completeness audit of generator g: boom" {
		t.Errorf("error %v, want the generator and the cause", err)
	}
}

// A target that keeps nothing has no completeness: the audit says "not
// measured" instead of counting every acknowledged event as missing
// (issue 12, item 20: discard:// reported 30,000,000 missing).
func TestLedgerAuditNotMeasuredOnDiscard(t *testing.T) {
	l := NewLedger()
	l.Acked("g", []int64{0, 1, 2})
	got, err := l.Audit(context.Background(), sim.New(sim.Config{Discard: true}), "g")
	if err != nil {
		t.Fatalf("audit error %v, want a result that says not measured", err)
	}
	if got.NotMeasured == "" || got.Missing != 0 || got.Acknowledged != 3 {
		t.Errorf("%+v; want not measured, 3 acknowledged, nothing missing", got)
	}
}

// The ledger of a long run whose writes all succeed costs next to
// nothing per event: contiguous runs of acknowledged _seq are kept as
// full blocks, not bits (issue 12, item 19).
func TestLedgerContiguousRunsCostAlmostNothing(t *testing.T) {
	const events = 20_000_000
	perEvent := retainedPerEvent(events, 500)
	t.Logf("ledger retains %.5f bytes per acknowledged event over %d contiguous events", perEvent, events)
	if perEvent > 0.01 {
		t.Errorf("ledger retains %.4f bytes per acknowledged event, want under 0.01 (a plain bitset takes 0.125)", perEvent)
	}
}

// retainedPerEvent acknowledges events in batches, a few in flight at
// once, and returns the heap the ledger keeps per event.
func retainedPerEvent(events, batch int) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := NewLedger()
	seqs := make([]int64, batch)
	const inflight = 16
	// Batches complete in a rotating order within a window of inflight.
	for base := 0; base < events; base += batch * inflight {
		for k := inflight - 1; k >= 0; k-- {
			lo := base + k*batch
			seqs = seqs[:0]
			for s := lo; s < min(lo+batch, events); s++ {
				seqs = append(seqs, int64(s))
			}
			l.Acked("g", seqs)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(l)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(events)
}

// BenchmarkLedgerContiguous reports the heap the ledger retains per
// acknowledged event (retained-B/event) for contiguous runs, besides the
// usual allocation figures per event (one op = one acknowledged event;
// run with -benchtime=20000000x for a long run).
func BenchmarkLedgerContiguous(b *testing.B) {
	b.ReportAllocs()
	b.ReportMetric(retainedPerEvent(b.N, 500), "retained-B/event")
}

var _ target.Reader = (*fakeReader)(nil)

// The audit keeps the events not visible as ranges of _seq, and a
// re-check finds which of them a reader shows later (issue 27).
func TestAuditRangesAndRecheck(t *testing.T) {
	l := NewLedger()
	acked := make([]int64, 200)
	for i := range acked {
		acked[i] = int64(i)
	}
	l.Acked("g", acked)
	shows := func(max int64, skip func(int64) bool) *fakeReader {
		f := newFakeReader()
		f.seqs = func(_ context.Context, _ string, fn func(int64)) error {
			for s := int64(0); s < max; s++ {
				if !skip(s) {
					fn(s)
				}
			}
			return nil
		}
		return f
	}
	// 100..199 not visible yet, and 7 lost.
	c, err := l.Audit(context.Background(), shows(100, func(s int64) bool { return s == 7 }), "g")
	if err != nil {
		t.Fatal(err)
	}
	want := []results.SeqRange{{From: 7, To: 7}, {From: 100, To: 199}}
	if !slices.Equal(c.NotVisible, want) || c.NotVisibleCut || c.Missing != 101 {
		t.Fatalf("not visible %v (cut %v), missing %d; want %v, 101", c.NotVisible, c.NotVisibleCut, c.Missing, want)
	}
	// Later, all but 7 and 150 show.
	up, total, err := Recheck(context.Background(), shows(200, func(s int64) bool { return s == 7 || s == 150 }), "g", c.NotVisible)
	if err != nil || up != 99 || total != 101 {
		t.Errorf("re-check: %d of %d turned up (%v); want 99 of 101", up, total, err)
	}
	// A reader that fails says so.
	failing := newFakeReader()
	failing.seqs = func(context.Context, string, func(int64)) error { return errors.New("connection refused") }
	if _, _, err := Recheck(context.Background(), failing, "g", c.NotVisible); err == nil || !strings.Contains(err.Error(), "re-check of generator g") {
		t.Errorf("re-check of a failing reader: %v", err)
	}
}

// Events lost one in two would fill the results file: the ranges stop
// at their bound, and say so.
func TestAuditRangesBounded(t *testing.T) {
	rs, cut := []results.SeqRange(nil), false
	for base := int64(0); !cut; base += 64 {
		rs, cut = ranges(rs, cut, 0x5555555555555555, base)
	}
	if len(rs) != maxRanges || !cut {
		t.Errorf("%d ranges, cut %v; want %d, cut", len(rs), cut, maxRanges)
	}
}
