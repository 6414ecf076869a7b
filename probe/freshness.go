// Package probe measures what a reader of the database sees: the freshness
// lag of each generator, the visibility latency of sampled probe events,
// and, after the run, the completeness of what was acknowledged.
package probe

import (
	"context"
	"sync"
	"time"

	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// Clock converts between a generator's _event_time and the monotonic
// clock of the process that generated it, so that no wall-clock step
// during a run enters a figure.
type Clock struct {
	Start      time.Time // with its monotonic reading
	StartMicro int64     // Start.UnixMicro()
}

// NewClock anchors a clock at start.
func NewClock(start time.Time) Clock { return Clock{Start: start, StartMicro: start.UnixMicro()} }

// Since returns how long before t the event with eventTime was generated.
func (c Clock) Since(t time.Time, eventTime int64) time.Duration {
	generated := c.Start.Add(time.Duration(eventTime-c.StartMicro) * time.Microsecond)
	return t.Sub(generated)
}

// Window routes samples into the warm-up or the measured phase.
type Window struct {
	mu       sync.Mutex
	from, to time.Time
}

// NewWindow returns a measured window [from, to).
func NewWindow(from, to time.Time) *Window { return &Window{from: from, to: to} }

// In reports whether t falls in the measured window.
func (w *Window) In(t time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !t.Before(w.from) && t.Before(w.to)
}

// Close ends the window at t if that is earlier (a run stopped early).
func (w *Window) Close(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.Before(w.to) {
		w.to = t
	}
}

// FreshnessResult is the freshness lag over the measured window.
type FreshnessResult struct {
	Lag          *stats.Histogram             `json:"lag"`           // T − newest visible _event_time
	QueryService *stats.Histogram             `json:"query_service"` // the freshness query's own time
	Samples      int64                        `json:"samples"`
	Empty        int64                        `json:"samples_seeing_nothing"`
	Errors       map[string]*stats.ErrorCount `json:"errors,omitempty"`
	Last         time.Duration                `json:"-"`
}

// Freshness samples RockBench's data latency: every poll interval, the
// newest _event_time each generator's events show in a query.
type Freshness struct {
	tgt    target.Reader
	gens   []string
	poll   time.Duration
	clock  Clock
	window *Window
	series *stats.Series
	obs    stats.Observer

	mu  sync.Mutex
	res FreshnessResult
}

// NewFreshness prepares a freshness sampler for the given generators.
func NewFreshness(tgt target.Reader, gens []string, poll time.Duration, clock Clock, window *Window, series *stats.Series, obs stats.Observer) *Freshness {
	return &Freshness{
		tgt: tgt, gens: gens, poll: poll, clock: clock, window: window, series: series, obs: obs,
		res: FreshnessResult{Lag: stats.NewHistogram(), QueryService: stats.NewHistogram(), Errors: map[string]*stats.ErrorCount{}},
	}
}

// Run samples until ctx ends.
func (f *Freshness) Run(ctx context.Context) {
	everyPoll(ctx, f.poll, true, func() {
		for _, g := range f.gens {
			f.sample(ctx, g)
		}
	})
}

func (f *Freshness) sample(ctx context.Context, gen string) {
	qctx, cancel := context.WithTimeout(ctx, 10*f.poll+5*time.Second)
	defer cancel()
	sent := time.Now()
	newest, ok, err := f.tgt.Freshness(qctx, gen)
	done := time.Now()
	if ctx.Err() != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	measured := f.window.In(done)
	if err != nil {
		if measured {
			stats.CountError(f.res.Errors, err)
		}
		return
	}
	// Before any event is visible, the reader's view is as old as the run.
	lag := done.Sub(f.clock.Start)
	if ok {
		lag = f.clock.Since(done, newest)
	} else if measured {
		f.res.Empty++
	}
	f.res.Last = lag
	f.series.Freshness(done, lag)
	f.obs.Freshness(gen, lag)
	if measured {
		f.res.Samples++
		f.res.Lag.Record(lag)
		f.res.QueryService.Record(done.Sub(sent))
	}
}

// Result returns the figures so far.
func (f *Freshness) Result() FreshnessResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.res
}

// LastLag returns the most recent freshness lag sample.
func (f *Freshness) LastLag() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.res.Last
}
