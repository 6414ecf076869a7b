package bench

import (
	"context"
	"testing"
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
// back as D: freshness lag and visibility latency within the poll
// resolution (plus the 5 ms between two batches of a stream).
func TestMeasuredDelayMatchesTargetDelay(t *testing.T) {
	for _, delay := range []time.Duration{100 * time.Millisecond, 400 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			cfg := simConfig(4 * time.Second)
			res, err := Run(context.Background(), sim.New(sim.Config{VisibilityDelay: delay}), cfg)
			if err != nil {
				t.Fatal(err)
			}
			d := float64(delay.Milliseconds())
			poll := float64(cfg.PollInterval.Milliseconds())
			slack := 15.0 // scheduling noise on a busy test machine
			// The histograms keep 3 significant digits: a value reads back
			// as the low end of its bucket, up to 0.1 % below.
			lo := d * (1 - 0.001)
			s := res.Summary
			if s.VisibilityLatency.Count < 50 {
				t.Fatalf("only %d probes measured", s.VisibilityLatency.Count)
			}
			if v := s.VisibilityLatency; v.P50Ms < lo || v.P50Ms > d+poll+slack || v.MinMs < lo {
				t.Errorf("visibility latency p50 %v ms (min %v), want within [%v, %v]", v.P50Ms, v.MinMs, d, d+poll+slack)
			}
			// The freshness lag sampled at query completion is D plus the age
			// of the newest visible batch: between D and D + batch gap + query.
			if f := s.FreshnessLag; f.P50Ms < lo || f.P50Ms > d+poll+slack {
				t.Errorf("freshness lag p50 %v ms, want within [%v, %v]", f.P50Ms, d, d+poll+slack)
			}
			if s.Missing != 0 || !s.Audited {
				t.Errorf("audited %v, missing %d; want a clean audit", s.Audited, s.Missing)
			}
		})
	}
}

// A target that silently loses every 7th acknowledged event must make the
// audit count exactly those as missing.
func TestAuditCountsLostWrites(t *testing.T) {
	cfg := simConfig(2 * time.Second)
	cfg.Drain = time.Second
	res, err := Run(context.Background(), sim.New(sim.Config{DropEvery: 7}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var acked, visible int64
	for _, c := range res.Completeness {
		acked += c.Acknowledged
		visible += c.Visible
	}
	if acked == 0 || !res.Summary.Audited {
		t.Fatalf("nothing audited: %+v", res.Completeness)
	}
	if want := acked / 7; res.Summary.Missing != want || acked-visible != want {
		t.Fatalf("missing %d (acked %d, visible %d), want exactly %d", res.Summary.Missing, acked, visible, want)
	}
	if res.Summary.Unexpected != 0 || res.Summary.Duplicates != 0 {
		t.Fatalf("unexpected %d duplicates %d, want 0", res.Summary.Unexpected, res.Summary.Duplicates)
	}
}

// Cancelling the context ends the run early and still returns what was
// measured.
func TestInterruptedRunKeepsResults(t *testing.T) {
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
