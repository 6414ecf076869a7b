// Package ingest turns generators into paced batches and writes them to a
// target, accounting for every event: acknowledged, failed, retried, late
// or never sent.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// Config is what one ingest run needs.
type Config struct {
	Rate         pace.Rate     // total over all generators
	BatchSize    int           // events per write request
	Duration     time.Duration // how long batches are scheduled, warm-up included
	Warmup       time.Duration // leading part excluded from the measured phase
	Generators   int           // independent event streams
	MaxInflight  int           // bound on concurrent write requests
	DocSize      int           // bytes per serialized event
	Seed         uint64        // 0 = random
	WriteTimeout time.Duration // per request
	WriteRetries int           // re-sends of a request that failed as a whole
	ProbeRate    float64       // probe events per second over all generators
}

// Validate names the first bad setting and what is accepted.
func (c Config) Validate() error {
	switch {
	case c.Rate.PerSecond <= 0:
		return errors.New("--rate must be positive, e.g. 5000 (events/s) or 10MB/s")
	case c.BatchSize <= 0:
		return fmt.Errorf("--batch-size %d: want a positive number of events per request", c.BatchSize)
	case c.Duration <= 0:
		return fmt.Errorf("--duration %s: want a positive duration, e.g. 60s", c.Duration)
	case c.Warmup < 0 || c.Warmup >= c.Duration:
		return fmt.Errorf("--warmup %s: want 0 or more and less than --duration %s", c.Warmup, c.Duration)
	case c.Generators <= 0:
		return fmt.Errorf("--generators %d: want 1 or more", c.Generators)
	case c.MaxInflight <= 0:
		return fmt.Errorf("--max-inflight %d: want 1 or more", c.MaxInflight)
	case c.WriteTimeout <= 0:
		return fmt.Errorf("--write-timeout %s: want a positive duration", c.WriteTimeout)
	case c.WriteRetries < 0:
		return fmt.Errorf("--write-retries %d: want 0 or more", c.WriteRetries)
	case c.ProbeRate < 0:
		return fmt.Errorf("--probe-rate %g: want 0 or more probes per second", c.ProbeRate)
	}
	return nil
}

// Probes receives the sampled probe events and learns which were lost.
type Probes interface {
	Add(generator, id string, intended time.Time)
	Drop(generator, id string)
}

// Ledger learns which events the target acknowledged.
type Ledger interface {
	Acked(generator string, seqs []int64)
}

// Ingester runs the generators against one target.
type Ingester struct {
	cfg     Config
	tgt     target.Target
	gens    []*docgen.Generator
	probes  Probes
	ledger  Ledger
	series  *stats.Series
	obs     stats.Observer
	account *Accounting
	sem     chan struct{}
	wg      sync.WaitGroup
	bufs    sync.Pool
}

// New prepares an ingester; probes, ledger and obs may be nil.
func New(cfg Config, tgt target.Target, probes Probes, ledger Ledger, obs stats.Observer) (*Ingester, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if obs == nil {
		obs = stats.NopObserver{}
	}
	in := &Ingester{cfg: cfg, tgt: tgt, probes: probes, ledger: ledger, obs: obs, sem: make(chan struct{}, cfg.MaxInflight)}
	for i := 0; i < cfg.Generators; i++ {
		g, err := docgen.New(docgen.Config{DocSize: cfg.DocSize, Seed: cfg.Seed, Index: i})
		if err != nil {
			return nil, fmt.Errorf("--doc-size: %w", err)
		}
		in.gens = append(in.gens, g)
	}
	return in, nil
}

// GeneratorIDs lists the generator_identifier of each stream.
func (in *Ingester) GeneratorIDs() []string {
	ids := make([]string, len(in.gens))
	for i, g := range in.gens {
		ids[i] = g.ID()
	}
	return ids
}

// batchBuf is one batch's memory, reused once its write is finished.
type batchBuf struct {
	docs []target.Document
	json []byte
}

// Run schedules batches from start for the configured duration, waits for
// the writes in flight and returns the accounting. A cancelled ctx stops the
// schedule early; writes already sent still finish (bounded by the write
// timeout) so that their outcome is counted.
func (in *Ingester) Run(ctx context.Context, start time.Time, series *stats.Series) *Accounting {
	in.series = series
	in.account = newAccounting(start, in.cfg.Warmup, in.cfg.Duration)
	writeCtx := context.WithoutCancel(ctx)
	var streams sync.WaitGroup
	for _, g := range in.gens {
		streams.Add(1)
		go func() {
			defer streams.Done()
			in.stream(ctx, writeCtx, g, start)
		}()
	}
	streams.Wait()
	in.account.stop(time.Now())
	in.wg.Wait()
	return in.account
}

// stream paces one generator. Each batch is due at its intended time; when
// the in-flight bound is reached it waits and is counted late. Batches still
// due when the run ends are counted as unsent, never silently dropped.
func (in *Ingester) stream(ctx, writeCtx context.Context, g *docgen.Generator, start time.Time) {
	n := float64(len(in.gens))
	sched := pace.NewSchedule(start, in.cfg.Rate.Scale(1/n))
	end := start.Add(in.cfg.Duration)
	// A batch is late when it waited for an in-flight slot, or when the
	// pacer itself fell behind by more than one batch interval (at least
	// 10 ms, so that timer jitter of a busy machine is not counted).
	lateAfter := max(in.batchInterval(), 10*time.Millisecond)
	var probeEvery time.Duration
	if in.cfg.ProbeRate > 0 {
		probeEvery = time.Duration(float64(time.Second) * n / in.cfg.ProbeRate)
	}
	nextProbe := start
	for {
		intended := sched.Next()
		if !intended.Before(end) {
			return
		}
		if !pace.Sleep(intended, ctx.Done()) {
			in.account.unsent(in.cfg.Rate.Scale(1/n), intended, end, in.cfg.DocSize)
			return
		}
		waited := false
		select {
		case in.sem <- struct{}{}:
		default:
			waited = true
			select {
			case in.sem <- struct{}{}:
			case <-ctx.Done():
				in.account.unsent(in.cfg.Rate.Scale(1/n), intended, end, in.cfg.DocSize)
				return
			}
		}
		dispatch := time.Now()
		if !dispatch.Before(end) {
			<-in.sem
			in.account.unsent(in.cfg.Rate.Scale(1/n), intended, end, in.cfg.DocSize)
			return
		}
		lateness := dispatch.Sub(intended)
		late := waited || lateness > lateAfter
		b, bb := in.build(g, intended)
		if probeEvery > 0 && !intended.Before(nextProbe) && in.probes != nil {
			in.probes.Add(b.Generator, b.Docs[0].ID, intended)
			nextProbe = intended.Add(probeEvery)
		}
		bytes := len(bb.json)
		sched.Advance(len(b.Docs), bytes)
		in.account.dispatched(intended, lateness, late, len(b.Docs))
		in.series.Scheduled(intended, int64(len(b.Docs)), late, int64(len(in.sem)))
		in.obs.Scheduled(b.Generator, len(b.Docs), late, len(in.sem))
		in.wg.Add(1)
		go in.write(writeCtx, b, bb, intended, dispatch)
	}
}

// batchInterval is the nominal time between two batches of one stream.
func (in *Ingester) batchInterval() time.Duration {
	perStream := in.cfg.Rate.PerSecond / float64(len(in.gens))
	units := float64(in.cfg.BatchSize)
	if in.cfg.Rate.Unit == pace.Bytes {
		units *= float64(in.cfg.DocSize)
	}
	return time.Duration(units / perStream * float64(time.Second))
}

// build generates one batch whose events carry the batch's intended time
// as _event_time, so that a driver or database that falls behind shows up
// in the freshness lag instead of being hidden by late generation.
func (in *Ingester) build(g *docgen.Generator, intended time.Time) (target.Batch, *batchBuf) {
	bb, _ := in.bufs.Get().(*batchBuf)
	if bb == nil {
		bb = &batchBuf{}
	}
	docs, buf := bb.docs[:0], bb.json[:0]
	eventTime := intended.UnixMicro()
	for i := 0; i < in.cfg.BatchSize; i++ {
		var d target.Document
		d, buf = g.Next(buf, eventTime)
		docs = append(docs, d)
	}
	// Next may have grown buf; earlier documents still point into the
	// previous array, which stays valid, but re-slice so all share one.
	off := 0
	for i := range docs {
		l := len(docs[i].JSON)
		docs[i].JSON = buf[off : off+l : off+l]
		off += l
	}
	bb.docs, bb.json = docs, buf
	return target.Batch{Generator: g.ID(), Docs: docs}, bb
}

// write sends one batch, retrying a request that failed as a whole, and
// accounts for its outcome item by item.
func (in *Ingester) write(ctx context.Context, b target.Batch, bb *batchBuf, intended, dispatch time.Time) {
	defer in.wg.Done()
	defer func() { <-in.sem }()
	defer in.bufs.Put(bb)
	var (
		res      target.WriteResult
		err      error
		attempts int
	)
	for {
		attempts++
		wctx, cancel := context.WithTimeout(ctx, in.cfg.WriteTimeout)
		res, err = in.tgt.Write(wctx, b)
		cancel()
		if err == nil || attempts > in.cfg.WriteRetries {
			break
		}
		time.Sleep(min(time.Duration(attempts)*100*time.Millisecond, time.Second))
	}
	ack := time.Now()
	o := outcome{
		intended: intended, dispatch: dispatch, ack: ack,
		events: len(b.Docs), bytes: len(bb.json), retries: res.Retries + attempts - 1,
	}
	if err != nil {
		o.failed = len(b.Docs)
		o.errorKinds = map[string]int{stats.ErrorKind(err): len(b.Docs)}
		o.sample = err.Error()
		if in.probes != nil {
			in.dropProbes(b)
		}
	} else {
		o.acked, o.failed, o.errorKinds = res.Acknowledged, res.Failed, res.ErrorKinds
		if res.Failed > 0 {
			o.bytes = o.bytes * res.Acknowledged / len(b.Docs)
		}
		if in.ledger != nil {
			in.ledger.Acked(b.Generator, ackedSeqs(b, res.FailedSeqs))
		}
		if in.probes != nil && slices.Contains(res.FailedSeqs, b.Docs[0].Seq) {
			in.dropProbes(b)
		}
	}
	in.account.written(o)
	in.series.Written(ack, int64(o.acked), int64(o.bytes), int64(o.failed), ack.Sub(intended))
	in.obs.Written(b.Generator, o.acked, o.failed, o.bytes, o.errorKinds, ack.Sub(intended), ack.Sub(dispatch))
}

// dropProbes forgets the batch's probe: its write failed, so it may never
// become visible and must not be counted as slow.
func (in *Ingester) dropProbes(b target.Batch) { in.probes.Drop(b.Generator, b.Docs[0].ID) }

func ackedSeqs(b target.Batch, failed []int64) []int64 {
	bad := make(map[int64]bool, len(failed))
	for _, s := range failed {
		bad[s] = true
	}
	out := make([]int64, 0, len(b.Docs)-len(failed))
	for _, d := range b.Docs {
		if !bad[d.Seq] {
			out = append(out, d.Seq)
		}
	}
	return out
}
