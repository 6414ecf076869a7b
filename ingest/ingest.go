// Package ingest turns generators into paced batches and writes them to a
// target, accounting for every event: acknowledged, failed, retried, late
// or never sent.
package ingest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/freshbench/freshbench/corpus"
	"github.com/freshbench/freshbench/dispatch"
	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/retry"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/timeline"
)

// Config is what one ingest run needs.
type Config struct {
	Rate pace.Rate // total over all generators
	// Shape varies the rate over the run (pace.Shape): the target at t
	// after the start is Rate × Shape.Factor(t). The zero Shape keeps
	// the rate constant.
	Shape        pace.Shape
	BatchSize    int           // events per write request
	Duration     time.Duration // how long batches are scheduled, warm-up included
	Warmup       time.Duration // leading part excluded from the measured phase
	Generators   int           // independent event streams
	MaxInflight  int           // bound on concurrent write requests
	DocSize      int           // bytes per serialized event
	DocShape     string        // docgen.ShapeRockBench (""), or docgen.ShapeNested
	Seed         uint64        // 0 = random
	WriteTimeout time.Duration // per request
	WriteRetries int           // re-sends of a request that failed as a whole
	ProbeRate    float64       // probe events per second over all generators
	MemoryLimit  int64         // bytes the batches may hold at once; 0 = DefaultMemoryLimit
	// IDNonce, when not 0, is mixed into every generator_identifier and
	// _id (docgen.Config.Nonce): runs with the same Seed write the same
	// documents under ids of their own.
	IDNonce uint64
	// UpdateShare is the share of events, in [0, 1), that update an
	// event already acknowledged instead of inserting a new one; the rate
	// counts both. Until an event is acknowledged there is nothing to
	// update, and those slots carry inserts.
	UpdateShare float64
	// UpdateKeys chooses which event an update updates.
	UpdateKeys KeyChoice
	// Corpus, when not nil, is replayed instead of generated payloads
	// (docgen.Config.Corpus); DocSize and DocShape are then not used.
	Corpus *corpus.Corpus
	// Template, when not nil and without a corpus, writes the payloads
	// (docgen.Config.Template); DocSize and DocShape are then not used.
	Template *docgen.Template
	// FirstGenerator is the seed's index of the first stream (the others
	// follow it), so that instances of one experiment started with the
	// same Seed draw generators of their own (see GeneratorsPerInstance).
	FirstGenerator int
}

// GeneratorsPerInstance bounds the generators of one instance of an
// experiment: instance k's streams are the seed's generators from
// k × GeneratorsPerInstance on, so no two instances share one whatever
// their generator counts.
const GeneratorsPerInstance = 1 << 20

// DefaultMemoryLimit bounds what the batches of a run may hold in memory
// at once unless the configuration raises it.
const DefaultMemoryLimit = 1 << 30

// Validate names the first bad setting and what is accepted.
func (c Config) Validate() error {
	switch {
	case c.Rate.PerSecond <= 0:
		return invalid.New(invalid.Rate, c.Rate.PerSecond, "a positive rate, e.g. 5000 (events/s) or 10MB/s")
	case c.BatchSize <= 0:
		return invalid.New(invalid.BatchSize, c.BatchSize, "a positive number of events per request")
	case c.Duration <= 0:
		return invalid.New(invalid.Duration, c.Duration, "a positive duration, e.g. 60s")
	case c.Shape.Check(c.Duration) != nil:
		return invalid.Wrap(invalid.WriteShape, strconv.Quote(c.Shape.String()), c.Shape.Check(c.Duration))
	case c.Warmup < 0 || c.Warmup >= c.Duration:
		return invalid.New(invalid.Warmup, c.Warmup, fmt.Sprintf("0 or more and less than the duration %s", c.Duration))
	case c.Generators <= 0 || c.Generators > GeneratorsPerInstance:
		return invalid.New(invalid.Generators, c.Generators, fmt.Sprintf("1..%d", GeneratorsPerInstance))
	case c.FirstGenerator < 0:
		return invalid.New(invalid.FirstGenerator, c.FirstGenerator, "0 or more")
	case c.MaxInflight <= 0:
		return invalid.New(invalid.Inflight, c.MaxInflight, "1 or more")
	case c.builtIn() && (c.DocSize < docgen.MinDocSize || c.DocSize > docgen.MaxDocSize):
		return invalid.New(invalid.DocSize, c.DocSize, fmt.Sprintf("%d..%d bytes", docgen.MinDocSize, docgen.MaxDocSize))
	case c.builtIn() && !slices.Contains(docgen.Shapes, c.DocShape) && c.DocShape != "":
		return invalid.New(invalid.DocShape, c.DocShape, strings.Join(docgen.Shapes, " or "))
	case c.builtIn() && c.DocShape == docgen.ShapeNested && c.DocSize < docgen.MinSize(docgen.ShapeNested):
		return invalid.New(invalid.DocSize, c.DocSize, fmt.Sprintf("at least %d bytes for the nested shape", docgen.MinSize(docgen.ShapeNested)))
	case c.WriteTimeout <= 0:
		return invalid.New(invalid.WriteTimeout, c.WriteTimeout, "a positive duration")
	case c.WriteRetries < 0:
		return invalid.New(invalid.WriteRetries, c.WriteRetries, "0 or more")
	case c.ProbeRate < 0:
		return invalid.New(invalid.ProbeRate, c.ProbeRate, "0 or more probes per second")
	case !(c.UpdateShare >= 0 && c.UpdateShare < 1):
		return invalid.New(invalid.UpdateShare, c.UpdateShare, "a share of the events in [0, 1), e.g. 0.5 for half updates")
	}
	if c.UpdateShare > 0 {
		if _, err := ParseKeyChoice(c.UpdateKeys.String()); err != nil {
			return err
		}
	}
	if need, limit := c.MemoryNeed(), c.memoryLimit(); need > limit {
		return invalid.New(invalid.BatchSize, c.BatchSize, fmt.Sprintf(
			"batches that fit the memory limit: batch size %d × document size %d B × (in-flight bound %d + generators %d) × 2 (documents and request body) = %s, more than the limit of %s; lower the batch size or the in-flight bound, or raise the memory limit",
			c.BatchSize, c.EventSize(), c.MaxInflight, c.Generators, pace.FormatBytes(float64(need)), pace.FormatBytes(float64(limit))))
	}
	if iv := batchInterval(c); c.Duration-c.Warmup < iv {
		return invalid.New(invalid.Duration, c.Duration, fmt.Sprintf("a measured part (after the warm-up of %s) of at least one batch interval, %s at this rate and batch size", c.Warmup, iv.Round(time.Microsecond)))
	}
	return nil
}

// MemoryNeed estimates the bytes the batches of a run hold at once: each
// slot in flight and each generator building its next batch holds the
// documents, and the request body a target builds from them.
func (c Config) MemoryNeed() int64 {
	return 2 * int64(c.BatchSize) * int64(c.EventSize()) * int64(c.MaxInflight+c.Generators)
}

// EventSize is the nominal serialized size of an event in bytes: the
// document size, or the mean event of a corpus or a template.
func (c Config) EventSize() int {
	switch {
	case c.Corpus != nil:
		return c.Corpus.MeanLine() + docgen.HeadSize
	case c.Template != nil:
		return c.Template.MeanSize()
	}
	return c.DocSize
}

// builtIn says whether the events are docgen's built-in shapes.
func (c Config) builtIn() bool { return c.Corpus == nil && c.Template == nil }

func (c Config) memoryLimit() int64 {
	if c.MemoryLimit > 0 {
		return c.MemoryLimit
	}
	return DefaultMemoryLimit
}

// batchInterval is the nominal time between two batches of one stream.
func batchInterval(c Config) time.Duration {
	perStream := c.Rate.PerSecond / float64(c.Generators)
	units := float64(c.BatchSize)
	if c.Rate.Unit == pace.Bytes {
		units *= float64(c.EventSize())
	}
	return time.Duration(units / perStream * float64(time.Second))
}

// Probes receives the sampled probe events and learns which were lost.
// A probe of an update waits for its revision (above 0).
type Probes interface {
	Add(generator, id string, revision int64, intended time.Time)
	Drop(generator, id string, revision int64)
}

// Ledger learns which events, and which revisions of updated events, the
// target acknowledged, and which inserts it did not.
type Ledger interface {
	Acked(generator string, seqs []int64)
	// NotAcknowledged records inserts written but not acknowledged,
	// which the database may have stored all the same.
	NotAcknowledged(generator string, seqs []int64)
	AckedRevisions(generator string, seqs, revisions []int64, newestUpdateTime int64)
}

// Ingester runs the generators against one target.
type Ingester struct {
	cfg     Config
	w       target.Writer
	gens    []*docgen.Generator
	probes  Probes
	ledger  Ledger
	obs     stats.Observer
	account *Accounting
	slots   *dispatch.Slots
	bufs    sync.Pool

	// With a corpus, corpusEnded stops the streams once it has ended
	// and ended says it did: what the schedule had left was never there
	// to send.
	corpusEnded context.CancelFunc
	ended       atomic.Bool
}

// sampleBytes bounds the memory a corpus's sample takes: its lines may be
// megabytes each.
const sampleBytes = 64 << 20

// ShapeTarget tells t, when it makes its table's columns from the events
// (target.EventShaped), a sample of the events cfg sends: the corpus's
// first target.ShapeSample lines (fewer when they pass sampleBytes), or
// as many events of the template. The
// built-in shapes are freshbench's own, whose table the target knows: it
// is told none. A sample the target refuses is the corpus's or the
// template's to fix.
func ShapeTarget(t target.Admin, cfg Config) error {
	sh, ok := t.(target.EventShaped)
	if !ok || cfg.builtIn() {
		return nil
	}
	var sample [][]byte
	if cfg.Corpus != nil {
		var err error
		if sample, err = cfg.Corpus.Head(target.ShapeSample, sampleBytes); err != nil {
			return invalid.Wrap(invalid.Corpus, strings.Join(cfg.Corpus.Files(), ","), err)
		}
	} else {
		g, err := docgen.New(docgen.Config{Template: cfg.Template, Seed: cfg.Seed})
		if err != nil {
			return err
		}
		for range target.ShapeSample {
			d, _ := g.Next(nil, 0)
			sample = append(sample, d.JSON)
		}
	}
	if err := sh.ShapeEvents(sample); err != nil {
		if cfg.Corpus != nil {
			return invalid.Wrap(invalid.Corpus, strings.Join(cfg.Corpus.Files(), ","), err)
		}
		return invalid.Wrap(invalid.Template, cfg.Template.Name(), err)
	}
	return nil
}

// New prepares an ingester; probes, ledger and obs may be nil.
func New(cfg Config, w target.Writer, probes Probes, ledger Ledger, obs stats.Observer) (*Ingester, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	in := &Ingester{cfg: cfg, w: w, probes: probes, ledger: ledger, obs: obs, slots: dispatch.NewSlots(cfg.MaxInflight)}
	for i := 0; i < cfg.Generators; i++ {
		g, err := docgen.New(docgen.Config{DocSize: cfg.DocSize, Shape: cfg.DocShape, Corpus: cfg.Corpus, Template: cfg.Template, Seed: cfg.Seed, Nonce: cfg.IDNonce, Index: cfg.FirstGenerator + i})
		if err != nil {
			return nil, invalid.Wrap(invalid.DocSize, cfg.DocSize, err)
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

// Run schedules batches over tl (from its start to its end, the
// configured duration), waits for the writes in flight and returns the
// accounting; a stop moves tl's end to the instant the schedule stopped. A cancelled ctx stops the
// schedule early; writes already sent still finish (bounded by the write
// timeout) so that their outcome is counted.
func (in *Ingester) Run(ctx context.Context, tl *timeline.Timeline, series *stats.Series) *Accounting {
	in.account = newAccounting(tl, stats.NewRecorder(series, in.obs))
	if in.cfg.Corpus != nil {
		// The end of the corpus (or a read error) stops every stream, as
		// an interrupt does.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		in.corpusEnded = cancel
	}
	start := tl.Start()
	n := float64(len(in.gens))
	var streams sync.WaitGroup
	for i, g := range in.gens {
		s := dispatch.Stream{
			Schedule: pace.NewShapedSchedule(start, in.cfg.Rate.Scale(1/n), in.cfg.Shape),
			End:      tl.End(),
			Slots:    in.slots,
			// Timer jitter of a busy machine is not lateness.
			LateAfter: max(batchInterval(in.cfg), 10*time.Millisecond),
			// A batch waiting for a slot at the end is sent once one frees:
			// every write in flight ends within its timeouts and back-offs.
			FinalWait:  time.Duration(in.cfg.WriteRetries+1)*(in.cfg.WriteTimeout+retry.Default().Max) + time.Second,
			UnitEvents: in.cfg.BatchSize, UnitBytes: in.cfg.BatchSize * in.cfg.EventSize(),
		}
		snd := &sender{in: in, g: g}
		if in.cfg.UpdateShare > 0 {
			// Seeded apart from the documents, per stream.
			snd.keys = newKeyPool(in.cfg.UpdateKeys, in.cfg.Seed^0xa0761d6478bd642f+uint64(in.cfg.FirstGenerator+i)*0x9e3779b97f4a7c15)
		}
		if in.cfg.ProbeRate > 0 && in.probes != nil {
			snd.probeEvery = time.Duration(float64(time.Second) * n / in.cfg.ProbeRate)
			snd.nextProbe = start
		}
		streams.Add(1)
		go func() {
			defer streams.Done()
			if stopped := s.Run(ctx, snd); !stopped.IsZero() {
				tl.Stop(stopped) // the earliest stream's instant ends the schedule
			}
		}()
	}
	streams.Wait()
	return in.account
}

// sender builds and writes the batches of one generator.
type sender struct {
	in         *Ingester
	g          *docgen.Generator
	keys       *keyPool // nil: inserts only
	probeEvery time.Duration
	// When the next probe of an insert and of an update is due.
	nextProbe, nextUpdateProbe time.Time
}

// built is one batch on its way: its documents, and where its updates'
// events sit in the key pool.
type built struct {
	batch   target.Batch
	buf     *docgen.Buffer
	updates []update
	// The documents whose visibility is probed; -1 for none.
	probe, updateProbe int
}

// update is one update of a batch: its document's place in the batch and
// its event's in the key pool.
type update struct{ doc, key int }

func (s *sender) Build(d dispatch.Due) dispatch.Unit {
	in := s.in
	w := in.build(s, d.Intended)
	b := w.batch
	if len(b.Docs) == 0 { // the corpus had ended: nothing to send or count
		return dispatch.Unit{Send: func(context.Context) { in.bufs.Put(w.buf) }}
	}
	if s.probeEvery > 0 && w.probe >= 0 && !d.Intended.Before(s.nextProbe) {
		in.probes.Add(b.Generator, b.Docs[w.probe].ID, 0, d.Intended)
		s.nextProbe = d.Intended.Add(s.probeEvery)
	} else {
		w.probe = -1
	}
	if s.probeEvery > 0 && w.updateProbe >= 0 && !d.Intended.Before(s.nextUpdateProbe) {
		u := b.Docs[w.updateProbe]
		in.probes.Add(b.Generator, u.ID, u.Revision, d.Intended)
		s.nextUpdateProbe = d.Intended.Add(s.probeEvery)
	} else {
		w.updateProbe = -1
	}
	in.account.dispatched(b.Generator, d, len(b.Docs), len(w.updates), in.slots.InUse())
	return dispatch.Unit{
		Events: len(b.Docs), Bytes: len(w.buf.JSON),
		Send: func(ctx context.Context) { in.write(ctx, s, w, d) },
	}
}

// Unsent counts the batches never sent, but none after the corpus ended:
// they had no events.
func (s *sender) Unsent(u dispatch.Unsent) {
	if s.in.ended.Load() {
		return
	}
	s.in.account.unsent(s.g.ID(), u)
}

// build generates one batch whose events carry the batch's intended time
// as _event_time (an update: as _update_time), so that a driver or
// database that falls behind shows up in the freshness lag instead of
// being hidden by late generation. With an update share, each event is an
// update of an acknowledged event with that probability.
func (in *Ingester) build(s *sender, intended time.Time) built {
	bb, _ := in.bufs.Get().(*docgen.Buffer)
	if bb == nil {
		bb = &docgen.Buffer{}
	}
	bb.Reset()
	w := built{buf: bb, probe: -1, updateProbe: -1}
	eventTime := intended.UnixMicro()
	for range in.cfg.BatchSize {
		if s.keys != nil {
			if k, rev, at, ok := s.keys.take(in.cfg.UpdateShare); ok {
				if !bb.AppendRevision(s.g, k, rev, eventTime) {
					s.keys.done(at, k.ID)
					in.endCorpus()
					break
				}
				if w.updateProbe < 0 {
					w.updateProbe = len(bb.Docs) - 1
				}
				w.updates = append(w.updates, update{doc: len(bb.Docs) - 1, key: at})
				continue
			}
		}
		if !bb.Append(s.g, eventTime) {
			in.endCorpus()
			break
		}
		if w.probe < 0 {
			w.probe = len(bb.Docs) - 1
		}
	}
	bb.Seal()
	w.batch = target.Batch{Generator: s.g.ID(), Docs: bb.Docs}
	return w
}

// endCorpus stops the run at the end of its corpus, or at a read error
// (corpus.Corpus.Err).
func (in *Ingester) endCorpus() {
	in.ended.Store(true)
	in.corpusEnded()
}

// write sends one batch and accounts for its outcome item by item.
func (in *Ingester) write(ctx context.Context, s *sender, w built, d dispatch.Due) {
	defer in.bufs.Put(w.buf)
	b := w.batch
	a := WriteBatch(ctx, in.w, b, in.cfg.WriteTimeout, in.cfg.WriteRetries)
	ack := time.Now()
	updatesAcked := 0
	if len(w.updates) == 0 {
		if in.ledger != nil && len(a.AckedSeqs) > 0 {
			in.ledger.Acked(b.Generator, a.AckedSeqs)
		}
		if in.ledger != nil && len(a.AckedSeqs) < len(b.Docs) {
			in.ledger.NotAcknowledged(b.Generator, notAcked(b.Docs, a.AckedSeqs))
		}
		if s.keys != nil && len(a.AckedSeqs) > 0 {
			s.keys.add(ackedKeys(b.Docs, a.AckedSeqs))
		}
		if in.probes != nil && w.probe >= 0 && a.ProbeFailed {
			// The probe's write failed, so it may never become visible and
			// must not be counted as slow.
			in.probes.Drop(b.Generator, b.Docs[w.probe].ID, 0)
		}
	} else {
		updatesAcked = in.settle(s, w, a)
	}
	in.account.written(outcome{
		generator: b.Generator, due: d, ack: ack, bytes: a.AckedBytes, acked: a.Acked, failed: a.Failed,
		ackedOnRetry: a.AckedOnRetry, retries: a.Retries, errorKinds: a.ErrorKinds, sample: a.Sample,
		updates: len(w.updates), updatesAcked: updatesAcked,
	})
}

// ackedKeys are the keys of the acknowledged inserts of docs (acked: the
// _seq of every acknowledged event, in batch order).
func ackedKeys(docs []target.Document, acked []int64) []docgen.Key {
	keys := make([]docgen.Key, 0, len(acked))
	j := 0
	for _, d := range docs {
		if j < len(acked) && acked[j] == d.Seq {
			j++
			if d.Revision == 0 {
				keys = append(keys, docgen.Key{ID: d.ID, Seq: d.Seq, EventTime: d.EventTime})
			}
		}
	}
	return keys
}

// notAcked are the _seqs of the inserts of docs not among acked (the
// _seq of every acknowledged event, in batch order). A write whose
// target did not say which of its events failed acknowledged none by
// name, and all of its events are here.
func notAcked(docs []target.Document, acked []int64) []int64 {
	seqs := make([]int64, 0, len(docs)-len(acked))
	j := 0
	for _, d := range docs {
		if j < len(acked) && acked[j] == d.Seq {
			j++
			continue
		}
		if d.Revision == 0 {
			seqs = append(seqs, d.Seq)
		}
	}
	return seqs
}

// settle books the outcome of a batch with updates: its acknowledged
// inserts and revisions go to the ledger, the inserts join the key pool,
// the updated events are free to be updated again, and a probe whose
// write failed is dropped. It returns how many updates were acknowledged.
func (in *Ingester) settle(s *sender, w built, a Attempt) (updatesAcked int) {
	b := w.batch
	acked := make(map[int64]bool, len(a.AckedSeqs))
	for _, seq := range a.AckedSeqs {
		acked[seq] = true
	}
	var inserts, unacked, seqs, revs []int64
	var newest int64
	var keys []docgen.Key
	for _, d := range b.Docs {
		switch {
		case !acked[d.Seq]:
			if d.Revision == 0 {
				unacked = append(unacked, d.Seq)
			}
		case d.Revision > 0:
			seqs, revs = append(seqs, d.Seq), append(revs, d.Revision)
			newest = max(newest, d.UpdateTime)
		default:
			inserts = append(inserts, d.Seq)
			keys = append(keys, docgen.Key{ID: d.ID, Seq: d.Seq, EventTime: d.EventTime})
		}
	}
	if in.ledger != nil {
		if len(inserts) > 0 {
			in.ledger.Acked(b.Generator, inserts)
		}
		if len(unacked) > 0 {
			in.ledger.NotAcknowledged(b.Generator, unacked)
		}
		if len(seqs) > 0 {
			in.ledger.AckedRevisions(b.Generator, seqs, revs, newest)
		}
	}
	s.keys.add(keys)
	for _, u := range w.updates {
		s.keys.done(u.key, b.Docs[u.doc].ID)
	}
	if in.probes != nil {
		if w.probe >= 0 && !acked[b.Docs[w.probe].Seq] {
			in.probes.Drop(b.Generator, b.Docs[w.probe].ID, 0)
		}
		if u := w.updateProbe; u >= 0 && !acked[b.Docs[u].Seq] {
			in.probes.Drop(b.Generator, b.Docs[u].ID, b.Docs[u].Revision)
		}
	}
	return len(seqs)
}
