// Package bench runs one measured ingest against a target: the paced
// writes, the freshness and visibility probes, the drain and the
// completeness audit, and assembles the results. The run and peak
// commands share this one measurement path.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/probe"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/timeline"
)

// Config is one measured run.
type Config struct {
	Ingest ingest.Config
	// PollInterval, when set, is the mean pause between the freshness
	// and probe polls, whatever the target's answers take; 0 lets each
	// loop poll as often as the target answers within ProbeShare and
	// ProbeMaxRate (see probe.Budget).
	PollInterval time.Duration
	// ProbeShare and ProbeMaxRate bound each adaptive loop: the share of
	// one connection's time it may spend querying, and its polls per
	// second; 0 takes probe.DefaultBudget's.
	ProbeShare, ProbeMaxRate float64
	// Drain is how long to wait after the schedule for acknowledged
	// events to show; past it, the drain waits on while the target is
	// still catching up, up to DrainMax (0: 4 × Drain). Events not
	// visible at its end are late if the target was still catching up,
	// lost only if it had caught up.
	Drain, DrainMax time.Duration
	// Recheck, when set, audits the late events again that long after
	// the drain, and says which turned up.
	Recheck time.Duration
	// RepeatIDs keeps the generator identifiers and _ids that the seed
	// alone gives, the same in every run with that seed; otherwise each
	// run draws ids of its own, so that repeated runs on one index or
	// table never collide. With RepeatIDs, a run whose ids the target
	// holds already is refused.
	RepeatIDs bool
	// Progress, when set, is called about once a second during the run.
	Progress func(Progress)
	// Until, when set, is asked about once a second after the warm-up,
	// with the series so far (the run's, and each read endpoint's: a
	// verdict judges them all), whether the schedule may end before its
	// duration (a peak step held until its verdict is known). The run
	// then ends as at the end of its duration: writes in flight finish,
	// the drain and the audit follow, and the measured phase ends at
	// that instant.
	Until func(series []stats.Point, reads []ReadSeries) bool
	// Observer, when set, sees every measurement live (metrics endpoint).
	Observer stats.Observer
	// Phase prefixes the phase names given to the Observer (a peak step).
	Phase string
	// Queries, when set, runs the query workload beside the ingest over
	// the same warm-up and measured window; the target must implement
	// target.Querier, with its SetupQueries done.
	Queries *query.Config
	// Experiment, when set, makes this run one instance of an
	// experiment: its generators are the instance's own (distinct from
	// every other instance's, even with the same Seed), its schedule
	// starts at the experiment's StartAt when one is given, and the
	// result records it for merging.
	Experiment *results.Experiment
	// ReadEndpoints, when given, are read from apart from the write
	// target, each on its own (see ReadEndpoint). The target is measured
	// beside them, as the endpoint "target".
	ReadEndpoints []ReadEndpoint
}

// ReadEndpoint is an endpoint of the database under test other than the
// write target: a replica, a standby, a query node. It gets freshness
// polls, visibility probes (every probe is watched on every endpoint),
// a completeness audit and, with a query workload, a query load of its
// own, as the target does; one that is slow or down delays no other.
type ReadEndpoint struct {
	Name string // as results name it: read1, read2, …; not "target"
	// URL says where it is; results record it with credentials removed.
	URL    string
	Reader target.Reader // a target.Querier too, for a query workload
}

// ReadSeries is a read endpoint's series so far, as Until sees it.
type ReadSeries struct {
	Name   string
	Series []stats.Point
}

// validEndpoints names the first read endpoint that cannot be told
// apart. (Their Readers are not looked at: a caller may check a
// configuration before it opens them.)
func validEndpoints(eps []ReadEndpoint) error {
	seen := map[string]bool{results.TargetEndpoint: true}
	for _, e := range eps {
		if e.Name == "" || seen[e.Name] {
			return invalid.New(invalid.ReadEndpointName, strconv.Quote(e.Name), fmt.Sprintf("a name of its own, not empty nor %q", results.TargetEndpoint))
		}
		seen[e.Name] = true
	}
	return nil
}

// Validate names the first bad setting.
func (c Config) Validate() error {
	if err := c.Ingest.Validate(); err != nil {
		return err
	}
	if err := c.budget(nil).Validate(); err != nil {
		return err
	}
	if c.Drain < 0 {
		return invalid.New(invalid.Drain, c.Drain, "0 or more")
	}
	if c.DrainMax < 0 {
		return invalid.New(invalid.DrainMax, c.DrainMax, "0 (4 × the drain) or more")
	}
	if c.Recheck < 0 {
		return invalid.New(invalid.Recheck, c.Recheck, "0 (none) or more")
	}
	if c.Experiment != nil {
		if err := c.Experiment.Validate(); err != nil {
			return err
		}
	}
	if err := validEndpoints(c.ReadEndpoints); err != nil {
		return err
	}
	if c.Queries != nil {
		if err := checkQueryShape(*c.Queries, c.Ingest.Duration); err != nil {
			return err
		}
		return c.Queries.Validate()
	}
	return nil
}

// leadTime is how far ahead of its first batch a run starts its streams,
// so that every stream begins on the same instant.
const leadTime = 20 * time.Millisecond

// startAt waits until just before the experiment's common start and
// returns it; without one, the run starts now. A common start already
// past is refused: the instance would begin its schedule behind the
// others and already late.
func startAt(ctx context.Context, e *results.Experiment) (time.Time, error) {
	if e == nil || e.StartAt.IsZero() {
		return time.Now().Add(leadTime), nil
	}
	wait := time.Until(e.StartAt) - leadTime
	if wait < 0 {
		return time.Time{}, invalid.New(invalid.Start, e.StartAt.Format(time.RFC3339Nano),
			fmt.Sprintf("an instant still ahead when the instance is ready; it was ready %s after it", (-wait).Round(time.Millisecond)))
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return e.StartAt, nil
	case <-ctx.Done():
		return time.Time{}, fmt.Errorf("waiting for the common start %s: %w", e.StartAt.Format(time.RFC3339), ErrInterrupted)
	}
}

// Progress is a live view of a run.
type Progress struct {
	Elapsed, Remaining time.Duration
	AckedPerSec        float64 // events acknowledged in the last full second
	TargetPerSec       float64 // events the schedule asked for in that second
	Errors             int64   // failed events so far
	Late               int64   // late batches so far
	FreshnessLag       time.Duration
	Phase              string
}

// ErrInterrupted is the EndReason of a run stopped by its context.
var ErrInterrupted = errors.New("interrupted")

// Run measures one ingest against tgt, which must be set up already. It
// always returns the results measured so far, also when ctx is cancelled
// (the run then ends early and skips the drain).
//
// A run is planned (seeds, ids, the observer), started (at once, or at an
// experiment's common start), prepared (the probes, query loads and
// ingester over one timeline), ingested (the schedule, with the queries
// and the polls beside it), drained (until what was written is visible)
// and collected (each endpoint's figures and the summary).
func Run(ctx context.Context, tgt target.Target, cfg Config) (*results.Result, error) {
	cfg, err := cfg.plan()
	if err != nil {
		return nil, err
	}
	start, err := startAt(ctx, cfg.Experiment)
	if err != nil {
		return nil, err
	}
	r, err := prepare(ctx, tgt, cfg, timeline.New(start, cfg.Ingest.Warmup, cfg.Ingest.Duration))
	if err != nil {
		return nil, err
	}
	res := &results.Result{
		SchemaVersion: results.SchemaVersion, Kind: results.KindRun, StartedAt: start.UTC(), Generators: r.gens,
		Config: recordConfig(cfg), Experiment: cfg.Experiment,
	}
	r.poll(ctx)
	acct := r.ingest(ctx, res)
	if c := res.Config.Corpus; c != nil {
		c.Replayed, c.Passes = cfg.Ingest.Corpus.Passes()
	}
	interrupted := r.drain(ctx, res)
	r.collect(ctx, res, acct, interrupted)
	return res, nil
}

// plan completes cfg: validated, with the observer, seed, id nonce and
// first generator the run uses.
func (c Config) plan() (Config, error) {
	if err := c.Validate(); err != nil {
		return c, err
	}
	if c.Observer == nil {
		c.Observer = stats.NopObserver{}
	}
	if c.Ingest.Seed == 0 {
		// Drawn here rather than in the generator so that the results file
		// names the seed that reproduces these documents.
		c.Ingest.Seed = rand.Uint64() | 1
	}
	if !c.RepeatIDs {
		c.Ingest.IDNonce = rand.Uint64() | 1
	}
	if e := c.Experiment; e != nil {
		c.Ingest.FirstGenerator = e.Instance * ingest.GeneratorsPerInstance
	}
	return c, nil
}

// run is one run's collaborators, each measuring over the timeline tl.
type run struct {
	tgt    target.Target
	cfg    Config
	obs    stats.Observer
	tl     *timeline.Timeline
	ledger *probe.Ledger
	series *stats.Series  // the run's: the writes, and the target's
	eps    []*endpointRun // the target first, then the read endpoints
	probes *probe.Probes  // every insert probe, watched on every endpoint
	upd    *updateProbes  // nil: no updates
	in     *ingest.Ingester
	gens   []string

	polls              sync.WaitGroup
	stopFresh, stopVis context.CancelFunc
}

// prepare builds the endpoints' probes and query loads and the ingester
// of a run over tl.
func prepare(ctx context.Context, tgt target.Target, cfg Config, tl *timeline.Timeline) (*run, error) {
	r := &run{tgt: tgt, cfg: cfg, obs: cfg.Observer, tl: tl, ledger: probe.NewLedger(), series: stats.NewSeries(tl.Start(), 0)}
	reads := endpoints(tgt, cfg.ReadEndpoints)
	vis := make([]*probe.Visibility, len(reads))
	for i, e := range reads {
		ep := newEndpointRun(e, i == 0, r.series)
		ep.vis = probe.NewVisibility(e.Name, e.Reader, cfg.budget(e.Reader), tl, r.obs)
		vis[i] = ep.vis
		r.eps = append(r.eps, ep)
	}
	r.probes = probe.NewProbes(tl, vis...)
	var err error
	if r.upd, err = newUpdateProbes(r.eps, cfg, tl); err != nil {
		return nil, err
	}
	writer, loads, err := queryLoads(ctx, tgt, reads, cfg, r.obs)
	if err != nil {
		return nil, err
	}
	for i, l := range loads {
		r.eps[i].load = l
	}
	var probed ingest.Probes = r.probes
	if r.upd != nil {
		probed = probe.Split{Inserts: r.probes, Updates: r.upd.probes}
	}
	if r.in, err = ingest.New(cfg.Ingest, writer, probed, r.ledger, r.obs); err != nil {
		return nil, err
	}
	r.gens = r.in.GeneratorIDs()
	if cfg.RepeatIDs {
		// Ids of the run's own (a 64-bit nonce) cannot collide; the
		// seed's own ids can.
		if err := checkUnused(ctx, tgt, r.gens, cfg.Ingest.Seed); err != nil {
			return nil, err
		}
	}
	for _, e := range r.eps {
		e.pollFreshness(r.gens, cfg, tl, r.obs)
	}
	r.upd.freshness(r.gens, cfg, probe.NewClock(tl.Start()), tl)
	return r, nil
}

// poll starts the freshness, visibility and backlog loops. They outlive
// ctx, so that an interrupted run still reports what they saw, and end
// with the drain.
func (r *run) poll(ctx context.Context) {
	freshCtx, stopFresh := context.WithCancel(context.WithoutCancel(ctx))
	visCtx, stopVis := context.WithCancel(context.WithoutCancel(ctx))
	r.stopFresh, r.stopVis = stopFresh, stopVis
	for _, e := range r.eps {
		r.polls.Add(1)
		go func() { defer r.polls.Done(); e.fresh.Run(freshCtx) }()
	}
	r.polls.Add(1)
	go func() { defer r.polls.Done(); r.probes.Run(visCtx) }()
	r.upd.run(freshCtx, visCtx, &r.polls)
	// The backlog is sampled while events stream in, as the freshness is.
	r.polls.Add(1)
	go func() { defer r.polls.Done(); sampleBacklog(freshCtx, r.tgt, r.series) }()
}

// ingest runs the schedule, with the endpoints' query loads and the
// server's account beside it, and records the account and the driver's
// CPU in res. It returns the ingest's accounting.
func (r *run) ingest(ctx context.Context, res *results.Result) *ingest.Accounting {
	// sched ends with the schedule: at its duration, or when Until says.
	sched, endSchedule := context.WithCancel(ctx)
	defer endSchedule()
	var queried sync.WaitGroup
	for _, e := range r.eps {
		queried.Add(1)
		go func() { defer queried.Done(); e.runQueries(sched, r.tl) }()
	}
	account := make(chan *results.Account, 1)
	go func() { account <- serverAccount(ctx, sched, r.tgt, r.tl.MeasuredFrom(), r.tl.End()) }()
	acctCh := make(chan *ingest.Accounting, 1)
	var cpu cpuSince
	cpu.start()
	r.obs.TargetRate(targetRate(r.cfg.Ingest, 0))
	go func() { acctCh <- r.in.Run(sched, r.tl, r.series) }()
	acct := watch(r.tl, r.cfg, r.eps, r.obs, acctCh, endSchedule)
	if r.tl.StoppedAt().Before(r.tl.End()) {
		// The ingest stopped early, at the end of its corpus: the queries
		// beside it end with it.
		endSchedule()
	}
	r.obs.TargetRate(0)
	res.DriverCPU = cpu.since()
	queried.Wait()
	res.ServerAccount = <-account
	return acct
}

// drain stops the freshness polls and, unless the run was interrupted,
// waits until what was written is visible (res.Drain); then it stops the
// visibility polls. It says whether the run was interrupted.
func (r *run) drain(ctx context.Context, res *results.Result) (interrupted bool) {
	r.stopFresh()
	if interrupted = ctx.Err() != nil; interrupted {
		res.EndedEarly, res.EndReason = true, ErrInterrupted.Error()
	} else {
		r.obs.Phase(r.cfg.Phase + "drain")
		var lagMax time.Duration
		for _, e := range r.eps {
			if l := e.fresh.Result().Lag; l != nil {
				lagMax = max(lagMax, l.Quantile(1))
			}
		}
		res.Drain = drain(ctx, r.eps, r.cfg, r.gens, r.ledger, r.probes, r.upd, probe.NewClock(r.tl.Start()), r.tl.End(), lagMax)
	}
	r.stopVis()
	r.polls.Wait()
	return interrupted
}

// collect fills res with the phases, each endpoint's figures and audit,
// the series and the summary.
func (r *run) collect(ctx context.Context, res *results.Result, acct *ingest.Accounting, interrupted bool) {
	res.EndedAt = time.Now().UTC()
	res.Phases = []*results.Phase{acct.Phase(results.PhaseWarmup), acct.Phase(results.PhaseMeasured), acct.Phase(results.PhaseTail)}
	seen, everywhere := r.probes.Finish()
	updates, updatesEverywhere := r.upd.finish(ctx, r.ledger, r.gens, interrupted)
	for i, e := range r.eps {
		ep := e.result(seen[i])
		if updates != nil {
			ep.Updates = updates[i]
		}
		switch {
		case e.drained != nil:
			ep.Completeness = e.drained // the drain's last audit: no need to scan again
		case !interrupted:
			ep.Completeness, ep.AuditError = audit(ctx, r.ledger, e.Reader, r.gens)
		}
		res.Endpoints = append(res.Endpoints, ep)
	}
	if res.Drain != nil {
		settle(ctx, r.cfg, r.ledger, res.Drain, res.Endpoints, r.eps)
	}
	res.VisibleEverywhere, res.UpdatesVisibleEverywhere = everywhere, updatesEverywhere
	res.Series = r.series.Points()
	from, to := r.tl.Measured()
	res.Summary = results.Summarize(res, to.Sub(from).Seconds())
	checkAccount(r.tgt, res)
	for _, e := range res.Endpoints {
		if e.Queries != nil {
			e.Queries.Beside = res.Summary.Beside()
		}
	}
}

// budget is the probe budget of the loops that poll r: the run's, with
// r's refresh period when it has one (nil: none).
func (c Config) budget(r target.Reader) probe.Budget {
	b := probe.Budget{Interval: c.PollInterval, Share: c.ProbeShare, MaxRate: c.ProbeMaxRate}
	if rr, ok := r.(target.Refresher); ok {
		b.Refresh, _ = rr.RefreshPeriod()
	}
	return b
}

// endpoints lists the write target, named results.TargetEndpoint, and
// the read endpoints after it.
func endpoints(tgt target.Target, reads []ReadEndpoint) []ReadEndpoint {
	return append([]ReadEndpoint{{Name: results.TargetEndpoint, Reader: tgt}}, reads...)
}

// audit compares what r shows of every generator with what the ledger
// acknowledged.
func audit(ctx context.Context, ledger *probe.Ledger, r target.Reader, gens []string) ([]results.Completeness, string) {
	return auditEach(ctx, gens, func(ctx context.Context, g string) (results.Completeness, error) {
		return ledger.Audit(ctx, r, g)
	})
}

// auditEach audits every generator in turn, each endpoint within its own
// bound, so that one that hangs costs the others nothing; the first
// error ends it and is returned as text, with the audits before it.
func auditEach[T any](ctx context.Context, gens []string, audit func(context.Context, string) (T, error)) ([]T, string) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	var out []T
	for _, g := range gens {
		a, err := audit(actx, g)
		if err != nil {
			return out, err.Error()
		}
		out = append(out, a)
	}
	return out, ""
}

// ErrGeneratorInUse means the target already holds events of a generator
// of this run: its documents would overwrite or duplicate them, probes
// would be seen at once through the old copies and the audit would count
// them as unexpected.
var ErrGeneratorInUse = errors.New("the target already holds events of this run's generator")

// checkUnused refuses a run whose generators already have events in the
// target. A target that keeps nothing, or cannot count now, is not
// checked: the run itself will say what fails.
func checkUnused(ctx context.Context, r target.Reader, gens []string, seed uint64) error {
	for _, g := range gens {
		n, err := r.Count(ctx, g)
		if err != nil || n == 0 {
			continue
		}
		return invalid.Wrap(invalid.Seed, seed, fmt.Errorf("%w %s (%d events): an earlier run wrote the same ids; use another seed, new ids for each run, or recreate the index or table", ErrGeneratorInUse, g, n))
	}
	return nil
}

// queryLoads prepares the query workload of cfg, if any, one load per
// endpoint, and returns the target the ingest writes through: tapped,
// so that the queries draw their parameters from what it writes.
func queryLoads(ctx context.Context, tgt target.Target, eps []ReadEndpoint, cfg Config, obs stats.Observer) (target.Target, []*query.Load, error) {
	if cfg.Queries == nil {
		return tgt, nil, nil
	}
	q, ok := tgt.(target.Querier)
	if !ok {
		return nil, nil, fmt.Errorf("target %s does not run the query workload", tgt.Name())
	}
	loads, err := newLoads(*cfg.Queries, q, eps[1:], obs)
	if err != nil {
		return nil, nil, err
	}
	writer := tgt
	for _, l := range loads {
		writer = l.Tap(writer)
	}
	for _, l := range loads {
		if err := l.Prepare(ctx); err != nil {
			return nil, nil, err
		}
	}
	return writer, loads, nil
}

// newLoads prepares the workload c on the target q and on each read
// endpoint, in that order.
func newLoads(c query.Config, q target.Querier, reads []ReadEndpoint, obs stats.Observer) ([]*query.Load, error) {
	l, err := query.New(c, results.TargetEndpoint, q, obs)
	if err != nil {
		return nil, err
	}
	loads := []*query.Load{l}
	for _, e := range reads {
		q, ok := e.Reader.(target.Querier)
		if !ok {
			return nil, fmt.Errorf("read endpoint %s (%s) does not run the query workload", e.Name, redact.URL(e.URL))
		}
		if l, err = query.New(c, e.Name, q, obs); err != nil {
			return nil, err
		}
		loads = append(loads, l)
	}
	return loads, nil
}

// RunQueries measures the query workload alone against what q, and each
// of reads, holds already: for duration, of which the leading warmup is
// not recorded. Every endpoint gets the whole workload, each on its own.
// Like Run, it returns the results measured so far when ctx is
// cancelled.
func RunQueries(ctx context.Context, q target.Querier, reads []ReadEndpoint, cfg query.Config, warmup, duration time.Duration, obs stats.Observer) (*results.Result, error) {
	if err := checkWarmup(warmup, duration); err != nil {
		return nil, err
	}
	if err := validEndpoints(reads); err != nil {
		return nil, err
	}
	if obs == nil {
		obs = stats.NopObserver{}
	}
	loads, err := newLoads(cfg, q, reads, obs)
	if err != nil {
		return nil, err
	}
	for _, l := range loads {
		if err := l.Prepare(ctx); err != nil {
			return nil, err
		}
	}
	if warmup > 0 {
		obs.Phase(results.PhaseWarmup)
	}
	measured := time.AfterFunc(warmup, func() { obs.Phase(results.PhaseMeasured) })
	defer measured.Stop()
	start := time.Now()
	series := stats.NewSeries(start, 0)
	tl := timeline.New(start, warmup, duration)
	res := &results.Result{
		SchemaVersion: results.SchemaVersion, Kind: results.KindQuery, StartedAt: start.UTC(),
		Config: results.Config{DurationS: duration.Seconds(), WarmupS: warmup.Seconds()},
	}
	var eps []*endpointRun
	var wg sync.WaitGroup
	for i, e := range append([]ReadEndpoint{{Name: results.TargetEndpoint}}, reads...) {
		ep := newEndpointRun(e, i == 0, series)
		ep.load = loads[i]
		eps = append(eps, ep)
		wg.Add(1)
		go func() { defer wg.Done(); ep.runQueries(ctx, tl) }()
	}
	wg.Wait()
	for _, ep := range eps {
		res.Endpoints = append(res.Endpoints, ep.result(results.Visibility{}))
	}
	res.EndedAt = time.Now().UTC()
	res.Series = series.Points()
	if ctx.Err() != nil {
		res.EndedEarly, res.EndReason = true, ErrInterrupted.Error()
	}
	return res, nil
}

func checkWarmup(warmup, duration time.Duration) error {
	if duration <= 0 {
		return invalid.New(invalid.Duration, duration, "a positive duration, e.g. 60s")
	}
	if warmup < 0 || warmup >= duration {
		return invalid.New(invalid.Warmup, warmup, fmt.Sprintf("0 or more and less than the duration %s", duration))
	}
	return nil
}

// watch waits for the ingest to finish, reporting progress each second
// and ending the schedule when cfg.Until says. It also tells the
// observer when the warm-up ends. eps[0] is the target's.
func watch(tl *timeline.Timeline, cfg Config, eps []*endpointRun, obs stats.Observer, acctCh <-chan *ingest.Accounting, endSchedule func()) *ingest.Accounting {
	series, fresh := eps[0].series, eps[0].fresh
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	// The observer's phase changes at the exact instants, not at the next
	// progress tick, so that no sample is labelled with the wrong phase.
	phases := tl.Changes()
	next := 0
	change := time.NewTimer(0)
	defer change.Stop()
	for {
		select {
		case a := <-acctCh:
			return a
		case <-change.C:
			due := ""
			for next < len(phases) && !time.Now().Before(phases[next].At) {
				due = phases[next].Name
				next++
			}
			if due != "" {
				obs.Phase(cfg.Phase + due)
			}
			if next < len(phases) {
				change.Reset(time.Until(phases[next].At))
			}
		case now := <-tick.C:
			if !cfg.Ingest.Shape.IsConstant() {
				obs.TargetRate(targetRate(cfg.Ingest, now.Sub(tl.Start())))
			}
			if cfg.Progress != nil {
				cfg.Progress(progressAt(time.Now(), tl, series, fresh))
			}
			if cfg.Until != nil && !time.Now().Before(tl.MeasuredFrom()) && cfg.Until(series.Points(), readSeries(eps[1:])) {
				endSchedule()
			}
		}
	}
}

func readSeries(eps []*endpointRun) []ReadSeries {
	var out []ReadSeries
	for _, e := range eps {
		out = append(out, ReadSeries{Name: e.Name, Series: e.series.Points()})
	}
	return out
}

// targetRate is the events per second the schedule asks for at t after
// the start.
func targetRate(c ingest.Config, t time.Duration) float64 {
	return c.Rate.EventsPerSecond(c.DocSize) * c.Shape.Factor(max(t, 0))
}

func progressAt(now time.Time, tl *timeline.Timeline, series *stats.Series, fresh *probe.Freshness) Progress {
	p := Progress{Elapsed: now.Sub(tl.Start()), Remaining: tl.End().Sub(now), FreshnessLag: fresh.LastLag()}
	p.Phase = results.PhaseMeasured
	if now.Before(tl.MeasuredFrom()) {
		p.Phase = results.PhaseWarmup
	}
	pts := series.Points()
	for i, pt := range pts {
		p.Errors += pt.FailedEvents
		p.Late += pt.LateBatches
		// The last full interval is the one before the current.
		if i == len(pts)-2 {
			p.AckedPerSec = float64(pt.AckedEvents) / pt.WidthS
			p.TargetPerSec = float64(pt.TargetEvents) / pt.WidthS
		}
	}
	return p
}
