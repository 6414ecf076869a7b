// Package sim is an in-memory target whose behaviour is set exactly: how
// long a written event takes to become visible, how many events per second
// it accepts, which acknowledged events it silently loses. The tests use it
// to check that freshbench reads back what the target does; users can use
// it to see what the figures mean before pointing freshbench at a database.
//
// URL: sim://?visibility_delay=200ms&capacity=5000&write_delay=1ms&drop_every=100&fail_stored_every=500&query_cost=20&update_delay=100ms&lose_update_every=50
// discard:// acknowledges everything and keeps nothing (driver benchmarks);
// its Reader methods return target.ErrNotKept.
package sim

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/target"
)

// Config is the behaviour of a simulated target.
type Config struct {
	VisibilityDelay time.Duration // written → visible to queries
	WriteDelay      time.Duration // service time of every write
	QueryDelay      time.Duration // service time of every query
	Capacity        float64       // events per second accepted at most; 0 = unbounded
	// QueryCost is how many events' worth of the capacity one query of
	// the query workload takes: queries then queue with the writes, and
	// a database that ingests more answers fewer queries.
	QueryCost float64
	DropEvery int  // lose every Nth acknowledged event; 0 = none
	Discard   bool // keep nothing (every query sees nothing)
	// FailStoredEvery answers every Nth insert as failed (a duplicate
	// id) although it stores it, as Elasticsearch answers its own
	// retry of a bulk item it had stored before a node left. 0 = none.
	FailStoredEvery int
	// UpdateDelay is how much later than an insert an update becomes
	// visible: VisibilityDelay + UpdateDelay after it is acknowledged.
	UpdateDelay time.Duration
	// LoseUpdateEvery loses every Nth acknowledged update: the event
	// keeps its older revision. 0 = none.
	LoseUpdateEvery int
}

// Register adds the sim and discard schemes to r.
func Register(r *target.Registry) {
	r.Register(target.Driver{Name: "sim", Schemes: []string{"sim"}, Open: Open, Knobs: knobs(), Updates: true, InProcess: true})
	r.Register(target.Driver{Name: "discard", Schemes: []string{"discard"}, Open: Open, Updates: true, InProcess: true})
}

// Open reads the behaviour of a sim:// target from the URL's query and the
// settings (the same knobs; a knob given both ways must agree). A query
// parameter that is not a knob is refused: a misspelt one would otherwise
// leave a behaviour silently at its default. discard:// takes none.
func Open(_ context.Context, u *url.URL, opts target.Options) (target.Target, error) {
	q := u.Query()
	if u.Scheme == "discard" {
		if len(q) > 0 || len(opts.Settings) > 0 {
			return nil, fmt.Errorf("%w: discard:// takes no parameters or settings", target.ErrBadURL)
		}
		return New(Config{Discard: true}), nil
	}
	settings, err := knobs().ResolveURL(q, opts.Settings)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	t := New(configOf(settings))
	t.settings = settings
	return t, nil
}

// event is one stored insert or revision. Its visibility is kept since
// the target's epoch, not as a time.Time: two thirds smaller and without
// the Location pointer, the millions of events a peak search stores cost
// less to grow and for the collector to scan.
type event struct {
	visible   time.Duration // since epoch
	id        string
	seq       int64
	eventTime int64
	newest    int64 // max eventTime of this and all earlier entries
}

// ErrorEmptyDocument is the error kind of a document without a body (no
// JSON): the one item the sim refuses, as a database refuses a document it
// cannot parse.
const ErrorEmptyDocument = "empty_document"

// Target is the simulated database.
type Target struct {
	cfg      Config
	settings target.Settings // as resolved by Open; nil from New

	capMu    sync.Mutex
	capacity time.Time // when the simulated server is free again

	mu     sync.Mutex
	events map[string][]event // by generator, in order of visibility
	// ids is when each id becomes visible, indexed from events only when
	// a read by id needs it (indexed: how many of each generator's
	// events it holds): most runs never read by id, and filling a map of
	// every id was most of a write's cost.
	// Its times are since epoch: a third of a time.Time's size, a third
	// of the memory the map's lookups go through.
	ids     map[string]time.Duration
	epoch   time.Time
	indexed map[string]int
	acked   int64
	inserts int64 // written, acknowledged or not
	// updates are the revisions written, by generator in order of
	// visibility (newest is then their update time); revs the revisions of
	// each id, in the order written.
	updates      map[string][]event
	revs         map[string][]revision
	ackedUpdates int64
	ackedRevs    map[string]ackedRevision // by id: the revision acknowledged last
}

type ackedRevision struct {
	gen string
	rev int64
}

// revision is one written revision of an event.
type revision struct {
	visibleAt time.Time
	rev       int64
}

// New returns a simulated target.
func New(cfg Config) *Target {
	t := &Target{cfg: cfg}
	t.Reset()
	return t
}

func (t *Target) Name() string                   { return "sim" }
func (t *Target) Setup(context.Context) error    { return nil }
func (t *Target) Teardown(context.Context) error { t.Reset(); return nil }
func (t *Target) Close() error                   { return nil }
func (t *Target) Version(context.Context) (string, error) {
	return fmt.Sprintf("sim (visibility_delay=%s capacity=%g)", t.cfg.VisibilityDelay, t.cfg.Capacity), nil
}

// Reset forgets every event.
func (t *Target) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events, t.ids, t.indexed, t.acked, t.inserts = map[string][]event{}, map[string]time.Duration{}, map[string]int{}, 0, 0
	t.epoch = time.Now()
	t.updates, t.revs, t.ackedUpdates, t.ackedRevs = map[string][]event{}, map[string][]revision{}, 0, map[string]ackedRevision{}
}

// sleep waits d, or returns the context's error if it ends first.
func sleep(ctx context.Context, d time.Duration) error {
	if !pace.Sleep(time.Now().Add(d), ctx.Done()) {
		return ctx.Err()
	}
	return nil
}

// Write models a server with one queue: each batch occupies it for
// len/capacity seconds, so no more than capacity events/s are accepted.
func (t *Target) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	if err := sleep(ctx, t.cfg.WriteDelay+t.occupy(float64(len(b.Docs)))); err != nil {
		return target.WriteResult{}, err
	}
	var res target.WriteResult
	if t.cfg.Discard {
		res.Acknowledged = len(b.Docs)
		return res, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	visibleAt := time.Now().Add(t.cfg.VisibilityDelay)
	evs := t.events[b.Generator]
	for _, d := range b.Docs {
		if len(d.JSON) == 0 {
			// As a database refuses a document it cannot parse.
			res.Failed++
			res.FailedSeqs = append(res.FailedSeqs, d.Seq)
			res.AddError(ErrorEmptyDocument, 1)
			continue
		}
		if d.Revision > 0 {
			res.Acknowledged++
			t.update(b.Generator, d, visibleAt.Add(t.cfg.UpdateDelay))
			continue
		}
		t.inserts++
		if t.cfg.FailStoredEvery > 0 && t.inserts%int64(t.cfg.FailStoredEvery) == 0 {
			res.Failed++ // and stored below
			res.FailedSeqs = append(res.FailedSeqs, d.Seq)
			res.AddError(target.ErrorDuplicateID, 1)
		} else {
			res.Acknowledged++
			t.acked++
			if t.cfg.DropEvery > 0 && t.acked%int64(t.cfg.DropEvery) == 0 {
				continue // acknowledged, then lost
			}
		}
		newest := d.EventTime
		if n := len(evs); n > 0 && evs[n-1].newest > newest {
			newest = evs[n-1].newest
		}
		if len(evs) == cap(evs) {
			// Doubling, not append's quarter for a large slice: a
			// store of millions of events was copied about four times
			// over as it grew.
			evs = slices.Grow(evs, len(evs)+1)
		}
		evs = append(evs, event{visible: visibleAt.Sub(t.epoch), id: d.ID, seq: d.Seq, eventTime: d.EventTime, newest: newest})
	}
	t.events[b.Generator] = evs
	return res, nil
}

// index brings t.ids up to date with the events written since it was last
// read. An id written again keeps its latest visibleAt, whichever
// generator wrote it. Callers hold t.mu.
func (t *Target) index() {
	for gen, evs := range t.events {
		for _, e := range evs[t.indexed[gen]:] {
			if old, ok := t.ids[e.id]; !ok || e.visible > old {
				t.ids[e.id] = e.visible
			}
		}
		t.indexed[gen] = len(evs)
	}
}

// update books an acknowledged revision, visible at visibleAt, unless it
// is one the configuration loses. Callers hold t.mu.
func (t *Target) update(gen string, d target.Document, visibleAt time.Time) {
	t.ackedUpdates++
	t.ackedRevs[d.ID] = ackedRevision{gen, d.Revision}
	if t.cfg.LoseUpdateEvery > 0 && t.ackedUpdates%int64(t.cfg.LoseUpdateEvery) == 0 {
		return // acknowledged, then lost
	}
	ups := t.updates[gen]
	newest := d.UpdateTime
	if n := len(ups); n > 0 && ups[n-1].newest > newest {
		newest = ups[n-1].newest
	}
	t.updates[gen] = append(ups, event{visible: visibleAt.Sub(t.epoch), id: d.ID, seq: d.Seq, eventTime: d.UpdateTime, newest: newest})
	t.revs[d.ID] = append(t.revs[d.ID], revision{visibleAt: visibleAt, rev: d.Revision})
}

// LostUpdates is the sim's own account of the updates it lost: how many
// events of gen hold an older revision than the one it acknowledged
// last.
func (t *Target) LostUpdates(gen string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var n int64
	for id, a := range t.ackedRevs {
		revs := t.revs[id]
		if a.gen == gen && (len(revs) == 0 || revs[len(revs)-1].rev < a.rev) {
			n++
		}
	}
	return n
}

// occupy queues work of events events on the one queue of a server of
// bounded capacity and returns how long until it is done; 0 when the
// capacity is unbounded.
func (t *Target) occupy(events float64) time.Duration {
	if t.cfg.Capacity <= 0 || events <= 0 {
		return 0
	}
	t.capMu.Lock()
	defer t.capMu.Unlock()
	now := time.Now()
	if t.capacity.Before(now) {
		t.capacity = now
	}
	t.capacity = t.capacity.Add(time.Duration(events / t.cfg.Capacity * float64(time.Second)))
	return t.capacity.Sub(now)
}

// visible returns the generator's events visible at now. Callers hold t.mu.
func (t *Target) visible(gen string, now time.Time) []event {
	evs := t.events[gen]
	at := now.Sub(t.epoch)
	n := sort.Search(len(evs), func(i int) bool { return evs[i].visible > at })
	return evs[:n]
}

// query waits the query delay. discard:// keeps nothing, so it has nothing
// to answer: an empty answer would read as "every event lost".
func (t *Target) query(ctx context.Context) error {
	if err := sleep(ctx, t.cfg.QueryDelay); err != nil {
		return err
	}
	if t.cfg.Discard {
		return fmt.Errorf("discard: %w", target.ErrNotKept)
	}
	return nil
}

func (t *Target) Freshness(ctx context.Context, gen string) (int64, bool, error) {
	return t.freshness(ctx, gen, 0)
}

func (t *Target) Visible(ctx context.Context, _ string, ids []string) (map[string]bool, error) {
	return t.visibleIDs(ctx, ids, 0)
}

func (t *Target) Count(ctx context.Context, gen string) (int64, error) { return t.count(ctx, gen, 0) }

func (t *Target) UpdateFreshness(ctx context.Context, gen string) (int64, bool, error) {
	return t.updateFreshness(ctx, gen, 0)
}

func (t *Target) Revisions(ctx context.Context, _ string, ids []string) (map[string]int64, error) {
	return t.revisions(ctx, ids, 0)
}

func (t *Target) Updated(ctx context.Context, gen string, fn func(seq, revision int64)) error {
	return t.updated(ctx, gen, fn, 0)
}

func (t *Target) Seqs(ctx context.Context, gen string, fn func(int64)) error {
	return t.seqs(ctx, gen, fn, 0)
}

// freshness, visibleIDs, count and seqs read t as a reader lag behind
// it does: every event becomes visible there lag later than on t.

func (t *Target) freshness(ctx context.Context, gen string, lag time.Duration) (int64, bool, error) {
	if err := t.query(ctx); err != nil {
		return 0, false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	v := t.visible(gen, time.Now().Add(-lag))
	if len(v) == 0 {
		return 0, false, nil
	}
	return v[len(v)-1].newest, true, nil
}

func (t *Target) visibleIDs(ctx context.Context, ids []string, lag time.Duration) (map[string]bool, error) {
	if err := t.query(ctx); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.index()
	now := time.Now().Add(-lag)
	out := map[string]bool{}
	for _, id := range ids {
		if at, ok := t.ids[id]; ok && at <= now.Sub(t.epoch) {
			out[id] = true
		}
	}
	return out, nil
}

func (t *Target) count(ctx context.Context, gen string, lag time.Duration) (int64, error) {
	if err := t.query(ctx); err != nil {
		return 0, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return int64(len(t.visible(gen, time.Now().Add(-lag)))), nil
}

func (t *Target) seqs(ctx context.Context, gen string, fn func(int64), lag time.Duration) error {
	if t.cfg.Discard {
		return fmt.Errorf("discard: %w", target.ErrNotKept)
	}
	t.mu.Lock()
	v := t.visible(gen, time.Now().Add(-lag))
	t.mu.Unlock()
	for _, e := range v {
		fn(e.seq)
	}
	return ctx.Err()
}

func (t *Target) updateFreshness(ctx context.Context, gen string, lag time.Duration) (int64, bool, error) {
	if err := t.query(ctx); err != nil {
		return 0, false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ups := t.updates[gen]
	at := time.Now().Add(-lag).Sub(t.epoch)
	n := sort.Search(len(ups), func(i int) bool { return ups[i].visible > at })
	if n == 0 {
		return 0, false, nil
	}
	return ups[n-1].newest, true, nil
}

// revisionAt is the newest revision of id visible at now, and whether the
// event itself is. Callers hold t.mu and have called t.index.
func (t *Target) revisionAt(id string, now time.Time) (int64, bool) {
	at, ok := t.ids[id]
	if !ok || at > now.Sub(t.epoch) {
		return 0, false
	}
	var rev int64
	for _, r := range t.revs[id] {
		if !r.visibleAt.After(now) {
			rev = r.rev
		}
	}
	return rev, true
}

func (t *Target) revisions(ctx context.Context, ids []string, lag time.Duration) (map[string]int64, error) {
	if err := t.query(ctx); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.index()
	now := time.Now().Add(-lag)
	out := map[string]int64{}
	for _, id := range ids {
		if rev, ok := t.revisionAt(id, now); ok {
			out[id] = rev
		}
	}
	return out, nil
}

func (t *Target) updated(ctx context.Context, gen string, fn func(seq, revision int64), lag time.Duration) error {
	if t.cfg.Discard {
		return fmt.Errorf("discard: %w", target.ErrNotKept)
	}
	t.mu.Lock()
	t.index()
	now := time.Now().Add(-lag)
	type updatedEvent struct{ seq, rev int64 }
	var out []updatedEvent
	seen := map[string]bool{}
	for _, u := range t.updates[gen] {
		if seen[u.id] {
			continue
		}
		seen[u.id] = true
		if rev, ok := t.revisionAt(u.id, now); ok && rev > 0 {
			out = append(out, updatedEvent{u.seq, rev})
		}
	}
	t.mu.Unlock()
	for _, u := range out {
		fn(u.seq, u.rev)
	}
	return ctx.Err()
}

// Replica is a read endpoint of a Target, as a replica or a standby that
// applies the primary's writes Lag behind: it sees the target's events,
// each Lag later than the target does. It takes no writes; its queries
// of the query workload are the target's.
type Replica struct {
	t   *Target
	lag time.Duration
	// behind is the share of each second the replica falls further
	// behind, from since on: a standby whose replay runs at 1−behind of
	// the pace the primary takes writes.
	behind float64
	since  time.Time
}

// Replica returns a read endpoint of t that lags lag behind it.
func (t *Target) Replica(lag time.Duration) *Replica { return &Replica{t: t, lag: lag} }

// FallingBehind returns a read endpoint of t that lags lag behind it now
// and replays t's writes at 1−share of their pace from now on: its lag
// grows by share of every second, and it catches up only once the
// writes stop. share is in [0, 1).
func (t *Target) FallingBehind(lag time.Duration, share float64) *Replica {
	return &Replica{t: t, lag: lag, behind: share, since: time.Now()}
}

// lagNow is how far behind t the replica reads at this moment.
func (r *Replica) lagNow() time.Duration {
	return r.lag + time.Duration(r.behind*float64(time.Since(r.since)))
}

var (
	_ target.Reader  = (*Replica)(nil)
	_ target.Querier = (*Replica)(nil)
	_ target.Updater = (*Replica)(nil)
	_ target.Updater = (*Target)(nil)
)

func (r *Replica) Freshness(ctx context.Context, gen string) (int64, bool, error) {
	return r.t.freshness(ctx, gen, r.lagNow())
}

func (r *Replica) Visible(ctx context.Context, _ string, ids []string) (map[string]bool, error) {
	return r.t.visibleIDs(ctx, ids, r.lagNow())
}

func (r *Replica) Count(ctx context.Context, gen string) (int64, error) {
	return r.t.count(ctx, gen, r.lagNow())
}

func (r *Replica) Seqs(ctx context.Context, gen string, fn func(int64)) error {
	return r.t.seqs(ctx, gen, fn, r.lagNow())
}

func (r *Replica) UpdateFreshness(ctx context.Context, gen string) (int64, bool, error) {
	return r.t.updateFreshness(ctx, gen, r.lagNow())
}

func (r *Replica) Revisions(ctx context.Context, _ string, ids []string) (map[string]int64, error) {
	return r.t.revisions(ctx, ids, r.lagNow())
}

func (r *Replica) Updated(ctx context.Context, gen string, fn func(seq, revision int64)) error {
	return r.t.updated(ctx, gen, fn, r.lagNow())
}

// Name is the target's: the family its queries are written for.
func (r *Replica) Name() string { return r.t.Name() }

func (r *Replica) SetupQueries(ctx context.Context) error { return r.t.SetupQueries(ctx) }

func (r *Replica) Query(ctx context.Context, q target.Query) (int, error) { return r.t.Query(ctx, q) }

func (r *Replica) QueryText(q target.Query) string { return r.t.QueryText(q) }

func (r *Replica) Sample(ctx context.Context, n int) ([][]byte, error) { return r.t.Sample(ctx, n) }
