// Package timeline holds the phases of one run: when it started, the
// measured part after the warm-up, and when the schedule ended (at its
// planned end, or earlier when the run was stopped). Every measuring
// package asks it which phase an instant belongs to, so that a sample,
// a batch and a query of the same instant land in the same phase.
package timeline

import (
	"sync"
	"time"

	"github.com/freshbench/freshbench/results"
)

// Timeline is a run's phases. Its bounds are fixed but for the end of
// the schedule, which Stop may move earlier; it is safe for concurrent
// use.
type Timeline struct {
	start, from, end time.Time

	mu      sync.Mutex
	stopped time.Time // the end of the schedule: end, or earlier if stopped
}

// New returns the timeline of a run that starts at start, warms up for
// warmup and schedules work until start+duration.
func New(start time.Time, warmup, duration time.Duration) *Timeline {
	return Between(start, start.Add(warmup), start.Add(duration))
}

// Between returns the timeline of a run that starts at start and is
// measured over [from, end).
func Between(start, from, end time.Time) *Timeline {
	return &Timeline{start: start, from: from, end: end, stopped: end}
}

// Start is when the run started.
func (t *Timeline) Start() time.Time { return t.start }

// MeasuredFrom is the end of the warm-up.
func (t *Timeline) MeasuredFrom() time.Time { return t.from }

// End is the planned end of the schedule: nothing is due from then on.
func (t *Timeline) End() time.Time { return t.end }

// Stop ends the schedule at at if that is earlier (a run stopped early);
// the earliest stop wins.
func (t *Timeline) Stop(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if at.Before(t.stopped) {
		t.stopped = at
	}
}

// StoppedAt is when the schedule ended: End, or the earlier instant the
// run was stopped.
func (t *Timeline) StoppedAt() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stopped
}

// Measured returns the measured phase's bounds [from, to): from the end
// of the warm-up to the end of the schedule. A run stopped during its
// warm-up has an empty measured phase at the stop.
func (t *Timeline) Measured() (from, to time.Time) {
	to = t.StoppedAt()
	if to.Before(t.from) {
		return to, to
	}
	return t.from, to
}

// In reports whether at falls in the measured phase.
func (t *Timeline) In(at time.Time) bool {
	from, to := t.Measured()
	return !at.Before(from) && at.Before(to)
}

// Phase names the phase at belongs to: results.PhaseWarmup before the
// measured phase, results.PhaseMeasured in it, results.PhaseTail after
// the schedule ended.
func (t *Timeline) Phase(at time.Time) string {
	switch {
	case at.Before(t.from):
		return results.PhaseWarmup
	case at.Before(t.StoppedAt()):
		return results.PhaseMeasured
	}
	return results.PhaseTail
}

// Change is the instant a phase begins.
type Change struct {
	At   time.Time
	Name string
}

// Changes lists the planned instants the phases begin, in order:
// warm-up at the start, measured after it, the tail at the end.
func (t *Timeline) Changes() []Change {
	return []Change{{t.start, results.PhaseWarmup}, {t.from, results.PhaseMeasured}, {t.end, results.PhaseTail}}
}
