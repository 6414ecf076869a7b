package isolation

import (
	"context"
	"errors"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

// Configure makes run the experiment c plans: its duration and warm-up,
// and the two loads' bursts as their shapes. run must have an open-loop
// query load.
func Configure(run bench.Config, c Config) (bench.Config, error) {
	if err := c.Validate(); err != nil {
		return run, err
	}
	if run.Queries == nil {
		return run, errors.New("isolation: the run needs a query load")
	}
	if run.Queries.QPS <= 0 {
		return run, invalid.New(invalid.QPS, run.Queries.QPS, "a positive QPS: the experiment's queries run open loop, so that a slower database shows in their latency")
	}
	write, query, err := c.Shapes()
	if err != nil {
		return run, err
	}
	q := *run.Queries
	q.Shape = query
	run.Queries = &q
	run.Ingest.Shape, run.Ingest.Warmup, run.Ingest.Duration = write, c.Warmup, c.Duration()
	return run, run.Validate()
}

// Run runs the experiment c with bench.Run (run as Configure makes it)
// and adds its analysis to the result. Like bench.Run, it returns what was
// measured when ctx ends early; the windows not reached then have no
// samples.
func Run(ctx context.Context, tgt target.Target, run bench.Config, c Config) (*results.Result, error) {
	run, err := Configure(run, c)
	if err != nil {
		return nil, err
	}
	rec := NewRecorder(run.Observer)
	run.Observer = rec
	res, err := bench.Run(ctx, tgt, run)
	if res != nil {
		res.Isolation = rec.Analyze(res.StartedAt, c)
		for _, w := range res.Isolation.Windows {
			for _, p := range res.Series {
				if p.StartS >= w.FromS && p.StartS < w.ToS {
					w.WritesUnsent += p.UnsentEvents
				}
			}
		}
	}
	return res, err
}
