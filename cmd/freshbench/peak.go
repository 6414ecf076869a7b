package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/report"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

func peakCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("peak")
	tf := addTargetFlags(fs)
	addReadFlags(fs, tf)
	addViaFlag(fs, tf)
	lf := addStreamFlags(fs)
	fs.StringVar(&lf.rate, "start", "1000", "rate of the first step over all generators: events/s (2000) or bytes/s (10MB/s; MB = 10^6 bytes)")
	step := fs.String("step", "", "rate increase from one step to the next: an increment in the unit of --start (1000, 10MB/s) or a factor (x1.5); default: the --start rate")
	hold := fs.Duration("hold", 60*time.Second, "how long each step holds its rate after its --warmup")
	maxSteps := fs.Int("max-steps", 20, "most rates tried; 0 = no limit (then give --max-rate)")
	maxRate := fs.String("max-rate", "", "highest rate tried, in the unit of --start (default: no limit)")
	slo := fs.String("slo", "", "freshness bound every sustainable step must also meet, e.g. p95<2s")
	confirm := fs.Bool("confirm", false, "run an unsustainable step once more before stopping; if it holds then, the search goes on")
	maxTrend := fs.Float64("max-trend", 1000*stats.DefaultRule().MaxGrowth, "steepest upward trend of the write latency and the freshness lag a sustainable step may show, in ms per second (an overload of 0.5 % shows as 5 ms/s); 0 judges no trend, for steps too short to judge one")
	out := fs.String("out", "", "results file with every step, rewritten as each step ends, - for standard output at the end (default freshbench-results/peak-<time>.json)")
	teardown := fs.Bool("teardown", false, "drop the index or table after the search")
	quiet := fs.Bool("quiet", false, "no live progress")
	metricsFlags := addMetricsFlags(fs)
	calibration := addCalibrationFlag(fs)
	wf := addWorkloadFlags(fs)
	wl, err := wf.parse(fs, "peak", args, stderr)
	if err != nil {
		return err
	}
	defer func() { err = wf.locate(err) }()
	reads, err := tf.readEndpoints()
	if err != nil {
		return err
	}
	if err := tf.checkVia(lf.updateShare); err != nil {
		return err
	}
	ceilings, err := loadCeilings(*calibration, stderr)
	if err != nil {
		return err
	}
	pc, err := peakConfig(lf, tf, *step, *hold, *maxSteps, *maxRate, *slo, *confirm)
	if err != nil {
		return err
	}
	if *maxTrend < 0 {
		return usagef("--max-trend %g: want 0 (no trend judged) or more ms/s", *maxTrend)
	}
	pc.Rule.MaxGrowth = *maxTrend / 1000
	o, stdout, err := resultsOut(*out, "peak", stdout, stderr)
	if err != nil {
		return err
	}
	pc.Run.ReadEndpoints = reads
	sess, err := openSession(ctx, "peak", tf, reads, metricsFlags, nil, o, stderr)
	if err != nil {
		return err
	}
	sess.desc.Ceilings = ceilings
	sess.desc.Workload = wl
	pc.Run.Observer = sess.obs
	if !*quiet {
		pc.Run.Progress = progressPrinter(stderr)
	}
	fmt.Fprintf(stderr, "peak search: from %s, step %s, each step %s after %s warm-up; %s\n",
		pc.Run.Ingest.Rate, pc.Increase, *hold, pc.Run.Ingest.Warmup, limits(pc))
	pc.OnStep = func(r *results.Result) {
		report.StepLine(stdout, len(r.Steps)-1, r.Steps[len(r.Steps)-1])
		sess.keep(r, stderr, "peak")
	}
	res, err := bench.SearchPeak(ctx, sess.tgt, pc)
	if err != nil {
		sess.close(ctx, false)
		return err
	}
	if err := sess.write(res); err != nil {
		sess.close(ctx, false)
		return err
	}
	fmt.Fprintln(stdout)
	report.Console(stdout, res)
	fmt.Fprintf(stdout, "results: %s\n", o)
	return sess.close(ctx, *teardown)
}

// peakConfig checks the peak flags and builds the search. Every step is a
// run of --warmup plus --hold at its rate.
func peakConfig(lf *loadFlags, tf *targetFlags, step string, hold time.Duration, maxSteps int, maxRate, slo string, confirm bool) (bench.PeakConfig, error) {
	start, err := pace.ParseRate(lf.rate)
	if err != nil {
		return bench.PeakConfig{}, usagef("--start: %v", err)
	}
	if hold <= 0 {
		return bench.PeakConfig{}, usagef("--hold %s: want a positive duration, e.g. 60s", hold)
	}
	if lf.warmup < 0 {
		return bench.PeakConfig{}, usagef("--warmup %s: want 0 or more", lf.warmup)
	}
	lf.duration = lf.warmup + hold
	run, err := lf.config(tf.writeTimeout)
	if err != nil {
		return bench.PeakConfig{}, err
	}
	pc := bench.PeakConfig{Run: run, Increase: bench.RateStep{Add: start}, MaxSteps: maxSteps, Rule: stats.DefaultRule(), Confirm: confirm}
	if step != "" {
		if pc.Increase, err = bench.ParseRateStep(step); err != nil {
			return bench.PeakConfig{}, usagef("--step: %v", err)
		}
	}
	if maxRate != "" {
		r, err := pace.ParseRate(maxRate)
		if err != nil {
			return bench.PeakConfig{}, usagef("--max-rate: %v", err)
		}
		if r.Unit != start.Unit {
			return bench.PeakConfig{}, usagef("--max-rate %s and --start %s count different things: give both in events/s or both in bytes/s", r, start)
		}
		pc.MaxRate = r.PerSecond
	}
	if slo != "" {
		if pc.Rule.SLO, err = stats.ParseSLO(slo); err != nil {
			return bench.PeakConfig{}, usagef("--slo: %v", err)
		}
	}
	if err := pc.Validate(); err != nil {
		return bench.PeakConfig{}, usageError{err}
	}
	return pc, nil
}

// limits says when the search stops besides an unsustainable step.
func limits(pc bench.PeakConfig) string {
	var s string
	if pc.MaxSteps > 0 {
		s = fmt.Sprintf("at most %d steps", pc.MaxSteps)
	}
	if pc.MaxRate > 0 {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("up to %s", pace.Rate{PerSecond: pc.MaxRate, Unit: pc.Run.Ingest.Rate.Unit})
	}
	if pc.Rule.SLO != nil {
		s += "; SLO " + pc.Rule.SLO.Text
	}
	return s
}
