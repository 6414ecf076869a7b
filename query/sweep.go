package query

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// Defaults of what a sweep step must achieve besides its latency bound:
// as for the ingest's sustainability rule, 98 % of the target rate; and at
// most 1 % of its queries may fail.
const (
	DefaultMaxErrorShare    = 0.01
	DefaultMinAchievedShare = 0.98
)

// SweepConfig steps the target QPS from Start by Step up to Max and holds
// every step to SLO, a percentile of latency (from intended time, all
// kinds together), besides the error and achieved shares.
type SweepConfig struct {
	Start, Step, Max float64
	SLO              *stats.SLO
	MaxErrorShare    float64 // failed / sent queries
	MinAchievedShare float64 // achieved / target QPS
	// OnStep, when set, sees the sweep so far after each step: the step
	// with its verdict last in Steps, the best step so far, and the
	// reason it stopped or SweepUnderWay.
	OnStep func(sw *results.QuerySweep)
}

// Validate names the first bad setting.
func (c SweepConfig) Validate() error {
	switch {
	case c.Start <= 0:
		return invalid.New(invalid.SweepStart, c.Start, "a positive QPS")
	case c.Step <= 0:
		return invalid.New(invalid.SweepStep, c.Step, "a positive QPS")
	case c.Max < c.Start:
		return invalid.New(invalid.SweepMax, c.Max, fmt.Sprintf("at least the sweep's start, %g", c.Start))
	case c.SLO == nil:
		return invalid.New(invalid.SLO, "(none)", "a latency bound, e.g. p95<200ms")
	case c.MaxErrorShare < 0 || c.MaxErrorShare > 1 || c.MinAchievedShare < 0 || c.MinAchievedShare > 1:
		return fmt.Errorf("sweep error share %g and achieved share %g: want fractions from 0 to 1", c.MaxErrorShare, c.MinAchievedShare)
	}
	return nil
}

// Rates lists the target QPS of every step.
func (c SweepConfig) Rates() []float64 {
	var out []float64
	// Counting steps instead of adding Step avoids drifting past Max by
	// rounding (0.1+0.2…).
	n := int(math.Floor((c.Max-c.Start)/c.Step + 1e-9))
	for i := 0; i <= n; i++ {
		out = append(out, c.Start+float64(i)*c.Step)
	}
	return out
}

// Check holds r (an open-loop result) to the sweep's bounds.
func (c SweepConfig) Check(r *results.Queries) results.QueryVerdict {
	t := r.Total
	timeout := time.Duration(r.TimeoutS * float64(time.Second))
	// The percentile is taken over answered ∪ failed, the failed counted
	// at the timeout: a copy, so that the result's own latency figures
	// stay those of the answered queries.
	lat := stats.NewHistogram()
	if t.LatencyHistogram != nil {
		lat.Merge(t.LatencyHistogram)
	}
	if t.Failed > 0 {
		lat.RecordN(timeout, t.Failed)
	}
	q := lat.Quantile(c.SLO.Quantile)
	v := results.QueryVerdict{
		LatencyMs: float64(q.Microseconds()) / 1000,
		Answered:  t.Queries - t.Failed, FailedAtTimeout: t.Failed, Unsent: r.Unsent,
	}
	counted := ""
	if t.Failed > 0 {
		counted = fmt.Sprintf(" (%d failed queries counted at the %s timeout)", t.Failed, timeout)
	}
	switch {
	case t.Queries-t.Failed <= 0:
		v.Reason = "no query was answered"
	case q >= c.SLO.Bound:
		v.Reason = fmt.Sprintf("latency %s ms is not under %s%s", strconv.FormatFloat(v.LatencyMs, 'f', 1, 64), c.SLO.Text, counted)
	case float64(t.Failed) > c.MaxErrorShare*float64(t.Queries):
		v.Reason = fmt.Sprintf("%.2f%% of queries failed (at most %g%%)", 100*float64(t.Failed)/float64(t.Queries), 100*c.MaxErrorShare)
	case r.AchievedQPS < c.MinAchievedShare*r.TargetQPS:
		v.Reason = fmt.Sprintf("achieved %.1f QPS, under %g%% of the target %g", r.AchievedQPS, 100*c.MinAchievedShare, r.TargetQPS)
	default:
		v.Met = true
	}
	return v
}

// SweepUnderWay is the reason of a sweep that has more steps to run.
const SweepUnderWay = "under way"

// StepFunc measures one step at a target QPS: the workload alone, or
// beside an ingest.
type StepFunc func(ctx context.Context, qps float64) (*results.Queries, error)

// RunSweep runs step at each rate of cfg and stops after the first step
// that misses the SLO, or when ctx ends; the steps measured so far are
// always returned, also with an error.
func RunSweep(ctx context.Context, cfg SweepConfig, step StepFunc) (*results.QuerySweep, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sw := &results.QuerySweep{SLO: cfg.SLO.Text, Best: -1}
	rates := cfg.Rates()
	for i, qps := range rates {
		r, err := step(ctx, qps)
		if err != nil {
			sw.Reason = fmt.Sprintf("step at %g QPS failed: %v", qps, err)
			return sw, err
		}
		v := cfg.Check(r)
		r.Verdict = &v
		sw.Steps = append(sw.Steps, r)
		switch {
		case ctx.Err() != nil:
			sw.Reason = "interrupted"
		case !v.Met:
			sw.Reason = fmt.Sprintf("at %g QPS: %s", qps, v.Reason)
		default:
			sw.Found, sw.Best, sw.QPS, sw.AchievedQPS = true, len(sw.Steps)-1, qps, r.AchievedQPS
			sw.Reason = SweepUnderWay
			if i == len(rates)-1 {
				sw.Reason = fmt.Sprintf("every step up to the maximum of %g QPS met %s", cfg.Max, sw.SLO)
			}
		}
		if cfg.OnStep != nil {
			cfg.OnStep(sw)
		}
		if sw.Reason != SweepUnderWay {
			break
		}
	}
	return sw, nil
}
