package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/seed"
)

func seedCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("seed")
	tf := addTargetFlags(fs)
	events := fs.Int64("events", 0, "size of the data set in events")
	size := fs.String("bytes", "", "size of the data set in serialized bytes instead, e.g. 10GB (MB = 10^6 bytes)")
	docSize := fs.String("doc-size", "1KB", "serialized size of one event (1KB = 1000 bytes)")
	docShape := fs.String("doc-shape", docgen.ShapeRockBench, "shape of the events: rockbench or nested (the 20K-QPS study's shipped template filled to --doc-size, at least "+strconv.Itoa(docgen.MinSize(docgen.ShapeNested))+" bytes: give --doc-size 9KB); a resume takes the same shape")
	batchSize := fs.Int("batch-size", 500, "events per write request")
	inflight := fs.Int("max-inflight", 8, "bound on concurrent write requests")
	parallel := fs.Int("parallel", runtime.NumCPU(), "streams generated at once")
	dataSet := fs.Uint64("seed", seed.DefaultSeed, "names the data set: the same seed, doc size and shape resume it, another seed loads another")
	retries := fs.Int("write-retries", 3, "re-sends of a write request that failed as a whole; then the seed stops")
	wait := fs.Duration("wait", 2*time.Minute, "after loading, how long to wait for the whole data set to become visible (0: do not wait)")
	dryRun := fs.Bool("dry-run", false, "say what the target has and what would be written, and write nothing")
	quiet := fs.Bool("quiet", false, "no live progress")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	cfg, err := seedConfig(*events, *size, *docSize, *dataSet)
	if err != nil {
		return err
	}
	cfg.BatchSize, cfg.MaxInflight, cfg.Parallel, cfg.DocShape = *batchSize, *inflight, *parallel, *docShape
	cfg.WriteTimeout, cfg.WriteRetries = tf.writeTimeout, *retries
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	if *wait < 0 {
		return usagef("--wait %s: want 0 or more", *wait)
	}
	tgt, raw, err := tf.open(ctx)
	if err != nil {
		return err
	}
	defer tgt.Close()

	plan, err := seed.Survey(ctx, tgt, cfg)
	if err != nil {
		return err
	}
	describePlan(stdout, plan, raw)
	if *dryRun || plan.Missing == 0 {
		return nil
	}
	endProgress := func() {}
	if !*quiet {
		plan.Config.Progress, endProgress = seedProgress(stderr)
	}
	res, loadErr := seed.Load(ctx, tgt, plan)
	endProgress()
	fmt.Fprintf(stdout, "wrote %d events (%s) in %s: %.0f events/s (%s/s); %d already there, %d failed, %d retries\n",
		res.Written, pace.FormatBytes(float64(res.Bytes)), res.Elapsed.Round(time.Millisecond),
		perSecond(res.Written, res.Elapsed), pace.FormatBytes(perSecond(res.Bytes, res.Elapsed)), res.Duplicates, res.Failed, res.Retries)
	for kind, e := range res.Errors {
		fmt.Fprintf(stdout, "  %s: %d %s\n", kind, e.Count, e.Sample)
	}
	switch {
	case loadErr != nil:
		return fmt.Errorf("%w; the data set is incomplete: run the same command again to resume once the cause is fixed", loadErr)
	case res.Interrupted:
		return fmt.Errorf("interrupted after %d of %d events; run the same command again to resume (it writes only what is missing)", res.Written, plan.Missing)
	}
	if *wait > 0 {
		visible, err := seed.WaitVisible(ctx, tgt, plan, *wait, time.Second)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "visible: %d of %d events\n", visible, cfg.Events)
		if visible < cfg.Events {
			return fmt.Errorf("only %d of %d events visible after --wait %s: the target is still indexing, or lost acknowledged writes (run seed again to see which)", visible, cfg.Events, *wait)
		}
	}
	return nil
}

// seedConfig reads the size of the data set: --events, or --bytes over
// the document size.
func seedConfig(events int64, size, docSize string, dataSet uint64) (seed.Config, error) {
	doc, err := pace.ParseSize(docSize)
	if err != nil {
		return seed.Config{}, usagef("--doc-size: %v", err)
	}
	if dataSet == 0 {
		return seed.Config{}, usagef("--seed 0: want a non-zero number; it names the data set")
	}
	cfg := seed.Config{Events: events, DocSize: int(doc), Seed: dataSet}
	switch {
	case events != 0 && size != "":
		return seed.Config{}, usagef("--events and --bytes: give one of them")
	case size != "":
		b, err := pace.ParseSize(size)
		if err != nil {
			return seed.Config{}, usagef("--bytes: %v", err)
		}
		cfg.Events = int64(math.Ceil(b / doc))
	case events == 0:
		return seed.Config{}, usagef("want the size of the data set: --events N or --bytes SIZE (e.g. 10GB)")
	}
	return cfg, nil
}

// describePlan says what the target holds of the data set and exactly
// what the load will do.
func describePlan(w io.Writer, p *seed.Plan, raw string) {
	c := p.Config
	var complete, partial int
	for _, s := range p.Streams {
		switch {
		case s.Missing() == 0:
			complete++
		case s.Present > 0:
			partial++
		}
	}
	fmt.Fprintf(w, "data set %x: %d events of %d B (%s) in %d stream(s) of up to %d events\n",
		c.Seed, c.Events, c.DocSize, pace.FormatBytes(float64(c.Events)*float64(c.DocSize)), len(p.Streams), c.StreamEvents)
	fmt.Fprintf(w, "%s holds %d of them: %d stream(s) complete, %d partial, %d empty\n",
		redact.URL(raw), p.Present, complete, partial, len(p.Streams)-complete-partial)
	if p.Beyond > 0 {
		fmt.Fprintf(w, "it also holds at least %d events past them: a larger data set was seeded before (seed never removes events; --recreate starts afresh)\n", p.Beyond)
	}
	if p.Missing == 0 {
		fmt.Fprintln(w, "nothing to write: the data set is complete")
		return
	}
	fmt.Fprintf(w, "to write: %d events (%s)\n", p.Missing, pace.FormatBytes(float64(p.Missing)*float64(c.DocSize)))
	if p.Present > 0 {
		fmt.Fprintln(w, "(counted as a search sees them now: events written but not yet visible are written again under the same _id, not doubled)")
	}
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// seedProgress shows a progress bar with rate and time left on a
// liveLine. The second function ends the bar's line.
func seedProgress(w io.Writer) (func(seed.Progress), func()) {
	l := newLiveLine(w)
	return func(p seed.Progress) {
		done := float64(p.Written) / float64(max(p.ToWrite, 1))
		line := fmt.Sprintf("%5.1f%%  %d/%d events  %.0f events/s  %s/s  %s left",
			100*done, p.Written, p.ToWrite, p.EventsPerSec, pace.FormatBytes(perSecond(p.Bytes, p.Elapsed)), p.Remaining.Round(time.Second))
		const width = 30
		n := int(done * width)
		l.show(p.Elapsed, "["+strings.Repeat("#", n)+strings.Repeat(".", width-n)+"] ", line)
	}, l.end
}
