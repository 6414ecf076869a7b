package ingest

import (
	"sync"
	"time"

	"github.com/freshbench/freshbench/dispatch"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/timeline"
)

// Accounting is the outcome of every batch of a run, by phase.
type Accounting struct {
	tl     *timeline.Timeline
	mu     sync.Mutex
	phases map[string]*results.Phase
}

func newAccounting(tl *timeline.Timeline) *Accounting {
	a := &Accounting{tl: tl, phases: map[string]*results.Phase{}}
	for _, n := range []string{results.PhaseWarmup, results.PhaseMeasured, results.PhaseTail} {
		a.phases[n] = results.NewPhase(n)
	}
	return a
}

// intendedPhase is the phase of a batch due at t: warm-up or measured
// (every due batch is due before the end).
func (a *Accounting) intendedPhase(t time.Time) *results.Phase {
	if t.Before(a.tl.MeasuredFrom()) {
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
	byAck := a.phases[a.tl.Phase(o.ack)]
	byAck.Throughput += int64(o.acked)
	byAck.ThroughputBytes += int64(o.bytes)
}

// Phase returns the named phase (results.PhaseWarmup, results.PhaseMeasured, results.PhaseTail).
func (a *Accounting) Phase(name string) *results.Phase {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.phases[name]
}

// Timeline returns the run's phases, the schedule's end moved to the
// instant the run was stopped, if it was.
func (a *Accounting) Timeline() *timeline.Timeline { return a.tl }
