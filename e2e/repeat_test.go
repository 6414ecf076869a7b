package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
)

// Two runs with the same seed on one reused index or table: the second
// writes ids of its own, so its probes are not seen at once through the
// first run's copies and its audit counts nothing unexpected. Asked to
// repeat the seed's ids, the second run is refused.
//
// The servers run side by side, each on an index or table of its own:
// what is held is each second run against its own first run and its own
// server's refreshes, which a neighbour's load slows alike, and the
// lane's wall time is one server's runs, not four.
func TestRepeatedRunsOnOneIndex(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			raw := withName(t, serverURL(t, s.name), "repeat")
			settings := map[string]string{}
			if s.name != "postgres" {
				settings["refresh_interval"] = "1s"
			}
			open(t, raw, settings) // created once, dropped at the end
			reuse := func() target.Target {
				tgt, err := all.Registry().Open(context.Background(), raw, target.Options{Settings: settings, RequestTimeout: requestTimeout})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tgt.Close() })
				return tgt
			}
			// Five seconds measured hold about five refreshes at 1 s: enough to
			// bound the period from the server's count (seenThroughCopies).
			cfg := config(500, 6*time.Second, 100*time.Millisecond)
			// A write that outlasts config's 5 s counts as failed although
			// the server stores it later (a busy round: write latency p99
			// 3.7 s at 500 events/s); the audit is what is tested.
			cfg.Ingest.WriteTimeout = requestTimeout
			first := run(t, reuse(), cfg)
			second := run(t, reuse(), cfg)
			if first.Generators[0] == second.Generators[0] {
				t.Fatalf("both runs wrote generator %s", first.Generators[0])
			}
			sum := second.Summary
			if !sum.Audited || sum.Unexpected != 0 || sum.Missing != 0 || sum.Duplicates != 0 || sum.EventsFailed != 0 {
				t.Fatalf("second run: audited %v, unexpected %d, missing %d, duplicates %d, failed %d; want a clean audit of its own events",
					sum.Audited, sum.Unexpected, sum.Missing, sum.Duplicates, sum.EventsFailed)
			}
			// On a search engine a probe waits for a refresh: about half
			// the period on average. One seen through the first run's copy
			// reads far less (an earlier freshbench: p50 112 ms against
			// 636 ms in the first run).
			if s.name != "postgres" {
				a := recorded(t, second)
				n := int64(0)
				for _, r := range refreshesOf(t, a) {
					if r.Primary {
						n = r.Refreshes
					}
				}
				window := a.End.At.Sub(a.Start.At)
				if err := seenThroughCopies(first.Summary.VisibilityLatency.P50Ms, sum.VisibilityLatency.P50Ms, sum.VisibilityLatency.Count, window, n); err != nil {
					t.Fatalf("second run: %v", err)
				}
			}
			cfg.RepeatIDs = true
			cfg.Ingest.Duration, cfg.Ingest.Warmup = time.Second, 0
			if _, err := bench.Run(context.Background(), reuse(), cfg); err != nil {
				t.Fatalf("first run with the seed's own ids: %v", err)
			}
			if _, err := bench.Run(context.Background(), reuse(), cfg); !errors.Is(err, bench.ErrGeneratorInUse) {
				t.Fatalf("second run with the seed's own ids: %v, want bench.ErrGeneratorInUse", err)
			}
		})
	}
}

// seenThroughCopies says whether the probes of a second run on one index
// were seen through the first run's copies: its visibility median second
// (of n probes) below half of what a probe that waits for a refresh
// shows. That is the lesser of the first run's median and half the
// refresh period the server reports for the second run, n refreshes of
// the primary copy in window: at least window/(n+1), however the
// refreshes fall at its ends. The first run's median alone is no bound:
// a first run slowed by a cold index or a backlog has a median far above
// the refreshes' (a busy machine).
func seenThroughCopies(first, second float64, n int64, window time.Duration, refreshes int64) error {
	halfPeriod := float64(window) / float64(time.Millisecond) / float64(refreshes+1) / 2
	if want := min(first, halfPeriod) / 2; n == 0 || second < want {
		return fmt.Errorf("visibility latency p50 %.0f ms (%d probes); want ≥ %.0f ms, half the lesser of the first run's %.0f ms and half the refresh period the server reports, ≥ %.0f ms (%d refreshes in %s): probes seen through older copies",
			second, n, want, first, 2*halfPeriod, refreshes, window.Round(time.Millisecond))
	}
	return nil
}

// A second run whose probes wait for the refreshes passes however slow
// the first run was; one whose probes show at the poll interval does not.
func TestSeenThroughCopies(t *testing.T) {
	const window = 5 * time.Second
	// The first run's median inflated by a backlog; the second's follows
	// the 1 s refreshes the server reports.
	if err := seenThroughCopies(1500, 600, 50, window, 5); err != nil {
		t.Errorf("a correct second run after a slow first one: %v", err)
	}
	// The defect: probes seen through the first run's copies.
	if err := seenThroughCopies(636, 112, 50, window, 5); err == nil {
		t.Error("a second run seeing its probes at 112 ms through 1 s refreshes passed")
	}
	if err := seenThroughCopies(1500, 112, 50, window, 5); err == nil {
		t.Error("a second run seeing its probes at 112 ms after a slow first run passed")
	}
	if err := seenThroughCopies(636, 0, 0, window, 5); err == nil {
		t.Error("a second run with no probe seen passed")
	}
}
