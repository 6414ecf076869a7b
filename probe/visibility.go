package probe

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/timeline"
)

// maxIDsPerQuery bounds one visibility query. A generator with more
// pending probes is gone through in turn, a chunk per poll (see chunk).
const maxIDsPerQuery = 500

type pending struct {
	id       string
	revision int64 // the revision awaited: 0 for an insert
	intended time.Time
	order    uint64 // arrival order within its generator
	// unseenAt is the last instant the probe is known not to have been
	// visible: when it was added (before its write was sent), then the
	// start of each query that asked for it and missed it.
	unseenAt time.Time
}

// genProbes are one generator's pending probes, in arrival order, and
// where the next poll resumes going through them.
type genProbes struct {
	list   []pending
	cursor uint64 // the next chunk starts at the first probe with order ≥ cursor
	next   uint64 // order of the next probe to arrive
}

// chunk returns the probes the next query asks for: up to max of them,
// from the cursor on, wrapping to the oldest, and moves the cursor past
// them. A probe therefore waits at most ⌈(probes ahead of it + 1) / max⌉
// polls however many lost probes stay pending: newer probes are not
// blocked behind older ones that never show up (issue 12, item 9), and
// lost ones are still asked for in turn. New probes join at the end of
// the round, so a steady inflow cannot starve the old ones either.
func (g *genProbes) chunk(max int) []pending {
	n := len(g.list)
	if n == 0 {
		return nil
	}
	i0 := sort.Search(n, func(i int) bool { return g.list[i].order >= g.cursor })
	if i0 == n {
		i0 = 0
	}
	count := min(max, n)
	out := make([]pending, 0, count)
	out = append(out, g.list[i0:min(i0+count, n)]...)
	switch {
	case len(out) < count: // wrapped round to the oldest
		out = append(out, g.list[:count-len(out)]...)
		g.cursor = out[len(out)-1].order + 1
	case i0+count == n: // the round is over: the next starts at the oldest
		g.cursor = 0
	default:
		g.cursor = g.list[i0+count].order
	}
	return out
}

// Visibility tracks sampled probe events until a search sees them. The
// latency of each is taken at the completion of the first query that saw
// it, so it is an upper bound whose resolution is the measured Gap.
//
// A Visibility tracks the probes of inserts, or (NewUpdateVisibility) those
// of updates, each of which is seen once a search returns its revision or
// a later one.
type Visibility struct {
	endpoint string // the read endpoint's name, for the observer
	tgt      target.Reader
	up       target.Updater // set: probes of updates, asked for by revision
	budget   Budget
	window   *timeline.Timeline
	rec      stats.Recorder // the observer; none for updates
	timeout  time.Duration  // one query's bound

	mu      sync.Mutex
	pending map[string]*genProbes
	res     results.Visibility
	// seen, when set, is told of every probe seen, under mu (see Probes).
	seen func(gen, id string, revision int64, unseenAt, done time.Time)
}

// NewVisibility prepares a probe tracker of the read endpoint tgt, named
// endpoint; obs, when not nil, is told of every probe seen.
func NewVisibility(endpoint string, tgt target.Reader, budget Budget, window *timeline.Timeline, obs stats.Observer) *Visibility {
	return &Visibility{
		endpoint: endpoint, tgt: tgt, budget: budget, window: window, rec: stats.NewRecorder(nil, obs), timeout: budget.bound(), pending: map[string]*genProbes{},
		res: results.NewVisibility(),
	}
}

// NewUpdateVisibility prepares a tracker of the probes of updates on the
// read endpoint up, named endpoint. It tells no observer: the observer
// carries the inserts' visibility.
func NewUpdateVisibility(endpoint string, up target.Updater, budget Budget, window *timeline.Timeline) *Visibility {
	v := NewVisibility(endpoint, nil, budget, window, nil)
	v.up = up
	return v
}

// Add registers a probe event (revision 0) or update, due at intended.
// Call it before the probe's write is sent: the probe cannot be visible
// before then.
func (v *Visibility) Add(gen, id string, revision int64, intended time.Time) {
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.res.NotMeasured != "" {
		return
	}
	g := v.pending[gen]
	if g == nil {
		g = &genProbes{}
		v.pending[gen] = g
	}
	g.list = append(g.list, pending{id: id, revision: revision, intended: intended, order: g.next, unseenAt: now})
	g.next++
	if v.window.In(intended) {
		v.res.Probes++
	}
}

// Drop forgets a probe whose write failed.
func (v *Visibility) Drop(gen, id string, revision int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	g := v.pending[gen]
	if g == nil {
		return
	}
	for i, p := range g.list {
		if p.id == id && p.revision == revision {
			g.list = append(g.list[:i:i], g.list[i+1:]...)
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
	for _, g := range v.pending {
		n += len(g.list)
	}
	return n
}

// Run polls until ctx ends.
func (v *Visibility) Run(ctx context.Context) {
	everyPoll(ctx, v.budget, false, func() { v.pollOnce(ctx) })
}

func (v *Visibility) pollOnce(ctx context.Context) {
	v.mu.Lock()
	if v.res.NotMeasured != "" {
		v.mu.Unlock()
		return
	}
	chunks := map[string][]pending{}
	for g, ps := range v.pending {
		if c := ps.chunk(maxIDsPerQuery); len(c) > 0 {
			chunks[g] = c
		}
	}
	v.mu.Unlock()
	for g, ps := range chunks {
		ids := make([]string, len(ps))
		for i, p := range ps {
			ids[i] = p.id
		}
		var seen map[string]int64
		sent := time.Now()
		err := withBound(ctx, v.timeout, func() string { return "probe query of generator " + g }, func(qctx context.Context) error {
			var err error
			seen, err = v.ask(qctx, g, ids)
			return err
		})
		done := time.Now()
		if ctx.Err() != nil {
			return
		}
		var bound *boundError
		if err != nil && !errors.As(err, &bound) && !errors.Is(err, target.ErrNotKept) {
			err = fmt.Errorf("probe query of generator %s: %w", g, err)
		}
		if v.record(g, ids, seen, err, sent, done) {
			return
		}
	}
}

// ask returns the revision a search sees of each of ids it sees (0 for
// an event as inserted).
func (v *Visibility) ask(ctx context.Context, gen string, ids []string) (map[string]int64, error) {
	if v.up != nil {
		return v.up.Revisions(ctx, gen, ids)
	}
	vis, err := v.tgt.Visible(ctx, gen, ids)
	seen := make(map[string]int64, len(vis))
	for id, ok := range vis {
		if ok {
			seen[id] = 0
		}
	}
	return seen, err
}

// record books one probe query's answer and reports whether polling
// should stop (the target keeps nothing).
func (v *Visibility) record(gen string, asked []string, seen map[string]int64, err error, sent, done time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if errors.Is(err, target.ErrNotKept) {
		// Nothing will ever be seen: forget the probes rather than count
		// them as never seen, and keep no new ones.
		v.res.NotMeasured = err.Error()
		v.pending = map[string]*genProbes{}
		v.res.Probes, v.res.Dropped = 0, 0
		return true
	}
	if err != nil {
		if v.window.In(done) {
			stats.CountError(v.res.Errors, err)
		}
		return false
	}
	if v.window.In(done) {
		v.res.QueryService.Record(done.Sub(sent))
	}
	g := v.pending[gen]
	if g == nil {
		return false
	}
	wasAsked := make(map[string]bool, len(asked))
	for _, id := range asked {
		wasAsked[id] = true
	}
	left := g.list[:0]
	for _, p := range g.list {
		if !wasAsked[p.id] {
			left = append(left, p)
			continue
		}
		if rev, ok := seen[p.id]; !ok || rev < p.revision {
			p.unseenAt = sent
			left = append(left, p)
			continue
		}
		v.rec.Visible(v.endpoint, gen, done.Sub(p.intended))
		if v.seen != nil {
			v.seen(gen, p.id, p.revision, p.unseenAt, done)
		}
		if v.window.In(p.intended) {
			v.res.Record(p.intended, p.unseenAt, done)
		}
	}
	clear(g.list[len(left):]) // let the seen probes' ids go
	g.list = left
	return false
}

// Finish counts the probes still unseen, enters each in the latency at
// its age now (a lower bound: it was not visible yet, as far as any query
// could tell), and returns the figures. The probes are forgotten.
func (v *Visibility) Finish() results.Visibility {
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, g := range v.pending {
		for _, p := range g.list {
			if v.window.In(p.intended) {
				v.res.RecordUnseen(p.intended, now)
			}
		}
	}
	v.pending = map[string]*genProbes{}
	v.res.SetResolution()
	return v.res
}
