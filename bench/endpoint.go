package bench

import (
	"context"

	"github.com/freshbench/freshbench/probe"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/timeline"
)

// endpointRun is one endpoint's share of a run, the target's or a read
// endpoint's: its freshness polls, visibility probes, update probes,
// query load and series, and the figures they make. The watch of every
// probe on every endpoint is the run's (run.probes, updateProbes): what
// is visible everywhere joins the endpoints.
type endpointRun struct {
	ReadEndpoint
	// series is the endpoint's record: the run's own for the target,
	// which also holds the writes; a read endpoint's is its own.
	series  *stats.Series
	own     bool              // series is the endpoint's alone (a read endpoint)
	vis     *probe.Visibility // nil: a query workload alone
	fresh   *probe.Freshness  // nil: a query workload alone
	load    *query.Load       // nil: no query workload
	queries *results.Queries  // what load measured
	// With an update stream (see updateProbes): the endpoint as an
	// Updater, its update visibility probes and update freshness polls.
	updater  target.Updater
	updVis   *probe.Visibility
	updFresh *probe.Freshness
	// drained is the audit that found every acknowledged event visible
	// at the drain's end; nil when the drain ended otherwise.
	drained []results.Completeness
}

// newEndpointRun starts e's share of a run whose series is run: the
// first endpoint's (the target's) as well, a new one, started with it,
// for any other.
func newEndpointRun(e ReadEndpoint, first bool, run *stats.Series) *endpointRun {
	ep := &endpointRun{ReadEndpoint: e, series: run}
	if !first {
		ep.series, ep.own = stats.NewSeries(run.Start(), 0), true
	}
	return ep
}

// pollFreshness prepares e's freshness polls of the run's generators.
func (e *endpointRun) pollFreshness(gens []string, cfg Config, tl *timeline.Timeline, obs stats.Observer) {
	e.fresh = probe.NewFreshness(e.Name, e.Reader, gens, cfg.budget(e.Reader), probe.NewClock(tl.Start()), tl, e.series, obs)
}

// runQueries runs e's query load, if any, until ctx ends.
func (e *endpointRun) runQueries(ctx context.Context, tl *timeline.Timeline) {
	if e.load != nil {
		e.queries = e.load.Run(ctx, tl, e.series)
	}
}

// result is what e showed; seen is its probes' visibility, as the run's
// watch of every endpoint found it (none: a query workload alone).
func (e *endpointRun) result(seen results.Visibility) *results.Endpoint {
	ep := &results.Endpoint{Name: e.Name, URL: redact.URL(e.URL), Visibility: seen, Queries: e.queries}
	if e.fresh != nil {
		ep.Freshness = e.fresh.Result()
	}
	if e.own {
		ep.Series = e.series.Points()
	}
	return ep
}
