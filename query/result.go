package query

import (
	"github.com/freshbench/freshbench/dispatch"
	"sync"
	"time"

	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// Result is what one workload measured over its measured window: data
// first, rendered by the report package. Histograms are encoded HDR, so
// results of several runs or machines merge exactly.
type Result struct {
	Mode        string  `json:"mode"` // "open" (at a target QPS) or "closed" (fixed concurrency)
	TargetQPS   float64 `json:"target_qps,omitempty"`
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

	Total *KindResult   `json:"total"` // every kind together
	Kinds []*KindResult `json:"kinds"` // in the order of the mix

	// Beside is what the ingest running beside measured over the same
	// window, when one ran.
	Beside *Beside `json:"beside_ingest,omitempty"`
	// Verdict is set on the steps of a sweep.
	Verdict *Verdict `json:"verdict,omitempty"`
}

// KindResult holds one kind's figures (or all kinds', in Result.Total).
// Every figure but AchievedQPS counts the queries whose intended time
// falls in the measured window.
type KindResult struct {
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

	answeredInWindow int64
}

// RowsPerQuery is the mean number of rows an answered query returned.
func (k *KindResult) RowsPerQuery() float64 {
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

func newKind(name string, weight int) *KindResult {
	return &KindResult{
		Kind: name, Weight: weight, Errors: map[string]*stats.ErrorCount{},
		LatencyHistogram: stats.NewHistogram(), ServiceTimeHistogram: stats.NewHistogram(),
	}
}

// recorder collects outcomes as queries finish.
type recorder struct {
	cfg          Config
	start, begin time.Time

	mu       sync.Mutex
	from, to time.Time
	unsentN  int64
	kinds    map[target.QueryKind]*KindResult
}

type outcome struct {
	kind                 target.QueryKind
	intended, sent, done time.Time
	late, miss           bool
	rows                 int
	err                  error
}

func newRecorder(cfg Config, w Window, begin time.Time, texts map[target.QueryKind]string) *recorder {
	r := &recorder{cfg: cfg, start: w.Start, begin: begin, from: w.MeasureFrom, to: w.End, kinds: map[target.QueryKind]*KindResult{}}
	if begin.After(r.from) {
		r.from = begin
	}
	if r.to.Before(r.from) {
		r.to = r.from
	}
	for _, m := range cfg.Mix {
		k := newKind(string(m.Kind), m.Weight)
		k.Text = texts[m.Kind]
		k.TargetQPS = cfg.QPS * cfg.Mix.share(m.Kind)
		r.kinds[m.Kind] = k
	}
	return r
}

func (r *recorder) in(t time.Time) bool { return !t.Before(r.from) && t.Before(r.to) }

func (r *recorder) record(o outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.kinds[o.kind]
	if o.err == nil && r.in(o.done) {
		k.answeredInWindow++
	}
	if !r.in(o.intended) {
		return
	}
	k.Queries++
	if o.late {
		k.Late++
	}
	if o.miss {
		k.Misses++
	}
	if o.err != nil {
		k.Failed++
		stats.CountError(k.Errors, o.err)
		return
	}
	k.Rows += int64(o.rows)
	if o.rows == 0 {
		k.Empty++
	}
	k.LatencyHistogram.Record(o.done.Sub(o.intended))
	k.ServiceTimeHistogram.Record(o.done.Sub(o.sent))
}

// unsent counts the queries the open loop never sent whose intended time
// is in the measured window.
func (r *recorder) unsent(u dispatch.Unsent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u.Spread(u.Units, func(intended time.Time, n int64) {
		if r.in(intended) {
			r.unsentN += n
		}
	})
}

// stop ends the measured window at t if that is earlier (interrupted).
func (r *recorder) stop(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.Before(r.from) {
		t = r.from
	}
	if t.Before(r.to) {
		r.to = t
	}
}

func (r *recorder) result() *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cfg
	res := &Result{
		Mix: c.Mix.String(), MissShare: c.MissShare, Limit: c.Limit,
		TimeoutS: c.Timeout.Seconds(), SettleS: c.Settle.Seconds(), Seed: c.Seed,
		WaitedS:   max(r.begin.Sub(r.start), 0).Seconds(),
		MeasuredS: r.to.Sub(r.from).Seconds(),
		Unsent:    r.unsentN,
		Total:     newKind("all", 0),
	}
	if c.QPS > 0 {
		res.Mode, res.TargetQPS, res.MaxInflight = "open", c.QPS, c.MaxInflight
		res.Total.TargetQPS = c.QPS
	} else {
		res.Mode, res.Concurrency = "closed", c.Concurrency
	}
	t := res.Total
	for _, m := range c.Mix {
		k := r.kinds[m.Kind]
		k.Latency, k.ServiceTime = k.LatencyHistogram.Summarize(), k.ServiceTimeHistogram.Summarize()
		if res.MeasuredS > 0 {
			k.AchievedQPS = float64(k.answeredInWindow) / res.MeasuredS
		}
		t.Queries += k.Queries
		t.Late += k.Late
		t.Misses += k.Misses
		t.Empty += k.Empty
		t.Rows += k.Rows
		t.Failed += k.Failed
		t.answeredInWindow += k.answeredInWindow
		for kind, e := range k.Errors {
			stats.AddError(t.Errors, kind, e.Count, e.Sample)
		}
		t.LatencyHistogram.Merge(k.LatencyHistogram)
		t.ServiceTimeHistogram.Merge(k.ServiceTimeHistogram)
		res.Kinds = append(res.Kinds, k)
	}
	t.Latency, t.ServiceTime = t.LatencyHistogram.Summarize(), t.ServiceTimeHistogram.Summarize()
	if res.MeasuredS > 0 {
		t.AchievedQPS = float64(t.answeredInWindow) / res.MeasuredS
	}
	res.AchievedQPS = t.AchievedQPS
	return res
}
