package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/corpus"
	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/probe"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/report"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
)

// settings collects repeated --set key=value flags.
type settings map[string]string

func (s settings) String() string {
	pairs := make([]string, 0, len(s))
	for _, k := range slices.Sorted(maps.Keys(s)) {
		pairs = append(pairs, k+"="+s[k])
	}
	return strings.Join(pairs, ",")
}

func (s settings) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, e.g. refresh_interval=1s")
	}
	s[k] = val
	return nil
}

// targetFlags choose and configure the database under test.
type targetFlags struct {
	url, dataDir, caCert string
	recreate, insecure   bool
	settings             settings
	writeTimeout         time.Duration
	reads                readFlags // --read-endpoint, on the measuring commands
	via                  string    // --via, on the measuring commands
	// check, when set, refuses bad input that depends on the opened
	// target before its setup, so that a refused run makes nothing (a
	// table; on Druid a supervisor that would read on).
	check func(target.Target) error
	// events, when set, are the events the command sends: a target that
	// makes its table from them is told a sample before its setup.
	events *ingest.Config
}

func addTargetFlags(fs *flag.FlagSet) *targetFlags {
	f := &targetFlags{settings: settings{}}
	fs.StringVar(&f.url, "target", "", "database URL: sqlite:///path/file.db, elasticsearch://host:9200/index, opensearch://host:9200/index, postgres://user@host:5432/db?table=t, sim://?visibility_delay=200ms (default: SQLite in --data-dir)")
	fs.StringVar(&f.dataDir, "data-dir", "freshbench-data", "directory of the embedded SQLite database (when --target is not given)")
	fs.BoolVar(&f.recreate, "recreate", false, "drop and create the index or table before the run (default: reuse it)")
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification (https targets only)")
	fs.StringVar(&f.caCert, "ca-cert", "", "PEM file of the CA that signed the server's certificate")
	fs.Var(f.settings, "set", "target setting key=value, repeatable; the settings of each target:\n"+all.Registry().SettingsHelp())
	addWriteTimeoutFlag(fs, &f.writeTimeout)
	return f
}

// addWriteTimeoutFlag adds --write-timeout: the bound on each request to
// the target, and on each write.
func addWriteTimeoutFlag(fs *flag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "write-timeout", 30*time.Second, "timeout of one write request")
}

// open opens and sets up the target.
func (f *targetFlags) open(ctx context.Context) (target.Target, string, error) {
	raw := f.url
	if raw == "" {
		abs, err := filepath.Abs(f.dataDir)
		if err != nil {
			return nil, "", usagef("--data-dir %q: %v", f.dataDir, err)
		}
		raw = "sqlite://" + filepath.ToSlash(filepath.Join(abs, "freshbench.db"))
	}
	if f.caCert != "" {
		if _, err := os.Stat(f.caCert); err != nil {
			return nil, "", usagef("--ca-cert %s: %v", f.caCert, err)
		}
	}
	tgt, err := all.Registry().Open(ctx, raw, f.options())
	if errors.Is(err, target.ErrBadURL) {
		return nil, "", usagef("--target: %v", err)
	}
	if errors.Is(err, target.ErrBadSetting) {
		return nil, "", usagef("--set: %v", err)
	}
	// The embedded database is where --data-dir put it: when it cannot be
	// opened or set up (directory not writable, file locked by another
	// process), that flag is what to change.
	fail := func(err error) error {
		if f.url == "" {
			return usagef("%v (--data-dir)", err)
		}
		return err
	}
	if err != nil {
		return nil, "", fail(err)
	}
	if f.check != nil {
		if err := f.check(tgt); err != nil {
			tgt.Close()
			return nil, "", err
		}
	}
	if f.events != nil {
		if err := ingest.ShapeTarget(tgt, *f.events); err != nil {
			tgt.Close()
			return nil, "", err
		}
	}
	// The via comes first: a database that consumes its topic itself
	// learns the topic from it and consumes it from its Setup on.
	piped, err := f.pipe(ctx, tgt)
	if err != nil {
		tgt.Close()
		return nil, "", err
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := piped.Setup(sctx); err != nil {
		piped.Close()
		if errors.Is(err, target.ErrBadSetting) {
			// The index exists, made for other settings.
			return nil, "", usagef("--set: set up %s: %v", redact.URL(raw), err)
		}
		return nil, "", fail(fmt.Errorf("set up %s: %w", redact.URL(raw), err))
	}
	return piped, raw, nil
}

// options are what the target and the read endpoints are opened with.
// With read endpoints, every endpoint, the target included, reads its
// node's own copies, so that each figure is of one node.
func (f *targetFlags) options() target.Options {
	return target.Options{
		Recreate: f.recreate, Insecure: f.insecure, CACert: f.caCert,
		Settings: f.settings, RequestTimeout: f.writeTimeout,
		ReadLocal: len(f.reads) > 0,
	}
}

// loadFlags describe the ingest and its measurement.
type loadFlags struct {
	rate, docSize, docShape, maxMemory       string
	writeShape                               string
	updateKeys                               string
	updateShare                              float64
	batchSize, generators, inflight, retries int
	duration, warmup, poll, drain            time.Duration
	drainMax, recheck                        time.Duration
	seed                                     uint64
	repeatIDs                                bool
	probeRate, probeShare, probeMaxRate      float64
	events, template                         string
	eventsOnce                               bool
}

func addLoadFlags(fs *flag.FlagSet) *loadFlags {
	f := addStreamFlags(fs)
	fs.StringVar(&f.rate, "rate", "1000", "target rate over all generators: events/s (5000) or bytes/s (10MB/s; MB = 10^6 bytes)")
	fs.DurationVar(&f.duration, "duration", 60*time.Second, "how long to stream, warm-up included")
	fs.StringVar(&f.events, "events", "", "replay your own events instead of generated ones: JSON Lines files or directories, comma-separated, in order (.gz and .zst/.zstd are decompressed); each line, one JSON object, is sent as it is with freshbench's fields stamped in; --doc-size and --doc-shape do not apply")
	fs.BoolVar(&f.eventsOnce, "events-once", false, "with --events, end the run at the end of the corpus instead of starting it over")
	fs.StringVar(&f.template, "template", "", "generate the events from a template: a JSON file whose strings may be expressions such as {{name}} or {{int 18 90}} (docs/measurement.md), or a shipped one by name ("+strings.Join(docgen.ShippedTemplates, ", ")+"); --doc-size and --doc-shape do not apply")
	fs.StringVar(&f.writeShape, "write-shape", "", "shape of the write rate over time, as factors of --rate: const F [for D]; ramp F..G for D; sine F±A every P [for D]; steps F,G,… every D (pieces back to back, separated by \";\"), or burst K at S for L; … (bursts over the rate), e.g. \"burst 5x at 60s for 30s\" (default: constant)")
	return f
}

// addStreamFlags adds the load flags other than the rate and the duration,
// which the peak command sets per step.
func addStreamFlags(fs *flag.FlagSet) *loadFlags {
	f := &loadFlags{}
	fs.IntVar(&f.batchSize, "batch-size", 50, "events per write request")
	fs.DurationVar(&f.warmup, "warmup", 10*time.Second, "leading part of the run left out of the summary")
	fs.StringVar(&f.docShape, "doc-shape", docgen.ShapeRockBench, "shape of the events: rockbench (the RockBench sample, flat, about 1 KB: the shipped rockbench template at --doc-size, its fields joining as the size allows from 400 bytes) or nested (the 20K-QPS study's, deeply nested: the shipped nested template filled to --doc-size, at least "+strconv.Itoa(docgen.MinSize(docgen.ShapeNested))+" bytes; give --doc-size 9KB)")
	addDriverFlags(fs, f)
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the generators (0 = random); the same seed gives the same documents, under ids of each run's own")
	fs.BoolVar(&f.repeatIDs, "repeat-ids", false, "with --seed, also repeat the generator ids and _ids; a run is refused when the target holds them already")
	fs.DurationVar(&f.drain, "drain", 30*time.Second, "after the run, how long to wait for acknowledged events to become visible before the completeness audit; past it, the wait goes on while the target is still catching up, up to --drain-max")
	fs.DurationVar(&f.drainMax, "drain-max", 0, "the longest the drain may last while the target is still catching up (0: 4 × --drain); events not visible by then are late, not lost")
	fs.DurationVar(&f.recheck, "recheck", 0, "when events were late, audit them again this long after the drain and say which turned up (0: no re-check)")
	fs.IntVar(&f.retries, "write-retries", 0, "re-sends of a write request that failed as a whole (connection refused, timeout, 5xx)")
	fs.Float64Var(&f.updateShare, "update-share", 0, "share of the events that update an event already written instead of inserting one, in [0, 1); the rate counts both")
	fs.StringVar(&f.updateKeys, "update-keys", ingest.KeysUniform, "which written event an update updates: uniform, recent:N (one of the newest N) or zipf:S (hot keys: the k-th oldest ∝ 1/(k+1)^S, S > 1)")
	return f
}

// addDriverFlags adds the load flags that shape the driver's own work
// beside the rate and the batch size, which a calibration shares with a
// run.
func addDriverFlags(fs *flag.FlagSet, f *loadFlags) {
	fs.IntVar(&f.generators, "generators", 1, "independent event streams, each with its own generator_identifier")
	fs.IntVar(&f.inflight, "max-inflight", 16, "bound on concurrent write requests; a batch that waits for a slot is late")
	fs.StringVar(&f.docSize, "doc-size", "1KB", "serialized size of one event (1KB = 1000 bytes)")
	fs.StringVar(&f.maxMemory, "max-memory", "1GiB", "bound on the memory the batches may hold at once (batch size × doc size × (max in-flight + generators) × 2); a larger product is refused")
	fs.DurationVar(&f.poll, "poll-interval", 0, "a fixed mean pause between the freshness and probe polls, overriding the probe budget; 0: each loop polls as often as the target answers, within --probe-share and --probe-max-rate (and a few polls per refresh of a search engine)")
	fs.Float64Var(&f.probeShare, "probe-share", probe.DefaultBudget.Share, "share of one connection's time each freshness or probe loop may spend in its queries")
	fs.Float64Var(&f.probeMaxRate, "probe-max-rate", probe.DefaultBudget.MaxRate, "polls per second of each freshness or probe loop, at most")
	fs.Float64Var(&f.probeRate, "probe-rate", 20, "probe events per second whose visibility latency is measured")
}

func (f *loadFlags) config(writeTimeout time.Duration) (bench.Config, error) {
	rate, err := pace.ParseRate(f.rate)
	if err != nil {
		return bench.Config{}, usagef("--rate: %v", err)
	}
	size, err := pace.ParseSize(f.docSize)
	if err != nil {
		return bench.Config{}, usagef("--doc-size: %v", err)
	}
	memory, err := pace.ParseSize(f.maxMemory)
	if err != nil {
		return bench.Config{}, usagef("--max-memory: %v", err)
	}
	keys, err := ingest.ParseKeyChoice(f.updateKeys)
	if err != nil {
		return bench.Config{}, usageError{err}
	}
	if f.template != "" && f.events != "" {
		return bench.Config{}, usagef("--template and --events: give one, your template or your corpus")
	}
	var events *corpus.Corpus
	if f.events != "" {
		if events, err = corpus.Open(strings.Split(f.events, ","), !f.eventsOnce); err != nil {
			return bench.Config{}, usageError{err}
		}
	} else if f.eventsOnce {
		return bench.Config{}, usagef("--events-once: give the corpus with --events")
	}
	var tmpl *docgen.Template
	switch {
	case slices.Contains(docgen.ShippedTemplates, f.template):
		tmpl, err = docgen.ShippedTemplate(f.template)
	case f.template != "":
		tmpl, err = docgen.ParseTemplateFile(f.template)
	}
	if err != nil {
		return bench.Config{}, usageError{err}
	}
	shape, err := pace.ParseShape(f.writeShape)
	if err != nil {
		return bench.Config{}, usagef("--write-shape: %v", err)
	}
	cfg := bench.Config{
		Ingest: ingest.Config{
			Corpus: events, Template: tmpl,
			MemoryLimit: int64(memory), UpdateShare: f.updateShare, UpdateKeys: keys,
			Rate: rate, Shape: shape, BatchSize: f.batchSize, DocShape: f.docShape, Duration: f.duration, Warmup: f.warmup,
			Generators: f.generators, MaxInflight: f.inflight, DocSize: int(size), Seed: f.seed,
			WriteTimeout: writeTimeout, WriteRetries: f.retries, ProbeRate: f.probeRate,
		},
		PollInterval: f.poll, ProbeShare: f.probeShare, ProbeMaxRate: f.probeMaxRate, Drain: f.drain, DrainMax: f.drainMax, Recheck: f.recheck, RepeatIDs: f.repeatIDs,
	}
	if err := cfg.Validate(); err != nil {
		return bench.Config{}, usageError{err}
	}
	return cfg, nil
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("run")
	tf := addTargetFlags(fs)
	addReadFlags(fs, tf)
	addViaFlag(fs, tf)
	lf := addLoadFlags(fs)
	ef := addExperimentFlags(fs)
	lv := addLevelsFlags(fs, "target rates measured in turn instead of one --rate, each by --trials trials after --warmup-trials warm-up trials: events/s or bytes/s, all in one unit, e.g. 1000,2000,4000 or 5MB/s,10MB/s")
	out := fs.String("out", "", "results file, - for standard output (default freshbench-results/run-<time>.json); with --levels, rewritten as each trial ends")
	teardown := fs.Bool("teardown", false, "drop the index or table after the run")
	quiet := fs.Bool("quiet", false, "no live progress")
	metricsFlags := addMetricsFlags(fs)
	calibration := addCalibrationFlag(fs)
	wf := addWorkloadFlags(fs)
	wl, err := wf.parse(fs, "run", args, stderr)
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
	cfg, err := lf.config(tf.writeTimeout)
	if err != nil {
		return err
	}
	cfg.ReadEndpoints = reads
	if err := ef.apply(fs, &cfg); err != nil {
		return err
	}
	levels, err := lv.given(fs)
	if err != nil {
		return err
	}
	var lc bench.LevelsConfig
	if levels {
		if lc, err = lv.ingest(fs, cfg); err != nil {
			return err
		}
	}
	o, stdout, err := resultsOut(*out, ef.fileName("run"), stdout, stderr)
	if err != nil {
		return err
	}
	tf.events = &cfg.Ingest
	sess, err := openSession(ctx, "run", tf, reads, metricsFlags, cfg.Experiment, o, stderr)
	if err != nil {
		return err
	}
	sess.desc.Ceilings = ceilings
	sess.desc.Workload = wl
	cfg.Observer = sess.obs
	if !*quiet {
		cfg.Progress = progressPrinter(stderr)
	}
	if levels {
		lc.Run = cfg
		return runLevels(ctx, sess, lc, *teardown, stdout, stderr)
	}
	return runOnce(ctx, sess, cfg, o, *teardown, stdout)
}

// runOnce runs cfg once, writes and prints its result, and closes sess,
// dropping the index or table when teardown says so and the run ended well.
func runOnce(ctx context.Context, sess *session, cfg bench.Config, o output, teardown bool, stdout io.Writer) error {
	res, err := bench.Run(ctx, sess.tgt, cfg)
	if err != nil {
		sess.close(ctx, false)
		return err
	}
	if err := sess.write(res); err != nil {
		sess.close(ctx, false)
		return err
	}
	report.Console(stdout, res)
	if c := res.Config.Corpus; c != nil {
		fmt.Fprintf(stdout, "corpus: %d events replayed from %d lines, %.2f passes (at its end: %s)\n", c.Replayed, c.Lines, c.Passes, c.AtEnd)
	}
	if l := res.Config.TargetLayout; l != "" && (res.Config.Corpus != nil || res.Config.Template != "") {
		fmt.Fprintf(stdout, "layout: %s\n", l) // what your events were stored as
	}
	fmt.Fprintf(stdout, "results: %s\n", o)
	if err := corpusErr(cfg); err != nil {
		sess.close(ctx, false)
		return err
	}
	return sess.close(ctx, teardown)
}

// corpusErr is the read error that ended a replay early, if any.
func corpusErr(cfg bench.Config) error {
	if c := cfg.Ingest.Corpus; c != nil && c.Err() != nil {
		return fmt.Errorf("the run stopped early: %w", c.Err())
	}
	return nil
}

// progressPrinter shows live progress on a liveLine.
func progressPrinter(w io.Writer) func(bench.Progress) {
	l := newLiveLine(w)
	return func(p bench.Progress) {
		line := fmt.Sprintf("%s %5.0fs elapsed %5.0fs left  %8.0f/%-8.0f events/s  errors %d  late %d  freshness lag %s",
			p.Phase, p.Elapsed.Seconds(), max(p.Remaining.Seconds(), 0), p.AckedPerSec, p.TargetPerSec, p.Errors, p.Late, p.FreshnessLag.Round(time.Millisecond))
		l.show(p.Elapsed, "", line)
		if p.Remaining <= time.Second {
			l.end()
		}
	}
}
