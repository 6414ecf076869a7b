package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// QueryRun is a query workload measured alone, against what the target
// holds, or beside an ingest; once, as a QPS sweep, or at QPS levels.
type QueryRun struct {
	Queries query.Config
	// Ingest, when set, streams events beside the queries over its own
	// warm-up and duration; otherwise the queries run alone.
	Ingest *Config
	// Warmup and Duration of a workload that runs alone.
	Warmup, Duration time.Duration
	// ReadEndpoints, when given, get the whole workload each, beside the
	// target (and, with an Ingest, its probes: see Config.ReadEndpoints,
	// which these are given as; the Ingest's own must be empty).
	ReadEndpoints []ReadEndpoint
	Observer      stats.Observer
	// Sweep, when set, steps the open-loop QPS as it says; every step is
	// a full measurement.
	Sweep *query.SweepConfig
	// Levels, when set, measures the open-loop workload at each of its
	// QPS in turn, by trials (see RunLevels).
	Levels *QueryLevels
	// Frontier, when set, runs the Sweep beside the Ingest once at each
	// of these ingest rates, in order: the highest QPS under the bound at
	// each, with the freshness there (results.Frontier).
	Frontier []pace.Rate
	// Starting, when set, is told the workload of each measurement, and
	// the ingest beside it (nil when it runs alone), before
	// it begins.
	Starting func(query.Config, *Config)
	// OnStep, when set, is given the sweep so far after every step (the
	// levels so far after every trial), as one result, so that a caller
	// can keep it (a killed process then loses only the step under way).
	OnStep func(*results.Result)
}

// Experiment is the experiment of the ingest beside the queries, if
// any: a query load alone belongs to none.
func (r QueryRun) Experiment() *results.Experiment {
	if r.Ingest == nil {
		return nil
	}
	return r.Ingest.Experiment
}

// Validate names the first bad setting.
func (r QueryRun) Validate() error {
	if err := validEndpoints(r.ReadEndpoints); err != nil {
		return err
	}
	if len(r.ReadEndpoints) > 0 && (r.Sweep != nil || r.Levels != nil) {
		return errNoEndpointsWith("a sweep or levels", r.ReadEndpoints)
	}
	if r.Ingest != nil && len(r.Ingest.ReadEndpoints) > 0 {
		return errors.New("query run: give the read endpoints in QueryRun.ReadEndpoints, not in its Ingest")
	}
	if r.Ingest != nil {
		if err := r.Ingest.Validate(); err != nil {
			return err
		}
	} else if err := checkWarmup(r.Warmup, r.Duration); err != nil {
		return err
	}
	duration := r.Duration
	if r.Ingest != nil {
		duration = r.Ingest.Ingest.Duration
	}
	if err := checkQueryShape(r.Queries, duration); err != nil {
		return err
	}
	if r.Sweep != nil {
		if err := r.Sweep.Validate(); err != nil {
			return err
		}
	}
	if len(r.Frontier) > 0 {
		switch {
		case r.Sweep == nil:
			return invalid.New(invalid.Frontier, r.Frontier[0].String(), "a sweep as well: at each ingest rate, the sweep finds the highest QPS")
		case r.Ingest == nil:
			return invalid.New(invalid.Frontier, r.Frontier[0].String(), "an ingest: its rates are the frontier's")
		case r.Levels != nil:
			return invalid.New(invalid.Frontier, r.Frontier[0].String(), "no levels as well")
		}
		for _, rate := range r.Frontier {
			if rate.Unit != r.Frontier[0].Unit || rate.PerSecond <= 0 {
				return invalid.New(invalid.Frontier, rate.String(), "positive rates, all in events/s or all in bytes/s")
			}
		}
	}
	if r.Levels != nil {
		if r.Sweep != nil {
			return invalid.New(invalid.Levels, r.Levels.QPS, "no sweep as well: a sweep steps the QPS itself")
		}
		if r.Queries.Concurrency > 0 {
			return invalid.New(invalid.Concurrency, r.Queries.Concurrency, "none with levels: levels are open-loop QPS")
		}
		if err := r.Levels.Validate(); err != nil {
			return err
		}
		c := r.Queries
		c.QPS = r.Levels.QPS[0]
		return c.Validate()
	}
	return r.Queries.Validate()
}

// checkQueryShape refuses a query shape longer than the run it shapes.
func checkQueryShape(q query.Config, duration time.Duration) error {
	if err := q.Shape.Check(duration); err != nil {
		return invalid.Wrap(invalid.QueryShape, strconv.Quote(q.Shape.String()), err)
	}
	return nil
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
	if r.Levels != nil {
		return r.measureLevels(ctx, tgt, q)
	}
	if r.Sweep == nil {
		return r.measure(ctx, tgt, q, 0, 0)
	}
	if len(r.Frontier) > 0 {
		return r.measureFrontier(ctx, tgt, q)
	}
	return r.sweep(ctx, tgt, q, 0)
}

// sweep runs r.Sweep; its steps' seeds count from first.
func (r QueryRun) sweep(ctx context.Context, tgt target.Target, q target.Querier, first int) (*results.Result, error) {
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
		res, err := r.measure(ctx, tgt, q, qps, first+len(steps))
		if err != nil {
			return nil, err
		}
		steps = append(steps, res)
		return res.Target().Queries, nil
	})
	if len(steps) == 0 {
		return nil, err
	}
	return sweepResult(sw), err
}

// measureFrontier runs the sweep beside the ingest at each rate of
// r.Frontier. The result so far, after every step, goes to r.OnStep; an
// interrupted or failed sweep ends the frontier with what it measured.
func (r QueryRun) measureFrontier(ctx context.Context, tgt target.Target, q target.Querier) (*results.Result, error) {
	fr := &results.Frontier{SLO: r.Sweep.SLO.Text}
	var last *results.Result
	frontierResult := func(at *results.Result) *results.Result {
		res := *at
		res.Kind, res.QuerySweep, res.Frontier = results.KindFrontier, nil, fr
		return &res
	}
	for i, rate := range r.Frontier {
		ing := *r.Ingest
		ing.Ingest.Rate = rate
		at := r
		at.Ingest = &ing
		point := &results.FrontierPoint{IngestRate: rate.String(), IngestTarget: rate.PerSecond, IngestUnit: "events/s"}
		if rate.Unit == pace.Bytes {
			point.IngestTarget, point.IngestUnit = rate.PerSecond/1e6, "MB/s"
		}
		fr.Points = append(fr.Points, point)
		at.OnStep = func(res *results.Result) {
			frontierPointOf(point, res)
			if r.OnStep != nil {
				r.OnStep(frontierResult(res))
			}
		}
		// Each rate's steps get seeds of their own.
		res, err := at.sweep(ctx, tgt, q, i*len(r.Sweep.Rates()))
		if res != nil {
			frontierPointOf(point, res)
			last = res
		}
		if err != nil || ctx.Err() != nil {
			if last == nil {
				return nil, cmp.Or(err, ErrInterrupted)
			}
			out := frontierResult(last)
			if err == nil {
				out.EndedEarly, out.EndReason = true, ErrInterrupted.Error()
			}
			return out, err
		}
	}
	return frontierResult(last), nil
}

// frontierPointOf fills p from its sweep so far, res: its best step's
// figures, or the last step's when none met the bound.
func frontierPointOf(p *results.FrontierPoint, res *results.Result) {
	sw := res.QuerySweep
	p.Sweep, p.Found, p.QPS, p.AchievedQPS = sw, sw.Found, sw.QPS, sw.AchievedQPS
	s := res.Summary
	p.IngestAchieved = s.AchievedEventsPerSec
	if p.IngestUnit == "MB/s" {
		p.IngestAchieved = s.AchievedMBPerSec
	}
	p.FreshnessLag, p.VisibilityLatency, p.Missing = s.FreshnessLag, s.VisibilityLatency, s.Missing
	if res.Target().Queries != nil && res.Target().Queries.Total != nil {
		p.QueryLatency = res.Target().Queries.Total.Latency
	}
}

// measureLevels runs every trial of r.Levels.
func (r QueryRun) measureLevels(ctx context.Context, tgt target.Target, q target.Querier) (*results.Result, error) {
	conf := results.Config{DurationS: r.Duration.Seconds(), WarmupS: r.Warmup.Seconds()}
	if r.Ingest != nil {
		conf = recordConfig(*r.Ingest)
	}
	ls := &results.Levels{Unit: results.UnitQPS, Trials: r.Levels.Trials, WarmupTrials: r.Levels.Warmup}
	for _, qps := range r.Levels.QPS {
		ls.Levels = append(ls.Levels, &results.Level{Rate: strconv.FormatFloat(qps, 'f', -1, 64) + " QPS", Target: qps})
	}
	return measureLevels(ctx, conf, ls, r.Levels.LevelTrials, r.OnStep,
		func(ctx context.Context, level, n int, _ string) (*results.Result, error) {
			return r.measure(ctx, tgt, q, r.Levels.QPS[level], n)
		})
}

// measure runs the workload once at qps (0: as configured), as the n-th
// step (from 0) of a sweep.
func (r QueryRun) measure(ctx context.Context, tgt target.Target, q target.Querier, qps float64, n int) (*results.Result, error) {
	c := r.Queries
	if qps > 0 {
		c.QPS = qps
	}
	if r.Starting != nil {
		r.Starting(c, r.Ingest)
	}
	if r.Ingest == nil {
		return RunQueries(ctx, q, r.ReadEndpoints, c, r.Warmup, r.Duration, r.Observer)
	}
	run := *r.Ingest
	run.ReadEndpoints = r.ReadEndpoints
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

// errNoEndpointsWith refuses read endpoints with a measurement whose
// figures are summarized over trials or steps: those summaries are the
// write target's alone, and the endpoints' figures would go unseen.
func errNoEndpointsWith(what string, eps []ReadEndpoint) error {
	return invalid.New(invalid.ReadEndpoint, redact.URL(eps[0].URL), "none with "+what+": measure each level or QPS with read endpoints as a run or query of its own")
}
