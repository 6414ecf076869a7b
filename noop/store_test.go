package noop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The spans hold exactly the values added, in any order and with
// repeats, and stay few when values arrive nearly in order.
func TestSeqSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s seqSet
	want := map[int64]bool{}
	for i := range 5000 {
		// Nearly in order, as concurrent batches arrive, with gaps and repeats.
		v := int64(i) + rng.Int64N(40) - 20
		if rng.IntN(50) == 0 {
			v = rng.Int64N(8000)
		}
		if got := s.add(v); got != (v >= 0 && !want[v]) {
			t.Fatalf("add(%d) = %v with %v already in", v, got, want[v])
		}
		if v >= 0 {
			want[v] = true
		}
	}
	if s.n != int64(len(want)) {
		t.Errorf("n = %d, want %d", s.n, len(want))
	}
	var all []int64
	for i, sp := range s.spans {
		if sp.lo >= sp.hi || i > 0 && s.spans[i-1].hi >= sp.lo {
			t.Fatalf("spans not sorted, disjoint and apart at %d: %v", i, s.spans[max(i-1, 0):i+1])
		}
		for v := sp.lo; v < sp.hi; v++ {
			all = append(all, v)
		}
	}
	var keys []int64
	for v := range want {
		keys = append(keys, v)
		if !s.has(v) {
			t.Fatalf("has(%d) = false", v)
		}
	}
	slices.Sort(keys)
	if !slices.Equal(all, keys) {
		t.Fatalf("spans hold %d values, want %d", len(all), len(keys))
	}
	if s.has(-1) || s.has(9000) {
		t.Error("has a value never added")
	}
}

func TestPage(t *testing.T) {
	spans := []span{{0, 3}, {5, 7}, {10, 11}}
	at := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		after *int64
		limit int
		desc  bool
		want  string
	}{
		{nil, 10, false, "[0 1 2 5 6 10]"},
		{nil, 4, false, "[0 1 2 5]"},
		{at(2), 2, false, "[5 6]"},
		{at(6), 10, false, "[10]"},
		{at(10), 10, false, "[]"},
		{nil, 3, true, "[10 6 5]"},
		{at(5), 10, true, "[2 1 0]"},
	} {
		if got := fmt.Sprint(page(spans, c.after, c.limit, c.desc)); got != c.want {
			t.Errorf("page(after %v, limit %d, desc %v) = %s, want %s", c.after, c.limit, c.desc, got, c.want)
		}
	}
}

// The ring of first ids forgets the oldest once full, and an id written
// twice is not forgotten with its older copy.
func TestFirstIDs(t *testing.T) {
	g := &generator{name: "g"}
	var f firstIDs
	f.add("oldest", g)
	f.add("again", g)
	for i := range keptFirstIDs - 2 {
		f.add(fmt.Sprint(i), g)
	}
	f.add("again", g) // the ring is full: evicts "oldest"
	f.add("next", g)  // evicts the older copy of "again"
	if f.generator("oldest") != nil {
		t.Error("the oldest id is still kept after the ring turned")
	}
	if f.generator("again") != g {
		t.Error("an id written again was forgotten with its older copy")
	}
	if f.generator("0") != g || f.generator("next") != g {
		t.Error("an id within the ring was forgotten")
	}
}
