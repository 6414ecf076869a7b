package ingest

import (
	"sync"
	"time"

	"github.com/freshbench/freshbench/dispatch"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/timeline"
)

// Accounting is the outcome of every batch of a run, by phase. It passes
// each on to the run's series and observer (sink).
type Accounting struct {
	tl     *timeline.Timeline
	sink   stats.Recorder
	mu     sync.Mutex
	phases map[string]*results.Phase
}

func newAccounting(tl *timeline.Timeline, sink stats.Recorder) *Accounting {
	a := &Accounting{tl: tl, sink: sink, phases: map[string]*results.Phase{}}
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

// dispatched counts a batch of generator's events (updates of them)
// dispatched as d says, with inflight writes in flight.
func (a *Accounting) dispatched(generator string, d dispatch.Due, events, updates, inflight int) {
	defer a.sink.Scheduled(generator, d.Intended, events, d.Late, inflight)
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

// unsent counts the batches of generator a stream never sent, because
// the run was stopped or the stream fell behind, with the lower bound of
// their latency: they had been due since their intended time when it
// gave up. They are spread over at most 1000 intended times so that a
// long backlog costs bounded time.
func (a *Accounting) unsent(generator string, u dispatch.Unsent) {
	perBatch := int64(u.Events / u.Units)
	var due []stats.Due
	u.Spread(1000, func(intended time.Time, batches int64) {
		events := batches * perBatch
		a.mu.Lock()
		p := a.intendedPhase(intended)
		p.Due += events
		p.Unsent += events
		p.UnsentWait.RecordN(u.GaveUp.Sub(intended), batches)
		a.mu.Unlock()
		due = append(due, stats.Due{At: intended, Events: events})
	})
	a.sink.Unsent(generator, u.Events, due)
}

type outcome struct {
	generator              string
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
	defer a.sink.Written(o.generator, o.ack, o.acked, o.failed, o.bytes, o.errorKinds, o.ack.Sub(o.due.Intended), o.ack.Sub(o.due.Sent))
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
