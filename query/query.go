// Package query is freshbench's query workload: parameterized queries of
// several kinds (point lookup, array membership, aggregation, newest-N,
// events per second), mixed by weight, with parameter values drawn from
// documents actually written, sent to a target alone or beside a
// streaming ingest.
//
// Two ways to load the target:
//
//   - open loop at a target QPS: query k is due at start + k/QPS whatever
//     the database does. Its latency runs from that intended time to the
//     answer and its service time from the moment it was sent, so a
//     database that falls behind shows in the latency instead of slowing
//     the schedule down (no coordinated omission). In-flight queries are
//     bounded; a query that waits for a slot, or that the pacer sends
//     more than one interval (at least 10 ms) after its intended time, is
//     late, and queries still due when the run ends are counted as unsent.
//   - closed loop at a fixed concurrency: each worker sends its next query
//     when the previous one is answered. A query is intended when it is
//     sent, so latency equals service time; this measures capacity, not
//     latency under a given load.
//
// Only answered queries enter the latency histograms (a fast failure
// would flatter them); failures are counted by kind of error.
package query

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/freshbench/freshbench/dispatch"
	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/timeline"
)

// Config is one query workload.
type Config struct {
	Mix Mix
	QPS float64 // open loop: queries per second over all kinds
	// Shape varies the open loop's QPS over the run (pace.Shape),
	// measured from the run's start: QPS × Shape.Factor(t).
	Shape       pace.Shape
	Concurrency int           // closed loop: workers, each with one query in flight
	MaxInflight int           // open loop: bound on queries in flight
	MissShare   float64       // share of queries whose parameter was never written (see pool.draw for queries of one's own)
	Limit       int           // rows a query returns at most (documents, or groups)
	Timeout     time.Duration // per query
	Settle      time.Duration // a written document becomes a parameter source this long after its acknowledgement
	SampleSize  int           // stored documents read at the start to draw parameters from
	Seed        uint64        // 0 = random; otherwise the same kinds and parameters in the same order
	// Own are the queries of the user's own that Mix may name.
	Own []Own
}

// Validate names the first bad setting by its flag, and what is accepted.
func (c Config) Validate() error {
	switch {
	case len(c.Mix) == 0:
		return invalid.New(invalid.Mix, "(empty)", "kind=weight pairs, e.g. point=4,array=3,aggregate=2,newest=1")
	case c.QPS < 0:
		return invalid.New(invalid.QPS, c.QPS, "a positive number of queries per second")
	case c.Concurrency < 0:
		return invalid.New(invalid.Concurrency, c.Concurrency, "1 or more workers")
	case (c.QPS > 0) == (c.Concurrency > 0):
		return invalid.New(invalid.QPSAndConcurrency, fmt.Sprintf("%g and %d", c.QPS, c.Concurrency), "one of the two: a QPS (open loop at a target rate) or a concurrency (closed loop with that many workers)")
	case !c.Shape.IsConstant() && c.QPS <= 0:
		return invalid.New(invalid.QueryShape, strconv.Quote(c.Shape.String()), "a shape of an open-loop load: give a QPS, not a concurrency")
	case c.QPS > 0 && c.MaxInflight <= 0:
		return invalid.New(invalid.QueryInflight, c.MaxInflight, "1 or more")
	case c.MissShare < 0 || c.MissShare > 1:
		return invalid.New(invalid.MissShare, c.MissShare, "a fraction from 0 to 1")
	case c.Limit <= 0:
		return invalid.New(invalid.Limit, c.Limit, "1 or more rows")
	case c.Timeout <= 0:
		return invalid.New(invalid.QueryTimeout, c.Timeout, "a positive duration, e.g. 10s")
	case c.Settle < 0:
		return invalid.New(invalid.Settle, c.Settle, "0 or more")
	case c.SampleSize < 0:
		return invalid.New(invalid.SampleSize, c.SampleSize, "0 or more documents")
	}
	return nil
}

// ErrNoParameters means there is nothing to draw query parameters from.
var ErrNoParameters = errors.New("no stored document to draw query parameters from")

// Load runs one workload against one read endpoint.
type Load struct {
	cfg      Config
	endpoint string // the read endpoint's name, for the observer
	q        target.Querier
	obs      stats.Observer
	pool     *pool

	mu  sync.Mutex // guards rng
	rng *rand.Rand

	own map[target.QueryKind]*compiled // the mix's kinds
}

// New prepares a workload on the read endpoint q, named endpoint; obs may
// be nil.
func New(cfg Config, endpoint string, q target.Querier, obs stats.Observer) (*Load, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	seed := cfg.Seed
	if seed == 0 {
		var b [8]byte
		if _, err := crand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("query workload: random seed: %w", err)
		}
		seed = binary.LittleEndian.Uint64(b[:])
	}
	l := &Load{
		cfg: cfg, endpoint: endpoint, q: q, obs: obs,
		pool: newPool(cfg.Settle, seed),
		rng:  rand.New(rand.NewPCG(seed, 2)),
	}
	own, err := compileOwn(cfg, q.Name(), l.pool)
	if err != nil {
		return nil, err
	}
	l.own = own
	return l, nil
}

// compileOwn readies each kind of the mix for family and registers the
// fields it draws from with p: a query of one's own, or else the shipped
// kind of that name (Kinds).
func compileOwn(cfg Config, family string, p *pool) (map[target.QueryKind]*compiled, error) {
	out := map[target.QueryKind]*compiled{}
	var shipped []Own
	for _, w := range cfg.Mix {
		named := func(o Own) bool { return o.Name == string(w.Kind) }
		qs := cfg.Own
		if !slices.ContainsFunc(qs, named) {
			if shipped == nil {
				shipped = Kinds()
			}
			qs = shipped
		}
		i := slices.IndexFunc(qs, named)
		if i < 0 {
			return nil, fmt.Errorf("query kind %s: neither a shipped kind nor a query of the workload file", w.Kind)
		}
		c, err := qs[i].compile(family, cfg.Limit)
		if err != nil {
			return nil, err
		}
		for _, prm := range qs[i].Params {
			c.fields = append(c.fields, p.field(prm))
		}
		out[w.Kind] = c
	}
	return out, nil
}

// Tap returns t with its writes observed: one acknowledged document of
// every batch written through it becomes a parameter source, Settle
// later. Give the returned target to the ingest that runs beside.
func (l *Load) Tap(t target.Target) target.Target {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	l.pool.tapped = true
	return &tap{Target: t, pool: l.pool}
}

// Prepare reads a sample of what the target holds already, so that the
// workload can start on existing data. Without a tapped ingest (call Tap
// first when one runs beside) an empty sample is ErrNoParameters.
func (l *Load) Prepare(ctx context.Context) error {
	if l.cfg.SampleSize > 0 {
		docs, err := l.q.Sample(ctx, l.cfg.SampleSize)
		if err != nil {
			return fmt.Errorf("sample stored documents for query parameters: %w", err)
		}
		l.pool.seed(docs)
	}
	l.pool.mu.Lock()
	tapped := l.pool.tapped
	l.pool.mu.Unlock()
	if !tapped && !l.pool.ready() {
		return ErrNoParameters
	}
	return nil
}

// texts returns each kind of mix as q would send it, with a parameter
// drawn from p; ok is false while p has nothing to draw.
func texts(p *pool, q target.Querier, mix Mix, own map[target.QueryKind]*compiled) (map[target.QueryKind]string, bool) {
	out := map[target.QueryKind]string{}
	for _, w := range mix {
		args, _, ok := p.draw(own[w.Kind], 0)
		if !ok {
			return nil, false
		}
		out[w.Kind] = q.QueryText(own[w.Kind].query(w.Kind, args))
	}
	return out, true
}

// Explain returns each kind of cfg's mix as q would send it, with a
// parameter taken from a sample of what q holds, or from a generated event
// when it holds none, so that a user can read the queries before a run.
// A kind needs events that hold its fields.
func Explain(ctx context.Context, q target.Querier, cfg Config) (map[target.QueryKind]string, error) {
	p := newPool(0, 1)
	own, err := compileOwn(cfg, q.Name(), p)
	if err != nil {
		return nil, err
	}
	docs, err := q.Sample(ctx, 100)
	if err != nil {
		return nil, fmt.Errorf("sample stored documents for example parameters: %w", err)
	}
	p.seed(docs)
	if !p.ready() {
		g, err := docgen.New(docgen.Config{Seed: 1})
		if err != nil {
			return nil, err
		}
		d, _ := g.Next(nil, time.Now().UnixMicro())
		p.seed([][]byte{d.JSON})
	}
	t, ok := texts(p, q, cfg.Mix, own)
	if !ok {
		return nil, ErrNoParameters // a kind found none of its fields
	}
	return t, nil
}

// Run sends queries over tl and returns what it measured, recording each
// query also in series (which may be nil). Queries due before the
// measured phase warm the target up and are not recorded; none is sent
// from tl's end on. The run ends early when ctx
// ends; queries already sent still finish (each bounded by the timeout)
// so that their outcome counts. The first query goes out once there is
// a parameter to draw: at tl's start after Prepare found stored documents,
// otherwise when the first written ones have settled (waited_s).
func (l *Load) Run(ctx context.Context, tl *timeline.Timeline, series *stats.Series) *results.Queries {
	begin := l.waitReady(ctx, tl)
	examples, _ := texts(l.pool, l.q, l.cfg.Mix, l.own)
	rec := newRecorder(l.cfg, tl, begin, examples, l.endpoint, stats.NewRecorder(series, l.obs))
	switch {
	case ctx.Err() != nil:
		rec.stop(begin) // stopped before the first query: nothing measured
	case begin.Before(tl.End()):
		stop, stopped := make(chan struct{}), make(chan struct{})
		go func() { defer close(stopped); l.settler(stop) }()
		if l.cfg.QPS > 0 {
			l.openLoop(ctx, tl.Start(), begin, tl.End(), rec)
		} else {
			l.closedLoop(ctx, tl.End(), rec)
		}
		close(stop)
		<-stopped
	}
	return rec.result()
}

// settler adds written documents to the pool as they settle, until stop
// is closed, so that neither the writes nor the draws wait for parsing.
func (l *Load) settler(stop <-chan struct{}) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			l.pool.settleDue(now)
		}
	}
}

// waitReady returns when the first query can be drawn (or tl's end, or
// ctx ended).
func (l *Load) waitReady(ctx context.Context, tl *timeline.Timeline) time.Time {
	if !pace.Sleep(tl.Start(), ctx.Done()) {
		return tl.Start()
	}
	for {
		now := time.Now()
		l.pool.settleDue(now)
		if l.pool.ready() || !now.Before(tl.End()) {
			return now
		}
		if !pace.Sleep(now.Add(20*time.Millisecond), ctx.Done()) {
			return time.Now()
		}
	}
}

// next picks the kind and parameter of the next query.
func (l *Load) next() (target.Query, bool) {
	l.mu.Lock()
	kind := l.cfg.Mix.pick(l.rng)
	l.mu.Unlock()
	c := l.own[kind]
	args, miss, _ := l.pool.draw(c, l.cfg.MissShare) // ready: every field has a value
	return c.query(kind, args), miss
}

// openLoop sends queries at their intended times until end, through the
// same dispatcher as the ingest's batches.
func (l *Load) openLoop(ctx context.Context, start, begin, end time.Time, rec *recorder) {
	// A shape is measured from the run's start, so that a burst of
	// queries falls where it was declared whenever the first could go.
	sch := pace.NewSchedule(begin, pace.Rate{PerSecond: l.cfg.QPS, Unit: pace.Events})
	if !l.cfg.Shape.IsConstant() {
		sch = pace.NewShapedSchedule(start, pace.Rate{PerSecond: l.cfg.QPS, Unit: pace.Events}, l.cfg.Shape)
		sch.From(begin)
	}
	stopped := dispatch.Stream{
		Schedule: sch,
		End:      end,
		Slots:    dispatch.NewSlots(l.cfg.MaxInflight),
		// The same rule as the ingest's batches: the pacer behind by more
		// than an interval (at least 10 ms, timer jitter on a busy machine).
		LateAfter: max(time.Duration(float64(time.Second)/l.cfg.QPS), 10*time.Millisecond),
		// A query in flight ends within its timeout, freeing the slot of
		// the one waiting at the end.
		FinalWait:  l.cfg.Timeout + time.Second,
		UnitEvents: 1, UnitBytes: 1,
	}.Run(ctx, &querySender{l: l, rec: rec})
	if !stopped.IsZero() {
		rec.stop(stopped)
	}
}

// querySender builds and sends the open loop's queries.
type querySender struct {
	l   *Load
	rec *recorder
}

func (s *querySender) Build(d dispatch.Due) dispatch.Unit {
	q, miss := s.l.next()
	return dispatch.Unit{Events: 1, Send: func(ctx context.Context) {
		s.l.send(ctx, q, miss, d.Intended, d.Sent, d.Late, s.rec)
	}}
}

func (s *querySender) Unsent(u dispatch.Unsent) { s.rec.unsent(u) }

// closedLoop runs the workers until end.
func (l *Load) closedLoop(ctx context.Context, end time.Time, rec *recorder) {
	queryCtx := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	for range l.cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				sent := time.Now()
				if !sent.Before(end) {
					return
				}
				q, miss := l.next()
				l.send(queryCtx, q, miss, sent, sent, false, rec)
			}
		}()
	}
	// An interrupted run ends its window when the workers stop sending,
	// not when the last answer arrives.
	select {
	case <-ctx.Done():
		rec.stop(time.Now())
	case <-time.After(time.Until(end)):
	}
	wg.Wait()
}

// send runs one query and records it.
func (l *Load) send(ctx context.Context, q target.Query, miss bool, intended, sent time.Time, late bool, rec *recorder) {
	qctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	rows, err := l.q.Query(qctx, q)
	cancel()
	done := time.Now()
	rec.record(outcome{kind: q.Kind, intended: intended, sent: sent, done: done, late: late, miss: miss, rows: rows, err: err})
}
