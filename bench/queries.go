package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// QueryRun is a query workload measured alone, against what the target
// holds, or beside an ingest; once, or as a QPS sweep.
type QueryRun struct {
	Queries query.Config
	// Ingest, when set, streams events beside the queries over its own
	// warm-up and duration; otherwise the queries run alone.
	Ingest *Config
	// Warmup and Duration of a workload that runs alone.
	Warmup, Duration time.Duration
	Observer         stats.Observer
	// Sweep, when set, steps the open-loop QPS as it says; every step is
	// a full measurement.
	Sweep *query.SweepConfig
	// Starting, when set, is told the workload of each measurement before
	// it begins.
	Starting func(query.Config)
	// OnStep, when set, is given the sweep so far after every step, as
	// one result, so that a caller can keep it (a killed process then
	// loses only the step under way).
	OnStep func(*results.Result)
}

// Validate names the first bad setting.
func (r QueryRun) Validate() error {
	if r.Ingest != nil {
		if err := r.Ingest.Validate(); err != nil {
			return err
		}
	} else if err := checkWarmup(r.Warmup, r.Duration); err != nil {
		return err
	}
	if r.Sweep != nil {
		if err := r.Sweep.Validate(); err != nil {
			return err
		}
	}
	return r.Queries.Validate()
}

// MeasureQueries runs r against tgt, set up already (SetupQueries
// included). Like Run, it returns what was measured also when ctx is
// cancelled; a sweep keeps every step measured when a later one fails.
func MeasureQueries(ctx context.Context, tgt target.Target, r QueryRun) (*results.Result, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	q, ok := tgt.(target.Querier)
	if !ok {
		return nil, fmt.Errorf("target %s does not run the query workload", tgt.Name())
	}
	if r.Sweep == nil {
		return r.measure(ctx, tgt, q, 0, 0)
	}
	var steps []*results.Result
	// sweepResult is the sweep so far as one result: its best step (the
	// last when none met the SLO) carrying every step.
	sweepResult := func(sw *results.QuerySweep) *results.Result {
		res := *steps[len(steps)-1]
		if sw.Found {
			res = *steps[sw.Best]
		}
		res.Kind, res.QuerySweep = results.KindSweep, sw
		return &res
	}
	sc := *r.Sweep
	sc.OnStep = func(sw *results.QuerySweep) {
		if r.OnStep != nil {
			r.OnStep(sweepResult(sw))
		}
	}
	sw, err := query.RunSweep(ctx, sc, func(ctx context.Context, qps float64) (*results.Queries, error) {
		res, err := r.measure(ctx, tgt, q, qps, len(steps))
		if err != nil {
			return nil, err
		}
		steps = append(steps, res)
		return res.Queries, nil
	})
	if len(steps) == 0 {
		return nil, err
	}
	return sweepResult(sw), err
}

// measure runs the workload once at qps (0: as configured), as the n-th
// step (from 0) of a sweep.
func (r QueryRun) measure(ctx context.Context, tgt target.Target, q target.Querier, qps float64, n int) (*results.Result, error) {
	c := r.Queries
	if qps > 0 {
		c.QPS = qps
	}
	if r.Starting != nil {
		r.Starting(c)
	}
	if r.Ingest == nil {
		return RunQueries(ctx, q, c, r.Warmup, r.Duration, r.Observer)
	}
	run := *r.Ingest
	run.Ingest.Seed = stepSeed(run.Ingest.Seed, n)
	run.Observer = r.Observer
	run.Queries = &c
	res, err := Run(ctx, tgt, run)
	if res != nil {
		// Beside an ingest, one query measurement is of kind query too:
		// what was asked for is the query workload, and its Generators
		// and ingest figures say that an ingest ran beside it. (A sweep's
		// result is marked sweep by MeasureQueries.)
		res.Kind = results.KindQuery
	}
	return res, err
}
