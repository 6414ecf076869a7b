package timeline

import (
	"testing"
	"time"

	"github.com/freshbench/freshbench/results"
)

func TestPhases(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tl := New(start, 2*time.Second, 10*time.Second)
	for _, c := range []struct {
		at    time.Duration
		phase string
		in    bool
	}{
		{0, results.PhaseWarmup, false},
		{2 * time.Second, results.PhaseMeasured, true},
		{10*time.Second - 1, results.PhaseMeasured, true},
		{10 * time.Second, results.PhaseTail, false},
	} {
		if got := tl.Phase(start.Add(c.at)); got != c.phase {
			t.Errorf("Phase(start+%s) = %s, want %s", c.at, got, c.phase)
		}
		if got := tl.In(start.Add(c.at)); got != c.in {
			t.Errorf("In(start+%s) = %v, want %v", c.at, got, c.in)
		}
	}
}

func TestStopEndsTheMeasuredPhase(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tl := New(start, 2*time.Second, 10*time.Second)
	tl.Stop(start.Add(6 * time.Second))
	tl.Stop(start.Add(8 * time.Second)) // a later stop changes nothing
	if from, to := tl.Measured(); !from.Equal(start.Add(2*time.Second)) || !to.Equal(start.Add(6*time.Second)) {
		t.Errorf("Measured() = %s, %s; want start+2s, start+6s", from.Sub(start), to.Sub(start))
	}
	if got := tl.Phase(start.Add(7 * time.Second)); got != results.PhaseTail {
		t.Errorf("Phase after the stop = %s, want %s", got, results.PhaseTail)
	}
	if !tl.End().Equal(start.Add(10 * time.Second)) {
		t.Errorf("End() = %s, want the planned end start+10s", tl.End().Sub(start))
	}
}

func TestStopInTheWarmupLeavesNothingMeasured(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tl := New(start, 5*time.Second, 10*time.Second)
	tl.Stop(start.Add(time.Second))
	from, to := tl.Measured()
	if !from.Equal(to) || !to.Equal(start.Add(time.Second)) {
		t.Errorf("Measured() = %s, %s; want empty at the stop, start+1s", from.Sub(start), to.Sub(start))
	}
	for _, at := range []time.Duration{0, time.Second, 5 * time.Second} {
		if tl.In(start.Add(at)) {
			t.Errorf("In(start+%s) after a stop in the warm-up", at)
		}
	}
	if got := tl.Phase(start.Add(3 * time.Second)); got != results.PhaseWarmup {
		t.Errorf("Phase(start+3s) = %s, want %s (the warm-up's planned end stands)", got, results.PhaseWarmup)
	}
}
