package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// median is the middle of the sorted values, whatever their order, their
// repeats (a flat series' slopes are mostly equal) or NaN and infinities
// among them; and it leaves its argument as it was.
func TestMedianIsTheSortedMiddle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	draws := map[string]func() float64{
		"distinct":  rng.NormFloat64,
		"repeats":   func() float64 { return float64(rng.IntN(3)) },
		"all equal": func() float64 { return 1 },
		"nan and infinities": func() float64 {
			return []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, rng.Float64()}[rng.IntN(5)]
		},
	}
	for name, draw := range draws {
		for _, n := range []int{1, 2, 3, 4, 5, 10, 101, 1000, 1001} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				for range 20 {
					v := make([]float64, n)
					for i := range v {
						v[i] = draw()
					}
					orig := slices.Clone(v)
					s := slices.Clone(v)
					slices.Sort(s)
					want := s[n/2]
					if n%2 == 0 {
						want = (s[n/2-1] + s[n/2]) / 2
					}
					got := median(v)
					if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
						t.Fatalf("median of %v: %g, want %g", orig, got, want)
					}
					for i := range v {
						if v[i] != orig[i] && !(math.IsNaN(v[i]) && math.IsNaN(orig[i])) {
							t.Fatalf("median reordered its argument: %v, was %v", v, orig)
						}
					}
				}
			})
		}
	}
}

// BenchmarkTheilSen is the slope of a step's lag series: 120 points (a
// 2-minute step), 450 (about maxPairs pairs) and 1,800 (30 minutes, a
// sample of maxPairs pairs).
func BenchmarkTheilSen(b *testing.B) {
	for _, n := range []int{120, 450, 1800} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			x, y := make([]float64, n), make([]float64, n)
			for i := range x {
				x[i], y[i] = float64(i), 0.01*float64(i)+rng.NormFloat64()
			}
			for b.Loop() {
				theilSen(x, y)
			}
		})
	}
}
