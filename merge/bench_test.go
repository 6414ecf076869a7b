package merge_test

import (
	"math/rand/v2"
	"testing"

	"github.com/freshbench/freshbench/merge"
	"github.com/freshbench/freshbench/results"
)

// BenchmarkMerge100Hour reads and merges the results files of 100
// instances shaped like one-hour runs: 3600 series points each, and
// histograms of the samples an hour at 1000 events/s in batches of 50
// gives (20 writes, 5 freshness polls and 20 probes a second, with the
// spreads of real latencies), per-generator completeness. Reading is
// timed too: decoding the JSON and its histograms is most of a merge.
func BenchmarkMerge100Hour(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	var rs []*results.Result
	for i := range 100 {
		rs = append(rs, synthetic(rng, shape{instance: i, instances: 100, seconds: 3600, rate: 1000, batchSize: 50, scale: 20}, nil))
	}
	files := roundTrip(b, rs)
	rs = nil
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ins := make([]merge.Input, len(files))
		for i, f := range files {
			r, err := results.ReadFile(f.Name)
			if err != nil {
				b.Fatal(err)
			}
			ins[i] = merge.Input{Name: f.Name, Result: r}
		}
		if _, err := merge.Merge(ins); err != nil {
			b.Fatal(err)
		}
	}
}
