package bench

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/target/sim"
)

func simConfig(d time.Duration) Config {
	return Config{
		Ingest: ingest.Config{
			Rate: pace.Rate{PerSecond: 2000, Unit: pace.Events}, BatchSize: 10, Duration: d, Warmup: time.Second,
			Generators: 2, MaxInflight: 16, DocSize: 500, Seed: 7, WriteTimeout: 5 * time.Second, ProbeRate: 50,
		},
		PollInterval: 50 * time.Millisecond, Drain: 5 * time.Second,
	}
}

// A target whose events become visible D after they are written must read
// back as D. On virtual time nothing else delays a probe or a poll: the
// visibility latency lies within D and D + the longest pause between two
// polls (1.5 poll intervals), the freshness lag within D and D + the gap
// between two batches of a stream.
func TestMeasuredDelayMatchesTargetDelay(t *testing.T) {
	for _, delay := range []time.Duration{100 * time.Millisecond, 400 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := simConfig(4 * time.Second)
				res, err := Run(context.Background(), sim.New(sim.Config{VisibilityDelay: delay}), cfg)
				if err != nil {
					t.Fatal(err)
				}
				d := float64(delay.Microseconds()) / 1000
				maxPause := 1.5 * float64(cfg.PollInterval.Microseconds()) / 1000
				in := cfg.Ingest
				batchGap := float64(in.BatchSize*in.Generators) / in.Rate.PerSecond * 1000
				// The histograms keep 3 significant digits: a value reads
				// back within 0.1 % of itself.
				lo, hi := func(ms float64) float64 { return ms * (1 - 0.001) }, func(ms float64) float64 { return ms * (1 + 0.001) }
				s := res.Summary
				if s.VisibilityLatency.Count < 50 {
					t.Fatalf("only %d probes measured", s.VisibilityLatency.Count)
				}
				if v := s.VisibilityLatency; v.MinMs < lo(d) || v.MaxMs > hi(d+maxPause) {
					t.Errorf("visibility latency %v–%v ms, want within [%v, %v]", v.MinMs, v.MaxMs, d, d+maxPause)
				}
				if f := s.FreshnessLag; f.Count == 0 || f.MinMs < lo(d) || f.MaxMs > hi(d+batchGap) {
					t.Errorf("freshness lag %v–%v ms (%d samples), want within [%v, %v]", f.MinMs, f.MaxMs, f.Count, d, d+batchGap)
				}
				if s.Missing != 0 || !s.Audited {
					t.Errorf("audited %v, missing %d; want a clean audit", s.Audited, s.Missing)
				}
			})
		})
	}
}

// A target that silently loses every 7th acknowledged event must make the
// audit count exactly those as missing.
func TestAuditCountsLostWrites(t *testing.T) { synctest.Test(t, testAuditCountsLostWrites) }

func testAuditCountsLostWrites(t *testing.T) {
	cfg := simConfig(2 * time.Second)
	cfg.Drain = time.Second
	res, err := Run(context.Background(), sim.New(sim.Config{DropEvery: 7}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var acked, visible int64
	for _, c := range res.Target().Completeness {
		acked += c.Acknowledged
		visible += c.Visible
	}
	if acked == 0 || !res.Summary.Audited {
		t.Fatalf("nothing audited: %+v", res.Target().Completeness)
	}
	if want := acked / 7; res.Summary.Missing != want || acked-visible != want {
		t.Fatalf("missing %d (acked %d, visible %d), want exactly %d", res.Summary.Missing, acked, visible, want)
	}
	if res.Summary.Unexpected != 0 || res.Summary.Duplicates != 0 {
		t.Fatalf("unexpected %d duplicates %d, want 0", res.Summary.Unexpected, res.Summary.Duplicates)
	}
}

// A target that stores every 9th insert but answers it as failed (a
// server's own retry of a write it had stored, answered as a duplicate
// id) must have the audit count exactly those as visible though
// unacknowledged: neither lost nor unexpected.
// With updates in the batches too: those batches book their outcome
// apart (ingest's settle).
func TestAuditTellsStoredFailuresFromUnexpected(t *testing.T) {
	for _, share := range []float64{0, 0.5} {
		t.Run(fmt.Sprintf("updates %g", share), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testAuditTellsStoredFailuresFromUnexpected(t, share) })
		})
	}
}

func testAuditTellsStoredFailuresFromUnexpected(t *testing.T, updateShare float64) {
	cfg := simConfig(2 * time.Second)
	cfg.Drain = time.Second
	cfg.Ingest.UpdateShare = updateShare
	res, err := Run(context.Background(), sim.New(sim.Config{FailStoredEvery: 9}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	var failed int64
	for _, p := range res.Phases {
		failed += p.Failed
	}
	if failed == 0 || !s.Audited {
		t.Fatalf("failed %d, audited %v: want failures to audit", failed, s.Audited)
	}
	if s.Unexpected != 0 || s.Missing != 0 || s.Duplicates != 0 || s.Unacknowledged != failed {
		t.Fatalf("unacknowledged %d, unexpected %d, missing %d, duplicates %d; want the %d failed events unacknowledged, the rest 0", s.Unacknowledged, s.Unexpected, s.Missing, s.Duplicates, failed)
	}
}

// Cancelling the context ends the run early and still returns what was
// measured.
func TestInterruptedRunKeepsResults(t *testing.T) { synctest.Test(t, testInterruptedRunKeepsResults) }

func testInterruptedRunKeepsResults(t *testing.T) {
	cfg := simConfig(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, sim.New(sim.Config{VisibilityDelay: 10 * time.Millisecond}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("run took %v after interruption", time.Since(start))
	}
	s := res.Summary
	if !res.EndedEarly || s.EventsAcked == 0 || s.MeasuredS > 2 {
		t.Fatalf("ended early %v, acked %d, measured %v s", res.EndedEarly, s.EventsAcked, s.MeasuredS)
	}
	// Events due after the interruption are not due; those before it are
	// all accounted for.
	if s.EventsDue != s.EventsAcked+s.EventsFailed+s.EventsUnsent || s.EventsDue < int64(1900*s.MeasuredS) {
		t.Fatalf("due %d, acked %d + failed %d + unsent %d over %.2f s at 2000 events/s", s.EventsDue, s.EventsAcked, s.EventsFailed, s.EventsUnsent, s.MeasuredS)
	}
	if res.Summary.AchievedEventsPerSec < 1900 || res.Summary.AchievedEventsPerSec > 2100 {
		t.Fatalf("achieved %v events/s over the shortened window, want about 2000", res.Summary.AchievedEventsPerSec)
	}
}
