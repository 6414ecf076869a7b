// Package probe measures what a reader of the database sees: the freshness
// lag of each generator, the visibility latency of sampled probe events,
// and, after the run, the completeness of what was acknowledged.
package probe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/timeline"
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

// Freshness samples RockBench's data latency: at each poll, as often as
// its Budget allows, the newest _event_time each generator's events show
// in a query.
type Freshness struct {
	endpoint string // the read endpoint's name, for the observer
	// newest answers the freshness query: the newest time a query for a
	// generator sees.
	newest func(ctx context.Context, gen string) (int64, bool, error)
	// updates: the freshness of updates, which have none to show until
	// the first is visible (no lag is recorded before then: it would be
	// the run's age, not a lag).
	updates bool
	gens    []string
	budget  Budget
	clock   Clock
	window  *timeline.Timeline
	rec     stats.Recorder // the endpoint's series and the observer
	timeout time.Duration  // one query's bound

	mu   sync.Mutex
	res  results.Freshness
	seen map[string]int64 // newest time seen per generator
}

// NewFreshness prepares a freshness sampler of the given generators on
// the read endpoint tgt, named endpoint. series and obs, when not nil,
// get every sample too.
func NewFreshness(endpoint string, tgt target.Reader, gens []string, budget Budget, clock Clock, window *timeline.Timeline, series *stats.Series, obs stats.Observer) *Freshness {
	return newFreshness(endpoint, tgt.Freshness, gens, budget, clock, window, stats.NewRecorder(series, obs))
}

func newFreshness(endpoint string, newest func(context.Context, string) (int64, bool, error), gens []string, budget Budget, clock Clock, window *timeline.Timeline, rec stats.Recorder) *Freshness {
	return &Freshness{
		endpoint: endpoint, newest: newest, gens: gens, budget: budget, clock: clock, window: window, rec: rec,
		timeout: budget.bound(), seen: map[string]int64{},
		res: results.Freshness{Lag: stats.NewHistogram(), QueryService: stats.NewHistogram(), Errors: map[string]*stats.ErrorCount{}},
	}
}

// NewUpdateFreshness prepares a sampler of the freshness of updates: the
// newest _update_time each generator's events show on the read endpoint
// up. It feeds no series and no observer; those carry the inserts'.
func NewUpdateFreshness(endpoint string, up target.Updater, gens []string, budget Budget, clock Clock, window *timeline.Timeline) *Freshness {
	f := newFreshness(endpoint, up.UpdateFreshness, gens, budget, clock, window, stats.Recorder{})
	f.updates = true
	return f
}

// Run samples until ctx ends, or until the target says it keeps nothing.
func (f *Freshness) Run(ctx context.Context) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	everyPoll(ctx, f.budget, true, func() {
		for _, g := range f.gens {
			if !f.sample(ctx, g) {
				stop()
				return
			}
		}
	})
}

// sample takes one freshness sample of gen and reports whether sampling
// should go on.
func (f *Freshness) sample(ctx context.Context, gen string) bool {
	var (
		newest int64
		ok     bool
	)
	sent := time.Now()
	err := withBound(ctx, f.timeout, func() string { return "freshness query of generator " + gen }, func(qctx context.Context) error {
		var err error
		newest, ok, err = f.newest(qctx, gen)
		return err
	})
	done := time.Now()
	if ctx.Err() != nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if errors.Is(err, target.ErrNotKept) {
		f.res.NotMeasured = err.Error()
		return false
	}
	measured := f.window.In(done)
	if err != nil {
		var bound *boundError
		if !errors.As(err, &bound) {
			err = fmt.Errorf("freshness query of generator %s: %w", gen, err)
		}
		newest, ok = f.seen[gen]
	} else {
		f.stepBack(gen, newest, ok, measured)
		if ok {
			f.seen[gen] = max(newest, f.seen[gen])
		}
	}
	if f.updates && !ok {
		if measured {
			if err != nil {
				stats.CountError(f.res.Errors, err)
			} else {
				f.res.Empty++
			}
		}
		return true
	}
	// Before any event is visible, the reader's view is as old as the run.
	lag := done.Sub(f.clock.Start)
	if ok {
		lag = f.clock.Since(done, newest)
	}
	f.res.Last = lag
	f.rec.Freshness(f.endpoint, gen, done, lag)
	if !measured {
		return true
	}
	f.res.Lag.Record(lag)
	switch {
	case err != nil:
		stats.CountError(f.res.Errors, err)
		f.res.Censored++
		if f.res.CensoredLag == nil {
			f.res.CensoredLag = stats.NewHistogram()
		}
		f.res.CensoredLag.Record(lag)
	default:
		f.res.Samples++
		f.res.QueryService.Record(done.Sub(sent))
		if !ok {
			f.res.Empty++
		}
	}
	return true
}

// stepBack counts an answer whose view of gen is older than one an
// earlier answer showed: a newest event older than one already seen, or
// none (the view of the run's start) after some were seen.
func (f *Freshness) stepBack(gen string, newest int64, ok, measured bool) {
	prev, seen := f.seen[gen]
	if !seen || !measured {
		return
	}
	if !ok {
		newest = f.clock.Start.UnixMicro()
	}
	if newest >= prev {
		return
	}
	f.res.StepsBack++
	f.res.StepBackMaxMs = max(f.res.StepBackMaxMs, float64(prev-newest)/1e3)
}

// Result returns the figures so far.
func (f *Freshness) Result() results.Freshness {
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
