package probe

import (
	"context"
	"sync"
	"time"

	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// maxIDsPerQuery bounds one visibility query; older probes go first.
const maxIDsPerQuery = 500

type pending struct {
	id       string
	intended time.Time
}

// VisibilityResult is the visibility latency of the probes whose events
// were due in the measured window.
type VisibilityResult struct {
	Latency      *stats.Histogram             `json:"latency"`       // _event_time → first query that saw it
	QueryService *stats.Histogram             `json:"query_service"` // the probe query's own time
	ResolutionMs float64                      `json:"resolution_ms"` // the longest gap between two polls
	Probes       int64                        `json:"probes"`
	Seen         int64                        `json:"seen"`
	NeverSeen    int64                        `json:"never_seen"`
	Dropped      int64                        `json:"dropped_write_failed"`
	Errors       map[string]*stats.ErrorCount `json:"errors,omitempty"`
}

// Visibility tracks sampled probe events until a search sees them. The
// latency of each is taken at the completion of the first query that saw
// it, so it is an upper bound whose resolution is the poll interval.
type Visibility struct {
	tgt    target.Reader
	poll   time.Duration
	window *Window
	obs    stats.Observer

	mu      sync.Mutex
	pending map[string][]pending // by generator, oldest first
	res     VisibilityResult
}

// NewVisibility prepares a probe tracker.
func NewVisibility(tgt target.Reader, poll time.Duration, window *Window, obs stats.Observer) *Visibility {
	return &Visibility{
		tgt: tgt, poll: poll, window: window, obs: obs, pending: map[string][]pending{},
		res: VisibilityResult{
			Latency: stats.NewHistogram(), QueryService: stats.NewHistogram(),
			ResolutionMs: float64(Resolution(poll).Microseconds()) / 1000, Errors: map[string]*stats.ErrorCount{},
		},
	}
}

// Add registers a probe event, due at intended.
func (v *Visibility) Add(gen, id string, intended time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.pending[gen] = append(v.pending[gen], pending{id: id, intended: intended})
	if v.window.In(intended) {
		v.res.Probes++
	}
}

// Drop forgets a probe whose write failed.
func (v *Visibility) Drop(gen, id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ps := v.pending[gen]
	for i, p := range ps {
		if p.id == id {
			v.pending[gen] = append(ps[:i:i], ps[i+1:]...)
			if v.window.In(p.intended) {
				v.res.Dropped++
			}
			return
		}
	}
}

// Pending is the number of probes not yet seen.
func (v *Visibility) Pending() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for _, ps := range v.pending {
		n += len(ps)
	}
	return n
}

// Run polls until ctx ends.
func (v *Visibility) Run(ctx context.Context) {
	everyPoll(ctx, v.poll, false, func() { v.pollOnce(ctx) })
}

func (v *Visibility) pollOnce(ctx context.Context) {
	v.mu.Lock()
	batches := map[string][]pending{}
	for g, ps := range v.pending {
		if len(ps) > 0 {
			batches[g] = append([]pending(nil), ps[:min(len(ps), maxIDsPerQuery)]...)
		}
	}
	v.mu.Unlock()
	for g, ps := range batches {
		ids := make([]string, len(ps))
		for i, p := range ps {
			ids[i] = p.id
		}
		qctx, cancel := context.WithTimeout(ctx, 10*v.poll+5*time.Second)
		sent := time.Now()
		seen, err := v.tgt.Visible(qctx, g, ids)
		done := time.Now()
		cancel()
		if ctx.Err() != nil {
			return
		}
		v.record(g, ps, seen, err, sent, done)
	}
}

func (v *Visibility) record(gen string, asked []pending, seen map[string]bool, err error, sent, done time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil {
		if v.window.In(done) {
			stats.CountError(v.res.Errors, err)
		}
		return
	}
	if v.window.In(done) {
		v.res.QueryService.Record(done.Sub(sent))
	}
	if len(seen) == 0 {
		return
	}
	left := v.pending[gen][:0]
	for _, p := range v.pending[gen] {
		if !seen[p.id] {
			left = append(left, p)
			continue
		}
		v.obs.Visible(gen, done.Sub(p.intended))
		if v.window.In(p.intended) {
			v.res.Seen++
			v.res.Latency.Record(done.Sub(p.intended))
		}
	}
	v.pending[gen] = left
}

// Finish counts the probes still unseen and returns the figures.
func (v *Visibility) Finish() VisibilityResult {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, ps := range v.pending {
		for _, p := range ps {
			if v.window.In(p.intended) {
				v.res.NeverSeen++
			}
		}
	}
	return v.res
}
