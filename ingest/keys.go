package ingest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/invalid"
)

// Ways to choose the event an update updates.
const (
	KeysUniform = "uniform" // any acknowledged event, each as likely
	KeysRecent  = "recent"  // one of the most recent N acknowledged
	KeysZipf    = "zipf"    // skewed: the k-th oldest event ∝ 1/(k+1)^S
)

// KeyChoice says which acknowledged event an update updates.
type KeyChoice struct {
	Kind   string  // KeysUniform (""), KeysRecent or KeysZipf
	Recent int     // KeysRecent: how many of the newest events
	ZipfS  float64 // KeysZipf: the exponent, above 1
}

// DefaultRecentKeys is N of "recent" when none is given.
const DefaultRecentKeys = 10_000

// ParseKeyChoice reads "uniform", "recent", "recent:N" or "zipf:S".
func ParseKeyChoice(s string) (KeyChoice, error) {
	kind, arg, hasArg := strings.Cut(s, ":")
	bad := func() (KeyChoice, error) {
		return KeyChoice{}, invalid.New(invalid.UpdateKeys, strconv.Quote(s), "uniform, recent, recent:N (the newest N events, N ≥ 1) or zipf:S (skewed towards the oldest events, S > 1, e.g. zipf:1.1)")
	}
	switch kind {
	case KeysUniform, "":
		if hasArg {
			return bad()
		}
		return KeyChoice{Kind: KeysUniform}, nil
	case KeysRecent:
		n := DefaultRecentKeys
		if hasArg {
			v, err := strconv.Atoi(arg)
			if err != nil || v < 1 {
				return bad()
			}
			n = v
		}
		return KeyChoice{Kind: KeysRecent, Recent: n}, nil
	case KeysZipf:
		v, err := strconv.ParseFloat(arg, 64)
		if !hasArg || err != nil || !(v > 1) || v > 10 {
			return bad()
		}
		return KeyChoice{Kind: KeysZipf, ZipfS: v}, nil
	}
	return bad()
}

// String is the form ParseKeyChoice reads.
func (k KeyChoice) String() string {
	switch k.Kind {
	case KeysRecent:
		return fmt.Sprintf("%s:%d", KeysRecent, k.Recent)
	case KeysZipf:
		return fmt.Sprintf("%s:%g", KeysZipf, k.ZipfS)
	}
	return KeysUniform
}

// keyPool holds a generator's acknowledged events, the keys its updates
// choose from. The ingest never sends an update of an event whose last
// update is still in flight: the order of two such writes is the
// network's, and "the revision acknowledged last" would not say which one
// the database should hold.
//
// Memory: one entry (about 100 bytes with its _id, BenchmarkKeyPoolMemory) per acknowledged event,
// or per event of the newest N with KeysRecent.
type keyPool struct {
	choice KeyChoice
	rng    *rand.Rand

	mu   sync.Mutex
	keys []poolKey // in acknowledgement order; a ring of choice.Recent with KeysRecent
	next int       // KeysRecent: where the next key goes once the ring is full
	zipf *rand.Zipf
	zipN int // the pool size zipf was made for
}

type poolKey struct {
	docgen.Key
	revision int64 // the last revision sent
	busy     bool  // an update of it is in flight
}

// retriesPerDraw bounds the redraws when the chosen event's update is in
// flight; the slot then carries an insert.
const retriesPerDraw = 8

func newKeyPool(c KeyChoice, seed uint64) *keyPool {
	return &keyPool{choice: c, rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
}

// add makes acknowledged inserts choosable.
func (p *keyPool) add(keys []docgen.Key) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		k.ID = strings.Clone(k.ID) // let the batch's arena go
		e := poolKey{Key: k}
		if p.choice.Kind != KeysRecent || len(p.keys) < p.choice.Recent {
			p.keys = append(p.keys, e)
			continue
		}
		// The ring is full: the new key replaces the oldest whose update
		// is not in flight (done looks for that one by its id).
		for range len(p.keys) {
			i := p.next
			p.next = (p.next + 1) % len(p.keys)
			if !p.keys[i].busy {
				p.keys[i] = e
				break
			}
		}
	}
}

// take decides, for a share of updates, whether the next event is an
// update and, if so, chooses the event to update and marks it in flight;
// false for an insert (not drawn as an update, or no event free). The
// returned index and revision identify the update for done.
func (p *keyPool) take(share float64) (docgen.Key, int64, int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.keys)
	if p.rng.Float64() >= share || n == 0 {
		return docgen.Key{}, 0, 0, false
	}
	for range retriesPerDraw {
		i := p.draw(n)
		if k := &p.keys[i]; !k.busy {
			k.busy = true
			k.revision++
			return k.Key, k.revision, i, true
		}
	}
	return docgen.Key{}, 0, 0, false
}

// draw returns an index in [0, n). Callers hold p.mu.
func (p *keyPool) draw(n int) int {
	if p.choice.Kind == KeysZipf {
		if p.zipf == nil || p.zipN != n {
			p.zipf, p.zipN = rand.NewZipf(p.rng, p.choice.ZipfS, 1, uint64(n-1)), n
		}
		return int(p.zipf.Uint64())
	}
	return p.rng.IntN(n)
}

// done frees the event at index i whose update (of that id) has ended.
func (p *keyPool) done(i int, id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i < len(p.keys) && p.keys[i].ID == id {
		p.keys[i].busy = false
	}
}
