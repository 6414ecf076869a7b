package noop

import (
	"path"
	"slices"
	"sort"
	"sync"
)

// Bounds of what a collection keeps beside its per-generator figures.
const (
	// keptFirstIDs is how many first _ids of write requests a collection
	// remembers (about 60 bytes each): the visibility probes ask for a
	// probe within a few poll intervals of its write, far fewer requests
	// than this even at a million events per second in batches of 50.
	keptFirstIDs = 1 << 18
	// keptSamples is how many documents a collection keeps for Sample,
	// the query workload's source of parameters.
	keptSamples = 100
)

// store is what the server keeps of the indexes (or tables) of one
// protocol. It is safe for concurrent use.
type store struct {
	mu    sync.Mutex
	colls map[string]*collection
}

func newStore() *store { return &store{colls: map[string]*collection{}} }

// collection is one index or table.
type collection struct {
	fields  map[string]string // field → type, as the create request mapped it (Elasticsearch)
	gens    map[string]*generator
	firsts  firstIDs
	samples []sample
	seqNo   int64 // Elasticsearch's _seq_no of the next item
}

type sample struct {
	id  string
	doc []byte
}

// generator is what a collection keeps of one generator_identifier: all
// that the freshness, probe and audit queries read, and no document.
type generator struct {
	name   string
	newest int64 // the newest _event_time written
	timed  bool  // some event carried an _event_time
	seqs   seqSet
}

// event is what a write request says of one document; gen points into
// the request.
type event struct {
	gen       []byte
	seq, time int64
	hasSeq    bool
	hasTime   bool
}

// write is one write request as the store records it. Its byte slices
// point into the request; record copies what it keeps.
type write struct {
	events  []event
	firstID []byte // the _id of the request's first document
	samples []sample
}

func (w *write) reset() {
	w.events, w.firstID, w.samples = w.events[:0], nil, w.samples[:0]
}

func newCollection(fields map[string]string) *collection {
	return &collection{fields: fields, gens: map[string]*generator{}}
}

// create makes the collection with the given field types and reports
// whether it did (false: it existed).
func (s *store) create(name string, fields map[string]string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.colls[name]; ok {
		return false
	}
	s.colls[name] = newCollection(fields)
	return true
}

// ensure makes the collection unless it exists, as a write to a missing
// index creates it.
func (s *store) ensure(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.colls[name]; !ok {
		s.colls[name] = newCollection(nil)
	}
}

func (s *store) exists(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.colls[name]
	return ok
}

// matchesAny reports whether an index pattern (path.Match's syntax, whose
// * is the server's) matches a collection's name.
func (s *store) matchesAny(pattern string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.colls {
		if ok, _ := path.Match(pattern, name); ok {
			return true
		}
	}
	return false
}

// drop forgets the collection and reports whether it existed.
func (s *store) drop(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.colls[name]
	delete(s.colls, name)
	return ok
}

// fields returns the collection's mapped field types, false when it does
// not exist.
func (s *store) fields(name string) (map[string]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.colls[name]
	if !ok {
		return nil, false
	}
	return c.fields, true
}

// wantsSamples reports whether the collection still keeps more sample
// documents, so that a protocol copies documents only then.
func (s *store) wantsSamples(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.colls[name]
	return !ok || len(c.samples) < keptSamples
}

// record books a write request into the collection, creating it when
// missing, and returns the _seq_no of its first item.
func (s *store) record(name string, w *write, items int) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.colls[name]
	if !ok {
		c = newCollection(nil)
		s.colls[name] = c
	}
	seqNo := c.seqNo
	c.seqNo += int64(items)
	var g *generator
	for i := range w.events {
		e := &w.events[i]
		if len(e.gen) == 0 {
			continue
		}
		if g == nil || g.name != string(e.gen) {
			g = c.generator(e.gen)
		}
		if e.hasTime && (!g.timed || e.time > g.newest) {
			g.newest, g.timed = e.time, true
		}
		if e.hasSeq {
			g.seqs.add(e.seq)
		}
	}
	if len(w.firstID) > 0 && len(w.events) > 0 && len(w.events[0].gen) > 0 {
		c.firsts.add(string(w.firstID), c.generator(w.events[0].gen))
	}
	for _, sm := range w.samples {
		if len(c.samples) >= keptSamples {
			break
		}
		c.samples = append(c.samples, sample{id: sm.id, doc: slices.Clone(sm.doc)})
	}
	return seqNo
}

// generator returns the collection's generator named gen, made if new.
// Callers hold the store's lock.
func (c *collection) generator(gen []byte) *generator {
	if g, ok := c.gens[string(gen)]; ok {
		return g
	}
	g := &generator{name: string(gen)}
	c.gens[g.name] = g
	return g
}

// lookup returns the named generator of the named collection, or nil.
// Callers hold the store's lock.
func (s *store) lookup(coll, gen string) *generator {
	c, ok := s.colls[coll]
	if !ok {
		return nil
	}
	return c.gens[gen]
}

// newest returns the newest _event_time written for gen.
func (s *store) newest(coll, gen string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.lookup(coll, gen); g != nil && g.timed {
		return g.newest, true
	}
	return 0, false
}

// count returns how many distinct _seq of gen were written.
func (s *store) count(coll, gen string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.lookup(coll, gen); g != nil {
		return g.seqs.n
	}
	return 0
}

// countAll returns how many distinct events of every generator were
// written.
func (s *store) countAll(coll string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.colls[coll]
	if !ok {
		return 0
	}
	var n int64
	for _, g := range c.gens {
		n += g.seqs.n
	}
	return n
}

// hasSeq reports whether gen's event seq was written.
func (s *store) hasSeq(coll, gen string, seq int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.lookup(coll, gen)
	return g != nil && g.seqs.has(seq)
}

// visible returns those of ids that were the first _id of a write
// request of gen (gen "" matches any generator).
func (s *store) visible(coll, gen string, ids []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.colls[coll]
	if !ok {
		return nil
	}
	var out []string
	for _, id := range ids {
		if g := c.firsts.generator(id); g != nil && (gen == "" || g.name == gen) {
			out = append(out, id)
		}
	}
	return out
}

// seqs returns a copy of gen's _seq spans, to be read without the lock.
func (s *store) seqs(coll, gen string) []span {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.lookup(coll, gen); g != nil {
		return slices.Clone(g.seqs.spans)
	}
	return nil
}

// samples returns up to n of the documents the collection kept.
func (s *store) samples(coll string, n int) []sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.colls[coll]
	if !ok {
		return nil
	}
	return slices.Clone(c.samples[:min(n, len(c.samples))])
}

// firstIDs remembers the newest keptFirstIDs first _ids of write
// requests, each with its generator.
type firstIDs struct {
	ring  []string
	next  int
	index map[string]firstID
}

type firstID struct {
	gen  *generator
	slot int // where in the ring; an older copy of the id does not evict it
}

func (f *firstIDs) add(id string, g *generator) {
	if f.index == nil {
		f.index = map[string]firstID{}
	}
	if len(f.ring) < keptFirstIDs {
		f.ring = append(f.ring, id)
		f.index[id] = firstID{gen: g, slot: len(f.ring) - 1}
		return
	}
	old := f.ring[f.next]
	if e, ok := f.index[old]; ok && e.slot == f.next {
		delete(f.index, old)
	}
	f.ring[f.next] = id
	f.index[id] = firstID{gen: g, slot: f.next}
	f.next = (f.next + 1) % keptFirstIDs
}

func (f *firstIDs) generator(id string) *generator { return f.index[id].gen }

// span is the _seq values lo ≤ s < hi.
type span struct{ lo, hi int64 }

// seqSet is a set of non-negative _seq values as sorted, disjoint,
// non-adjacent spans: a generator's events arrive nearly in order, so it
// stays a handful of spans however many events it holds.
type seqSet struct {
	spans []span
	n     int64
}

// add inserts v and reports whether it was new; negative values are not
// _seqs freshbench writes and are ignored.
func (s *seqSet) add(v int64) bool {
	if v < 0 {
		return false
	}
	k := len(s.spans)
	switch {
	case k > 0 && s.spans[k-1].hi == v: // the common case: the next in order
		s.spans[k-1].hi++
		s.n++
		return true
	case k == 0 || s.spans[k-1].hi < v:
		s.spans = append(s.spans, span{v, v + 1})
		s.n++
		return true
	}
	// The first span that ends at or after v.
	i := sort.Search(k, func(i int) bool { return s.spans[i].hi >= v })
	sp := &s.spans[i]
	switch {
	case sp.lo <= v && v < sp.hi:
		return false
	case sp.hi == v:
		sp.hi++
		if i+1 < k && s.spans[i+1].lo == sp.hi {
			sp.hi = s.spans[i+1].hi
			s.spans = slices.Delete(s.spans, i+1, i+2)
		}
	case sp.lo == v+1:
		sp.lo = v // the span before ends below v: no merge
	default:
		s.spans = slices.Insert(s.spans, i, span{v, v + 1})
	}
	s.n++
	return true
}

func (s *seqSet) has(v int64) bool {
	i := sort.Search(len(s.spans), func(i int) bool { return s.spans[i].hi > v })
	return i < len(s.spans) && s.spans[i].lo <= v
}

// page returns up to limit values of spans in ascending (or descending)
// order, starting after the value after when it is given.
func page(spans []span, after *int64, limit int, desc bool) []int64 {
	var out []int64
	if !desc {
		for _, sp := range spans {
			lo := sp.lo
			if after != nil {
				lo = max(lo, *after+1)
			}
			for v := lo; v < sp.hi && len(out) < limit; v++ {
				out = append(out, v)
			}
			if len(out) == limit {
				break
			}
		}
		return out
	}
	for i := len(spans) - 1; i >= 0 && len(out) < limit; i-- {
		hi := spans[i].hi - 1
		if after != nil {
			hi = min(hi, *after-1)
		}
		for v := hi; v >= spans[i].lo && len(out) < limit; v-- {
			out = append(out, v)
		}
	}
	return out
}
