// Package targettest is the contract every target passes: each target's
// tests call Run with a Harness that supplies what only that target knows
// (how to open it on a table or index of its own, how to make one item of
// a batch fail, how to make written data searchable, which URLs are bad).
//
// The contract: setup is idempotent; a freshness query, count, seq scan and
// visibility check of a generator with nothing written see nothing; a
// batch with bad items reports each failed item with its _seq and
// acknowledges the rest (acknowledged + failed = batch size); what was
// written is seen by searches only once it is searchable, and then exactly
// (count, seqs, visible ids, newest event time); a target that takes
// updates (target.Updater) replaces an event with each revision, and
// searches see the revision written last; teardown removes it; a
// cancelled context makes every call return an error promptly; a bad URL
// is refused with target.ErrBadURL.
package targettest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/target"
)

// Harness is what the suite needs to know about one target.
type Harness struct {
	// Open returns the target on a table or index of its own, not set up
	// yet. The suite tears it down and closes it at the end of the test.
	Open func(t *testing.T) target.Target
	// FailItem changes item i (never the first) of b so that the database
	// refuses that item alone, as an item-level failure: a value of the
	// wrong type for the mapping, a duplicate _id, … It may read the
	// other items of b.
	FailItem func(b *target.Batch, i int)
	// Searchable makes everything acknowledged so far visible to searches
	// (a refresh, a wait for a simulated delay). nil means that a write is
	// searchable as soon as it is acknowledged; the target must then not
	// make writes searchable by itself during the test (Elasticsearch: a
	// refresh interval of -1), so that the suite can check that nothing is
	// seen before.
	Searchable func(ctx context.Context, tgt target.Target) error
	// Register adds the target's driver to a registry; BadURLs are opened
	// through it.
	Register func(r *target.Registry)
	// BadURLs are URLs of the target's schemes that cannot be used as
	// given; opening each must fail with target.ErrBadURL.
	BadURLs []string
	// VirtualTime runs each part of the suite in a testing/synctest
	// bubble: for a target in this process whose delays are timers (the
	// sim), which then take no wall time, and whose durations the suite
	// measures on the bubble's clock.
	VirtualTime bool
}

// Timeouts of the suite: how long a write may take to become searchable
// after Searchable returned (a refresh is synchronous, so this only bounds
// a slow server), and how soon a call with a cancelled context returns.
const (
	searchableWithin = 30 * time.Second
	promptly         = 2 * time.Second
)

// Run runs the contract against the target of h.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Open == nil || h.FailItem == nil || h.Register == nil || len(h.BadURLs) == 0 {
		t.Fatal("targettest: the harness needs Open, FailItem, Register and at least one bad URL")
	}
	for _, part := range []struct {
		name string
		run  func(*testing.T, Harness)
	}{{"Contract", contract}, {"Updates", updates}, {"Cancelled", cancelled}, {"BadURL", badURL}} {
		t.Run(part.name, func(t *testing.T) {
			if h.VirtualTime {
				synctest.Test(t, func(t *testing.T) { part.run(t, h) })
				return
			}
			part.run(t, h)
		})
	}
}

// open opens the target and tears it down at the end of the test.
func open(t *testing.T, h Harness) target.Target {
	t.Helper()
	tgt := h.Open(t)
	TeardownAtEnd(t, tgt, 30*time.Second)
	return tgt
}

// TeardownAtEnd tears tgt down, within the time given, and closes it when
// the test ends; an error of either is the test's.
func TeardownAtEnd(t *testing.T, tgt target.Target, within time.Duration) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		if err := tgt.Teardown(ctx); err != nil {
			t.Errorf("teardown at the end: %v", err)
		}
		if err := tgt.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

// Generator returns a generator identifier unique to this test, so that
// targets on a shared server never see another test's events.
func Generator(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "tt" + hex.EncodeToString(b)
}

// Batch returns n events of generator gen with _seq 0 … n-1, event times
// strictly increasing from base, in the shape every generated event has.
func Batch(gen string, n int, base int64) target.Batch {
	b := target.Batch{Generator: gen, Docs: make([]target.Document, n)}
	for i := range b.Docs {
		id := fmt.Sprintf("%s-%d", gen, i)
		et := base + int64(i)
		b.Docs[i] = target.Document{ID: id, Generator: gen, Seq: int64(i), EventTime: et,
			// %q quotes as JSON does for the plain ASCII used here.
			JSON: fmt.Appendf(nil, `{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":%d,"processBy":"targettest","tags":["a","b"]}`,
				id, et, gen, i)}
	}
	return b
}

// Revision returns revision r of d, generated at updateTime, in the shape
// docgen.Generator.Revise gives it.
func Revision(d target.Document, r, updateTime int64) target.Document {
	d.Revision, d.UpdateTime = r, updateTime
	d.JSON = fmt.Appendf(nil, `{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":%d,"_revision":%d,"_update_time":%d,"processBy":"targettest-%d","tags":["c"]}`,
		d.ID, d.EventTime, d.Generator, d.Seq, r, updateTime, r)
	return d
}

// failAt are the items of the test batch that the harness makes fail.
var failAt = []int{5, 13}

const batchSize = 20

func contract(t *testing.T, h Harness) {
	ctx := context.Background()
	tgt := open(t, h)
	for i := range 2 {
		if err := tgt.Setup(ctx); err != nil {
			t.Fatalf("setup #%d (setup is idempotent): %v", i+1, err)
		}
	}
	gen, other := Generator(t), Generator(t)
	b := Batch(gen, batchSize, time.Now().UnixMicro())
	seesNothing(t, tgt, gen, b, "before any write")

	for _, i := range failAt {
		h.FailItem(&b, i)
	}
	res, err := tgt.Write(ctx, b)
	if err != nil {
		t.Fatalf("write of a batch with %d bad items: %v (bad items fail as items, not the request)", len(failAt), err)
	}
	checkAccounting(t, res, b)
	var acked []target.Document
	for i, d := range b.Docs {
		if !slices.Contains(failAt, i) {
			acked = append(acked, d)
		}
	}

	if h.Searchable != nil {
		seesNothing(t, tgt, gen, b, "after the write, before it is searchable")
		if err := h.Searchable(ctx, tgt); err != nil {
			t.Fatalf("make searchable: %v", err)
		}
	}
	waitCount(t, tgt, gen, int64(len(acked)))
	seesExactly(t, tgt, gen, acked)
	if n, err := tgt.Count(ctx, other); err != nil || n != 0 {
		t.Errorf("count of another generator = %d, %v; want 0", n, err)
	}

	if err := tgt.Teardown(ctx); err != nil {
		t.Fatalf("teardown: %v", err)
	}
	if err := tgt.Setup(ctx); err != nil {
		t.Fatalf("setup after teardown: %v", err)
	}
	if n, err := tgt.Count(ctx, gen); err != nil || n != 0 {
		t.Errorf("count after teardown and setup = %d, %v; want 0", n, err)
	}
}

// updates checks the update path: an update replaces the stored event
// (the count and seqs do not move, the insert's event time stays), a
// search sees the revision written last, once searchable, and the update
// freshness is the newest update time seen. A batch mixes inserts and
// updates.
func updates(t *testing.T, h Harness) {
	ctx := context.Background()
	tgt := open(t, h)
	up, ok := tgt.(target.Updater)
	if !ok {
		t.Skipf("%s takes no updates", tgt.Name())
	}
	if err := tgt.Setup(ctx); err != nil {
		t.Fatalf("setup: %v", err)
	}
	gen := Generator(t)
	base := time.Now().UnixMicro()
	ins := Batch(gen, 10, base)
	mustWrite(t, tgt, target.Batch{Generator: gen, Docs: ins.Docs[:8]}, "of 8 inserts")
	makeSearchable(t, h, tgt)
	waitCount(t, tgt, gen, 8)
	if ut, ok, err := up.UpdateFreshness(ctx, gen); err != nil || ok {
		t.Fatalf("update freshness before any update = %d, found %v, %v; want nothing found", ut, ok, err)
	}

	// Revision 1 of events 0..3 and two new inserts in one batch, then
	// revision 2 of event 0.
	mixed := target.Batch{Generator: gen}
	for i := range 4 {
		mixed.Docs = append(mixed.Docs, Revision(ins.Docs[i], 1, base+100+int64(i)))
	}
	mixed.Docs = append(mixed.Docs, ins.Docs[8:]...)
	mustWrite(t, tgt, mixed, "of 4 updates and 2 inserts")
	mustWrite(t, tgt, target.Batch{Generator: gen, Docs: []target.Document{Revision(ins.Docs[0], 2, base+200)}}, "of revision 2")
	if h.Searchable != nil {
		revs, err := up.Revisions(ctx, gen, []string{ins.Docs[0].ID})
		if err != nil || revs[ins.Docs[0].ID] != 0 {
			t.Fatalf("before the updates are searchable: revisions %v, %v; want revision 0", revs, err)
		}
	}
	makeSearchable(t, h, tgt)
	waitCount(t, tgt, gen, 10)
	want := map[string]int64{ins.Docs[0].ID: 2, ins.Docs[1].ID: 1, ins.Docs[2].ID: 1, ins.Docs[3].ID: 1}
	checkRevisions(t, up, gen, ins.Docs, want)
	if ut, ok, err := up.UpdateFreshness(ctx, gen); err != nil || !ok || ut != base+200 {
		t.Errorf("update freshness = %d, found %v, %v; want %d, the newest update time", ut, ok, err, base+200)
	}
	if et, ok, err := tgt.Freshness(ctx, gen); err != nil || !ok || et != base+9 {
		t.Errorf("freshness after updates = %d, found %v, %v; want %d: an update keeps its insert's event time", et, ok, err, base+9)
	}
	checkReplaced(t, tgt, up, gen)
}

// mustWrite writes b and fails the test unless every event is
// acknowledged.
func mustWrite(t *testing.T, tgt target.Target, b target.Batch, what string) {
	t.Helper()
	res, err := tgt.Write(context.Background(), b)
	if err != nil || res.Acknowledged != len(b.Docs) || res.Failed != 0 {
		t.Fatalf("write %s: acknowledged %d of %d, failed %d (%v), %v", what, res.Acknowledged, len(b.Docs), res.Failed, res.ErrorKinds, err)
	}
}

// makeSearchable makes what was written searchable, on a target that
// needs to be told.
func makeSearchable(t *testing.T, h Harness, tgt target.Target) {
	t.Helper()
	if h.Searchable != nil {
		if err := h.Searchable(context.Background(), tgt); err != nil {
			t.Fatalf("make searchable: %v", err)
		}
	}
}

// checkRevisions waits, up to searchableWithin, until the first event is
// seen at its wanted revision, then checks the revision of every event
// written (want, 0 when absent) and that an id never written has none.
func checkRevisions(t *testing.T, up target.Updater, gen string, docs []target.Document, want map[string]int64) {
	t.Helper()
	ids := []string{gen + "-never-written"}
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	deadline := time.Now().Add(searchableWithin)
	for {
		revs, err := up.Revisions(context.Background(), gen, ids)
		if err != nil {
			t.Fatalf("revisions: %v", err)
		}
		if revs[docs[0].ID] == want[docs[0].ID] || time.Now().After(deadline) {
			for _, d := range docs {
				if got, seen := revs[d.ID]; !seen || got != want[d.ID] {
					t.Errorf("revision of %s = %d (seen %v), want %d", d.ID, got, seen, want[d.ID])
				}
			}
			if _, seen := revs[ids[0]]; seen {
				t.Errorf("an id never written has a revision")
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkReplaced checks that the updates replaced their events: seqs 0..9
// once each, seq 0 at revision 2 and 1..3 at revision 1.
func checkReplaced(t *testing.T, tgt target.Target, up target.Updater, gen string) {
	t.Helper()
	ctx := context.Background()
	var seqs []int64
	if err := tgt.Seqs(ctx, gen, func(s int64) { seqs = append(seqs, s) }); err != nil {
		t.Fatalf("seqs: %v", err)
	}
	slices.Sort(seqs)
	if !slices.Equal(seqs, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("seqs after updates = %v, want 0..9 once each (an update replaces)", seqs)
	}
	updated := map[int64]int64{}
	if err := up.Updated(ctx, gen, func(seq, rev int64) { updated[seq] = rev }); err != nil {
		t.Fatalf("updated: %v", err)
	}
	if len(updated) != 4 || updated[0] != 2 || updated[1] != 1 || updated[2] != 1 || updated[3] != 1 {
		t.Errorf("updated = %v, want seq 0 at revision 2 and 1..3 at revision 1", updated)
	}
}

// checkAccounting checks the item-level result of the test batch.
func checkAccounting(t *testing.T, res target.WriteResult, b target.Batch) {
	t.Helper()
	want := make([]int64, len(failAt))
	for j, i := range failAt {
		want[j] = b.Docs[i].Seq
	}
	got := slices.Sorted(slices.Values(res.FailedSeqs))
	kinds := 0
	for _, n := range res.ErrorKinds {
		kinds += n
	}
	if res.Acknowledged+res.Failed != len(b.Docs) || res.Failed != len(failAt) || !slices.Equal(got, want) || kinds != res.Failed {
		t.Fatalf("write: acknowledged %d, failed %d, failed seqs %v, error kinds %v; want %d + %d = %d items, failed seqs %v, one error kind per failed item",
			res.Acknowledged, res.Failed, res.FailedSeqs, res.ErrorKinds, len(b.Docs)-len(failAt), len(failAt), len(b.Docs), want)
	}
}

// seesNothing checks that no search sees any event of gen.
func seesNothing(t *testing.T, tgt target.Target, gen string, b target.Batch, when string) {
	t.Helper()
	ctx := context.Background()
	if et, ok, err := tgt.Freshness(ctx, gen); err != nil || ok {
		t.Fatalf("%s: freshness = %d, found %v, %v; want nothing found and no error", when, et, ok, err)
	}
	if n, err := tgt.Count(ctx, gen); err != nil || n != 0 {
		t.Fatalf("%s: count = %d, %v; want 0", when, n, err)
	}
	var seqs []int64
	if err := tgt.Seqs(ctx, gen, func(s int64) { seqs = append(seqs, s) }); err != nil || len(seqs) != 0 {
		t.Fatalf("%s: seqs = %v, %v; want none", when, seqs, err)
	}
	ids := make([]string, len(b.Docs))
	for i, d := range b.Docs {
		ids[i] = d.ID
	}
	vis, err := tgt.Visible(ctx, gen, ids)
	if err != nil {
		t.Fatalf("%s: visible: %v", when, err)
	}
	for id, seen := range vis {
		if seen {
			t.Fatalf("%s: probe %s is visible", when, id)
		}
	}
}

// waitCount waits until a count of gen reaches want, and fails if it
// does not or goes beyond.
func waitCount(t *testing.T, tgt target.Target, gen string, want int64) {
	t.Helper()
	deadline := time.Now().Add(searchableWithin)
	for {
		n, err := tgt.Count(context.Background(), gen)
		if err != nil {
			t.Fatalf("count: %v", err)
		}
		if n == want {
			return
		}
		if n > want || time.Now().After(deadline) {
			t.Fatalf("count = %d after the write became searchable (waited up to %s), want the %d acknowledged events", n, searchableWithin, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// seesExactly checks that searches see exactly the acknowledged events.
func seesExactly(t *testing.T, tgt target.Target, gen string, acked []target.Document) {
	t.Helper()
	ctx := context.Background()
	var newest int64
	ids := []string{gen + "-never-written"}
	wantSeqs := make([]int64, len(acked))
	for i, d := range acked {
		newest = max(newest, d.EventTime)
		ids = append(ids, d.ID)
		wantSeqs[i] = d.Seq
	}
	if et, ok, err := tgt.Freshness(ctx, gen); err != nil || !ok || et != newest {
		t.Errorf("freshness = %d, found %v, %v; want %d, the newest acknowledged event time", et, ok, err, newest)
	}
	var seqs []int64
	if err := tgt.Seqs(ctx, gen, func(s int64) { seqs = append(seqs, s) }); err != nil {
		t.Fatalf("seqs: %v", err)
	}
	slices.Sort(seqs)
	if !slices.Equal(seqs, wantSeqs) {
		t.Errorf("seqs = %v, want the acknowledged %v, each once", seqs, wantSeqs)
	}
	vis, err := tgt.Visible(ctx, gen, ids)
	if err != nil {
		t.Fatalf("visible: %v", err)
	}
	for _, d := range acked {
		if !vis[d.ID] {
			t.Errorf("probe %s (acknowledged, searchable) is not visible", d.ID)
		}
	}
	if vis[ids[0]] {
		t.Errorf("probe %s, never written, is visible", ids[0])
	}
}

// cancelled checks that every call with a cancelled context returns an
// error that says so, promptly.
func cancelled(t *testing.T, h Harness) {
	tgt := open(t, h)
	if err := tgt.Setup(context.Background()); err != nil {
		t.Fatalf("setup: %v", err)
	}
	gen := Generator(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := []struct {
		name string
		call func() error
	}{
		{"write", func() error { _, err := tgt.Write(ctx, Batch(gen, 3, time.Now().UnixMicro())); return err }},
		{"freshness", func() error { _, _, err := tgt.Freshness(ctx, gen); return err }},
		{"visible", func() error { _, err := tgt.Visible(ctx, gen, []string{gen + "-0"}); return err }},
		{"count", func() error { _, err := tgt.Count(ctx, gen); return err }},
		{"seqs", func() error { return tgt.Seqs(ctx, gen, func(int64) {}) }},
	}
	for _, c := range calls {
		start := time.Now()
		err := c.call()
		took := time.Since(start)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: err = %v, want one wrapping context.Canceled", c.name, err)
		}
		if took > promptly {
			t.Errorf("%s with a cancelled context took %s, want under %s", c.name, took, promptly)
		}
	}
	// Nothing of the cancelled write may be stored.
	if h.Searchable != nil {
		if err := h.Searchable(context.Background(), tgt); err != nil {
			t.Fatalf("make searchable: %v", err)
		}
	}
	if n, err := tgt.Count(context.Background(), gen); err != nil || n != 0 {
		t.Errorf("count after a cancelled write = %d, %v; want 0", n, err)
	}
}

func badURL(t *testing.T, h Harness) {
	r := target.NewRegistry()
	h.Register(r)
	for _, raw := range h.BadURLs {
		start := time.Now()
		tgt, err := r.Open(context.Background(), raw, target.Options{})
		if err == nil {
			tgt.Close()
		}
		if !errors.Is(err, target.ErrBadURL) {
			t.Errorf("open %s: err = %v, want one wrapping target.ErrBadURL", raw, err)
		}
		if took := time.Since(start); took > promptly {
			t.Errorf("open %s took %s: a bad URL is refused before connecting", raw, took)
		}
	}
}
