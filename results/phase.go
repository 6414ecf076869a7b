package results

import "github.com/freshbench/freshbench/stats"

// Phase names. A batch belongs to the phase of its intended time, so that
// every phase balances: due = dispatched + unsent, dispatched = acknowledged
// + failed. Throughput is different: it counts acknowledgements when they
// arrive, so that a database that falls behind shows a lower achieved
// rate; those that arrive after the schedule ended go to tail.
const (
	PhaseWarmup   = "warmup"
	PhaseMeasured = "measured"
	PhaseTail     = "tail"
)

// Phase holds the write figures of one part of the run.
type Phase struct {
	Name        string `json:"name"`
	Batches     int64  `json:"batches"`
	LateBatches int64  `json:"late_batches"`
	// Events by intended time: Due = Dispatched + Unsent and
	// Dispatched = Acked + Failed.
	Due        int64 `json:"events_due"`
	Dispatched int64 `json:"events_dispatched"`
	Unsent     int64 `json:"events_unsent"`
	Acked      int64 `json:"events_acked"`
	AckedBytes int64 `json:"bytes_acked"`
	Failed     int64 `json:"events_failed"`
	// AckedOnRetry are acknowledged events whose retry was answered
	// "already stored": the attempt that timed out had stored them.
	AckedOnRetry int64 `json:"events_acked_on_retry,omitempty"`
	// Of the dispatched events, the updates of events already written:
	// UpdatesDispatched = UpdatesAcked + UpdatesFailed. (A batch never
	// sent is counted in Unsent alone: it was never built, so how many of
	// its events would have been updates is not known.)
	UpdatesDispatched int64                        `json:"updates_dispatched,omitempty"`
	UpdatesAcked      int64                        `json:"updates_acked,omitempty"`
	UpdatesFailed     int64                        `json:"updates_failed,omitempty"`
	Retries           int64                        `json:"retries"`
	Errors            map[string]*stats.ErrorCount `json:"errors,omitempty"`
	WriteLatency      *stats.Histogram             `json:"write_latency"` // intended time → acknowledged
	ServiceTime       *stats.Histogram             `json:"service_time"`  // sent → acknowledged
	Lateness          *stats.Histogram             `json:"lateness"`      // intended time → sent
	// UnsentWait is, per batch never sent, how long it had been due when
	// the run gave it up: a lower bound of the write latency it would
	// have had, kept apart from WriteLatency because it is censored.
	UnsentWait *stats.Histogram `json:"unsent_wait"`

	// Throughput: events and bytes acknowledged while the phase lasted,
	// whatever their intended time.
	Throughput      int64 `json:"throughput_events_acked"`
	ThroughputBytes int64 `json:"throughput_bytes_acked"`
}

// NewPhase returns an empty phase named name, its histograms ready.
func NewPhase(name string) *Phase {
	return &Phase{
		Name: name, Errors: make(map[string]*stats.ErrorCount),
		WriteLatency: stats.NewHistogram(), ServiceTime: stats.NewHistogram(),
		Lateness: stats.NewHistogram(), UnsentWait: stats.NewHistogram(),
	}
}
