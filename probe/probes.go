package probe

import (
	"context"
	"sync"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/timeline"
)

// Probes sends every probe to each read endpoint's Visibility, which
// polls its endpoint on its own, and joins what they saw: a probe is
// visible everywhere once every endpoint has seen it, at the latest of
// their sightings. The first endpoint is the write target; each other
// one is held against it (results.Visibility.BeforeTarget, AfterTarget).
type Probes struct {
	vs     []*Visibility
	window *timeline.Timeline

	mu    sync.Mutex
	joins map[probeKey]*join // probes not yet seen everywhere
	every results.Visibility
	// before and after count, per endpoint, the probes it showed before
	// the first endpoint could have, and those the first showed before
	// it could have.
	before, after []int64
}

type probeKey struct {
	gen, id  string
	revision int64
}

// join is one probe's sightings so far, by endpoint.
type join struct {
	intended time.Time
	seen     []sighting
	left     int // endpoints that have not seen it yet
}

// sighting is where one endpoint's first sighting of a probe lies: after
// the last instant it was known not to be visible there, by the end of
// the query that saw it.
type sighting struct{ unseenAt, done time.Time }

// NewProbes joins the Visibilities of the read endpoints, the write
// target's first. Use the Probes in their place from then on.
func NewProbes(window *timeline.Timeline, vs ...*Visibility) *Probes {
	p := &Probes{vs: vs, window: window, joins: map[probeKey]*join{}, before: make([]int64, len(vs)), after: make([]int64, len(vs))}
	p.every = results.NewVisibility()
	p.every.Errors = nil
	if len(vs) > 1 {
		for i, v := range vs {
			v.seen = func(gen, id string, revision int64, unseenAt, done time.Time) {
				p.sighted(i, probeKey{gen, id, revision}, unseenAt, done)
			}
		}
	}
	return p
}

// Add registers a probe event (revision 0) or update on every endpoint,
// due at intended. Call it before the probe's write is sent.
func (p *Probes) Add(gen, id string, revision int64, intended time.Time) {
	if len(p.vs) > 1 {
		p.mu.Lock()
		p.joins[probeKey{gen, id, revision}] = &join{intended: intended, seen: make([]sighting, len(p.vs)), left: len(p.vs)}
		if p.window.In(intended) {
			p.every.Probes++
		}
		p.mu.Unlock()
	}
	for _, v := range p.vs {
		v.Add(gen, id, revision, intended)
	}
}

// Drop forgets, on every endpoint, a probe whose write failed.
func (p *Probes) Drop(gen, id string, revision int64) {
	for _, v := range p.vs {
		v.Drop(gen, id, revision)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	k := probeKey{gen, id, revision}
	if j := p.joins[k]; j != nil {
		delete(p.joins, k)
		if p.window.In(j.intended) {
			p.every.Dropped++
		}
	}
}

// Pending is the number of sightings still awaited, over every endpoint.
func (p *Probes) Pending() int {
	n := 0
	for _, v := range p.vs {
		n += v.Pending()
	}
	return n
}

// Run polls every endpoint, each on its own, until ctx ends: an endpoint
// that is slow or down delays no other.
func (p *Probes) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, v := range p.vs {
		wg.Add(1)
		go func() { defer wg.Done(); v.Run(ctx) }()
	}
	wg.Wait()
}

// sighted books endpoint i's first sighting of a probe. It is called
// under the Visibility's lock, and takes p's: always in that order.
func (p *Probes) sighted(i int, k probeKey, unseenAt, done time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	j := p.joins[k]
	if j == nil || !j.seen[i].done.IsZero() {
		return
	}
	j.seen[i] = sighting{unseenAt: unseenAt, done: done}
	j.left--
	if j.left > 0 {
		return
	}
	delete(p.joins, k)
	p.order(j)
	if !p.window.In(j.intended) {
		return
	}
	// Each endpoint showed the probe in (unseenAt, done]; the latest of
	// them did so in (latest unseenAt, latest done].
	var last sighting
	for _, s := range j.seen {
		last.unseenAt, last.done = later(last.unseenAt, s.unseenAt), later(last.done, s.done)
	}
	p.every.Record(j.intended, last.unseenAt, last.done)
}

// order counts, for each endpoint of j but the target, whether it
// showed the probe before the target could have (its sighting ended
// before a query of the target's began that still missed it), or the
// target before it could have. A sighting with no done is of an
// endpoint that never saw the probe, its unseenAt the start of the last
// query that missed it. Callers hold p.mu.
func (p *Probes) order(j *join) {
	if !p.window.In(j.intended) {
		return
	}
	t := j.seen[0]
	for i := 1; i < len(j.seen); i++ {
		s := j.seen[i]
		switch {
		case !s.done.IsZero() && s.done.Before(t.unseenAt):
			p.before[i]++
		case !t.done.IsZero() && t.done.Before(s.unseenAt):
			p.after[i]++
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Finish finishes every endpoint's Visibility (see Visibility.Finish) and
// returns their figures, in the order given, and those of the probes
// visible everywhere: nil with one endpoint, where they are the
// target's. A probe some endpoint never saw enters the latter at its age
// now, a lower bound.
func (p *Probes) Finish() ([]results.Visibility, *results.Visibility) {
	now := time.Now()
	if len(p.vs) > 1 {
		p.countUnjoined()
	}
	out := make([]results.Visibility, len(p.vs))
	for i, v := range p.vs {
		out[i] = v.Finish()
		out[i].BeforeTarget, out[i].AfterTarget = p.before[i], p.after[i]
	}
	if len(p.vs) == 1 {
		return out, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range out {
		if r.NotMeasured != "" {
			// An endpoint that keeps nothing sees nothing: no probe is
			// visible everywhere, and none is late.
			return out, &results.Visibility{NotMeasured: r.NotMeasured}
		}
	}
	every := p.every
	for _, j := range p.joins {
		if p.window.In(j.intended) {
			every.RecordUnseen(j.intended, now)
		}
	}
	p.joins = map[probeKey]*join{}
	every.SetResolution()
	return out, &every
}

// countUnjoined orders the sightings of the probes some endpoint has
// not seen: each endpoint that has not is taken as last seen without the
// probe at the start of its last query that missed it.
func (p *Probes) countUnjoined() {
	unseen := make([]map[probeKey]time.Time, len(p.vs))
	for i, v := range p.vs {
		unseen[i] = map[probeKey]time.Time{}
		v.mu.Lock()
		for gen, g := range v.pending {
			for _, pr := range g.list {
				unseen[i][probeKey{gen, pr.id, pr.revision}] = pr.unseenAt
			}
		}
		v.mu.Unlock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, j := range p.joins {
		for i := range j.seen {
			if j.seen[i].done.IsZero() {
				j.seen[i].unseenAt = unseen[i][k]
			}
		}
		p.order(j)
	}
}

// Split routes the probes of inserts to one Probes and those of updates
// (revision above 0) to another, whose figures are kept apart.
type Split struct {
	Inserts, Updates *Probes
}

// Add registers the probe with the Probes of its kind.
func (s Split) Add(gen, id string, revision int64, intended time.Time) {
	if revision > 0 {
		s.Updates.Add(gen, id, revision, intended)
		return
	}
	s.Inserts.Add(gen, id, revision, intended)
}

// Drop forgets a probe whose write failed.
func (s Split) Drop(gen, id string, revision int64) {
	if revision > 0 {
		s.Updates.Drop(gen, id, revision)
		return
	}
	s.Inserts.Drop(gen, id, revision)
}
