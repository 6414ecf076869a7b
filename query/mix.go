package query

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/freshbench/freshbench/target"
)

// Weighted is one kind of a mix and its weight.
type Weighted struct {
	Kind   target.QueryKind
	Weight int
}

// Mix is the kinds of query a workload sends, each picked with a
// probability proportional to its weight.
type Mix []Weighted

// DefaultMix is point=4,array=3,aggregate=2,newest=1: mostly lookups, as in
// the 20K QPS study, with some aggregation and newest-N. It leaves the
// bucket kind out, so that its figures stay comparable with runs made
// before that kind existed; --mix asks for it.
func DefaultMix() Mix {
	return Mix{{target.QueryPoint, 4}, {target.QueryArray, 3}, {target.QueryAggregate, 2}, {target.QueryNewest, 1}}
}

// ParseMix reads kind=weight pairs such as "point=4,array=3,aggregate=2,newest=1".
// A kind is a shipped one or one of own, the names of the queries of
// one's own. A kind without a weight counts 1; a kind given twice is an
// error.
func ParseMix(s string, own ...string) (Mix, error) {
	kinds := target.QueryKinds()
	for _, o := range own {
		kinds = append(kinds, target.QueryKind(o))
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	bad := func(why string) error {
		return fmt.Errorf("mix %q: %s; want kind=weight pairs of %s, e.g. point=4,array=3,aggregate=2,newest=1", s, why, strings.Join(names, ", "))
	}
	var m Mix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, w, hasWeight := strings.Cut(part, "=")
		k := target.QueryKind(strings.TrimSpace(name))
		if !slices.Contains(kinds, k) {
			return nil, bad(fmt.Sprintf("unknown kind %q", name))
		}
		weight := 1
		if hasWeight {
			n, err := strconv.Atoi(strings.TrimSpace(w))
			if err != nil || n < 0 {
				return nil, bad(fmt.Sprintf("weight %q of %s is not a whole number ≥ 0", w, k))
			}
			weight = n
		}
		if slices.ContainsFunc(m, func(x Weighted) bool { return x.Kind == k }) {
			return nil, bad(fmt.Sprintf("%s is given twice", k))
		}
		if weight > 0 {
			m = append(m, Weighted{k, weight})
		}
	}
	if len(m) == 0 {
		return nil, bad("no kind has a positive weight")
	}
	return m, nil
}

// String writes the mix the way ParseMix reads it.
func (m Mix) String() string {
	parts := make([]string, len(m))
	for i, w := range m {
		parts[i] = string(w.Kind) + "=" + strconv.Itoa(w.Weight)
	}
	return strings.Join(parts, ",")
}

func (m Mix) total() int {
	n := 0
	for _, w := range m {
		n += w.Weight
	}
	return n
}

// share is the fraction of queries of kind k.
func (m Mix) share(k target.QueryKind) float64 {
	for _, w := range m {
		if w.Kind == k {
			return float64(w.Weight) / float64(m.total())
		}
	}
	return 0
}

func (m Mix) pick(rng *rand.Rand) target.QueryKind {
	n := rng.IntN(m.total())
	for _, w := range m {
		if n < w.Weight {
			return w.Kind
		}
		n -= w.Weight
	}
	return m[len(m)-1].Kind // not reached: n < total
}
