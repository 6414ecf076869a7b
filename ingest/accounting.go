package ingest

import (
	"sync"
	"time"

	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/stats"
)

// Phase names. Figures of the warm-up are kept apart from the measured
// phase; acknowledgements that arrive after the schedule ended go to tail.
const (
	PhaseWarmup   = "warmup"
	PhaseMeasured = "measured"
	PhaseTail     = "tail"
)

// Phase holds the write figures of one part of the run.
type Phase struct {
	Name         string                       `json:"name"`
	Batches      int64                        `json:"batches"`
	LateBatches  int64                        `json:"late_batches"`
	Dispatched   int64                        `json:"events_dispatched"`
	Unsent       int64                        `json:"events_unsent"`
	Acked        int64                        `json:"events_acked"`
	AckedBytes   int64                        `json:"bytes_acked"`
	Failed       int64                        `json:"events_failed"`
	Retries      int64                        `json:"retries"`
	Errors       map[string]*stats.ErrorCount `json:"errors,omitempty"`
	WriteLatency *stats.Histogram             `json:"write_latency"` // intended time → acknowledged
	ServiceTime  *stats.Histogram             `json:"service_time"`  // sent → acknowledged
	Lateness     *stats.Histogram             `json:"lateness"`      // intended time → sent
}

func newPhase(name string) *Phase {
	return &Phase{
		Name: name, Errors: make(map[string]*stats.ErrorCount),
		WriteLatency: stats.NewHistogram(), ServiceTime: stats.NewHistogram(), Lateness: stats.NewHistogram(),
	}
}

// Accounting is the outcome of every batch of a run, by phase.
type Accounting struct {
	mu        sync.Mutex
	start     time.Time
	warmupEnd time.Time
	end       time.Time // end of the schedule; moved earlier when stopped
	phases    map[string]*Phase
}

func newAccounting(start time.Time, warmup, duration time.Duration) *Accounting {
	a := &Accounting{
		start: start, warmupEnd: start.Add(warmup), end: start.Add(duration),
		phases: map[string]*Phase{},
	}
	for _, n := range []string{PhaseWarmup, PhaseMeasured, PhaseTail} {
		a.phases[n] = newPhase(n)
	}
	return a
}

// phaseAt says which phase an instant belongs to. Callers hold a.mu.
func (a *Accounting) phaseAt(t time.Time) *Phase {
	switch {
	case t.Before(a.warmupEnd):
		return a.phases[PhaseWarmup]
	case t.Before(a.end):
		return a.phases[PhaseMeasured]
	}
	return a.phases[PhaseTail]
}

func (a *Accounting) dispatched(intended time.Time, lateness time.Duration, late bool, events int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.phaseAt(intended)
	p.Batches++
	p.Dispatched += int64(events)
	if late {
		p.LateBatches++
	}
	p.Lateness.Record(lateness)
}

// unsent counts the events a stream was due to send from intended until
// end but did not, because the run was stopped or fell behind.
func (a *Accounting) unsent(rate pace.Rate, intended, end time.Time, docSize int) {
	if !intended.Before(end) {
		return
	}
	units := rate.PerSecond * end.Sub(intended).Seconds()
	if rate.Unit == pace.Bytes {
		units /= float64(docSize)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.phaseAt(intended).Unsent += int64(units + 0.5)
}

type outcome struct {
	intended, dispatch, ack time.Time
	events, bytes           int
	acked, failed, retries  int
	errorKinds              map[string]int
	sample                  string
}

func (a *Accounting) written(o outcome) {
	a.mu.Lock()
	defer a.mu.Unlock()
	byIntent := a.phaseAt(o.intended)
	byIntent.WriteLatency.Record(o.ack.Sub(o.intended))
	byIntent.ServiceTime.Record(o.ack.Sub(o.dispatch))
	// Throughput counts acknowledgements when they happen, so that a
	// database that falls behind shows a lower achieved rate.
	byAck := a.phaseAt(o.ack)
	byAck.Acked += int64(o.acked)
	byAck.AckedBytes += int64(o.bytes)
	byAck.Failed += int64(o.failed)
	byAck.Retries += int64(o.retries)
	for kind, n := range o.errorKinds {
		stats.AddError(byAck.Errors, kind, int64(n), o.sample)
	}
}

// stop marks the end of the schedule when the run ended early.
func (a *Accounting) stop(t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.Before(a.end) {
		a.end = t
	}
}

// Phase returns the named phase (PhaseWarmup, PhaseMeasured, PhaseTail).
func (a *Accounting) Phase(name string) *Phase {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.phases[name]
}

// MeasuredWindow returns the measured phase's bounds: from the end of the
// warm-up to the end of the schedule (earlier if the run was stopped).
func (a *Accounting) MeasuredWindow() (from, to time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.end.Before(a.warmupEnd) {
		return a.end, a.end
	}
	return a.warmupEnd, a.end
}

// Totals sums the event counts of all phases.
func (a *Accounting) Totals() (acked, failed, unsent int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.phases {
		acked += p.Acked
		failed += p.Failed
		unsent += p.Unsent
	}
	return acked, failed, unsent
}
