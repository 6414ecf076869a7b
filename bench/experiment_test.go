package bench

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target/sim"
)

// Two instances of an experiment started with the same seed and the
// seed's own ids (RepeatIDs) write to one target at once: each has
// generators of its own, so neither sees the other's events as its own.
func TestInstancesWithOneSeedShareNoIds(t *testing.T) {
	synctest.Test(t, testInstancesWithOneSeedShareNoIds)
}

func testInstancesWithOneSeedShareNoIds(t *testing.T) {
	tgt := sim.New(sim.Config{})
	startAt := time.Now().Add(500 * time.Millisecond)
	var wg sync.WaitGroup
	rs := make([]*results.Result, 2)
	errs := make([]error, 2)
	for i := range rs {
		wg.Go(func() {
			cfg := simConfig(2 * time.Second)
			cfg.Ingest.Seed, cfg.Ingest.Generators, cfg.RepeatIDs = 9, 2, true
			cfg.Experiment = &results.Experiment{Name: "same-seed", Instance: i, Instances: 2, StartAt: startAt}
			rs[i], errs[i] = Run(context.Background(), tgt, cfg)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
	}
	all := slices.Concat(rs[0].Generators, rs[1].Generators)
	slices.Sort(all)
	if len(slices.Compact(all)) != 4 {
		t.Errorf("generators %v and %v; want four distinct ones", rs[0].Generators, rs[1].Generators)
	}
	for i, r := range rs {
		if s := r.Summary; !s.Audited || s.Unexpected != 0 || s.Duplicates != 0 || s.Missing != 0 {
			t.Errorf("instance %d: audited %v, unexpected %d, duplicates %d, missing %d; want a clean audit", i, s.Audited, s.Unexpected, s.Duplicates, s.Missing)
		}
		if !r.StartedAt.Equal(startAt) {
			t.Errorf("instance %d started %s; want the common start %s", i, r.StartedAt, startAt)
		}
	}
}

// A common start that passed before the instance was ready is refused:
// its schedule would begin behind the others'.
func TestPassedStartRefused(t *testing.T) { synctest.Test(t, testPassedStartRefused) }

func testPassedStartRefused(t *testing.T) {
	cfg := simConfig(2 * time.Second)
	cfg.Experiment = &results.Experiment{Name: "late", Instances: 1, StartAt: time.Now().Add(-time.Second)}
	_, err := Run(context.Background(), sim.New(sim.Config{}), cfg)
	if e, ok := invalid.As(err); !ok || e.Field != "start" {
		t.Errorf("run with a start a second ago: %v; want the start refused as invalid", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg.Experiment.StartAt = time.Now().Add(time.Hour)
	if _, err := Run(ctx, sim.New(sim.Config{}), cfg); !errors.Is(err, ErrInterrupted) {
		t.Errorf("run cancelled while waiting for its start: %v; want %v", err, ErrInterrupted)
	}
}
