package sim

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/freshbench/freshbench/target"
)

// benchPool is how many distinct events a benchmark target holds before it
// is reset: as many as a step of the peak tests writes, so that the store
// grows as it does in a run.
const benchPool = 1 << 20

// BenchmarkWrite writes batches of the sizes the peak tests use to a sim
// target with no delays: what is left is the cost of keeping the events;
// with probe=1, after each batch it asks whether one id is visible, as a
// visibility probe does, so that reads by id are paid for as well.
func BenchmarkWrite(b *testing.B) {
	docs := make([]target.Document, benchPool)
	for i := range docs {
		docs[i] = target.Document{ID: "bench-" + strconv.Itoa(i), Generator: "bench", Seq: int64(i), EventTime: int64(i), JSON: []byte("{}")}
	}
	for _, c := range []struct{ n, probe int }{{10, 0}, {100, 0}, {500, 0}, {10, 1}, {100, 1}, {500, 1}} {
		n := c.n
		b.Run(fmt.Sprintf("batch=%d/probe=%d", n, c.probe), func(b *testing.B) {
			tgt := New(Config{})
			ctx := context.Background()
			next := 0
			b.ReportAllocs()
			for b.Loop() {
				if next+n > len(docs) {
					b.StopTimer()
					tgt.Reset()
					next = 0
					b.StartTimer()
				}
				res, err := tgt.Write(ctx, target.Batch{Generator: "bench", Docs: docs[next : next+n]})
				if err != nil || res.Acknowledged != n {
					b.Fatalf("write: %+v, %v", res, err)
				}
				if c.probe > 0 {
					if _, err := tgt.Visible(ctx, "bench", []string{docs[next].ID}); err != nil {
						b.Fatal(err)
					}
				}
				next += n
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}
