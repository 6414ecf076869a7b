package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/report"
	"github.com/freshbench/freshbench/results"
)

// levelsFlags measure a command at several throughput levels in turn,
// each by trials (bench.RunLevels, bench.QueryLevels).
type levelsFlags struct {
	list           string
	trials, warmup int
}

// addLevelsFlags adds --levels, whose help says what a level is, and the
// trial counts.
func addLevelsFlags(fs *flag.FlagSet, levelsHelp string) *levelsFlags {
	f := &levelsFlags{}
	fs.StringVar(&f.list, "levels", "", levelsHelp)
	fs.IntVar(&f.trials, "trials", 5, "with --levels: measured trials per level, each lasting --duration after its own --warmup")
	fs.IntVar(&f.warmup, "warmup-trials", 1, "with --levels: trials run first at each level, measured but left out of its figures")
	return f
}

// given tells whether --levels was given; the trial counts without it
// are refused.
func (f *levelsFlags) given(fs *flag.FlagSet) (bool, error) {
	if given(fs, "levels") {
		return true, nil
	}
	for _, n := range []string{"trials", "warmup-trials"} {
		if given(fs, n) {
			return false, usagef("--%s applies to --levels: add --levels, e.g. --levels 1000,2000,4000", n)
		}
	}
	return false, nil
}

func (f *levelsFlags) levelTrials() bench.LevelTrials {
	return bench.LevelTrials{Trials: f.trials, Warmup: f.warmup}
}

// ingest reads --levels as target rates of run, whose every trial is run.
func (f *levelsFlags) ingest(fs *flag.FlagSet, run bench.Config) (bench.LevelsConfig, error) {
	if given(fs, "rate") {
		return bench.LevelsConfig{}, usagef("--levels and --rate: give one (--levels runs trials at each of its rates in turn)")
	}
	lc := bench.LevelsConfig{Run: run, LevelTrials: f.levelTrials()}
	for _, s := range strings.Split(f.list, ",") {
		r, err := pace.ParseRate(s)
		if err != nil {
			return bench.LevelsConfig{}, usagef("--levels: %v", err)
		}
		lc.Rates = append(lc.Rates, r)
	}
	if err := lc.Validate(); err != nil {
		return bench.LevelsConfig{}, usageError{err}
	}
	return lc, nil
}

// queries reads --levels as open-loop QPS of the query workload.
func (f *levelsFlags) queries(fs *flag.FlagSet) (*bench.QueryLevels, error) {
	for _, n := range []string{"qps", "concurrency"} {
		if given(fs, n) {
			return nil, usagef("--levels and --%s: give one (--levels runs trials at each of its QPS in turn)", n)
		}
	}
	if given(fs, "sweep") {
		return nil, usagef("--levels and --sweep: give one (a sweep steps the QPS itself)")
	}
	ql := &bench.QueryLevels{LevelTrials: f.levelTrials()}
	for _, s := range strings.Split(f.list, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || v <= 0 {
			return nil, usagef("--levels: %q: want a positive number of queries per second, e.g. --levels 50,100,200", s)
		}
		ql.QPS = append(ql.QPS, v)
	}
	if err := ql.Validate(); err != nil {
		return nil, usageError{err}
	}
	return ql, nil
}

// runLevels measures the levels of lc, keeping the results file up to
// date as each trial ends.
func runLevels(ctx context.Context, sess *session, lc bench.LevelsConfig, teardown bool, stdout, stderr io.Writer) error {
	rates := make([]string, len(lc.Rates))
	for i, r := range lc.Rates {
		rates[i] = r.String()
	}
	fmt.Fprintf(stderr, "levels: %s; at each, %d warm-up trial(s) then %d trial(s) of %s (warm-up %s)\n",
		strings.Join(rates, ", "), lc.Warmup, lc.Trials, lc.Run.Ingest.Duration, lc.Run.Ingest.Warmup)
	lc.OnTrial = func(r *results.Result) {
		report.TrialLine(stdout, r)
		sess.keep(r, stderr, "run")
	}
	res, err := bench.RunLevels(ctx, sess.tgt, lc)
	if res == nil {
		sess.close(ctx, false)
		return err
	}
	if werr := sess.write(res); werr != nil {
		sess.close(ctx, false)
		return werr
	}
	fmt.Fprintln(stdout)
	report.Console(stdout, res)
	fmt.Fprintf(stdout, "results: %s\n", sess.out)
	if err != nil {
		sess.close(ctx, false)
		return fmt.Errorf("%w (the trials measured before are kept)", err)
	}
	return sess.close(ctx, teardown)
}
