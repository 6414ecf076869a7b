package results

import (
	"maps"
	"slices"

	"github.com/freshbench/freshbench/stats"
)

// Queries is what one query workload measured over its measured window: data
// first, rendered by the report package. Histograms are encoded HDR, so
// results of several runs or machines merge exactly.
type Queries struct {
	Mode        string  `json:"mode"`                 // "open" (at a target QPS) or "closed" (fixed concurrency)
	TargetQPS   float64 `json:"target_qps,omitempty"` // under a Shape, its mean over the measured window
	Shape       string  `json:"shape,omitempty"`      // the open loop's pace.Shape; "" for a constant QPS
	MaxInflight int     `json:"max_inflight,omitempty"`
	Concurrency int     `json:"concurrency,omitempty"`
	Mix         string  `json:"mix"`
	MissShare   float64 `json:"miss_share"`
	Limit       int     `json:"limit"`
	TimeoutS    float64 `json:"timeout_s"`
	SettleS     float64 `json:"settle_s"`
	Seed        uint64  `json:"seed,omitempty"`

	// WaitedS is how long after the window's start the first query could
	// be drawn (written documents settling); when that is past the
	// warm-up, the measured window starts then.
	WaitedS   float64 `json:"waited_s"`
	MeasuredS float64 `json:"measured_s"`
	// AchievedQPS counts answers when they arrive within the measured
	// window, so a target that falls behind shows a lower rate.
	AchievedQPS float64 `json:"achieved_qps"`
	// Unsent counts queries due in the measured window that were never
	// sent: the open loop was waiting for an in-flight slot at the end.
	Unsent int64 `json:"unsent"`

	Total *QueryKind   `json:"total"` // every kind together
	Kinds []*QueryKind `json:"kinds"` // in the order of the mix

	// Beside is what the ingest running beside measured over the same
	// window, when one ran.
	Beside *Beside `json:"beside_ingest,omitempty"`
	// Verdict is set on the steps of a sweep.
	Verdict *QueryVerdict `json:"verdict,omitempty"`
}

// QueryKind holds one kind's figures (or all kinds', in Queries.Total).
// Every figure but AchievedQPS counts the queries whose intended time
// falls in the measured window.
type QueryKind struct {
	Kind        string                       `json:"kind"` // a target.QueryKind, or "all"
	Weight      int                          `json:"weight,omitempty"`
	TargetQPS   float64                      `json:"target_qps,omitempty"` // its share of the target QPS
	Text        string                       `json:"query_text,omitempty"` // as sent, with an example parameter
	Queries     int64                        `json:"queries"`
	AchievedQPS float64                      `json:"achieved_qps"`
	Late        int64                        `json:"late"`
	Misses      int64                        `json:"misses"`        // sent with a parameter never written
	Empty       int64                        `json:"empty_results"` // answered with no row
	Rows        int64                        `json:"rows"`          // rows answered in total
	Failed      int64                        `json:"failed"`
	Errors      map[string]*stats.ErrorCount `json:"errors,omitempty"`

	Latency              stats.Summary    `json:"latency"`      // intended time → answered
	ServiceTime          stats.Summary    `json:"service_time"` // sent → answered
	LatencyHistogram     *stats.Histogram `json:"latency_histogram"`
	ServiceTimeHistogram *stats.Histogram `json:"service_time_histogram"`
}

// Add adds k's queries into q: the counts, the errors by kind and the
// histograms, exactly. The rates and summaries are the caller's to work
// out: a total over kinds and a merge of instances derive them apart.
func (q *QueryKind) Add(k *QueryKind) {
	q.Queries += k.Queries
	q.Late += k.Late
	q.Misses += k.Misses
	q.Empty += k.Empty
	q.Rows += k.Rows
	q.Failed += k.Failed
	for _, kind := range slices.Sorted(maps.Keys(k.Errors)) {
		if e := k.Errors[kind]; e != nil {
			stats.AddError(q.Errors, kind, e.Count, e.Sample)
		}
	}
	if k.LatencyHistogram != nil {
		q.LatencyHistogram.Merge(k.LatencyHistogram)
	}
	if k.ServiceTimeHistogram != nil {
		q.ServiceTimeHistogram.Merge(k.ServiceTimeHistogram)
	}
}

// RowsPerQuery is the mean number of rows an answered query returned.
func (k *QueryKind) RowsPerQuery() float64 {
	if n := k.Queries - k.Failed; n > 0 {
		return float64(k.Rows) / float64(n)
	}
	return 0
}

// Beside is the ingest's side of a run with queries and ingest together,
// over the same measured window.
type Beside struct {
	TargetEventsPerSec   float64       `json:"target_events_per_s"`
	AchievedEventsPerSec float64       `json:"achieved_events_per_s"`
	WriteLatency         stats.Summary `json:"write_latency"`
	FreshnessLag         stats.Summary `json:"freshness_lag"`
}

// QueryVerdict is how one step of a sweep fared against the SLO. Its latency
// counts every query whose intended time fell in the measured window and
// that was sent: the answered ones at their latency, the failed and
// timed-out ones at the query timeout (a lower bound of what their caller
// waited; leaving them out would let a step whose slowest queries time out
// look fast). Queries never sent (Unsent) have no latency at all; the
// achieved share judges them.
type QueryVerdict struct {
	Met             bool    `json:"met"`
	LatencyMs       float64 `json:"latency_ms"` // latency at the SLO's percentile, failed queries at the timeout
	Reason          string  `json:"reason,omitempty"`
	Answered        int64   `json:"answered"`          // queries in the percentile at their measured latency
	FailedAtTimeout int64   `json:"failed_at_timeout"` // failed or timed-out queries in the percentile at the timeout
	Unsent          int64   `json:"unsent"`            // due but never sent: in no latency figure
}

// QuerySweep is the outcome of a QPS sweep: every step, in order, and the
// highest target QPS whose step met the SLO.
type QuerySweep struct {
	SLO         string     `json:"slo"`
	Found       bool       `json:"found"`     // some step met the SLO
	Best        int        `json:"best_step"` // index into Steps of the highest QPS that met it; -1 when none did
	QPS         float64    `json:"qps"`       // that step's target QPS
	AchievedQPS float64    `json:"achieved_qps"`
	Reason      string     `json:"reason"` // why the sweep stopped, or query.SweepUnderWay
	Steps       []*Queries `json:"steps"`
}
