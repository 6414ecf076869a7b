package query

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/freshbench/freshbench/target"
)

// poolSize bounds the values kept per kind: enough that lookups spread
// over many documents, small enough to cost nothing.
const poolSize = 4096

// pool holds parameter values taken from documents actually written, so
// that lookups hit. A written document joins only settle after its write
// was acknowledged: a lookup must not miss merely because the database
// has not made the document visible yet (that is the freshness lag, which
// the probes measure). Per kind, the values are a uniform sample
// (reservoir) of everything that joined.
type pool struct {
	settle time.Duration

	mu      sync.Mutex
	rng     *rand.Rand
	pending []written // acknowledged, not settled yet; oldest first
	values  map[target.QueryKind]*reservoir
	misses  uint64
	tapped  bool
}

type written struct {
	at   time.Time
	json []byte
}

type reservoir struct {
	vals []string
	seen int64
}

func (r *reservoir) add(v string, rng *rand.Rand) {
	r.seen++
	if len(r.vals) < poolSize {
		r.vals = append(r.vals, v)
		return
	}
	if j := rng.Int64N(r.seen); j < poolSize {
		r.vals[j] = v
	}
}

func newPool(settle time.Duration, rng *rand.Rand) *pool {
	return &pool{settle: settle, rng: rng, values: map[target.QueryKind]*reservoir{}}
}

// fields are what the query kinds filter on.
type fields struct {
	ProcessBy string   `json:"processBy"`
	Emails    []string `json:"emails"`
	Company   string   `json:"company"`
	Generator string   `json:"generator_identifier"`
}

// addJSON adds the parameter values of one document. Callers hold p.mu.
func (p *pool) addJSON(doc []byte) error {
	var f fields
	if err := json.Unmarshal(doc, &f); err != nil {
		return err
	}
	add := func(k target.QueryKind, v string) {
		if v == "" {
			return
		}
		r := p.values[k]
		if r == nil {
			r = &reservoir{}
			p.values[k] = r
		}
		r.add(v, p.rng)
	}
	add(target.QueryPoint, f.ProcessBy)
	for _, e := range f.Emails {
		add(target.QueryArray, e)
	}
	add(target.QueryAggregate, f.Company)
	add(target.QueryNewest, f.Generator)
	return nil
}

// seed adds documents that are stored already, without settling.
func (p *pool) seed(docs [][]byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range docs {
		if err := p.addJSON(d); err != nil {
			return fmt.Errorf("sampled document is not JSON: %w", err)
		}
	}
	return nil
}

// written keeps a copy of doc (the writer reuses its buffer) to add once
// it has settled; parsing waits until then, off the write path.
func (p *pool) written(doc []byte, at time.Time) {
	c := slices.Clone(doc)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending = append(p.pending, written{at: at, json: c})
}

// promote adds the pending documents that have settled by now. Callers
// hold p.mu. A document that does not parse is not a parameter source;
// the ingest accounts for what was written.
func (p *pool) promote(now time.Time) {
	n := 0
	for n < len(p.pending) && !p.pending[n].at.Add(p.settle).After(now) {
		_ = p.addJSON(p.pending[n].json)
		n++
	}
	if n > 0 {
		p.pending = slices.Delete(p.pending, 0, n)
	}
}

// ready reports whether every kind of m has a value to draw.
func (p *pool) ready(m Mix, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.promote(now)
	for _, w := range m {
		if r := p.values[w.Kind]; r == nil || len(r.vals) == 0 {
			return false
		}
	}
	return true
}

// draw returns a parameter for kind: with probability missShare one that
// was never written (miss is then true), otherwise a written one. ok is
// false when no written value is there yet.
func (p *pool) draw(kind target.QueryKind, missShare float64, now time.Time) (v string, miss, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if missShare > 0 && p.rng.Float64() < missShare {
		p.misses++
		return missValue(kind, p.misses), true, true
	}
	p.promote(now)
	r := p.values[kind]
	if r == nil || len(r.vals) == 0 {
		return "", false, false
	}
	return r.vals[p.rng.IntN(len(r.vals))], false, true
}

// missValue is a value of kind's field that no generated document has
// (docgen writes processBy as worker-NNN, companies from a list, emails
// at real top-level domains and decimal generator identifiers). Each is
// distinct, so that no cache answers a repeated miss.
func missValue(kind target.QueryKind, n uint64) string {
	switch kind {
	case target.QueryPoint:
		return fmt.Sprintf("worker-miss-%d", n)
	case target.QueryArray:
		return fmt.Sprintf("miss-%d@freshbench.invalid", n)
	case target.QueryAggregate:
		return fmt.Sprintf("Miss-%d", n)
	}
	return fmt.Sprintf("miss-%d", n)
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
