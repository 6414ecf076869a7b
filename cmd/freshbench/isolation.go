package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/isolation"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/report"
)

// isolationFlags time the isolation experiment.
type isolationFlags struct {
	baseline, burst, recovery, resolution time.Duration
	factor, band                          float64
}

func addIsolationFlags(fs *flag.FlagSet) *isolationFlags {
	f := &isolationFlags{}
	d := isolation.Default
	fs.DurationVar(&f.baseline, "baseline", d.Baseline, "after the warm-up, how long both loads run steady before the first burst")
	fs.DurationVar(&f.burst, "burst", d.Burst, "how long each burst lasts: the ingest's, then the queries'")
	fs.DurationVar(&f.recovery, "recovery", d.Recovery, "after each burst, how long both loads run steady again")
	fs.Float64Var(&f.factor, "burst-factor", d.Factor, "each burst multiplies its load (--rate, --qps) by this")
	fs.Float64Var(&f.band, "band", d.Band, "recovered: query p95 and freshness lag p95 back within this factor of the baseline's")
	fs.DurationVar(&f.resolution, "resolution", d.Resolution, "width of the buckets recovery is judged in (a recovery time is known to within it)")
	return f
}

func (f *isolationFlags) config(warmup time.Duration) isolation.Config {
	return isolation.Config{Warmup: warmup, Baseline: f.baseline, Burst: f.burst, Recovery: f.recovery, Factor: f.factor, Band: f.band, Resolution: f.resolution}
}

func isolationCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("isolation")
	tf := addTargetFlags(fs)
	addReadFlags(fs, tf)
	lf := addStreamFlags(fs)
	fs.StringVar(&lf.rate, "rate", "1000", "steady write rate over all generators: events/s (5000) or bytes/s (10MB/s); the ingest burst multiplies it")
	qf := addQueryFlags(fs)
	// The experiment needs an open-loop query load: 100 QPS unless told.
	qf.qps, fs.Lookup("qps").DefValue = 100, "100"
	xf := addIsolationFlags(fs)
	out := fs.String("out", "", "results file, - for standard output (default freshbench-results/isolation-<time>.json)")
	quiet := fs.Bool("quiet", false, "no live progress")
	metricsFlags := addMetricsFlags(fs)
	wf := addWorkloadFlags(fs)
	wl, err := wf.parse(fs, "isolation", args, stderr)
	if err != nil {
		return err
	}
	defer func() { err = wf.locate(err) }()
	cfg, ic, err := isolationConfig(fs, lf, qf, xf, tf)
	if err != nil {
		return err
	}
	reads, qcfg := cfg.ReadEndpoints, *cfg.Queries
	o, stdout, err := resultsOut(*out, "isolation", stdout, stderr)
	if err != nil {
		return err
	}
	tf.events = &cfg.Ingest
	tgt, raw, err := tf.open(ctx)
	if err != nil {
		return err
	}
	if _, err := prepareQueries(ctx, tgt, raw, tf, bench.QueryRun{Queries: qcfg, ReadEndpoints: reads}, false, stdout); err != nil {
		return err
	}
	sess, err := newSession(ctx, "isolation", tgt, raw, reads, metricsFlags, nil, o, stderr)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := sess.close(ctx, false); err == nil {
			err = cerr
		}
	}()
	sess.desc.Workload = wl
	cfg.Observer = sess.obs
	if !*quiet {
		cfg.Progress = progressPrinter(stderr)
		fmt.Fprintf(stderr, "isolation on %s%s: %s, then the ingest ×%g for %s, %s, the queries ×%g for %s, %s (warm-up %s)\n",
			redact.URL(raw), readsText(reads), ic.Baseline, ic.Factor, ic.Burst, ic.Recovery, ic.Factor, ic.Burst, ic.Recovery, ic.Warmup)
	}
	res, err := isolation.Run(ctx, sess.tgt, cfg, ic)
	if res == nil {
		return err
	}
	if werr := sess.write(res); werr != nil {
		return werr
	}
	printQueries(stdout, res, true)
	report.ConsoleIsolation(stdout, res)
	fmt.Fprintf(stdout, "results: %s\n", o)
	return err
}

// isolationConfig checks the flags and returns the run the experiment
// shapes: the steady loads with the bursts laid on them.
func isolationConfig(fs *flag.FlagSet, lf *loadFlags, qf *queryFlags, xf *isolationFlags, tf *targetFlags) (bench.Config, isolation.Config, error) {
	for _, name := range []string{"concurrency", "query-shape", "sweep", "sweep-start", "sweep-step", "sweep-max", "slo", "explain"} {
		if given(fs, name) {
			return bench.Config{}, isolation.Config{}, usagef("--%s: the isolation experiment runs its queries open loop at --qps and shapes both loads itself; leave --%s out", name, name)
		}
	}
	ic := xf.config(lf.warmup)
	if err := ic.Validate(); err != nil {
		return bench.Config{}, isolation.Config{}, usageError{err}
	}
	lf.duration = ic.Duration()
	reads, err := tf.readEndpoints()
	if err != nil {
		return bench.Config{}, isolation.Config{}, err
	}
	cfg, err := lf.config(tf.writeTimeout)
	if e, ok := invalid.As(err); ok && e.Field == invalid.Duration {
		// The experiment's length is its windows', not a flag of its own.
		return bench.Config{}, isolation.Config{}, usagef("the experiment's %s (--warmup + --baseline + 2 × (--burst + --recovery)): want %s", ic.Duration(), e.Want)
	}
	if err != nil {
		return bench.Config{}, isolation.Config{}, err
	}
	qcfg, err := qf.config(fs, lf.seed, nil)
	if err != nil {
		return bench.Config{}, isolation.Config{}, err
	}
	cfg.Queries, cfg.ReadEndpoints = &qcfg, reads
	if cfg, err = isolation.Configure(cfg, ic); err != nil {
		return bench.Config{}, isolation.Config{}, usageError{err}
	}
	return cfg, ic, nil
}
