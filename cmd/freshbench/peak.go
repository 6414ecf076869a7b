package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/report"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// peakFlags are the peak command's flags.
type peakFlags struct {
	target              *targetFlags
	load                *loadFlags
	step, maxRate, slo  string
	hold, maxHold       time.Duration
	precision, maxTrend float64
	maxSteps            int
	confirm             bool
	out                 string
	teardown, quiet     bool
	metrics             *metricsFlags
	calibration         *string
	workload            *workloadFlags
}

func addPeakFlags(fs *flag.FlagSet) *peakFlags {
	f := &peakFlags{target: addTargetFlags(fs)}
	addReadFlags(fs, f.target)
	addViaFlag(fs, f.target)
	f.load = addStreamFlags(fs)
	fs.StringVar(&f.load.rate, "start", "1000", "rate of the first step over all generators: events/s (2000) or bytes/s (10MB/s; MB = 10^6 bytes)")
	fs.StringVar(&f.step, "step", "", "rate increase from one step to the next: an increment in the unit of --start (1000, 10MB/s) or a factor (x1.5); default: the --start rate")
	fs.DurationVar(&f.hold, "hold", 60*time.Second, "the least each step holds its rate after its --warmup")
	fs.DurationVar(&f.maxHold, "max-hold", 30*time.Minute, "the most each step holds its rate, looking after each refresh period past --hold until its verdict is known; equal to --hold (or 0) judges each step once, after --hold")
	fs.Float64Var(&f.precision, "precision", 0.05, "after the first step not sustainable, bisect until the peak's interval is within this share of its upper end; 0 = no refinement")
	fs.IntVar(&f.maxSteps, "max-steps", 20, "most rates tried; 0 = no limit (then give --max-rate)")
	fs.StringVar(&f.maxRate, "max-rate", "", "highest rate tried, in the unit of --start (default: no limit)")
	fs.StringVar(&f.slo, "slo", "", "freshness bound every sustainable step must also meet, e.g. p95<2s")
	fs.BoolVar(&f.confirm, "confirm", false, "run an unsustainable step once more before stopping; if it holds then, the search goes on")
	fs.Float64Var(&f.maxTrend, "max-trend", 1000*stats.DefaultRule().MaxGrowth, "steepest upward trend of the write latency and the freshness lag a sustainable step may show, in ms per second (an overload of 0.5 % shows as 5 ms/s); 0 judges no trend, for steps too short to judge one")
	fs.StringVar(&f.out, "out", "", "results file with every step, rewritten as each step ends, - for standard output at the end (default freshbench-results/peak-<time>.json)")
	fs.BoolVar(&f.teardown, "teardown", false, "drop the index or table after the search")
	fs.BoolVar(&f.quiet, "quiet", false, "no live progress")
	f.metrics = addMetricsFlags(fs)
	f.calibration = addCalibrationFlag(fs)
	f.workload = addWorkloadFlags(fs)
	return f
}

func peakCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("peak")
	f := addPeakFlags(fs)
	wl, err := f.workload.parse(fs, "peak", args, stderr)
	if err != nil {
		return err
	}
	defer func() { err = f.workload.locate(err) }()
	reads, err := f.target.readEndpoints()
	if err != nil {
		return err
	}
	if err := f.target.checkVia(f.load.updateShare); err != nil {
		return err
	}
	ceilings, err := loadCeilings(*f.calibration, stderr)
	if err != nil {
		return err
	}
	pc, err := peakConfig(f)
	if err != nil {
		return err
	}
	o, stdout, err := resultsOut(f.out, "peak", stdout, stderr)
	if err != nil {
		return err
	}
	pc.Run.ReadEndpoints = reads
	f.target.events = &pc.Run.Ingest
	sess, err := openSession(ctx, "peak", f.target, reads, f.metrics, nil, o, stderr)
	if err != nil {
		return err
	}
	teardown := false
	defer func() {
		if cerr := sess.close(ctx, teardown); err == nil {
			err = cerr
		}
	}()
	sess.desc.Ceilings = ceilings
	pc.DriverCeiling = ceilings.EventsPerSec(sess.desc.Environment, pc.Run.Ingest.BatchSize)
	sess.desc.Workload = wl
	pc.Run.Observer = sess.obs
	if !f.quiet {
		pc.Run.Progress = progressPrinter(stderr)
	}
	announcePeak(stderr, pc, f.hold)
	pc.OnStep = func(r *results.Result) {
		report.StepLine(stdout, len(r.Steps)-1, r.Steps[len(r.Steps)-1])
		sess.keep(r, stderr, "peak")
	}
	res, err := bench.SearchPeak(ctx, sess.tgt, pc)
	if err != nil {
		return err
	}
	if err := sess.write(res); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	report.Console(stdout, res)
	fmt.Fprintf(stdout, "results: %s\n", o)
	teardown = f.teardown
	return nil
}

// announcePeak says how the search will step and when it stops.
func announcePeak(stderr io.Writer, pc bench.PeakConfig, hold time.Duration) {
	holds := hold.String()
	if pc.MaxHold > 0 {
		holds = fmt.Sprintf("%s to %s, until decided,", hold, pc.MaxHold)
	}
	fmt.Fprintf(stderr, "peak search: from %s, step %s, each step %s after %s warm-up; %s\n",
		pc.Run.Ingest.Rate, pc.Increase, holds, pc.Run.Ingest.Warmup, limits(pc))
}

// peakConfig checks the peak flags and builds the search. Every step is a
// run of --warmup plus --hold at its rate.
func peakConfig(f *peakFlags) (bench.PeakConfig, error) {
	start, err := pace.ParseRate(f.load.rate)
	if err != nil {
		return bench.PeakConfig{}, usagef("--start: %v", err)
	}
	if f.hold <= 0 {
		return bench.PeakConfig{}, usagef("--hold %s: want a positive duration, e.g. 60s", f.hold)
	}
	if f.load.warmup < 0 {
		return bench.PeakConfig{}, usagef("--warmup %s: want 0 or more", f.load.warmup)
	}
	f.load.duration = f.load.warmup + f.hold
	run, err := f.load.config(f.target.writeTimeout)
	if err != nil {
		return bench.PeakConfig{}, err
	}
	pc := bench.PeakConfig{Run: run, Increase: bench.RateStep{Add: start}, MaxSteps: f.maxSteps, Rule: stats.DefaultRule(), Confirm: f.confirm,
		MaxHold: f.maxHold, Precision: f.precision}
	if f.step != "" {
		if pc.Increase, err = bench.ParseRateStep(f.step); err != nil {
			return bench.PeakConfig{}, usagef("--step: %v", err)
		}
	}
	if f.maxRate != "" {
		r, err := pace.ParseRate(f.maxRate)
		if err != nil {
			return bench.PeakConfig{}, usagef("--max-rate: %v", err)
		}
		if r.Unit != start.Unit {
			return bench.PeakConfig{}, usagef("--max-rate %s and --start %s count different things: give both in events/s or both in bytes/s", r, start)
		}
		pc.MaxRate = r.PerSecond
	}
	if f.slo != "" {
		if pc.Rule.SLO, err = stats.ParseSLO(f.slo); err != nil {
			return bench.PeakConfig{}, usagef("--slo: %v", err)
		}
	}
	if f.maxTrend < 0 {
		return bench.PeakConfig{}, usagef("--max-trend %g: want 0 (no trend judged) or more ms/s", f.maxTrend)
	}
	pc.Rule.MaxGrowth = f.maxTrend / 1000
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
