package ingest

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
	"github.com/freshbench/freshbench/timeline"
)

// BenchmarkDriver measures the whole driver — generate, batch, serialize,
// pace, account — pushing 1 KB events to a target that discards them, at a
// rate far above what it can reach, so the driver is the bottleneck. Each
// iteration streams for one second; the figures are reported as MB/s and
// events/s of acknowledged documents. Run it on one core with -cpu 1:
//
//	go test ./ingest -run '^$' -bench Driver -cpu 1
func BenchmarkDriver(b *testing.B) {
	for _, batch := range []int{50, 500} {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) {
			var bytes, events int64
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				cfg := Config{
					Rate: pace.Rate{PerSecond: 100e9, Unit: pace.Bytes}, BatchSize: batch, Duration: time.Second,
					Generators: 1, MaxInflight: 8, DocSize: 1000, Seed: 1, WriteTimeout: 5 * time.Second,
				}
				in, err := New(cfg, sim.New(sim.Config{Discard: true}), nil, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				a := in.Run(context.Background(), timeline.New(start, cfg.Warmup, cfg.Duration), stats.NewSeries(start, 0))
				elapsed += time.Since(start)
				for _, p := range []string{results.PhaseWarmup, results.PhaseMeasured, results.PhaseTail} {
					bytes += a.Phase(p).AckedBytes
					events += a.Phase(p).Acked
				}
			}
			b.ReportMetric(float64(bytes)/elapsed.Seconds()/1e6, "MB/s")
			b.ReportMetric(float64(events)/elapsed.Seconds(), "events/s")
		})
	}
}

// BenchmarkKeyPoolMemory reports the heap a key pool holds per
// acknowledged event, the figure docs/measurement.md gives.
func BenchmarkKeyPoolMemory(b *testing.B) {
	const n = 1_000_000
	g, err := docgen.New(docgen.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]docgen.Key, 0, 1000)
	var buf []byte
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		p := newKeyPool(KeyChoice{Kind: KeysUniform}, 1)
		for i := 0; i < n; i += 1000 {
			keys, buf = keys[:0], buf[:0]
			for range 1000 {
				var d target.Document
				d, buf = g.Next(buf, 1)
				keys = append(keys, docgen.Key{ID: d.ID, Seq: d.Seq, EventTime: d.EventTime})
			}
			p.add(keys)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/key")
		runtime.KeepAlive(p)
	}
}
