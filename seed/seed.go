// Package seed loads a target with a data set before it is measured. As in
// RockBench (1 TB there), measurements should start only once the database
// holds what it would hold in production: streaming into an empty database
// is much cheaper than into a large one. Seeding is unmeasured and
// closed-loop: batches go out as fast as the target acknowledges them,
// with a bounded number in flight.
//
// A data set is a fixed list of streams: stream k holds the events _seq 0
// to StreamEvents-1 of the docgen generator with the data set's seed and
// index k, so its generator_identifier and every _id come out the same on
// every run. That makes seeding safe to repeat: Survey counts what the
// target already has of each stream (Target.Count, and Target.Seqs for a
// stream cut short) and Load writes only the events that are missing. An
// interrupted seed resumes where it stopped; a finished one writes nothing.
package seed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// DefaultSeed names the data set unless told otherwise. Any fixed value
// works; changing it names a different data set.
const DefaultSeed uint64 = 0x5eed_da7a_5e7f_0001

// DefaultStreamEvents is the size of one stream: small enough that
// resuming a stream (regenerating up to where it stopped, reading its
// _seq) takes seconds, large enough that a terabyte is a thousand streams.
const DefaultStreamEvents = 1_000_000

// Config is a data set and how to load it.
type Config struct {
	Events  int64 // size of the data set in events
	DocSize int   // serialized bytes per event
	// DocShape is docgen.ShapeRockBench ("") or docgen.ShapeNested.
	DocShape string
	Seed     uint64 // names the data set; 0 means DefaultSeed
	// StreamEvents is the size of each stream; 0 means DefaultStreamEvents.
	// Earlier events are recognized only under the same seed and stream size.
	StreamEvents int64
	BatchSize    int           // events per write request
	MaxInflight  int           // concurrent write requests
	Parallel     int           // streams generated at once
	WriteTimeout time.Duration // per request
	WriteRetries int           // re-sends of a request that failed as a whole
	// Progress, when set, is called about once a second during Load.
	Progress func(Progress)
}

func (c Config) withDefaults() Config {
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.StreamEvents == 0 {
		c.StreamEvents = DefaultStreamEvents
	}
	return c
}

// Validate names the first bad setting and what is accepted.
func (c Config) Validate() error {
	switch {
	case c.Events <= 0:
		return invalid.New(invalid.Events, c.Events, "a positive number of events (or a size in bytes)")
	case c.DocSize < docgen.MinDocSize || c.DocSize > docgen.MaxDocSize:
		return invalid.New(invalid.DocSize, c.DocSize, fmt.Sprintf("%d..%d bytes", docgen.MinDocSize, docgen.MaxDocSize))
	case c.DocShape != "" && !slices.Contains(docgen.Shapes, c.DocShape):
		return invalid.New(invalid.DocShape, c.DocShape, strings.Join(docgen.Shapes, " or "))
	case c.DocShape == docgen.ShapeNested && c.DocSize < docgen.MinSize(docgen.ShapeNested):
		return invalid.New(invalid.DocSize, c.DocSize, fmt.Sprintf("at least %d bytes for the nested shape", docgen.MinSize(docgen.ShapeNested)))
	case c.StreamEvents < 0:
		return fmt.Errorf("stream size %d: want a positive number of events", c.StreamEvents)
	case c.BatchSize <= 0:
		return invalid.New(invalid.BatchSize, c.BatchSize, "a positive number of events per request")
	case c.MaxInflight <= 0:
		return invalid.New(invalid.Inflight, c.MaxInflight, "1 or more")
	case c.Parallel <= 0:
		return invalid.New(invalid.ParallelStreams, c.Parallel, "1 or more")
	case c.WriteTimeout <= 0:
		return invalid.New(invalid.WriteTimeout, c.WriteTimeout, "a positive duration")
	case c.WriteRetries < 0:
		return invalid.New(invalid.WriteRetries, c.WriteRetries, "0 or more")
	}
	return nil
}

// Stream is one generator of the data set and what the target has of it.
type Stream struct {
	Index     int
	Generator string // generator_identifier
	Events    int64  // the stream's share of the data set
	Present   int64  // of those, events the target already shows
	present   []uint64
}

// Missing is how many of the stream's events Load writes.
func (s *Stream) Missing() int64 { return s.Events - s.Present }

func (s *Stream) has(seq int64) bool {
	return s.present != nil && s.present[seq/64]&(1<<(seq%64)) != 0
}

// Plan is what the target holds of a data set and what Load will write.
type Plan struct {
	Config  Config
	Streams []*Stream
	Present int64 // events of the data set the target already shows
	Missing int64 // events Load writes
	// Beyond counts events the target shows past the data set: in its
	// streams beyond their share, and in the stream after its last
	// (streams further on are not looked at). More than zero when a larger
	// data set was seeded before; seeding never removes events.
	Beyond int64
}

// Survey finds out what tgt already has of the data set.
func Survey(ctx context.Context, tgt target.Target, cfg Config) (*Plan, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	p := &Plan{Config: cfg}
	n := int((cfg.Events + cfg.StreamEvents - 1) / cfg.StreamEvents)
	for k := 0; k <= n; k++ {
		g, err := docgen.New(docgen.Config{DocSize: cfg.DocSize, Shape: cfg.DocShape, Seed: cfg.Seed, Index: k})
		if err != nil {
			return nil, err
		}
		count, err := tgt.Count(ctx, g.ID())
		if err != nil {
			return nil, fmt.Errorf("survey stream %d (generator %s): %w", k, g.ID(), err)
		}
		if k == n {
			p.Beyond += count
			break
		}
		s := &Stream{Index: k, Generator: g.ID(), Events: min(cfg.StreamEvents, cfg.Events-int64(k)*cfg.StreamEvents)}
		if count > 0 && count < s.Events {
			// Cut short: which events are there? A stream is written in
			// _seq order, but the writes in flight when it stopped may
			// have left gaps.
			if err := s.readPresent(ctx, tgt); err != nil {
				return nil, err
			}
		} else if count >= s.Events {
			s.Present = s.Events
			p.Beyond += count - s.Events
		}
		p.Streams = append(p.Streams, s)
		p.Present += s.Present
		p.Missing += s.Missing()
	}
	return p, nil
}

func (s *Stream) readPresent(ctx context.Context, tgt target.Target) error {
	s.present = make([]uint64, (s.Events+63)/64)
	err := tgt.Seqs(ctx, s.Generator, func(seq int64) {
		if seq >= 0 && seq < s.Events && !s.has(seq) {
			s.present[seq/64] |= 1 << (seq % 64)
			s.Present++
		}
	})
	if err != nil {
		return fmt.Errorf("survey stream %d (generator %s): %w", s.Index, s.Generator, err)
	}
	return nil
}

// Progress is a live view of a load.
type Progress struct {
	Written      int64 // events acknowledged so far
	ToWrite      int64 // events the load writes in all
	Bytes        int64 // serialized bytes acknowledged
	Elapsed      time.Duration
	EventsPerSec float64       // since the load started
	Remaining    time.Duration // at that rate
}

// Result is what a load did.
type Result struct {
	Written     int64 // events acknowledged
	Bytes       int64 // serialized bytes acknowledged
	Duplicates  int64 // events the target already held (written again after a stale count)
	Failed      int64 // events that failed for good
	Retries     int64
	Elapsed     time.Duration
	Interrupted bool
	Errors      map[string]*stats.ErrorCount
}

// ErrWriteFailed marks a load stopped by a write that failed for good.
var ErrWriteFailed = errors.New("write failed")

// When a survey counted before the last writes became visible, those
// events are written again: an engine that replaces by _id takes them
// silently, one that refuses duplicates (PostgreSQL and SQLite insert with
// ON CONFLICT DO NOTHING) reports them as target.ErrorDuplicateID, and
// either way the event is there once.
const duplicateKind = target.ErrorDuplicateID

// batch is one write request and its memory, reused once written.
type batch struct {
	stream *Stream
	docgen.Buffer
}

// Load writes the plan's missing events to tgt, stream by stream, as fast
// as tgt acknowledges them. It stops at the first write that fails for
// good (after the retries), so that nothing is skipped silently: run it
// again to resume once the cause is fixed. A cancelled ctx stops it too;
// the writes in flight are finished, and what was acknowledged counts.
func Load(ctx context.Context, tgt target.Target, plan *Plan) (*Result, error) {
	cfg := plan.Config
	l := &loader{cfg: cfg, tgt: tgt, res: &Result{Errors: map[string]*stats.ErrorCount{}}}
	loadCtx, stop := context.WithCancel(ctx)
	defer stop()
	l.stop = stop

	todo := make(chan *Stream)
	go func() {
		defer close(todo)
		for _, s := range plan.Streams {
			if s.Missing() == 0 {
				continue
			}
			select {
			case todo <- s:
			case <-loadCtx.Done():
				return
			}
		}
	}()
	batches := make(chan *batch)
	var producers, writers sync.WaitGroup
	for range cfg.Parallel {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for s := range todo {
				if loadCtx.Err() != nil {
					return
				}
				if err := l.produce(loadCtx, s, batches); err != nil {
					l.fail(err)
					return
				}
			}
		}()
	}
	// Writes already sent finish even when ctx ends, so that their
	// outcome is known; each is bounded by the write timeout.
	writeCtx := context.WithoutCancel(ctx)
	for range cfg.MaxInflight {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for b := range batches {
				l.write(writeCtx, b)
			}
		}()
	}
	began := time.Now()
	progressDone := make(chan struct{})
	if cfg.Progress != nil {
		go l.report(began, plan.Missing, progressDone)
	}
	producers.Wait()
	close(batches)
	writers.Wait()
	close(progressDone)

	l.res.Elapsed = time.Since(began)
	l.res.Interrupted = ctx.Err() != nil
	return l.res, l.err
}

type loader struct {
	cfg  Config
	tgt  target.Target
	stop context.CancelFunc
	bufs sync.Pool

	mu  sync.Mutex // guards res and err
	res *Result
	err error
}

// fail records the first error and stops the load.
func (l *loader) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failLocked(err)
}

// produce generates stream s from its first event and hands the missing
// ones to the writers in batches. Events the target already has are
// generated too, unsent: the generator's output depends on all before.
func (l *loader) produce(ctx context.Context, s *Stream, out chan<- *batch) error {
	g, err := docgen.New(docgen.Config{DocSize: l.cfg.DocSize, Shape: l.cfg.DocShape, Seed: l.cfg.Seed, Index: s.Index})
	if err != nil {
		return err
	}
	var scratch []byte
	b := l.newBatch(s)
	for seq := int64(0); seq < s.Events; seq++ {
		now := time.Now().UnixMicro()
		if s.has(seq) {
			_, scratch = g.Next(scratch[:0], now)
			continue
		}
		b.Append(g, now)
		if len(b.Docs) < l.cfg.BatchSize && seq < s.Events-1 {
			continue
		}
		if !send(ctx, out, b) {
			return nil
		}
		b = l.newBatch(s)
	}
	if len(b.Docs) > 0 {
		send(ctx, out, b)
	}
	return nil
}

// send hands b to the writers unless the load was stopped.
func send(ctx context.Context, out chan<- *batch, b *batch) bool {
	if ctx.Err() != nil {
		return false
	}
	b.Seal()
	select {
	case out <- b:
		return true
	case <-ctx.Done():
		return false
	}
}

func (l *loader) newBatch(s *Stream) *batch {
	b, _ := l.bufs.Get().(*batch)
	if b == nil {
		b = &batch{}
	}
	b.stream = s
	b.Reset()
	return b
}

// write sends one batch through the ingest's write path: the same
// re-sends, and the same item-level accounting.
func (l *loader) write(ctx context.Context, b *batch) {
	defer l.bufs.Put(b)
	a := ingest.WriteBatch(ctx, l.tgt, target.Batch{Generator: b.stream.Generator, Docs: b.Docs}, l.cfg.WriteTimeout, l.cfg.WriteRetries)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.res.Retries += int64(a.Retries)
	l.res.Written += int64(a.Acked)
	l.res.Bytes += int64(a.AckedBytes)
	// A seed writes fixed _ids and resumes: an _id stored already is what
	// a repeat finds, not a failure.
	dup := a.ErrorKinds[duplicateKind]
	l.res.Duplicates += int64(dup)
	if a.Failed > dup {
		l.res.Failed += int64(a.Failed - dup)
		for kind, n := range a.ErrorKinds {
			if kind != duplicateKind {
				stats.AddError(l.res.Errors, kind, int64(n), a.Sample)
			}
		}
		l.failLocked(fmt.Errorf("%w: stream %d (generator %s): %d of %d events failed: %v", ErrWriteFailed, b.stream.Index, b.stream.Generator, a.Failed-dup, len(b.Docs), a.ErrorKinds))
	}
}

func (l *loader) failLocked(err error) {
	if l.err == nil {
		l.err = err
	}
	l.stop()
}

// report calls the progress function once a second until done.
func (l *loader) report(began time.Time, toWrite int64, done <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		l.mu.Lock()
		p := Progress{Written: l.res.Written, ToWrite: toWrite, Bytes: l.res.Bytes, Elapsed: time.Since(began)}
		l.mu.Unlock()
		if s := p.Elapsed.Seconds(); s > 0 && p.Written > 0 {
			p.EventsPerSec = float64(p.Written) / s
			p.Remaining = time.Duration(float64(toWrite-p.Written) / p.EventsPerSec * float64(time.Second))
		}
		l.cfg.Progress(p)
	}
}

// WaitVisible waits until the target shows every event of the plan's data
// set, or until timeout, and returns how many it shows. Search engines
// make writes visible only at their next refresh; a measurement should
// not start while the database still indexes the seed.
func WaitVisible(ctx context.Context, tgt target.Target, plan *Plan, timeout, poll time.Duration) (int64, error) {
	deadline := time.Now().Add(timeout)
	seen := make([]int64, len(plan.Streams))
	for {
		var total int64
		for i, s := range plan.Streams {
			if seen[i] < s.Events {
				n, err := tgt.Count(ctx, s.Generator)
				if err != nil {
					return 0, fmt.Errorf("count stream %d (generator %s): %w", s.Index, s.Generator, err)
				}
				seen[i] = min(n, s.Events)
			}
			total += seen[i]
		}
		if total >= plan.Config.Events || !time.Now().Add(poll).Before(deadline) {
			return total, nil
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(poll):
		}
	}
}
