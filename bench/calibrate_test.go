package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target/sim"
)

func calibrateConfig(maxDuration time.Duration, batches ...int) CalibrateConfig {
	rule := CalibrationRule()
	return CalibrateConfig{
		Run: Config{
			Ingest: ingest.Config{
				Duration: 1800 * time.Millisecond, Warmup: 300 * time.Millisecond,
				Generators: 1, MaxInflight: 16, DocSize: 500, WriteTimeout: 5 * time.Second, ProbeRate: 20,
			},
			PollInterval: 50 * time.Millisecond, Drain: 2 * time.Second,
		},
		BatchSizes: batches, Start: pace.Rate{PerSecond: 1000, Unit: pace.Events},
		Increase: RateStep{Factor: 2}, Refine: RateStep{Factor: 1.25}, MaxRate: 1e6,
		MaxDuration: maxDuration, Rule: rule,
	}
}

// Against a target that accepts at most 6000 events/s, the search at
// each batch size doubles the rate up to the first failure (8000), then
// refines from the last sustainable rate (4000) in steps of 25 %: the
// ceiling lies in [4000, 6000], and its driver CPU is measured.
func TestCalibrateFindsCeiling(t *testing.T) { synctest.Test(t, testCalibrateFindsCeiling) }

func testCalibrateFindsCeiling(t *testing.T) {
	tgt := sim.New(sim.Config{Capacity: 6000})
	var seen []int
	cfg := calibrateConfig(5*time.Minute, 20, 100)
	cfg.OnStep = func(batch int, step *results.Result) { seen = append(seen, batch) }
	res, err := Calibrate(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != results.KindCalibration || res.EndedEarly || len(res.Steps) != 2 || len(res.Calibration.Points) != 2 {
		t.Fatalf("kind %s, ended early %v, %d searches, %d points; want a calibration of 2", res.Kind, res.EndedEarly, len(res.Steps), len(res.Calibration.Points))
	}
	steps := 0
	for i, p := range res.Calibration.Points {
		search := res.Steps[i]
		steps += len(search.Steps)
		for j, st := range search.Steps {
			t.Logf("batch %d step %d: %s achieved %.0f, %s", p.BatchSize, j+1, st.Config.Rate, st.Summary.AchievedEventsPerSec, st.Verdict.Reason())
			if st.Config.BatchSize != cfg.BatchSizes[i] {
				t.Errorf("batch %d: a step ran batches of %d", cfg.BatchSizes[i], st.Config.BatchSize)
			}
		}
		if p.BatchSize != cfg.BatchSizes[i] || search.Kind != results.KindPeak {
			t.Errorf("point %d: batch size %d, search of kind %s", i, p.BatchSize, search.Kind)
		}
		if !p.Found || p.CeilingEventsPerSec < 4000*0.99 || p.CeilingEventsPerSec > 6000 {
			t.Errorf("batch %d: ceiling %.0f events/s (found %v, %s), want within [4000, 6000]", p.BatchSize, p.CeilingEventsPerSec, p.Found, p.Reason)
		}
		if p.CPUPer100kS <= 0 || p.CorePercent <= 0 {
			t.Errorf("batch %d: CPU per 100k %g s, %g %% of a core; want measured", p.BatchSize, p.CPUPer100kS, p.CorePercent)
		}
		// Refined: some step ran at a rate between two doublings.
		refined := false
		for _, st := range search.Steps {
			refined = refined || st.Config.RatePerSecond == 5000
		}
		if !refined || !strings.Contains(search.Peak.Search.Increase, "then x1.25") {
			t.Errorf("batch %d: no refinement step at 5000 events/s (increase %q)", p.BatchSize, search.Peak.Search.Increase)
		}
		// The reason names the last step in the numbering of the whole
		// search, not of the refinement alone.
		if !strings.Contains(p.Reason, fmt.Sprintf("step %d", len(search.Steps))) {
			t.Errorf("batch %d: reason %q does not name the last of its %d steps", p.BatchSize, p.Reason, len(search.Steps))
		}
	}
	if len(seen) != steps {
		t.Errorf("OnStep saw %d steps of %d", len(seen), steps)
	}
}

// The calibration stops within its time: a search stops before a step
// that would not fit its share, and says so.
func TestCalibrateTimeBudget(t *testing.T) { synctest.Test(t, testCalibrateTimeBudget) }

func testCalibrateTimeBudget(t *testing.T) {
	began := time.Now()
	res, err := Calibrate(context.Background(), sim.New(sim.Config{}), calibrateConfig(5*time.Second, 20, 100))
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(began); elapsed > time.Minute {
		t.Errorf("a calibration of at most 5 s took %s", elapsed)
	}
	if res.EndedEarly || len(res.Calibration.Points) != 2 {
		t.Fatalf("ended early %v (%s), %d points; want 2 searches cut by time", res.EndedEarly, res.EndReason, len(res.Calibration.Points))
	}
	for i, p := range res.Calibration.Points {
		if !strings.Contains(p.Reason, "ran out") || res.Steps[i].EndedEarly {
			t.Errorf("batch %d: stopped because %q (ended early %v); want its time run out", p.BatchSize, p.Reason, res.Steps[i].EndedEarly)
		}
	}
}

// A cancelled calibration returns what it measured, marked interrupted.
func TestCalibrateInterrupted(t *testing.T) { synctest.Test(t, testCalibrateInterrupted) }

func testCalibrateInterrupted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	res, err := Calibrate(ctx, sim.New(sim.Config{}), calibrateConfig(5*time.Minute, 20, 100))
	if err != nil {
		t.Fatal(err)
	}
	if !res.EndedEarly || res.EndReason != ErrInterrupted.Error() || len(res.Steps) == 0 {
		t.Errorf("ended early %v (%q), %d searches; want interrupted with the first kept", res.EndedEarly, res.EndReason, len(res.Steps))
	}
}

func TestCalibrateValidate(t *testing.T) { synctest.Test(t, testCalibrateValidate) }

func testCalibrateValidate(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*CalibrateConfig)
		want   string
	}{
		{"no batch size", func(c *CalibrateConfig) { c.BatchSizes = nil }, "batch sizes"},
		{"bad batch size", func(c *CalibrateConfig) { c.BatchSizes = []int{50, 0} }, "batch sizes 0: want"},
		{"start in bytes", func(c *CalibrateConfig) { c.Start = pace.Rate{PerSecond: 1e6, Unit: pace.Bytes} }, "start"},
		{"step not a factor", func(c *CalibrateConfig) { c.Increase = RateStep{Add: c.Start} }, "step"},
		{"refinement coarser than the step", func(c *CalibrateConfig) { c.Refine = RateStep{Factor: 3} }, "refinement"},
		{"rate limit below the start", func(c *CalibrateConfig) { c.MaxRate = 10 }, "maximum rate"},
		{"no time", func(c *CalibrateConfig) { c.MaxDuration = 0 }, "maximum duration"},
	} {
		cfg := calibrateConfig(time.Minute, 50)
		c.change(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.want)
		}
	}
}
