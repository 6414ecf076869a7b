package probe

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/freshbench/freshbench/target"
)

// Ledger remembers which events of each generator were acknowledged: one
// bit per _seq, so ten million events cost 1.25 MB.
type Ledger struct {
	mu    sync.Mutex
	acked map[string]*bitset
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{acked: map[string]*bitset{}} }

// Acked records acknowledged events.
func (l *Ledger) Acked(gen string, seqs []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.acked[gen]
	if b == nil {
		b = &bitset{}
		l.acked[gen] = b
	}
	for _, s := range seqs {
		b.set(s)
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

// Completeness is the audit of one generator after the drain.
type Completeness struct {
	Generator     string  `json:"generator"`
	Acknowledged  int64   `json:"acknowledged"`
	Visible       int64   `json:"visible"`    // distinct events a search returned
	Missing       int64   `json:"missing"`    // acknowledged, never visible: lost writes
	Unexpected    int64   `json:"unexpected"` // visible, never acknowledged
	Duplicates    int64   `json:"duplicates"` // extra copies of a visible event
	MissingSample []int64 `json:"missing_seq_sample,omitempty"`
}

// Audit compares what the target shows of gen with what it acknowledged.
func (l *Ledger) Audit(ctx context.Context, tgt target.Reader, gen string) (Completeness, error) {
	seen := &bitset{}
	var dups int64
	err := tgt.Seqs(ctx, gen, func(seq int64) {
		if seen.has(seq) {
			dups++
			return
		}
		seen.set(seq)
	})
	if err != nil {
		return Completeness{}, fmt.Errorf("completeness audit of generator %s: %w", gen, err)
	}
	l.mu.Lock()
	acked := l.acked[gen]
	l.mu.Unlock()
	if acked == nil {
		acked = &bitset{}
	}
	c := Completeness{Generator: gen, Acknowledged: acked.n, Visible: seen.n, Duplicates: dups}
	for i := int64(0); i < max(acked.len(), seen.len()); i++ {
		a, s := acked.has(i), seen.has(i)
		switch {
		case a && !s:
			c.Missing++
			if len(c.MissingSample) < 20 {
				c.MissingSample = append(c.MissingSample, i)
			}
		case s && !a:
			c.Unexpected++
		}
	}
	sort.Slice(c.MissingSample, func(i, j int) bool { return c.MissingSample[i] < c.MissingSample[j] })
	return c, nil
}

// bitset is a growable set of non-negative integers with a count.
type bitset struct {
	words []uint64
	n     int64
}

func (b *bitset) set(i int64) {
	if i < 0 {
		return
	}
	w := int(i / 64)
	for len(b.words) <= w {
		b.words = append(b.words, 0)
	}
	mask := uint64(1) << (i % 64)
	if b.words[w]&mask == 0 {
		b.words[w] |= mask
		b.n++
	}
}

func (b *bitset) has(i int64) bool {
	w := int(i / 64)
	return i >= 0 && w < len(b.words) && b.words[w]&(uint64(1)<<(i%64)) != 0
}

func (b *bitset) len() int64 { return int64(len(b.words)) * 64 }
