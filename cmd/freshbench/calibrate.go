package main

import (
	"context"
	"errors"
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
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/report"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
)

func calibrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("calibrate")
	url := fs.String("target", "", "URL of a running freshbench noop server (default: start one as a child process, so that its CPU is not counted as the driver's)")
	protocol := fs.String("protocol", "elasticsearch", "without --target, the endpoint of the started noop server to drive: elasticsearch, opensearch or postgres")
	set := settings{}
	fs.Var(set, "set", "target setting key=value, repeatable, e.g. write_method=copy for postgres")
	batches := fs.String("batch-sizes", "50,500", "batch sizes to find the ceiling of, comma-separated")
	start := fs.String("start", "5000", "rate of each search's first step, events/s")
	step := fs.String("step", "x1.5", "factor by which the rate rises from one step to the next until a step is not sustainable")
	refine := fs.String("refine", "x1.1", "factor of the finer steps between the last sustainable rate and the first unsustainable one; empty: no refinement")
	maxRate := fs.Float64("max-rate", 2e6, "highest rate tried, events/s")
	hold := fs.Duration("hold", 5*time.Second, "how long each step holds its rate after its --warmup")
	warmup := fs.Duration("warmup", time.Second, "leading part of each step left out of its figures")
	maxDuration := fs.Duration("max-duration", 10*time.Minute, "bound on the whole calibration; each batch size gets an equal share, and a search stops before a step that would not fit")
	generators := fs.Int("generators", 1, "independent event streams")
	inflight := fs.Int("max-inflight", 16, "bound on concurrent write requests; a batch that waits for a slot is late")
	docSize := fs.String("doc-size", "1KB", "serialized size of one event (1KB = 1000 bytes)")
	maxMemory := fs.String("max-memory", "1GiB", "bound on the memory the batches may hold at once, as in a run")
	poll := fs.Duration("poll-interval", 0, "a fixed mean pause between the freshness and probe polls, as in a run; 0: as often as the target answers, within the default probe budget")
	probeRate := fs.Float64("probe-rate", 20, "probe events per second, as in a run")
	writeTimeout := fs.Duration("write-timeout", 30*time.Second, "timeout of one write request")
	out := fs.String("out", "", "results file (default results/calibrate-<time>.json)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the driver over the searches to this file (go tool pprof reads it)")
	quiet := fs.Bool("quiet", false, "no live progress")
	metricsFlags := addMetricsFlags(fs)
	calibration := fs.String("calibration", "", "file to save the ceilings found in as this machine's calibration, which run, peak and query read (default: calibration.json under $FRESHBENCH_CACHE, or else under the user's cache directory in freshbench/)")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *calibration == "" {
		path, err := bench.DefaultCalibrationPath()
		if err != nil {
			return usagef("%v; give --calibration FILE", err)
		}
		*calibration = path
	}
	cfg, err := calibrateConfig(*batches, *start, *step, *refine, *maxRate, *hold, *warmup, *maxDuration, *docSize, *maxMemory)
	if err != nil {
		return err
	}
	cfg.Run.Ingest.Generators, cfg.Run.Ingest.MaxInflight, cfg.Run.Ingest.ProbeRate = *generators, *inflight, *probeRate
	cfg.Run.Ingest.WriteTimeout, cfg.Run.PollInterval = *writeTimeout, *poll
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	if *url != "" && given(fs, "protocol") {
		return usagef("--protocol chooses the endpoint of a noop server calibrate starts; with --target give that endpoint's URL instead")
	}
	if *url == "" && *protocol != "elasticsearch" && *protocol != "opensearch" && *protocol != "postgres" {
		return usagef("--protocol %q: want elasticsearch, opensearch or postgres", *protocol)
	}
	if err := resultsPath(out, "calibrate"); err != nil {
		return err
	}
	profile, err := createProfile(*cpuProfile)
	if err != nil {
		return err
	}
	if profile != nil {
		defer profile.Close() // also on the way out before profiling started
	}

	raw := *url
	var child *noop.Process
	if raw == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find the freshbench binary to start the noop server: %w", err)
		}
		if child, err = noop.StartProcess(ctx, exe); err != nil {
			return err
		}
		defer child.Stop()
		raw = child.URL(*protocol)
		fmt.Fprintf(stderr, "calibrate: started freshbench noop, driving %s\n", raw)
	}
	tgt, err := openNoop(ctx, raw, set, *writeTimeout)
	if err != nil {
		return err
	}
	sess, err := newSession(ctx, "calibrate", tgt, raw, nil, metricsFlags, nil, *out, stderr)
	if err != nil {
		return err
	}
	cfg.Run.Observer = sess.obs
	if !*quiet {
		cfg.Run.Progress = progressPrinter(stderr)
	}
	fmt.Fprintf(stderr, "calibrate: batch sizes %s, from %s by %s (then %s), each step %s after %s warm-up, at most %s in all\n",
		*batches, cfg.Start, cfg.Increase, orNone(*refine), *hold, *warmup, *maxDuration)
	steps := map[int]int{}
	cfg.OnStep = func(batch int, st *results.Result) {
		report.CalibrationStep(stdout, batch, steps[batch], st)
		steps[batch]++
	}
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		sess.close(ctx, false)
		return err
	}
	res, err := bench.Calibrate(ctx, sess.tgt, cfg)
	if perr := stopProfile(); perr != nil {
		fmt.Fprintf(stderr, "calibrate: %v\n", perr)
	}
	if err != nil {
		sess.close(ctx, false)
		return err
	}
	if child != nil {
		cpu, err := child.Stop()
		if err != nil {
			fmt.Fprintf(stderr, "calibrate: %v\n", err)
		}
		res.Calibration.NoopCPUS = cpu.Seconds()
	}
	if err := sess.write(res); err != nil {
		sess.close(ctx, false)
		return err
	}
	fmt.Fprintln(stdout)
	report.Calibration(stdout, res)
	fmt.Fprintf(stdout, "results: %s\n", *out)
	// An interrupted calibration's ceilings are too low to warn by.
	if res.EndedEarly {
		fmt.Fprintf(stdout, "calibration: ended early, not saved as this machine's (%s keeps what it held)\n", *calibration)
	} else if err := bench.SaveCalibration(*calibration, res); err != nil {
		fmt.Fprintf(stderr, "calibrate: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "calibration: saved as this machine's: %s\n", *calibration)
	}
	// A noop server left running keeps what the probes read of every
	// step; dropping the index frees it. A child has ended already.
	return sess.close(ctx, child == nil)
}

// createProfile creates the --cpuprofile file before anything runs; nil
// for none.
func createProfile(path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("--cpuprofile: %v", err)
	}
	return f, nil
}

// startCPUProfile profiles this process into f until the returned
// function is called; a nil f profiles nothing.
func startCPUProfile(f *os.File) (func() error, error) {
	if f == nil {
		return func() error { return nil }, nil
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

func orNone(s string) string {
	if s == "" {
		return "no refinement"
	}
	return s
}

// calibrateConfig reads the flags that shape the searches.
func calibrateConfig(batches, start, step, refine string, maxRate float64, hold, warmup, maxDuration time.Duration, docSize, maxMemory string) (bench.CalibrateConfig, error) {
	var cfg bench.CalibrateConfig
	for b := range strings.SplitSeq(batches, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(b))
		if err != nil || n <= 0 {
			return cfg, usagef("--batch-sizes %q: want positive whole numbers separated by commas, e.g. 50,500", batches)
		}
		cfg.BatchSizes = append(cfg.BatchSizes, n)
	}
	r, err := pace.ParseRate(start)
	if err != nil || r.Unit != pace.Events {
		return cfg, usagef("--start %q: want a rate in events/s, e.g. 5000", start)
	}
	cfg.Start = r
	if cfg.Increase, err = bench.ParseRateStep(step); err != nil || cfg.Increase.Factor == 0 {
		return cfg, usagef("--step %q: want a factor above 1, e.g. x1.5", step)
	}
	if refine != "" {
		if cfg.Refine, err = bench.ParseRateStep(refine); err != nil || cfg.Refine.Factor == 0 {
			return cfg, usagef("--refine %q: want a factor above 1, e.g. x1.1, or empty", refine)
		}
	}
	if hold <= 0 {
		return cfg, usagef("--hold %s: want a positive duration, e.g. 5s", hold)
	}
	if warmup < 0 {
		return cfg, usagef("--warmup %s: want 0 or more", warmup)
	}
	size, err := pace.ParseSize(docSize)
	if err != nil {
		return cfg, usagef("--doc-size: %v", err)
	}
	memory, err := pace.ParseSize(maxMemory)
	if err != nil {
		return cfg, usagef("--max-memory: %v", err)
	}
	cfg.MaxRate, cfg.MaxDuration, cfg.Rule = maxRate, maxDuration, bench.CalibrationRule()
	cfg.Run = bench.Config{
		Ingest: ingest.Config{Duration: warmup + hold, Warmup: warmup, DocSize: int(size), MemoryLimit: int64(memory)},
		// Everything a noop server acknowledges is visible at once: the
		// drain ends at its first look.
		Drain: 10 * time.Second,
	}
	return cfg, nil
}

// openNoop opens the target at raw and sets it up, after checking that it
// is a noop server: a calibration against a database would measure the
// database, and fill it.
func openNoop(ctx context.Context, raw string, set settings, writeTimeout time.Duration) (target.Target, error) {
	tgt, err := all.Registry().Open(ctx, raw, target.Options{Settings: set, RequestTimeoutS: writeTimeout.Seconds()})
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
