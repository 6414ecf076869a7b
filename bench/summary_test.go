package bench

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target/sim"
)

// Every summary figure is of the measured phase: events acknowledged,
// failed and unsent balance against the events due in it, the same phase
// whose batches and late batches are counted.
func TestSummaryIsTheMeasuredPhase(t *testing.T) { synctest.Test(t, testSummaryIsTheMeasuredPhase) }

func testSummaryIsTheMeasuredPhase(t *testing.T) {
	cfg := simConfig(3 * time.Second)
	cfg.Drain = 0
	res, err := Run(context.Background(), sim.New(sim.Config{}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != results.KindRun {
		t.Errorf("kind %q, want %q", res.Kind, results.KindRun)
	}
	s := res.Summary
	var m int64
	for _, p := range res.Phases {
		if p.Name == "measured" {
			m = p.Acked
		}
	}
	if s.EventsAcked != m {
		t.Fatalf("summary: %d events acknowledged, measured phase %d: the summary mixes phases", s.EventsAcked, m)
	}
	// 2000 events/s for the 2 s after the 1 s warm-up.
	if due := s.EventsAcked + s.EventsFailed + s.EventsUnsent; due != 4000 {
		t.Fatalf("summary: acknowledged %d + failed %d + unsent %d = %d, want the 4000 due in the measured 2 s", s.EventsAcked, s.EventsFailed, s.EventsUnsent, due)
	}
}

// Runs with the same seed on one target write ids of their own; asked to
// repeat the seed's ids, a second run is refused: its probes would be seen
// at once through the old copies.
func TestRepeatedRuns(t *testing.T) { synctest.Test(t, testRepeatedRuns) }

func testRepeatedRuns(t *testing.T) {
	tgt := sim.New(sim.Config{})
	cfg := simConfig(2 * time.Second)
	cfg.Drain = time.Second
	first, err := Run(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Run(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatalf("second run with the same seed: %v", err)
	}
	if first.Generators[0] == second.Generators[0] {
		t.Fatalf("both runs wrote generator %s", first.Generators[0])
	}
	if s := second.Summary; !s.Audited || s.Unexpected != 0 || s.Missing != 0 {
		t.Fatalf("second run: audited %v, unexpected %d, missing %d; want a clean audit of its own events", s.Audited, s.Unexpected, s.Missing)
	}
	cfg.RepeatIDs = true
	if _, err := Run(context.Background(), tgt, cfg); err != nil {
		t.Fatalf("first run with the seed's own ids: %v", err)
	}
	_, err = Run(context.Background(), tgt, cfg)
	if !errors.Is(err, ErrGeneratorInUse) {
		t.Fatalf("second run with the seed's own ids on the same target: %v, want ErrGeneratorInUse", err)
	}
}

// A target that keeps nothing has nothing to wait for: the drain ends at
// once instead of lasting its whole bound.
func TestDiscardDoesNotWaitOutTheDrain(t *testing.T) {
	synctest.Test(t, testDiscardDoesNotWaitOutTheDrain)
}

func testDiscardDoesNotWaitOutTheDrain(t *testing.T) {
	cfg := simConfig(2 * time.Second)
	cfg.Drain = 30 * time.Second
	start := time.Now()
	res, err := Run(context.Background(), sim.New(sim.Config{Discard: true}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("a 2 s run against a target that keeps nothing took %s: it waited out the drain", took.Round(time.Second))
	}
	if res.Summary.Audited || res.Target().Freshness.NotMeasured == "" {
		t.Fatalf("audited %v, freshness not measured %q: want neither measured", res.Summary.Audited, res.Target().Freshness.NotMeasured)
	}
}
