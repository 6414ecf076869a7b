package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/report"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// queryFlags describe the query workload.
type queryFlags struct {
	qps, missShare                  float64
	concurrency, inflight, limit    int
	mix, slo, shape                 string
	timeout, settle                 time.Duration
	sweep, explain                  bool
	sweepStart, sweepStep, sweepMax float64
	own                             []query.Own // from the workload file
}

func addQueryFlags(fs *flag.FlagSet) *queryFlags {
	f := &queryFlags{}
	fs.Float64Var(&f.qps, "qps", 0, "open loop: queries per second over all kinds, each due at its intended time whatever the target does")
	fs.StringVar(&f.shape, "query-shape", "", "open loop: shape of the QPS over time, as factors of --qps: const F [for D]; ramp F..G for D; sine F±A every P [for D]; steps F,G,… every D (pieces back to back, separated by \";\"), or burst K at S for L; … (bursts over the rate), e.g. \"burst 5x at 60s for 30s\" (default: constant)")
	fs.IntVar(&f.concurrency, "concurrency", 0, "closed loop: this many workers, each sending its next query when the previous is answered")
	fs.IntVar(&f.inflight, "query-max-inflight", 256, "open loop: bound on queries in flight; a query that waits for a slot is late")
	fs.StringVar(&f.mix, "mix", query.DefaultMix().String(), "query kinds and their weights: point (processBy = v), array (emails contains v), aggregate (documents per tag for company = v), newest (newest of generator v), bucket (events per second of generator v, newest second first; not in the default, which stays as earlier runs measured it)")
	fs.Float64Var(&f.missShare, "miss-share", 0, "fraction of queries whose parameter was never written (a query of your own: its string parameters)")
	fs.IntVar(&f.limit, "limit", 10, "rows a query returns at most (documents, or groups of an aggregation: tags, seconds); a query of your own takes it as :limit (\"{{limit}}\" in a search body)")
	fs.DurationVar(&f.timeout, "query-timeout", 10*time.Second, "timeout of one query")
	fs.DurationVar(&f.settle, "settle", 2*time.Second, "with --rate, a written event becomes a query parameter this long after it was acknowledged, so that lookups do not miss only because it is not visible yet")
	fs.BoolVar(&f.sweep, "sweep", false, "step the open-loop QPS from --sweep-start by --sweep-step up to --sweep-max, each step lasting --duration, and report the highest QPS that meets --slo")
	fs.Float64Var(&f.sweepStart, "sweep-start", 100, "QPS of the first sweep step")
	fs.Float64Var(&f.sweepStep, "sweep-step", 0, "QPS added per sweep step (default: --sweep-start)")
	fs.Float64Var(&f.sweepMax, "sweep-max", 0, "highest QPS a sweep tries")
	fs.StringVar(&f.slo, "slo", "p95<200ms", "latency bound of a sweep step: a percentile of latency from intended time, all kinds together")
	fs.BoolVar(&f.explain, "explain", false, "print each kind's query as it would be sent to the target, and exit")
	return f
}

// config checks the query flags and builds the workload; levels, when
// given, set its QPS. The workload's values are bench.QueryRun.Validate's
// to check, with the rest of the run.
func (f *queryFlags) config(fs *flag.FlagSet, seed uint64, levels *bench.QueryLevels) (query.Config, error) {
	names := make([]string, len(f.own))
	for i, o := range f.own {
		names[i] = o.Name
	}
	mix, err := query.ParseMix(f.mix, names...)
	if err != nil {
		return query.Config{}, usagef("--mix: %v", err)
	}
	shape, err := pace.ParseShape(f.shape)
	if err != nil {
		return query.Config{}, usagef("--query-shape: %v", err)
	}
	c := query.Config{
		Own: f.own, Shape: shape,
		Mix: mix, QPS: f.qps, Concurrency: f.concurrency, MaxInflight: f.inflight, MissShare: f.missShare,
		Limit: f.limit, Timeout: f.timeout, Settle: f.settle, SampleSize: 1000, Seed: seed,
	}
	if f.explain {
		if f.limit <= 0 {
			return query.Config{}, usagef("--limit %d: want 1 or more rows", f.limit)
		}
		return c, nil
	}
	if f.sweep {
		if given(fs, "qps") || given(fs, "concurrency") {
			return query.Config{}, usagef("--sweep sets the QPS of each step: give --sweep-start, --sweep-step and --sweep-max instead of --qps or --concurrency")
		}
		c.QPS = f.sweepStart
	} else {
		for _, name := range []string{"sweep-start", "sweep-step", "sweep-max", "slo"} {
			if given(fs, name) {
				return query.Config{}, usagef("--%s applies to a sweep: add --sweep", name)
			}
		}
		if levels != nil {
			c.QPS = levels.QPS[0]
		}
	}
	return c, nil
}

// sweepConfig builds the sweep, which bench.QueryRun.Validate checks.
func (f *queryFlags) sweepConfig() (query.SweepConfig, error) {
	slo, err := stats.ParseSLO(f.slo)
	if err != nil {
		return query.SweepConfig{}, usagef("--slo: %v", err)
	}
	sc := query.SweepConfig{
		Start: f.sweepStart, Step: f.sweepStep, Max: f.sweepMax, SLO: slo,
		MaxErrorShare: query.DefaultMaxErrorShare, MinAchievedShare: query.DefaultMinAchievedShare,
	}
	if sc.Step == 0 {
		sc.Step = sc.Start
	}
	return sc, nil
}

// given reports whether the flag was set on the command line.
func given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

func queryCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("query")
	tf := addTargetFlags(fs)
	addReadFlags(fs, tf)
	addViaFlag(fs, tf)
	lf := addLoadFlags(fs)
	qf := addQueryFlags(fs)
	ef := addExperimentFlags(fs)
	lv := addLevelsFlags(fs, "open-loop QPS measured in turn instead of one --qps, each by --trials trials after --warmup-trials warm-up trials, e.g. 50,100,200")
	out := fs.String("out", "", "results file, - for standard output (default freshbench-results/query-<time>.json); a sweep or --levels rewrites it as each step or trial ends")
	quiet := fs.Bool("quiet", false, "no live progress")
	metricsFlags := addMetricsFlags(fs)
	calibration := addCalibrationFlag(fs)
	frontier := fs.String("frontier", "", "ingest rates at each of which --sweep runs beside an ingest, e.g. 1000,2000,4000 (events/s) or 5MB/s,10MB/s: the highest QPS under --slo at each, with the freshness there (instead of --rate)")
	wf := addWorkloadFlags(fs)
	wl, err := wf.parse(fs, "query", args, stderr)
	if err != nil {
		return err
	}
	defer func() { err = wf.locate(err) }()
	qf.own = wf.queries
	qr, err := queryRun(fs, tf, lf, qf, ef, lv, *frontier, *quiet, stderr)
	if err != nil {
		return err
	}
	// Only an ingest has a share of the driver ceiling to record.
	var ceilings bench.Ceilings
	if qr.Ingest != nil && !qf.explain {
		if ceilings, err = loadCeilings(*calibration, stderr); err != nil {
			return err
		}
	}
	var o output
	if !qf.explain {
		if err := qr.Validate(); err != nil {
			return err
		}
		if o, stdout, err = resultsOut(*out, ef.fileName("query"), stdout, stderr); err != nil {
			return err
		}
	}
	tf.check = func(t target.Target) error { return query.CheckOwnTexts(t.Name(), qr.Queries) }
	if qr.Ingest != nil {
		tf.events = &qr.Ingest.Ingest
	}
	tgt, raw, err := tf.open(ctx)
	if err != nil {
		return err
	}
	if done, err := prepareQueries(ctx, tgt, raw, tf, qr, qf.explain, stdout); done || err != nil {
		return err
	}
	sess, err := newSession(ctx, "query", tgt, raw, qr.ReadEndpoints, metricsFlags, qr.Experiment(), o, stderr)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := sess.close(ctx, false); err == nil {
			err = cerr
		}
	}()
	sess.desc.Ceilings = ceilings
	sess.desc.Workload = wl
	watchQueries(&qr, sess, *quiet, stdout, stderr)
	res, err := bench.MeasureQueries(ctx, sess.tgt, qr)
	switch {
	case res == nil && errors.Is(err, query.ErrNoParameters):
		return fmt.Errorf("%w in %s: write events first (freshbench run), or give --rate to stream them in beside the queries", err, redact.URL(raw))
	case res == nil:
		return err
	case err != nil:
		fmt.Fprintf(stderr, "freshbench query: %v (what was measured before is kept)\n", err)
	}
	if err := sess.write(res); err != nil {
		return err
	}
	printQueries(stdout, res, qr.Ingest != nil)
	fmt.Fprintf(stdout, "results: %s\n", o)
	return nil
}

// queryRun reads the flags into the measurement they ask for: the query
// workload, alone or beside an ingest (--rate, --frontier), swept, at
// levels, or on read endpoints. bench.QueryRun.Validate checks it.
func queryRun(fs *flag.FlagSet, tf *targetFlags, lf *loadFlags, qf *queryFlags, ef *experimentFlags, lv *levelsFlags, frontier string, quiet bool, stderr io.Writer) (bench.QueryRun, error) {
	reads, err := tf.readEndpoints()
	if err != nil {
		return bench.QueryRun{}, err
	}
	levels, err := lv.given(fs)
	if err != nil {
		return bench.QueryRun{}, err
	}
	var ql *bench.QueryLevels
	if levels {
		if ql, err = lv.queries(fs); err != nil {
			return bench.QueryRun{}, err
		}
	}
	var frontierList []pace.Rate
	if frontier != "" {
		if frontierList, err = frontierRates(fs, frontier); err != nil {
			return bench.QueryRun{}, err
		}
		// The ingest's configuration is the first rate's; each point
		// sets its own.
		lf.rate, _, _ = strings.Cut(frontier, ",")
	}
	qcfg, err := qf.config(fs, lf.seed, ql)
	if err != nil {
		return bench.QueryRun{}, err
	}
	qr := bench.QueryRun{Queries: qcfg, Warmup: lf.warmup, Duration: lf.duration, Levels: ql, ReadEndpoints: reads, Frontier: frontierList}
	// Events stream in beside the queries when --rate is given; otherwise
	// the queries run alone against what the target holds.
	if given(fs, "rate") || given(fs, "total-rate") || frontier != "" {
		runCfg, err := lf.config(tf.writeTimeout)
		if err != nil {
			return bench.QueryRun{}, err
		}
		if err := ef.apply(fs, &runCfg); err != nil {
			return bench.QueryRun{}, err
		}
		if !quiet {
			runCfg.Progress = progressPrinter(stderr)
		}
		qr.Ingest = &runCfg
	}
	if err := tf.checkVia(lf.updateShare); err != nil {
		return bench.QueryRun{}, err
	}
	if tf.via != "" && qr.Ingest == nil {
		return bench.QueryRun{}, usagef("--via: only an ingest's events pass through Kafka; give --rate too, or leave --via out")
	}
	if ef.name != "" && (qr.Ingest == nil || qf.sweep || levels) {
		return bench.QueryRun{}, usagef("--experiment: an experiment's instances run an ingest (--rate or --total-rate) and one query measurement (no --sweep or --levels)")
	}
	if qf.sweep {
		sc, err := qf.sweepConfig()
		if err != nil {
			return bench.QueryRun{}, err
		}
		qr.Sweep = &sc
	}
	return qr, nil
}

// prepareQueries makes the opened target ready for the query workload:
// with explain, it prints the queries and is done; otherwise it sets the
// queries up and opens the read endpoints. When it is done or fails, it
// has closed the target.
func prepareQueries(ctx context.Context, tgt target.Target, raw string, tf *targetFlags, qr bench.QueryRun, explainOnly bool, stdout io.Writer) (done bool, err error) {
	defer func() {
		if done || err != nil {
			tgt.Close()
		}
	}()
	q, ok := tgt.(target.Querier)
	if !ok {
		return false, usagef("--target: %s does not run the query workload", tgt.Name())
	}
	if err := query.CheckOwn(ctx, q, qr.Queries); err != nil {
		return false, err
	}
	if explainOnly {
		return true, explain(ctx, stdout, q, qr.Queries)
	}
	if err := q.SetupQueries(ctx); err != nil {
		if errors.Is(err, target.ErrBadSetting) {
			return false, usagef("--set: set up the queries on %s: %v", redact.URL(raw), err)
		}
		return false, fmt.Errorf("set up the queries on %s: %w", redact.URL(raw), err)
	}
	return false, tf.openReads(ctx, qr.ReadEndpoints)
}

// watchQueries sends qr's live figures to the session's metrics and, unless
// quiet, says what runs; each step or trial is written as it ends.
func watchQueries(qr *bench.QueryRun, sess *session, quiet bool, stdout, stderr io.Writer) {
	qr.Observer = sess.obs
	if qr.Ingest != nil {
		qr.Ingest.Observer = sess.obs
	}
	if !quiet {
		qr.Starting = func(c query.Config, ingest *bench.Config) {
			fmt.Fprintf(stderr, "query load on %s%s: %s for %s (warm-up %s)%s\n", redact.URL(sess.raw), readsText(qr.ReadEndpoints), loop(c), qr.Duration, qr.Warmup, besideText(ingest))
		}
	}
	qr.OnStep = func(r *results.Result) {
		switch r.Kind {
		case results.KindLevels:
			report.TrialLine(stdout, r)
		case results.KindFrontier:
			report.FrontierStepLine(stdout, r.Frontier)
		default:
			i := len(r.QuerySweep.Steps) - 1
			report.QueryStepLine(stdout, i, r.QuerySweep.Steps[i])
		}
		sess.keep(r, stderr, "query")
	}
}

// printQueries prints the result on the console: the ingest's figures
// when there was one, then the queries'.
func printQueries(stdout io.Writer, res *results.Result, ingest bool) {
	switch {
	case res.Kind == results.KindLevels:
		fmt.Fprintln(stdout)
		report.Console(stdout, res)
	case ingest:
		report.Console(stdout, res)
		fmt.Fprintln(stdout)
	}
	report.ConsoleQueries(stdout, res)
}

// frontierRates reads --frontier: the ingest rates, which take the place
// of --rate, each swept with --sweep. What else a frontier needs (a
// sweep, no levels) is bench.QueryRun.Validate's to check.
func frontierRates(fs *flag.FlagSet, list string) ([]pace.Rate, error) {
	for _, n := range []string{"rate", "total-rate"} {
		if given(fs, n) {
			return nil, usagef("--frontier and --%s: give one (--frontier's rates are the ingest's, each swept in turn)", n)
		}
	}
	var rates []pace.Rate
	for _, s := range strings.Split(list, ",") {
		r, err := pace.ParseRate(s)
		if err != nil {
			return nil, usagef("--frontier: %v", err)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

func loop(c query.Config) string {
	if c.QPS > 0 {
		return fmt.Sprintf("open loop at %g QPS", c.QPS)
	}
	return fmt.Sprintf("closed loop with %d worker(s)", c.Concurrency)
}

func readsText(eps []bench.ReadEndpoint) string {
	if len(eps) == 0 {
		return ""
	}
	return fmt.Sprintf(" and, the same, on each of %d read endpoint(s)", len(eps))
}

func besideText(c *bench.Config) string {
	if c == nil {
		return ", alone"
	}
	return ", beside an ingest at " + c.Ingest.Rate.String()
}

// explain prints each kind's query as the target would receive it.
func explain(ctx context.Context, w io.Writer, q target.Querier, c query.Config) error {
	texts, err := query.Explain(ctx, q, c)
	if err != nil {
		return err
	}
	for _, m := range c.Mix {
		fmt.Fprintf(w, "-- %s (weight %d)\n%s\n\n", m.Kind, m.Weight, texts[m.Kind])
	}
	return nil
}
