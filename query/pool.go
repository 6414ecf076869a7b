package query

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/freshbench/freshbench/target"
)

// poolSize bounds the values kept per field: enough that lookups spread over
// many values, small enough to cost nothing.
const poolSize = 4096

// pool holds parameter values taken from documents actually written, so
// that lookups hit. A written document joins only settle after its write
// was acknowledged: a lookup must not miss merely because the database
// has not made the document visible yet (that is the freshness lag, which
// the probes measure). Each field a kind draws from keeps a uniform
// sample (a reservoir) of its values, or the newest (ownField); every
// kind, shipped or one's own, draws each parameter from its field
// apart. The tap offers one document per acknowledged batch, and it is
// parsed neither on the write path nor when a query is drawn, but in
// whoever adds (seed, or the workload's settler goroutine), outside the
// lock.
type pool struct {
	settle time.Duration

	mu      sync.Mutex // guards the fields below, up to adding
	drawRng *rand.Rand
	pending []written // acknowledged, not settled yet; oldest first
	misses  uint64
	tapped  bool
	// own are the fields the queries draw from, shipped kinds and
	// queries of one's own alike.
	own []*ownField

	// adding is owned by the one goroutine that adds at a time.
	adding struct {
		rng  *rand.Rand
		seen int64 // documents offered
	}
}

type written struct {
	at   time.Time
	json []byte
}

func newPool(settle time.Duration, seed uint64) *pool {
	p := &pool{settle: settle, drawRng: rand.New(rand.NewPCG(seed, 1))}
	p.adding.rng = rand.New(rand.NewPCG(seed, 3))
	return p
}

// ownRecent is how many of the newest values a recent parameter draws
// from.
const ownRecent = 256

// ownField holds the values written at one field path: a uniform sample
// (a reservoir of poolSize), or with recent the newest ownRecent.
type ownField struct {
	path   []string
	recent bool
	vals   []any
	next   int // recent: where the next value goes once full
}

// field returns the index of the pool's field for p, adding it.
func (p *pool) field(prm Param) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	path := strings.Split(prm.Field, ".")
	for i, f := range p.own {
		if f.recent == prm.Recent && slices.Equal(f.path, path) {
			return i
		}
	}
	p.own = append(p.own, &ownField{path: path, recent: prm.Recent})
	return len(p.own) - 1
}

// add offers one document: each field the queries draw from takes its
// value, if the document has one. A document that is not JSON is no
// parameter source; the ingest accounts for what was written.
func (p *pool) add(doc []byte) {
	p.mu.Lock()
	own := p.own
	p.mu.Unlock()
	// One reservoir decision per document, made before it is parsed:
	// once the uniform samples are full, a document is kept with
	// chance poolSize/seen (Algorithm R), so a long run parses almost
	// none. Only a field that keeps the newest values needs every one.
	p.adding.seen++
	keep := p.adding.seen <= poolSize || p.adding.rng.Int64N(p.adding.seen) < poolSize
	recent := slices.ContainsFunc(own, func(f *ownField) bool { return f.recent })
	if !keep && !recent {
		return
	}
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return
	}
	vals := make([]any, len(own))
	for i, f := range own {
		if keep || f.recent {
			vals[i] = value(v, f.path, p.adding.rng.IntN)
		}
	}
	slot := p.adding.rng.IntN(poolSize)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, f := range own {
		x := vals[i]
		switch {
		case x == nil:
		case f.recent && len(f.vals) == ownRecent:
			f.vals[f.next] = x
			f.next = (f.next + 1) % ownRecent
		case len(f.vals) < poolSize && (f.recent || keep):
			f.vals = append(f.vals, x)
		case !f.recent:
			f.vals[slot] = x
		}
	}
}

// draw draws the parameters of c, one per parameter; false while a
// field has no value yet. With probability missShare the query misses
// (miss is then true): each string parameter takes a value never written
// (missString). A number or boolean keeps the value drawn: no number is
// sure never to be written, and a boolean has two values. So a query
// whose drawn parameters hold no string does not miss, and the result's
// misses count the queries that did.
func (p *pool) draw(c *compiled, missShare float64) (args []any, miss, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	args = make([]any, len(c.fields))
	for i, fi := range c.fields {
		f := p.own[fi]
		if len(f.vals) == 0 {
			return nil, false, false
		}
		args[i] = f.vals[p.drawRng.IntN(len(f.vals))]
	}
	if missShare == 0 || p.drawRng.Float64() >= missShare {
		return args, false, true
	}
	for i, a := range args {
		if _, ok := a.(string); ok {
			p.misses++
			args[i], miss = missString(p.misses), true
		}
	}
	return args, miss, true
}

// missString is a string no written event holds, for every kind and
// parameter alike: under the reserved top-level domain .invalid (RFC
// 2606), which docgen never writes (its emails are at real domains).
// Each is distinct, so that no cache answers a repeated miss.
func missString(n uint64) string { return fmt.Sprintf("miss-%d.freshbench.invalid", n) }

// seed adds documents that are stored already, without settling.
func (p *pool) seed(docs [][]byte) {
	for _, d := range docs {
		p.add(d)
	}
}

// written keeps a copy of doc (the writer reuses its buffer) to add once
// it has settled.
func (p *pool) written(doc []byte, at time.Time) {
	c := slices.Clone(doc)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = append(p.pending, written{at: at, json: c})
}

// settleDue adds the pending documents that have settled by now.
func (p *pool) settleDue(now time.Time) {
	p.mu.Lock()
	n := 0
	for n < len(p.pending) && !p.pending[n].at.Add(p.settle).After(now) {
		n++
	}
	due := slices.Clone(p.pending[:n])
	p.pending = slices.Delete(p.pending, 0, n)
	p.mu.Unlock()
	for _, w := range due {
		p.add(w.json)
	}
}

// ready reports whether every kind has something to draw from.
func (p *pool) ready() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.own {
		if len(f.vals) == 0 {
			return false
		}
	}
	return true
}

// tap is a target whose acknowledged writes feed the pool.
type tap struct {
	target.Target
	pool *pool
}

// Write writes through and offers one acknowledged document of the batch.
func (t *tap) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	res, err := t.Target.Write(ctx, b)
	if err != nil || res.Acknowledged == 0 {
		return res, err
	}
	for i := len(b.Docs) - 1; i >= 0; i-- {
		if !slices.Contains(res.FailedSeqs, b.Docs[i].Seq) {
			t.pool.written(b.Docs[i].JSON, time.Now())
			break
		}
	}
	return res, err
}
