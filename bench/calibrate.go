package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// CalibrateConfig is a calibration: for each batch size, a peak search
// against a no-op server (package noop), whose ceiling is the driver's
// own on this machine.
type CalibrateConfig struct {
	// Run is every step's run; its batch size and rate are set by the
	// search. Its duration is the step's warm-up plus its hold.
	Run        Config
	BatchSizes []int
	Start      pace.Rate // the first step's rate, in events/s
	// Increase raises the rate until a step is not sustainable; Refine,
	// when its factor is set, then searches between the last sustainable
	// rate and that one in finer steps.
	Increase, Refine RateStep
	MaxRate          float64 // the highest rate tried, in events/s
	// MaxDuration bounds the whole calibration: each batch size gets an
	// equal share of what is left, and a search stops before a step that
	// would not fit its share.
	MaxDuration time.Duration
	Rule        stats.Rule
	// OnStep, when set, sees each step as it ends.
	OnStep func(batchSize int, step *results.Result)
}

// CalibrationRule judges a step of a calibration: the driver kept its
// schedule (at most 5 % of the second half's batches late, at least 99 %
// of the target acknowledged, no write failed) and read back everything
// (freshness sampled, a complete audit), which a no-op server that makes
// every event visible at once always allows while the driver keeps up.
// No trend is judged: steps as short as a calibration's are too short to
// tell one, and a growing backlog shows as late batches first.
func CalibrationRule() stats.Rule {
	return stats.Rule{MinAchieved: 0.99, MaxErrorRate: 0, MaxLateShare: 0.05}
}

// Validate names the first bad setting.
func (c CalibrateConfig) Validate() error {
	if len(c.BatchSizes) == 0 {
		return invalid.New(invalid.BatchSizes, "(none)", "one or more batch sizes, e.g. 50,500")
	}
	if c.Start.Unit != pace.Events || c.Start.PerSecond <= 0 {
		return invalid.New(invalid.StartRate, c.Start, "a rate in events/s, e.g. 5000")
	}
	if c.Increase.Factor <= 1 {
		return invalid.New(invalid.Step, c.Increase, "a factor above 1, e.g. x1.5")
	}
	if c.Refine.Factor != 0 && (c.Refine.Factor <= 1 || c.Refine.Factor >= c.Increase.Factor) {
		return invalid.New(invalid.Refinement, c.Refine, fmt.Sprintf("a factor above 1 and below the step's %s", c.Increase))
	}
	if c.MaxRate < c.Start.PerSecond {
		return invalid.New(invalid.MaxRate, c.MaxRate, fmt.Sprintf("at least the start rate %s", c.Start))
	}
	if c.MaxDuration <= 0 {
		return invalid.New(invalid.MaxDuration, c.MaxDuration, "a positive duration, e.g. 10m")
	}
	for _, b := range c.BatchSizes {
		run := c.Run
		run.Ingest.BatchSize, run.Ingest.Rate = b, c.Start
		if err := run.Validate(); err != nil {
			if e, ok := invalid.As(err); ok && e.Field == invalid.BatchSize {
				return &invalid.Error{Field: invalid.BatchSizes, Value: e.Value, Want: e.Want, Err: e.Err}
			}
			return err
		}
	}
	return nil
}

// Calibrate runs the calibration against tgt, which must be set up
// already. It returns a result of kind calibration whose Steps are the
// peak searches, one per batch size. Like Run, it returns what was
// measured when ctx is cancelled.
func Calibrate(ctx context.Context, tgt target.Target, cfg CalibrateConfig) (*results.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	began := time.Now()
	deadline := began.Add(cfg.MaxDuration)
	res := &results.Result{
		SchemaVersion: results.SchemaVersion, Kind: results.KindCalibration, Command: "calibrate", StartedAt: began.UTC(),
		Config:      recordConfig(cfg.Run),
		Calibration: &results.Calibration{MaxDurationS: cfg.MaxDuration.Seconds()},
	}
	res.Config.Rate, res.Config.RatePerSecond, res.Config.RateUnit = cfg.Start.String(), cfg.Start.PerSecond, "events/s"
	for i, b := range cfg.BatchSizes {
		if ctx.Err() != nil {
			res.EndedEarly, res.EndReason = true, ErrInterrupted.Error()
			break
		}
		share := time.Until(deadline) / time.Duration(len(cfg.BatchSizes)-i)
		search, err := calibrateBatch(ctx, tgt, cfg, b, time.Now().Add(share))
		if err != nil {
			return nil, fmt.Errorf("batch size %d: %w", b, err)
		}
		res.Steps = append(res.Steps, search)
		res.Generators = append(res.Generators, search.Generators...)
		res.Calibration.Points = append(res.Calibration.Points, pointOf(b, search))
		if search.EndedEarly && ctx.Err() != nil {
			res.EndedEarly, res.EndReason = true, search.EndReason
		}
	}
	res.EndedAt = time.Now().UTC()
	return res, nil
}

// calibrateBatch searches the ceiling at one batch size before deadline:
// rising by the increase until a step fails, then, with a refinement,
// from the last sustainable rate in finer steps below the failed one.
func calibrateBatch(ctx context.Context, tgt target.Target, cfg CalibrateConfig, batch int, deadline time.Time) (*results.Result, error) {
	run := cfg.Run
	run.Ingest.BatchSize = batch
	run.Phase = fmt.Sprintf("batch%d-", batch)
	pc := PeakConfig{Run: run, Increase: cfg.Increase, Rule: cfg.Rule, Confirm: true, MaxRate: cfg.MaxRate}
	pc.Run.Ingest.Rate = cfg.Start
	search, budget, err := searchWithin(ctx, tgt, pc, deadline, cfg.OnStep, 0)
	if err != nil || cfg.Refine.Factor == 0 || budget || !search.Peak.Found || search.EndedEarly {
		return search, err
	}
	last := search.Steps[len(search.Steps)-1]
	if last.Verdict == nil || last.Verdict.Sustainable {
		return search, nil // stopped by the rate limit, not by a failed step
	}
	// Between the ceiling found and the rate that failed after it.
	ceiling := pace.Rate{PerSecond: search.Steps[search.Peak.Step].Config.RatePerSecond, Unit: pace.Events}
	pc.Run.Ingest.Rate = cfg.Refine.Next(ceiling)
	pc.Increase, pc.MaxRate = cfg.Refine, cfg.Increase.Next(ceiling).PerSecond*(1-1e-6)
	if pc.Run.Ingest.Rate.PerSecond > pc.MaxRate {
		return search, nil
	}
	pc.Run.Phase = run.Phase + "refine-"
	failedAt := len(search.Steps)
	fine, budget, err := searchWithin(ctx, tgt, pc, deadline, cfg.OnStep, failedAt)
	if err != nil {
		return nil, err
	}
	steps := append(search.Steps, fine.Steps...)
	n := len(steps)
	// The refinement's own reasons number its steps from 1: say it again
	// in the numbers of the whole search.
	var reason string
	switch {
	case budget:
		reason = fine.Peak.Reason
	case fine.EndedEarly || len(fine.Steps) == 0:
		reason = ErrInterrupted.Error() + " during the refinement"
	case steps[n-1].Verdict.Sustainable:
		reason = fmt.Sprintf("step %d (%.0f events/s) was not sustainable, and every finer step below it was", failedAt, last.Config.RatePerSecond)
	case n-1 > failedAt && steps[n-2].Config.RatePerSecond == steps[n-1].Config.RatePerSecond:
		reason = fmt.Sprintf("step %d (%.0f events/s) was not sustainable, confirmed by step %d: %s", n-1, steps[n-1].Config.RatePerSecond, n, steps[n-1].Verdict.Reason())
	default:
		reason = fmt.Sprintf("step %d (%.0f events/s) was not sustainable: %s", n, steps[n-1].Config.RatePerSecond, steps[n-1].Verdict.Reason())
	}
	search.Steps, search.Generators = steps, append(search.Generators, fine.Generators...)
	search.Peak = peakOf(search.Peak.Search, steps, reason, search.StartedAt)
	search.Peak.Search.Increase = cfg.Increase.String() + ", then " + cfg.Refine.String()
	search.EndedAt, search.EndedEarly, search.EndReason = fine.EndedAt, fine.EndedEarly, fine.EndReason
	return search, nil
}

// searchWithin runs one peak search that stops before a step which would
// not end by deadline (judged by the length of the last step), or at the
// deadline itself. budget reports that the deadline, not a verdict or
// ctx, ended it.
// Its steps are numbered after the done steps already run.
func searchWithin(ctx context.Context, tgt target.Target, pc PeakConfig, deadline time.Time, onStep func(int, *results.Result), done int) (*results.Result, bool, error) {
	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	last := time.Now()
	pc.OnStep = func(r *results.Result) {
		step := r.Steps[len(r.Steps)-1]
		if onStep != nil {
			onStep(pc.Run.Ingest.BatchSize, step)
		}
		now := time.Now()
		if now.Add(now.Sub(last)).After(deadline) {
			cancel() // the next step would not fit: stop before it
		}
		last = now
	}
	search, err := SearchPeak(sctx, tgt, pc)
	if err != nil {
		return nil, false, err
	}
	budget := search.EndedEarly && ctx.Err() == nil
	if budget {
		// Not an interruption: the calibration's time ran out for this
		// batch size.
		search.EndedEarly, search.EndReason = false, ""
		n := len(search.Steps)
		search.Peak.Reason = fmt.Sprintf("the time for batch size %d ran out after step %d", pc.Run.Ingest.BatchSize, done+n)
		if n > 0 && search.Steps[n-1].Verdict == nil {
			search.Peak.Reason = fmt.Sprintf("the time for batch size %d ran out during step %d", pc.Run.Ingest.BatchSize, done+n)
		}
	}
	return search, budget, nil
}

// pointOf reads a batch size's ceiling from its search.
func pointOf(batch int, search *results.Result) results.CalibrationPoint {
	p := results.CalibrationPoint{BatchSize: batch, Reason: search.Peak.Reason}
	if !search.Peak.Found {
		return p
	}
	step := search.Steps[search.Peak.Step]
	p.Found, p.CeilingEventsPerSec, p.CeilingTargetPerSec = true, search.Peak.AchievedEventsPerSec, step.Config.RatePerSecond
	p.CPUPer100kS = step.DriverCPUPer100k()
	if step.DriverCPU != nil {
		p.CorePercent = step.DriverCPU.CorePercent
	}
	return p
}
