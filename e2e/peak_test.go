package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/stats"
)

// A short peak search against each server completes, judges every step
// and reports a peak: at a few hundred events/s the first step must hold.
// Steps are short (1 s warm-up, 5 s held) so the whole search stays well
// under a minute; the peak's value is not asserted, it depends on the
// machine.
func TestPeakSearch(t *testing.T) {
	for _, name := range []string{"elasticsearch", "postgres"} {
		t.Run(name, func(t *testing.T) {
			tgt := open(t, withName(t, serverURL(t, name), "peak"), nil)
			run := config(250, 6*time.Second, 100*time.Millisecond)
			run.Ingest.BatchSize = 10 // 125 batches in the first step: one acknowledged after its end costs < 1 % of the achieved rate
			run.Drain = 10 * time.Second
			// Room for a server's stall (a GC, a merge) on a busy machine:
			// 32 batches in flight cover 1.3 s of this step.
			run.Ingest.MaxInflight = 32
			cfg := bench.PeakConfig{Run: run, Increase: bench.RateStep{Factor: 2}, MaxSteps: 3, Rule: stats.DefaultRule()}
			cfg.Rule.MaxGrowth = 0 // 5 s steps are too short to judge a trend (about 20 s are needed)
			// The late-share bound itself is tested in stats; here a few
			// late batches of a 5 s step under CPU hogs (seen: 5 % of 62,
			// timer jitter and a write p99 of 207 ms) must not hide
			// whether the search completes.
			cfg.Rule.MaxLateShare = 0.15
			res, err := bench.SearchPeak(context.Background(), tgt, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range res.Steps {
				if s.Verdict == nil {
					t.Fatalf("step %d has no verdict", i+1)
				}
				m := s.Summary
				t.Logf("step %d: %s, achieved %.0f events/s, write p99 %.1f ms, freshness lag p50/p95/p99 %.0f/%.0f/%.0f ms, visibility p95 %.0f ms, failed %d: %s",
					i+1, s.Config.Rate, m.AchievedEventsPerSec, m.WriteLatency.P99Ms, m.FreshnessLag.P50Ms, m.FreshnessLag.P95Ms, m.FreshnessLag.P99Ms,
					m.VisibilityLatency.P95Ms, m.EventsFailed, s.Verdict.Reason())
				if !m.Audited || m.Missing != 0 {
					t.Errorf("step %d: audited %v, missing %d", i+1, m.Audited, m.Missing)
				}
			}
			p := res.Peak
			if p == nil || !p.Found || res.EndedEarly {
				t.Fatalf("no peak reported: %+v (ended early %v)", p, res.EndedEarly)
			}
			t.Logf("peak: %s, %.0f events/s achieved; %s; %.0f s", p.Rate, p.AchievedEventsPerSec, p.Reason, p.ElapsedS)
			if p.Reason == "" || len(res.Steps) == 0 || len(res.Steps) > 4 {
				t.Errorf("%d steps, stop reason %q", len(res.Steps), p.Reason)
			}
		})
	}
}
