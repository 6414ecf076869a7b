package sim

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/query/querytest"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

const contractDelay = time.Second

func TestTargetContract(t *testing.T) {
	targettest.Run(t, targettest.Harness{
		Open: func(t *testing.T) target.Target {
			u, _ := url.Parse("sim://?visibility_delay=" + contractDelay.String())
			tgt, err := Open(context.Background(), u, target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return tgt
		},
		FailItem: func(b *target.Batch, i int) { b.Docs[i].JSON = nil },
		// What was acknowledged is visible visibility_delay later.
		Searchable: func(ctx context.Context, _ target.Target) error {
			if !sleepUntil(ctx, time.Now().Add(contractDelay)) {
				return ctx.Err()
			}
			return nil
		},
		Register: Register,
		BadURLs: []string{
			"sim://?visibility_delay=soon", "sim://?capacity=-1", "sim://?drop_every=x",
			"sim://?visiblity_delay=1s", "discard://?capacity=10",
		},
		VirtualTime: true,
	})
}

func sleepUntil(ctx context.Context, at time.Time) bool { return sleep(ctx, time.Until(at)) == nil }

// TestSettings checks that a knob is read from the URL or the settings,
// never both differently, and that the effective settings list every knob.
func TestSettings(t *testing.T) {
	r := target.NewRegistry()
	Register(r)
	tgt, err := r.Open(context.Background(), "sim://?visibility_delay=250ms", target.Options{Settings: map[string]string{"capacity": "500"}})
	if err != nil {
		t.Fatal(err)
	}
	s := tgt.(*Target)
	if s.cfg.VisibilityDelay != 250*time.Millisecond || s.cfg.Capacity != 500 {
		t.Errorf("config = %+v", s.cfg)
	}
	want := map[string]string{"visibility_delay": "250ms", "capacity": "500", "write_delay": "0s", "query_delay": "0s", "drop_every": "0", "fail_stored_every": "0", "query_cost": "0", "update_delay": "0s", "lose_update_every": "0"}
	got := s.Settings()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("effective %s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("effective settings %v, want %v", got, want)
	}
	if _, err := r.Open(context.Background(), "sim://?capacity=10", target.Options{Settings: map[string]string{"capacity": "20"}}); err == nil {
		t.Error("capacity 10 in the URL and 20 in the settings: opened")
	}
}

// A replica sees what the target sees, lag later: not before, and every
// reader role agrees.
func TestReplicaLagsBehind(t *testing.T) { synctest.Test(t, testReplicaLagsBehind) }

func testReplicaLagsBehind(t *testing.T) {
	const lag = 300 * time.Millisecond
	tgt := New(Config{})
	rep := tgt.Replica(lag)
	ctx := context.Background()
	written := time.Now()
	if _, err := tgt.Write(ctx, target.Batch{Generator: "g", Docs: []target.Document{{ID: "a", Generator: "g", EventTime: 7, JSON: []byte("{}")}}}); err != nil {
		t.Fatal(err)
	}
	seen := func(r target.Reader) bool {
		n, _ := r.Count(ctx, "g")
		_, fresh, _ := r.Freshness(ctx, "g")
		vis, _ := r.Visible(ctx, "g", []string{"a"})
		var seqs int
		r.Seqs(ctx, "g", func(int64) { seqs++ })
		if all := n == 1 && fresh && vis["a"] && seqs == 1; all || n+int64(seqs) == 0 && !fresh && !vis["a"] {
			return all
		}
		t.Fatalf("the reader roles disagree: count %d, freshness %v, visible %v, seqs %d", n, fresh, vis["a"], seqs)
		return false
	}
	if !seen(tgt) {
		t.Fatal("the target does not see its own write")
	}
	if seen(rep) && time.Since(written) < lag {
		t.Fatalf("the replica saw the write %s after it, before its lag of %s", time.Since(written), lag)
	}
	time.Sleep(lag)
	if !seen(rep) {
		t.Fatalf("the replica does not see the write %s after it", time.Since(written))
	}
}

// With a query cost, queries of the workload queue with the writes on
// the server's one queue: ten queries of 100 events' worth each at 1000
// events/s take a second, and a write behind them waits for it.
func TestQueryCostSharesCapacity(t *testing.T) { synctest.Test(t, testQueryCostSharesCapacity) }

func testQueryCostSharesCapacity(t *testing.T) {
	tgt := New(Config{Capacity: 1000, QueryCost: 100})
	start := time.Now()
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := tgt.Query(context.Background(), querytest.KindQuery(t, "sim", target.QueryNewest, "g", 1)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("ten queries of 100 events' worth at 1000 events/s took %s, want about 1s", d)
	}
	start = time.Now()
	go tgt.Query(context.Background(), querytest.KindQuery(t, "sim", target.QueryNewest, "g", 1))
	time.Sleep(10 * time.Millisecond)
	if _, err := tgt.Write(context.Background(), target.Batch{Generator: "g", Docs: []target.Document{{ID: "a", JSON: []byte("{}")}}}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("a write behind a query of 100 events' worth returned after %s, want at least 100ms", d)
	}
}

func TestUpdateDelayAndLostUpdates(t *testing.T) { synctest.Test(t, testUpdateDelayAndLostUpdates) }

func testUpdateDelayAndLostUpdates(t *testing.T) {
	ctx := context.Background()
	s := New(Config{VisibilityDelay: 20 * time.Millisecond, UpdateDelay: 200 * time.Millisecond, LoseUpdateEvery: 2})
	b := targettest.Batch("g", 3, 1000)
	if _, err := s.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	ups := target.Batch{Generator: "g", Docs: []target.Document{
		targettest.Revision(b.Docs[0], 1, 2000),
		targettest.Revision(b.Docs[1], 1, 2001), // the second acknowledged update: lost
		targettest.Revision(b.Docs[2], 1, 2002),
	}}
	written := time.Now()
	res, err := s.Write(ctx, ups)
	if err != nil || res.Acknowledged != 3 {
		t.Fatalf("updates: %+v, %v; want 3 acknowledged (a lost update is acknowledged)", res, err)
	}
	ids := []string{b.Docs[0].ID, b.Docs[1].ID, b.Docs[2].ID}
	for {
		revs, err := s.Revisions(ctx, "g", ids)
		if err != nil {
			t.Fatal(err)
		}
		if revs[ids[0]] == 1 {
			if waited := time.Since(written); waited < 220*time.Millisecond {
				t.Errorf("revision 1 visible %s after the write, before visibility_delay + update_delay = 220ms", waited)
			}
			if revs[ids[1]] != 0 || revs[ids[2]] != 1 {
				t.Errorf("revisions %v: want the lost update's event at 0 and the third at 1", revs)
			}
			break
		}
		if time.Since(written) > 5*time.Second {
			t.Fatalf("revision 1 never visible: %v", revs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ut, ok, _ := s.UpdateFreshness(ctx, "g"); !ok || ut != 2002 {
		t.Errorf("update freshness %d, %v; want 2002", ut, ok)
	}
	got := map[int64]int64{}
	if err := s.Updated(ctx, "g", func(seq, rev int64) { got[seq] = rev }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != 1 || got[2] != 1 {
		t.Errorf("updated %v, want seqs 0 and 2 at revision 1", got)
	}
}

// The simulated database answers the bucket query from the _event_time
// of the events it holds: one row per second that holds a visible event,
// at most the limit, none before the events are visible.
func TestBucketQuery(t *testing.T) { synctest.Test(t, testBucketQuery) }

func testBucketQuery(t *testing.T) {
	ctx := context.Background()
	tgt := New(Config{VisibilityDelay: 100 * time.Millisecond})
	b := querytest.Documents("g")
	if _, err := tgt.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	secs := map[int64]bool{}
	for _, d := range b.Docs {
		secs[d.EventTime/1_000_000] = true
	}
	rows := func(kind target.QueryKind, value any, limit int) int {
		n, err := tgt.Query(ctx, querytest.KindQuery(t, "sim", kind, value, limit))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := rows(target.QueryBucket, "g", 100); n != 0 {
		t.Errorf("before the events are visible: %d rows, want 0", n)
	}
	time.Sleep(100 * time.Millisecond)
	for _, c := range []struct {
		kind        target.QueryKind
		value       any
		limit, want int
	}{
		{target.QueryBucket, "g", 100, len(secs)}, {target.QueryBucket, "g", 3, 3}, {target.QueryBucket, "g0", 10, 0},
		{target.QueryNewest, "g", 100, len(b.Docs)}, {target.QueryNewest, "g", 7, 7}, {target.QueryNewest, "g0", 10, 0},
		{target.QueryNewest, int64(7), 10, 0}, // no generator is a number
		// The simulator keeps no payload: no value matches one.
		{target.QueryPoint, "pb1-g", 10, 0}, {target.QueryArray, "all-g@querytest.invalid", 10, 0}, {target.QueryAggregate, "c0-g", 10, 0},
	} {
		if n := rows(c.kind, c.value, c.limit); n != c.want {
			t.Errorf("%s %v limit %d: %d rows, want %d", c.kind, c.value, c.limit, n, c.want)
		}
	}
}

// A text the simulator cannot run is refused in one line that says what
// it runs, when it is explained as when it is run; one it runs is
// explained at once, without an answer.
func TestQueryTexts(t *testing.T) {
	tgt := New(Config{QueryDelay: time.Hour})
	ctx := context.Background()
	for _, text := range []string{"", "SELECT 1", "newest $1", "newest $2 10", "newest $1 ten", "bucket g 10", "none 10", "newest $1 10 11"} {
		for _, explain := range []string{"", "explain "} {
			q := target.Query{Kind: "mine", Statement: target.Statement{Text: explain + text, Args: []any{"g"}}}
			if _, err := tgt.Query(ctx, q); err == nil || !strings.HasPrefix(err.Error(), "sim query mine: ") || !strings.Contains(err.Error(), "want newest :generator :limit, bucket :generator :limit, or none :param") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: %v; want it refused in one line saying what the simulator runs", explain+text, err)
			}
		}
	}
	for _, text := range []string{"explain newest $1 10", "explain bucket $1 0", "explain none $1"} {
		q := target.Query{Kind: "mine", Statement: target.Statement{Text: text, Args: []any{nil}}}
		if n, err := tgt.Query(ctx, q); n != 0 || err != nil {
			t.Errorf("%q: %d rows, %v; want it explained at once", text, n, err)
		}
	}
}

// Ids written after a read by id are found by the next one: the index of
// ids is brought up to date at every read, on the target and its replica.
func TestVisibleAfterLaterWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		tgt := New(Config{VisibilityDelay: time.Second})
		rep := tgt.Replica(time.Second)
		write := func(id string, seq int64) {
			t.Helper()
			if res, err := tgt.Write(ctx, target.Batch{Generator: "g", Docs: []target.Document{{ID: id, Generator: "g", Seq: seq, JSON: []byte("{}")}}}); err != nil || res.Acknowledged != 1 {
				t.Fatalf("write %s: %+v, %v", id, res, err)
			}
		}
		visible := func(r target.Reader, id string) bool {
			t.Helper()
			v, err := r.Visible(ctx, "g", []string{id})
			if err != nil {
				t.Fatal(err)
			}
			return v[id]
		}
		write("a", 1)
		if visible(tgt, "a") {
			t.Fatal("a visible before the visibility delay")
		}
		time.Sleep(time.Second)
		if !visible(tgt, "a") || visible(rep, "a") {
			t.Fatal("a not visible on the target after the delay, or visible on the replica before its lag")
		}
		write("b", 2)
		time.Sleep(time.Second)
		if !visible(tgt, "b") || !visible(rep, "a") || visible(rep, "b") {
			t.Fatal("b written after a read is not found by the next read, or the replica's lag is off")
		}
		time.Sleep(time.Second)
		if !visible(rep, "b") {
			t.Fatal("b not visible on the replica after its lag")
		}
	})
}

// An id written again takes its last write's visibility, whichever
// generators wrote it and however many reads by id were made in between.
func TestRewrittenIDTakesLastWrite(t *testing.T) {
	for range 20 { // the generators are indexed in map order: try many
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			tgt := New(Config{VisibilityDelay: time.Second})
			for _, gen := range []string{"g2", "g1"} {
				if res, err := tgt.Write(ctx, target.Batch{Generator: gen, Docs: []target.Document{{ID: "x", Generator: gen, Seq: 1, JSON: []byte("{}")}}}); err != nil || res.Acknowledged != 1 {
					t.Fatalf("write %s: %+v, %v", gen, res, err)
				}
				time.Sleep(500 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond) // past the first write's visibility, before the last's
			v, err := tgt.Visible(ctx, "g1", []string{"x"})
			if err != nil {
				t.Fatal(err)
			}
			if v["x"] {
				t.Fatal("x visible at its first write's visibility; its last write is not visible yet")
			}
			time.Sleep(500 * time.Millisecond)
			if v, _ := tgt.Visible(ctx, "g1", []string{"x"}); !v["x"] {
				t.Fatal("x not visible after its last write's visibility")
			}
		})
	}
}
