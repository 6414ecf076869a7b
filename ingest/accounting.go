package ingest

import (
	"sync"
	"time"

	"github.com/freshbench/freshbench/dispatch"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// Accounting is the outcome of every batch of a run, by phase.
type Accounting struct {
	mu        sync.Mutex
	start     time.Time
	warmupEnd time.Time
	end       time.Time // end of the schedule; moved to the instant the run was stopped
	phases    map[string]*results.Phase
}

func newAccounting(start time.Time, warmup, duration time.Duration) *Accounting {
	a := &Accounting{
		start: start, warmupEnd: start.Add(warmup), end: start.Add(duration),
		phases: map[string]*results.Phase{},
	}
	for _, n := range []string{results.PhaseWarmup, results.PhaseMeasured, results.PhaseTail} {
		a.phases[n] = results.NewPhase(n)
	}
	return a
}

// phaseAt says which phase an instant belongs to. Callers hold a.mu.
func (a *Accounting) phaseAt(t time.Time) *results.Phase {
	switch {
	case t.Before(a.warmupEnd):
		return a.phases[results.PhaseWarmup]
	case t.Before(a.end):
		return a.phases[results.PhaseMeasured]
	}
	return a.phases[results.PhaseTail]
}

// intendedPhase is the phase of a batch due at t: warm-up or measured
// (every due batch is due before the end).
func (a *Accounting) intendedPhase(t time.Time) *results.Phase {
	if t.Before(a.warmupEnd) {
		return a.phases[results.PhaseWarmup]
	}
	return a.phases[results.PhaseMeasured]
}

func (a *Accounting) dispatched(d dispatch.Due, events, updates int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.intendedPhase(d.Intended)
	p.Batches++
	p.Due += int64(events)
	p.Dispatched += int64(events)
	p.UpdatesDispatched += int64(updates)
	if d.Late {
		p.LateBatches++
	}
	p.Lateness.Record(d.Lateness())
}

// unsent counts batches events due at intended that a stream never sent,
// because the run was stopped or the stream fell behind, with the lower
// bound of their latency: they had been due since intended at gaveUp.
func (a *Accounting) unsent(intended, gaveUp time.Time, batches, events int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.intendedPhase(intended)
	p.Due += events
	p.Unsent += events
	p.UnsentWait.RecordN(gaveUp.Sub(intended), batches)
}

type outcome struct {
	due                    dispatch.Due
	ack                    time.Time
	bytes                  int
	acked, failed, retries int
	ackedOnRetry           int
	errorKinds             map[string]int
	sample                 string
	updates, updatesAcked  int // of the events, updates sent and acknowledged
}

func (a *Accounting) written(o outcome) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.intendedPhase(o.due.Intended)
	p.WriteLatency.Record(o.ack.Sub(o.due.Intended))
	p.ServiceTime.Record(o.ack.Sub(o.due.Sent))
	p.Acked += int64(o.acked)
	p.AckedBytes += int64(o.bytes)
	p.AckedOnRetry += int64(o.ackedOnRetry)
	p.Failed += int64(o.failed)
	p.Retries += int64(o.retries)
	p.UpdatesAcked += int64(o.updatesAcked)
	p.UpdatesFailed += int64(o.updates - o.updatesAcked)
	for kind, n := range o.errorKinds {
		stats.AddError(p.Errors, kind, int64(n), o.sample)
	}
	byAck := a.phaseAt(o.ack)
	byAck.Throughput += int64(o.acked)
	byAck.ThroughputBytes += int64(o.bytes)
}

// stop ends the schedule at t when the run was stopped early.
func (a *Accounting) stop(t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.Before(a.end) {
		a.end = t
	}
}

// Phase returns the named phase (results.PhaseWarmup, results.PhaseMeasured, results.PhaseTail).
func (a *Accounting) Phase(name string) *results.Phase {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.phases[name]
}

// MeasuredWindow returns the measured phase's bounds: from the end of the
// warm-up to the end of the schedule (the instant the run was stopped, if
// it was).
func (a *Accounting) MeasuredWindow() (from, to time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.end.Before(a.warmupEnd) {
		return a.end, a.end
	}
	return a.warmupEnd, a.end
}
