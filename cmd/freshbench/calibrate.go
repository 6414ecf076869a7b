package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/noop"
	"github.com/freshbench/freshbench/outfile"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/report"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
)

// calibrateFlags are the calibrate command's flags.
type calibrateFlags struct {
	url, protocol                string
	settings                     settings
	batches, start, step, refine string
	maxRate                      float64
	hold, warmup, maxDuration    time.Duration
	load                         loadFlags
	writeTimeout                 time.Duration
	out, cpuProfile, calibration string
	quiet                        bool
	metrics                      *metricsFlags
}

func addCalibrateFlags(fs *flag.FlagSet) *calibrateFlags {
	f := &calibrateFlags{settings: settings{}}
	fs.StringVar(&f.url, "target", "", "URL of a running freshbench noop server (default: start one as a child process, so that its CPU is not counted as the driver's)")
	fs.StringVar(&f.protocol, "protocol", "elasticsearch", "without --target, the endpoint of the started noop server to drive: elasticsearch, opensearch or postgres")
	fs.Var(f.settings, "set", "target setting key=value, repeatable, e.g. write_method=copy for postgres")
	fs.StringVar(&f.batches, "batch-sizes", "50,500", "batch sizes to find the ceiling of, comma-separated")
	fs.StringVar(&f.start, "start", "5000", "rate of each search's first step, events/s")
	fs.StringVar(&f.step, "step", "x1.5", "factor by which the rate rises from one step to the next until a step is not sustainable")
	fs.StringVar(&f.refine, "refine", "x1.1", "factor of the finer steps between the last sustainable rate and the first unsustainable one; empty: no refinement")
	fs.Float64Var(&f.maxRate, "max-rate", 2e6, "highest rate tried, events/s")
	fs.DurationVar(&f.hold, "hold", 5*time.Second, "how long each step holds its rate after its --warmup")
	fs.DurationVar(&f.warmup, "warmup", time.Second, "leading part of each step left out of its figures")
	fs.DurationVar(&f.maxDuration, "max-duration", 10*time.Minute, "bound on the whole calibration; each batch size gets an equal share, and a search stops before a step that would not fit")
	addDriverFlags(fs, &f.load)
	addWriteTimeoutFlag(fs, &f.writeTimeout)
	fs.StringVar(&f.out, "out", "", "results file, - for standard output (default freshbench-results/calibrate-<time>.json)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the driver over the searches to this file (go tool pprof reads it)")
	fs.BoolVar(&f.quiet, "quiet", false, "no live progress")
	f.metrics = addMetricsFlags(fs)
	fs.StringVar(&f.calibration, "calibration", "", "file to save the ceilings found in as this machine's calibration, which run, peak and query read (default: calibration.json under $FRESHBENCH_CACHE, or else under the user's cache directory in freshbench/)")
	return f
}

// defaultCalibration fills in the default calibration file.
func (f *calibrateFlags) defaultCalibration() error {
	if f.calibration != "" {
		return nil
	}
	var err error
	if f.calibration, err = bench.DefaultCalibrationPath(); err != nil {
		return usagef("%v; give --calibration FILE", err)
	}
	return nil
}

// checkFiles checks that the files the command will write can be written.
func (f *calibrateFlags) checkFiles() error {
	if err := outfile.Check(f.calibration); err != nil {
		return usagef("--calibration %v", err)
	}
	if f.cpuProfile != "" {
		if err := outfile.Check(f.cpuProfile); err != nil {
			return usagef("--cpuprofile %v", err)
		}
	}
	return nil
}

func calibrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("calibrate")
	f := addCalibrateFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if err := f.defaultCalibration(); err != nil {
		return err
	}
	cfg, err := calibrateConfig(f)
	if err != nil {
		return err
	}
	if err := checkProtocol(fs, f.url, f.protocol); err != nil {
		return err
	}
	o, stdout, err := resultsOut(f.out, "calibrate", stdout, stderr)
	if err != nil {
		return err
	}
	if err := f.checkFiles(); err != nil {
		return err
	}

	raw := f.url
	var child *noop.Process
	if raw == "" {
		if child, raw, err = startNoop(ctx, f.protocol, stderr); err != nil {
			return err
		}
		defer child.Stop()
	}
	tgt, err := openNoop(ctx, raw, f.settings, f.writeTimeout)
	if err != nil {
		return err
	}
	sess, err := newSession(ctx, "calibrate", tgt, raw, nil, f.metrics, nil, o, stderr)
	if err != nil {
		return err
	}
	// A noop server left running keeps what the probes read of every
	// step; dropping the index frees it. A child has ended already.
	teardown := false
	defer func() {
		if cerr := sess.close(ctx, teardown); err == nil {
			err = cerr
		}
	}()
	res, err := calibrate(ctx, sess, cfg, f, child, stdout, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	report.Calibration(stdout, res)
	fmt.Fprintf(stdout, "results: %s\n", o)
	saveCalibration(stdout, stderr, res, f.calibration)
	teardown = child == nil
	return nil
}

// calibrate runs the searches, profiled when asked, and writes their
// results with the noop child's CPU time, when there is a child.
func calibrate(ctx context.Context, sess *session, cfg bench.CalibrateConfig, f *calibrateFlags, child *noop.Process, stdout, stderr io.Writer) (*results.Result, error) {
	watchCalibration(&cfg, sess, f.quiet, stdout, stderr)
	fmt.Fprintf(stderr, "calibrate: batch sizes %s, from %s by %s (then %s), each step %s after %s warm-up, at most %s in all\n",
		f.batches, cfg.Start, cfg.Increase, orNone(f.refine), f.hold, f.warmup, f.maxDuration)
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return nil, err
	}
	res, err := bench.Calibrate(ctx, sess.tgt, cfg)
	if perr := stopProfile(); perr != nil {
		fmt.Fprintf(stderr, "calibrate: %v\n", perr)
	}
	if err != nil {
		return nil, err
	}
	if child != nil {
		cpu, err := child.Stop()
		if err != nil {
			fmt.Fprintf(stderr, "calibrate: %v\n", err)
		}
		res.Calibration.NoopCPUS = cpu.Seconds()
	}
	if err := sess.write(res); err != nil {
		return nil, err
	}
	return res, nil
}

// watchCalibration sends the calibration's live figures to the session's
// metrics and prints each step as it ends, with progress unless quiet.
func watchCalibration(cfg *bench.CalibrateConfig, sess *session, quiet bool, stdout, stderr io.Writer) {
	cfg.Run.Observer = sess.obs
	if !quiet {
		cfg.Run.Progress = progressPrinter(stderr)
	}
	steps := map[int]int{}
	cfg.OnStep = func(batch int, st *results.Result) {
		report.CalibrationStep(stdout, batch, steps[batch], st)
		steps[batch]++
	}
}

// checkProtocol refuses a --protocol calibrate cannot start, or one given
// with --target, which names the endpoint itself.
func checkProtocol(fs *flag.FlagSet, url, protocol string) error {
	if url != "" && given(fs, "protocol") {
		return usagef("--protocol chooses the endpoint of a noop server calibrate starts; with --target give that endpoint's URL instead")
	}
	if url == "" && protocol != "elasticsearch" && protocol != "opensearch" && protocol != "postgres" {
		return usagef("--protocol %q: want elasticsearch, opensearch or postgres", protocol)
	}
	return nil
}

// saveCalibration saves the ceilings of res as this machine's
// calibration at path, unless the calibration ended early: an
// interrupted calibration's ceilings are too low to warn by.
func saveCalibration(stdout, stderr io.Writer, res *results.Result, path string) {
	if res.EndedEarly {
		fmt.Fprintf(stdout, "calibration: ended early, not saved as this machine's (%s keeps what it held)\n", path)
	} else if err := bench.SaveCalibration(path, res); err != nil {
		fmt.Fprintf(stderr, "calibrate: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "calibration: saved as this machine's: %s\n", path)
	}
}

// startNoop starts freshbench noop as a child process and returns the URL
// of its endpoint for protocol.
func startNoop(ctx context.Context, protocol string, stderr io.Writer) (*noop.Process, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", fmt.Errorf("find the freshbench binary to start the noop server: %w", err)
	}
	child, err := noop.StartProcess(ctx, exe)
	if err != nil {
		return nil, "", err
	}
	raw := child.URL(protocol)
	fmt.Fprintf(stderr, "calibrate: started freshbench noop, driving %s\n", raw)
	return child, raw, nil
}

// startCPUProfile profiles this process until the returned function is
// called, which writes the profile to path; "" profiles nothing. The
// profile is held in memory so that its file is written as every other.
func startCPUProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	var b bytes.Buffer
	if err := pprof.StartCPUProfile(&b); err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return outfile.Write(path, b.Bytes())
	}, nil
}

func orNone(s string) string {
	if s == "" {
		return "no refinement"
	}
	return s
}

// calibrateConfig reads the flags that shape the searches and the
// driver's work in each step, and checks the whole.
func calibrateConfig(f *calibrateFlags) (bench.CalibrateConfig, error) {
	var cfg bench.CalibrateConfig
	for b := range strings.SplitSeq(f.batches, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(b))
		if err != nil || n <= 0 {
			return cfg, usagef("--batch-sizes %q: want positive whole numbers separated by commas, e.g. 50,500", f.batches)
		}
		cfg.BatchSizes = append(cfg.BatchSizes, n)
	}
	r, err := pace.ParseRate(f.start)
	if err != nil || r.Unit != pace.Events {
		return cfg, usagef("--start %q: want a rate in events/s, e.g. 5000", f.start)
	}
	cfg.Start = r
	if cfg.Increase, err = bench.ParseRateStep(f.step); err != nil || cfg.Increase.Factor == 0 {
		return cfg, usagef("--step %q: want a factor above 1, e.g. x1.5", f.step)
	}
	if f.refine != "" {
		if cfg.Refine, err = bench.ParseRateStep(f.refine); err != nil || cfg.Refine.Factor == 0 {
			return cfg, usagef("--refine %q: want a factor above 1, e.g. x1.1, or empty", f.refine)
		}
	}
	if f.hold <= 0 {
		return cfg, usagef("--hold %s: want a positive duration, e.g. 5s", f.hold)
	}
	if f.warmup < 0 {
		return cfg, usagef("--warmup %s: want 0 or more", f.warmup)
	}
	size, err := pace.ParseSize(f.load.docSize)
	if err != nil {
		return cfg, usagef("--doc-size: %v", err)
	}
	memory, err := pace.ParseSize(f.load.maxMemory)
	if err != nil {
		return cfg, usagef("--max-memory: %v", err)
	}
	cfg.MaxRate, cfg.MaxDuration, cfg.Rule = f.maxRate, f.maxDuration, bench.CalibrationRule()
	cfg.Run = bench.Config{
		Ingest: ingest.Config{
			Duration: f.warmup + f.hold, Warmup: f.warmup, DocSize: int(size), MemoryLimit: int64(memory),
			Generators: f.load.generators, MaxInflight: f.load.inflight, ProbeRate: f.load.probeRate, WriteTimeout: f.writeTimeout,
		},
		PollInterval: f.load.poll, ProbeShare: f.load.probeShare, ProbeMaxRate: f.load.probeMaxRate,
		// Everything a noop server acknowledges is visible at once: the
		// drain ends at its first look.
		Drain: 10 * time.Second,
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// openNoop opens the target at raw and sets it up, after checking that it
// is a noop server: a calibration against a database would measure the
// database, and fill it.
func openNoop(ctx context.Context, raw string, set settings, writeTimeout time.Duration) (target.Target, error) {
	tgt, err := all.Registry().Open(ctx, raw, target.Options{Settings: set, RequestTimeout: writeTimeout})
	switch {
	case errors.Is(err, target.ErrBadURL):
		return nil, usagef("--target: %v", err)
	case errors.Is(err, target.ErrBadSetting):
		return nil, usagef("--set: %v", err)
	case err != nil:
		return nil, err
	}
	vctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := tgt.Version(vctx)
	if err == nil && !strings.Contains(v, noop.Product) {
		err = fmt.Errorf("it reports %q", v)
	}
	if err != nil {
		tgt.Close()
		return nil, usagef("--target %s is not a freshbench noop server (%v): calibrate measures the driver alone; start freshbench noop and give one of its URLs", redact.URL(raw), err)
	}
	if err := tgt.Setup(vctx); err != nil {
		tgt.Close()
		return nil, fmt.Errorf("set up %s: %w", redact.URL(raw), err)
	}
	return tgt, nil
}
