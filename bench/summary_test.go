package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/freshbench/freshbench/target/sim"
)

// Every summary figure is of the measured phase: events acknowledged,
// failed and unsent balance against the events due in it, the same phase
// whose batches and late batches are counted.
func TestSummaryIsTheMeasuredPhase(t *testing.T) {
	cfg := simConfig(3 * time.Second)
	cfg.Drain = 0
	res, err := Run(context.Background(), sim.New(sim.Config{}), cfg)
	if err != nil {
		t.Fatal(err)
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

// A second run whose generators already have events in the target is
// refused: its probes would be seen at once through the old copies.
func TestRepeatedIDsAreRefused(t *testing.T) {
	tgt := sim.New(sim.Config{})
	cfg := simConfig(2 * time.Second)
	cfg.Drain = 0
	if _, err := Run(context.Background(), tgt, cfg); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), tgt, cfg)
	if !errors.Is(err, ErrGeneratorInUse) {
		t.Fatalf("second run with the same ids on the same target: %v, want ErrGeneratorInUse", err)
	}
}
