package e2e

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target/sim"
)

// firstStepUnmet tells a search that held no step (a server, here sim://
// with an injected capacity of 100 events/s, that cannot keep the first
// rate of 250: the starved machine's case) from one that found its peak
// (the same search from 62.5 events/s, which the capacity holds), and from
// one that did not run whole. TestPeakSearch used to fail at once on the
// first kind ("no peak reported"); it now searches again lower.
func TestPeakFirstStepUnmet(t *testing.T) {
	search := func(rate, capacity float64, ctx context.Context) string {
		run := config(rate, 6*time.Second, 100*time.Millisecond)
		run.Ingest.BatchSize, run.Drain = 10, 5*time.Second
		cfg := bench.PeakConfig{Run: run, Increase: bench.RateStep{Factor: 2}, MaxSteps: 3, Rule: stats.DefaultRule()}
		cfg.Rule.MaxGrowth = 0
		res, err := bench.SearchPeak(ctx, sim.New(sim.Config{VisibilityDelay: 50 * time.Millisecond, Capacity: capacity}), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("from %.0f events/s, capacity %.0f: peak %+v, ended early %v", rate, capacity, *res.Peak, res.EndedEarly)
		return firstStepUnmet(res)
	}
	synctest.Test(t, func(t *testing.T) {
		if unmet := search(250, 100, context.Background()); !strings.Contains(unmet, "no step held, the first (250 events/s)") {
			t.Errorf("a server whose capacity is below the first step: %q; want the first step named as not held", unmet)
		}
		if unmet := search(62.5, 100, context.Background()); unmet != "" {
			t.Errorf("a server that holds the first step: %q; want the premise met", unmet)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if unmet := search(250, 100, ctx); unmet != "" {
			t.Errorf("an interrupted search: %q; want it not taken for the machine's doing", unmet)
		}
	})
}

// The database's account of the step over its capacity: a lag seconds of
// the overload short of the step (650 records at 1,000 over 736
// records/s, seen) holds; one no larger than at the step below, or than
// a consumer that keeps up shows, does not.
func TestDatabaseBacklogError(t *testing.T) {
	if err := databaseBacklogError(1000, 736, 0, 650); err != nil {
		t.Errorf("a lag of 650 records at 1000 over 736 records/s: %v", err)
	}
	if err := databaseBacklogError(1000, 736, 0, 40); err == nil {
		t.Error("a lag of 40 records, a consumer keeping up: want an error")
	}
	if err := databaseBacklogError(1000, 736, 700, 650); err == nil {
		t.Error("a lag below the step below's: want an error")
	}
}
