package ingest

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
	"github.com/freshbench/freshbench/timeline"
)

func testConfig(rate float64, batch int, d time.Duration) Config {
	return Config{
		Rate: pace.Rate{PerSecond: rate, Unit: pace.Events}, BatchSize: batch, Duration: d,
		Generators: 1, MaxInflight: 8, DocSize: 1000, Seed: 1, WriteTimeout: 5 * time.Second,
	}
}

func run(t *testing.T, cfg Config, tgt target.Target) *Accounting {
	t.Helper()
	return runObserved(t, cfg, tgt, nil)
}

func runObserved(t *testing.T, cfg Config, tgt target.Target, obs stats.Observer) *Accounting {
	t.Helper()
	in, err := New(cfg, tgt, nil, nil, obs)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	return in.Run(context.Background(), timeline.New(start, cfg.Warmup, cfg.Duration), stats.NewSeries(start, 0))
}

// A fast target must receive the target rate within 1 %.
func TestAchievedRateMatchesTarget(t *testing.T) { synctest.Test(t, testAchievedRateMatchesTarget) }

func testAchievedRateMatchesTarget(t *testing.T) {
	cfg := testConfig(4000, 20, 3*time.Second)
	a := run(t, cfg, sim.New(sim.Config{Discard: true}))
	m := a.Phase(results.PhaseMeasured)
	want := 4000 * 3.0
	if got := float64(m.Acked + a.Phase(results.PhaseTail).Acked); math.Abs(got-want) > 0.01*want {
		t.Fatalf("acked %v events in 3 s, want %v ± 1 %%", got, want)
	}
	if m.Failed != 0 || m.Unsent != 0 {
		t.Fatalf("failed %d unsent %d, want none against a discarding target", m.Failed, m.Unsent)
	}
}

// Byte rates are met in bytes, whatever the document size.
func TestByteRate(t *testing.T) { synctest.Test(t, testByteRate) }

func testByteRate(t *testing.T) {
	cfg := testConfig(0, 10, 2*time.Second)
	cfg.Rate = pace.Rate{PerSecond: 2e6, Unit: pace.Bytes}
	cfg.DocSize = 2000
	a := run(t, cfg, sim.New(sim.Config{Discard: true}))
	var bytes int64
	for _, p := range []string{results.PhaseWarmup, results.PhaseMeasured, results.PhaseTail} {
		bytes += a.Phase(p).AckedBytes
	}
	if want := 4e6; math.Abs(float64(bytes)-want) > 0.02*want {
		t.Fatalf("acked %d bytes in 2 s at 2 MB/s, want %v ± 2 %%", bytes, want)
	}
}

// When writes are slower than the schedule, batches are late, the lateness
// is recorded, and write latency (from intended time) grows while service
// time does not: coordinated omission is not hidden.
func TestSlowTargetMakesBatchesLate(t *testing.T) { synctest.Test(t, testSlowTargetMakesBatchesLate) }

func testSlowTargetMakesBatchesLate(t *testing.T) {
	cfg := testConfig(1000, 10, 2*time.Second) // 100 batches/s
	cfg.MaxInflight = 2                        // 2 in flight × 50 ms = 40 batches/s at most
	obs := &unsentObserver{}
	a := runObserved(t, cfg, sim.New(sim.Config{WriteDelay: 50 * time.Millisecond}), obs)
	m := a.Phase(results.PhaseMeasured)
	if m.LateBatches == 0 {
		t.Fatal("no late batches although the target could take only 40 % of the schedule")
	}
	if m.Unsent == 0 {
		t.Fatal("no unsent events although the schedule could not be kept")
	}
	var unsent int64
	for _, p := range []string{results.PhaseWarmup, results.PhaseMeasured, results.PhaseTail} {
		unsent += a.Phase(p).Unsent
	}
	if got := obs.events.Load(); got != unsent {
		t.Errorf("the observer saw %d unsent events, the accounting %d", got, unsent)
	}
	svc := m.ServiceTime.Summarize()
	lat := m.WriteLatency.Summarize()
	if svc.P50Ms < 45 || svc.P50Ms > 150 {
		t.Fatalf("service time p50 %v ms, want about 50 ms", svc.P50Ms)
	}
	if lat.P99Ms < 500 {
		t.Fatalf("write latency p99 %v ms, want far above the 50 ms service time (backlog)", lat.P99Ms)
	}
	if m.Lateness.Summarize().MaxMs < 500 {
		t.Fatalf("lateness max %v ms, want the backlog recorded", m.Lateness.Summarize().MaxMs)
	}
}

// unsentObserver counts the unsent events it is told of.
type unsentObserver struct {
	stats.NopObserver
	events atomic.Int64
}

func (u *unsentObserver) Unsent(_ string, events int) { u.events.Add(int64(events)) }

// Whole-request failures are counted per event, by kind, and retried when
// asked.
func TestFailedWritesAreCounted(t *testing.T) { synctest.Test(t, testFailedWritesAreCounted) }

func testFailedWritesAreCounted(t *testing.T) {
	cfg := testConfig(500, 10, time.Second)
	cfg.WriteRetries = 1
	a := run(t, cfg, failing{})
	var failed, acked, retries int64
	for _, p := range []string{results.PhaseWarmup, results.PhaseMeasured, results.PhaseTail} {
		ph := a.Phase(p)
		failed += ph.Failed
		acked += ph.Acked
		retries += ph.Retries
		for kind := range ph.Errors {
			if kind != "connection_refused" {
				t.Errorf("error kind %q, want connection_refused", kind)
			}
		}
	}
	if acked != 0 || failed != 500 || retries != 50 {
		t.Fatalf("acked %d failed %d retries %d; want 0, 500, 50", acked, failed, retries)
	}
}

func TestValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.BatchSize = 0 },
		func(c *Config) { c.Duration = 0 },
		func(c *Config) { c.Warmup = c.Duration },
		func(c *Config) { c.Rate.PerSecond = 0 },
		func(c *Config) { c.MaxInflight = 0 },
		func(c *Config) { c.Generators = 0 },
	}
	for i, f := range bad {
		c := testConfig(100, 10, time.Second)
		f(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d: Validate accepted %+v", i, c)
		}
	}
}

// A run whose context is already done schedules nothing, and its measured
// window is empty. The window is closed by a callback on the context: the
// accounting must wait for it, or a busy machine reads the whole planned
// window as measured and divides what it achieved by that. In a synctest
// bubble, so that the window is measured on a clock a busy machine does
// not move: the callback's race with the accounting is still the
// scheduler's, and a window left open still reads 10 s.
func TestCancelledRunMeasuresNothing(t *testing.T) { synctest.Test(t, testCancelledRunMeasuresNothing) }

func testCancelledRunMeasuresNothing(t *testing.T) {
	cfg := testConfig(1000, 10, 10*time.Second)
	for i := range 200 {
		in, err := New(cfg, sim.New(sim.Config{Discard: true}), nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		from, to := in.Run(ctx, timeline.New(start, cfg.Warmup, cfg.Duration), stats.NewSeries(start, 0)).Timeline().Measured()
		if d := to.Sub(from); d > 500*time.Millisecond {
			t.Fatalf("run %d: %s measured of a run cancelled before it began, want none", i, d)
		}
	}
}
