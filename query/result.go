package query

import (
	"sync"
	"time"

	"github.com/freshbench/freshbench/dispatch"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/timeline"
)

func newKind(name string, weight int) *results.QueryKind {
	return &results.QueryKind{
		Kind: name, Weight: weight, Errors: map[string]*stats.ErrorCount{},
		LatencyHistogram: stats.NewHistogram(), ServiceTimeHistogram: stats.NewHistogram(),
	}
}

// recorder collects outcomes as queries finish, and passes each on to
// the run's series and observer.
type recorder struct {
	cfg          Config
	start, begin time.Time
	endpoint     string
	sink         stats.Recorder

	mu       sync.Mutex
	from, to time.Time
	unsentN  int64
	kinds    map[target.QueryKind]*results.QueryKind
	// answered counts, by kind, the answers that arrived within the
	// measured window, whatever their intended time: the achieved QPS.
	answered map[target.QueryKind]int64
}

type outcome struct {
	kind                 target.QueryKind
	intended, sent, done time.Time
	late, miss           bool
	rows                 int
	err                  error
}

func newRecorder(cfg Config, tl *timeline.Timeline, begin time.Time, texts map[target.QueryKind]string, endpoint string, sink stats.Recorder) *recorder {
	r := &recorder{cfg: cfg, start: tl.Start(), begin: begin, endpoint: endpoint, sink: sink, from: tl.MeasuredFrom(), to: tl.End(), kinds: map[target.QueryKind]*results.QueryKind{}, answered: map[target.QueryKind]int64{}}
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
	r.sink.Query(r.endpoint, string(o.kind), o.done, o.done.Sub(o.intended), o.rows, o.err != nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.kinds[o.kind]
	if o.err == nil && r.in(o.done) {
		r.answered[o.kind]++
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

func (r *recorder) result() *results.Queries {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cfg
	res := &results.Queries{
		Mix: c.Mix.String(), MissShare: c.MissShare, Limit: c.Limit,
		TimeoutS: c.Timeout.Seconds(), SettleS: c.Settle.Seconds(), Seed: c.Seed,
		WaitedS:   max(r.begin.Sub(r.start), 0).Seconds(),
		MeasuredS: r.to.Sub(r.from).Seconds(),
		Unsent:    r.unsentN,
		Total:     newKind("all", 0),
	}
	if c.QPS > 0 {
		// Under a shape, the target is the window's mean.
		qps := c.QPS * c.Shape.Mean(r.from.Sub(r.start), r.to.Sub(r.start))
		res.Mode, res.TargetQPS, res.MaxInflight, res.Shape = "open", qps, c.MaxInflight, c.Shape.String()
		res.Total.TargetQPS = qps
	} else {
		res.Mode, res.Concurrency = "closed", c.Concurrency
	}
	t := res.Total
	var answered int64
	for _, m := range c.Mix {
		k := r.kinds[m.Kind]
		k.Latency, k.ServiceTime = k.LatencyHistogram.Summarize(), k.ServiceTimeHistogram.Summarize()
		if res.MeasuredS > 0 {
			k.AchievedQPS = float64(r.answered[m.Kind]) / res.MeasuredS
		}
		t.Add(k)
		answered += r.answered[m.Kind]
		res.Kinds = append(res.Kinds, k)
	}
	t.Latency, t.ServiceTime = t.LatencyHistogram.Summarize(), t.ServiceTimeHistogram.Summarize()
	if res.MeasuredS > 0 {
		t.AchievedQPS = float64(answered) / res.MeasuredS
	}
	res.AchievedQPS = t.AchievedQPS
	return res
}
