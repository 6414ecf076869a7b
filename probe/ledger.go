package probe

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"sync"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

// Ledger remembers which events of each generator were acknowledged, and
// which were written but not acknowledged. It costs at most one bit per
// _seq, and next to nothing for the common case of long contiguous runs
// of acknowledged events: see seqSet.
type Ledger struct {
	mu    sync.Mutex
	acked map[string]*seqSet
	// unacked are the events whose write was not acknowledged: it
	// failed, or was answered after the database had stored them (a
	// timeout after the commit; a server's own retry answered as a
	// duplicate id). The audit tells them, when visible, from events
	// this run never wrote.
	unacked map[string]*seqSet
	// revisions is, per generator, the revision acknowledged last of
	// each updated event, by _seq: the one the database must show.
	revisions map[string]map[int64]int64
	updates   map[string]int64 // acknowledged updates per generator
	newestUpd map[string]int64 // the newest acknowledged update time per generator
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{acked: map[string]*seqSet{}, unacked: map[string]*seqSet{}, revisions: map[string]map[int64]int64{}, updates: map[string]int64{}, newestUpd: map[string]int64{}}
}

// AckedRevisions records acknowledged updates: revisions[i] of the event
// seqs[i]; newest is the newest _update_time among them.
func (l *Ledger) AckedRevisions(gen string, seqs, revisions []int64, newest int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.revisions[gen]
	if m == nil {
		m = map[int64]int64{}
		l.revisions[gen] = m
	}
	for i, s := range seqs {
		m[s] = max(m[s], revisions[i])
	}
	l.updates[gen] += int64(len(seqs))
	l.newestUpd[gen] = max(l.newestUpd[gen], newest)
}

// NewestUpdate is the newest _update_time of gen's acknowledged updates,
// and false when none was acknowledged.
func (l *Ledger) NewestUpdate(gen string) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.newestUpd[gen]
	return t, ok
}

// AuditUpdates compares the revision up shows of every updated event of
// gen with the revision acknowledged last: one older is a lost update;
// one newer, or an update of an event never acknowledged as updated, was
// written by a request that failed as a whole (a timeout after the
// commit) and is unacknowledged.
func (l *Ledger) AuditUpdates(ctx context.Context, up target.Updater, gen string) (results.UpdateAudit, error) {
	stored := map[int64]int64{}
	err := up.Updated(ctx, gen, func(seq, rev int64) { stored[seq] = max(stored[seq], rev) })
	l.mu.Lock()
	want := maps.Clone(l.revisions[gen])
	a := results.UpdateAudit{Generator: gen, Acknowledged: l.updates[gen], Events: int64(len(want))}
	l.mu.Unlock()
	if errors.Is(err, target.ErrNotKept) {
		a.NotMeasured = err.Error()
		return a, nil
	}
	if err != nil {
		return results.UpdateAudit{}, fmt.Errorf("update audit of generator %s: %w", gen, err)
	}
	for seq, rev := range want {
		switch got := stored[seq]; {
		case got < rev:
			a.Lost++
			if len(a.LostSample) < 20 {
				a.LostSample = append(a.LostSample, seq)
			}
		case got > rev:
			a.Unacknowledged++
		default:
			a.Current++
		}
	}
	for seq := range stored {
		if _, ok := want[seq]; !ok {
			a.Unacknowledged++
		}
	}
	slices.Sort(a.LostSample)
	return a, nil
}

// Acked records acknowledged events.
func (l *Ledger) Acked(gen string, seqs []int64) { l.record(l.acked, gen, seqs) }

// NotAcknowledged records events written but not acknowledged.
func (l *Ledger) NotAcknowledged(gen string, seqs []int64) { l.record(l.unacked, gen, seqs) }

func (l *Ledger) record(sets map[string]*seqSet, gen string, seqs []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := sets[gen]
	if b == nil {
		b = &seqSet{}
		sets[gen] = b
	}
	for _, s := range seqs {
		b.add(s)
	}
}

// AckedCount is how many distinct events of gen were acknowledged.
func (l *Ledger) AckedCount(gen string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.acked[gen]; b != nil {
		return b.n
	}
	return 0
}

// Audit compares what the target shows of gen with what it acknowledged.
// A target that keeps no events (target.ErrNotKept) is not an error: the
// result says "not measured".
func (l *Ledger) Audit(ctx context.Context, tgt target.Reader, gen string) (results.Completeness, error) {
	seen := &seqSet{}
	var dups int64
	err := tgt.Seqs(ctx, gen, func(seq int64) {
		if !seen.add(seq) && seq >= 0 {
			dups++
		}
	})
	l.mu.Lock()
	acked, unacked := l.acked[gen], l.unacked[gen]
	l.mu.Unlock()
	if acked == nil {
		acked = &seqSet{}
	}
	if unacked == nil {
		unacked = &seqSet{}
	}
	if errors.Is(err, target.ErrNotKept) {
		return results.Completeness{Generator: gen, Acknowledged: acked.n, NotMeasured: err.Error()}, nil
	}
	if err != nil {
		return results.Completeness{}, fmt.Errorf("completeness audit of generator %s: %w", gen, err)
	}
	c := results.Completeness{Generator: gen, Acknowledged: acked.n, Visible: seen.n, Duplicates: dups}
	// Walk block by block: two full blocks agree without a look at
	// their bits, so a long clean run is audited at memory speed.
	for i := 0; i < max(len(acked.blocks), len(seen.blocks)); i++ {
		a, s := acked.block(i), seen.block(i)
		if a == s {
			continue // both empty or both full
		}
		base := int64(i) * blockBits
		u := unacked.block(i)
		for w := range blockWords {
			aw, sw := a.word(w), s.word(w)
			if aw == sw {
				continue
			}
			missing, unexpected := aw&^sw, sw&^aw
			stored := unexpected & u.word(w)
			unexpected &^= stored
			c.Unacknowledged += int64(bits.OnesCount64(stored))
			c.Unexpected += int64(bits.OnesCount64(unexpected))
			c.Missing += int64(bits.OnesCount64(missing))
			c.MissingSample = sample(c.MissingSample, missing, base+int64(w)*64)
			c.NotVisible, c.NotVisibleCut = ranges(c.NotVisible, c.NotVisibleCut, missing, base+int64(w)*64)
			c.UnexpectedSample = sample(c.UnexpectedSample, unexpected, base+int64(w)*64)
		}
	}
	return c, nil
}

// maxRanges bounds the ranges of events not visible an audit keeps for a
// re-check: events lost one in every few would otherwise fill the
// results file.
const maxRanges = 10000

// ranges adds the _seqs of the bits set in word, whose first bit is base,
// to rs, extending its last range where they continue it; cut says rs is
// full.
func ranges(rs []results.SeqRange, cut bool, word uint64, base int64) ([]results.SeqRange, bool) {
	for word != 0 && !cut {
		seq := base + int64(bits.TrailingZeros64(word))
		word &= word - 1
		if n := len(rs); n > 0 && rs[n-1].To == seq-1 {
			rs[n-1].To = seq
			continue
		}
		if len(rs) == maxRanges {
			return rs, true
		}
		rs = append(rs, results.SeqRange{From: seq, To: seq})
	}
	return rs, cut || word != 0
}

// Recheck says how many of the events of gen in not r shows now.
func Recheck(ctx context.Context, r target.Reader, gen string, not []results.SeqRange) (visible, total int64, err error) {
	seen := &seqSet{}
	if err := r.Seqs(ctx, gen, func(seq int64) { seen.add(seq) }); err != nil {
		return 0, 0, fmt.Errorf("re-check of generator %s: %w", gen, err)
	}
	for _, rg := range not {
		for s := rg.From; s <= rg.To; s++ {
			total++
			if seen.has(s) {
				visible++
			}
		}
	}
	return visible, total, nil
}

// sample appends the _seq of the bits set in word, whose first bit is
// base, to s while it holds fewer than 20.
func sample(s []int64, word uint64, base int64) []int64 {
	for word != 0 && len(s) < 20 {
		b := bits.TrailingZeros64(word)
		s = append(s, base+int64(b))
		word &= word - 1
	}
	return s
}

// A seqSet holds non-negative integers in blocks of blockBits. A block
// is nil while empty, the shared fullBlock once every bit is set (its
// bitmap is then freed), and a bitmap of its own in between. A long run of
// acknowledged events therefore costs one pointer per 65,536 events
// (about 0.0001 bytes per event), while a block with gaps, such as the
// events of failed writes, costs at most one bit per event. Only the
// blocks at the in-flight frontier hold bitmaps during a clean run.
type seqSet struct {
	blocks []*block
	n      int64
}

const (
	blockWords = 1024
	blockBits  = blockWords * 64
)

type block struct {
	words [blockWords]uint64
	n     int // bits set
}

// fullBlock stands for every block whose bits are all set. It is never
// written to.
var fullBlock = func() *block {
	b := &block{n: blockBits}
	for i := range b.words {
		b.words[i] = ^uint64(0)
	}
	return b
}()

// add inserts i and reports whether it was new. Negative values are not
// _seqs freshbench writes; they are ignored.
func (s *seqSet) add(i int64) bool {
	if i < 0 {
		return false
	}
	bi := int(i / blockBits)
	for len(s.blocks) <= bi {
		s.blocks = append(s.blocks, nil)
	}
	b := s.blocks[bi]
	if b == fullBlock {
		return false
	}
	if b == nil {
		b = &block{}
		s.blocks[bi] = b
	}
	w, mask := (i%blockBits)/64, uint64(1)<<(i%64)
	if b.words[w]&mask != 0 {
		return false
	}
	b.words[w] |= mask
	b.n++
	s.n++
	if b.n == blockBits {
		s.blocks[bi] = fullBlock
	}
	return true
}

// has reports whether i is in s.
func (s *seqSet) has(i int64) bool {
	if i < 0 {
		return false
	}
	b := s.block(int(i / blockBits))
	return b.word(int(i%blockBits)/64)&(uint64(1)<<(i%64)) != 0
}

// block returns block i, nil when empty or beyond the end.
func (s *seqSet) block(i int) *block {
	if i < len(s.blocks) {
		return s.blocks[i]
	}
	return nil
}

// word returns word w of b, a nil block reading as empty.
func (b *block) word(w int) uint64 {
	if b == nil {
		return 0
	}
	return b.words[w]
}
