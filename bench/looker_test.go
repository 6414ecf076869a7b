package bench

import (
	"testing"
	"time"

	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/stats"
)

// A look that finds the driver behind (the achieved rate short while
// the in-flight slots stay free and the service time is flat) ends the
// step: held longer it would say no more of the target. Seen failing
// before (the looker held on while the verdict was not yet known): "the
// look did not end the step".
func TestLookerEndsADriverLimitedStep(t *testing.T) {
	run := Config{Ingest: ingest.Config{Warmup: time.Second, Duration: time.Second + 5*time.Minute, BatchSize: 50, MaxInflight: 16}}
	lk := &looker{rule: stats.DefaultRule(), run: run, hold: 30}
	var series []stats.Point
	for i := range 40 {
		// 1,000 events/s asked for, 900 acknowledged: a shortfall of 10 %
		// with 2 of 16 slots busy and answers in 3 ms.
		series = append(series, stats.Point{StartS: float64(i), WidthS: 1, TargetEvents: 1000, AckedEvents: 900, Batches: 18,
			Inflight: 2, WriteMeanMs: 3 + 0.1*float64(i%3), ServiceMeanMs: 3 + 0.1*float64(i%3),
			FreshnessLagMs: 50, FreshnessLagMinMs: 40, FreshnessN: 5})
		if lk.until(series, nil) {
			break
		}
	}
	if lk.decided == nil || lk.looks != 1 {
		t.Fatalf("after %d look(s), decided %v: the look did not end the step", lk.looks, lk.decided != nil)
	}
}
