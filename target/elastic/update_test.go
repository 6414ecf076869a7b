package elastic

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

// refreshes is the count of the refreshes that made changes searchable
// (external ones) that the index's shard copies report.
func refreshes(t *testing.T, tg *Target) int64 {
	t.Helper()
	var n int64
	for _, c := range copiesOf(t, account(t, tg)) {
		n += c.ExternalRefreshTotal
	}
	return n
}

// An acknowledged update is not what Revisions sees until the server has
// refreshed: held against the index's own refresh count, the new revision
// is seen only once that count moved past where it stood before the
// update was sent (a real-time GET would see it at once).
func TestServerRevisionsWaitForARefresh(t *testing.T) {
	t.Parallel() // an index of its own, beside the other server tests
	ctx := context.Background()
	tg := openTest(t, testServers[0], target.Options{Settings: map[string]string{"refresh_interval": "1s"}})
	if err := tg.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	const gen = "77"
	ins := doc("e0", gen, 0, "")
	if res, err := tg.Write(ctx, target.Batch{Generator: gen, Docs: []target.Document{ins}}); err != nil || res.Acknowledged != 1 {
		t.Fatalf("insert: %+v, %v", res, err)
	}
	revisionOf := func() (int64, bool) {
		t.Helper()
		revs, err := tg.Revisions(ctx, gen, []string{ins.ID})
		if err != nil {
			t.Fatal(err)
		}
		r, seen := revs[ins.ID]
		return r, seen
	}
	eventually(t, "the insert is seen", func() (bool, string) {
		r, seen := revisionOf()
		return seen && r == 0, fmt.Sprintf("revision %d, seen %v", r, seen)
	})

	before := refreshes(t, tg)
	up := targettest.Revision(ins, 1, time.Now().UnixMicro())
	if res, err := tg.Write(ctx, target.Batch{Generator: gen, Docs: []target.Document{up}}); err != nil || res.Acknowledged != 1 {
		t.Fatalf("update: %+v, %v", res, err)
	}
	polls, old := 0, 0
	eventually(t, "revision 1 is seen", func() (bool, string) {
		r, seen := revisionOf()
		after := refreshes(t, tg) // read after the search: a refresh it saw is counted
		polls++
		switch {
		case !seen:
			t.Fatalf("the event is not seen at all after its update (refreshes %d → %d)", before, after)
		case r == 1 && after <= before:
			t.Fatalf("revision 1 seen after %d polls with no refresh since before the update (refresh count %d, then %d)", polls, before, after)
		case r == 0:
			old++
		}
		return r == 1, fmt.Sprintf("revision %d, refreshes %d → %d", r, before, after)
	})
	t.Logf("revision 1 seen at poll %d (revision 0 at %d before it), refresh count %d before the update", polls, old, before)
}

// An update that the server accepted without storing it (an ingest
// pipeline dropped it: item status 200, result noop) is a failed item of
// kind not_stored with its _seq, and the stored event keeps its revision.
// OpenSearch 3 is the test server whose build has the drop processor (the
// others ship without the ingest-common module).
func TestServerDroppedUpdateIsNotStored(t *testing.T) {
	t.Parallel() // an index of its own, beside the other server tests
	ctx := context.Background()
	tg := openTest(t, testServers[2], target.Options{Settings: map[string]string{"refresh_interval": "-1"}})
	pipeline := "freshbench-test-drop-updates-" + fmt.Sprint(time.Now().UnixNano())
	res, err := tg.do(ctx, http.MethodPut, "/_ingest/pipeline/"+pipeline, "", []byte(`{"processors":[{"drop":{"if":"ctx._revision != null && ctx._revision == 2"}}]}`))
	if err != nil || !is2xx(res.status) {
		t.Fatalf("create pipeline: %v %s", err, res.body)
	}
	t.Cleanup(func() { tg.do(context.Background(), http.MethodDelete, "/_ingest/pipeline/"+pipeline, "", nil) })
	if err := tg.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = tg.do(ctx, http.MethodPut, "/"+tg.ip+"/_settings", "", []byte(`{"index":{"default_pipeline":"`+pipeline+`"}}`))
	if err != nil || !is2xx(res.status) {
		t.Fatalf("set the pipeline: %v %s", err, res.body)
	}

	const gen = "78"
	b := targettest.Batch(gen, 3, time.Now().UnixMicro())
	if wr, err := tg.Write(ctx, b); err != nil || wr.Acknowledged != 3 {
		t.Fatalf("inserts: %+v, %v", wr, err)
	}
	now := time.Now().UnixMicro()
	mixed := target.Batch{Generator: gen, Docs: []target.Document{
		targettest.Revision(b.Docs[0], 1, now), targettest.Revision(b.Docs[1], 2, now), targettest.Revision(b.Docs[2], 1, now),
	}}
	wr, err := tg.Write(ctx, mixed)
	if err != nil {
		t.Fatal(err)
	}
	if wr.Acknowledged != 2 || wr.Failed != 1 || fmt.Sprint(wr.FailedSeqs) != fmt.Sprint([]int64{b.Docs[1].Seq}) || wr.ErrorKinds[target.ErrorNotStored] != 1 {
		t.Errorf("result %+v, want 2 acknowledged and the dropped revision 2 failed as %s with its _seq %d", wr, target.ErrorNotStored, b.Docs[1].Seq)
	}
	if res, err := tg.do(ctx, http.MethodPost, "/"+tg.ip+"/_refresh", "", nil); err != nil || !is2xx(res.status) {
		t.Fatalf("refresh: %v %s", err, res.body)
	}
	revs, err := tg.Revisions(ctx, gen, []string{b.Docs[0].ID, b.Docs[1].ID, b.Docs[2].ID})
	if err != nil {
		t.Fatal(err)
	}
	if revs[b.Docs[0].ID] != 1 || revs[b.Docs[1].ID] != 0 || revs[b.Docs[2].ID] != 1 || len(revs) != 3 {
		t.Errorf("revisions %v, want 1, 0 (the dropped update left the insert), 1", revs)
	}
}

// Updated pages as Seqs does: duplicates of an (_seq, revision) show up as
// repeats, also where they straddle a page and where one fills a page; a
// document with an _update_time but no _revision is revision 0.
func TestServerUpdatedPages(t *testing.T) {
	t.Parallel() // an index of its own, beside the other server tests
	ctx := context.Background()
	tg := openTest(t, testServers[0], target.Options{Settings: map[string]string{"refresh_interval": "-1"}})
	if err := tg.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	const gen = "79"
	var ins []target.Document
	add := func(seq int64, copies int) {
		for range copies {
			ins = append(ins, doc(fmt.Sprintf("d-%d", len(ins)), gen, seq, ""))
		}
	}
	for s := range int64(30) {
		add(s, 1)
	}
	add(6, 2)  // _seq 6 under three ids
	add(20, 9) // and 20 under ten
	now := time.Now().UnixMicro()
	type key struct{ seq, rev int64 }
	want := map[key]int{}
	var ups []target.Document
	for _, d := range ins {
		if d.Seq%2 == 0 {
			ups = append(ups, targettest.Revision(d, 1, now))
			want[key{d.Seq, 1}]++
		}
	}
	ups[3] = targettest.Revision(ins[6], 2, now) // one copy of _seq 6 at revision 2, two at 1
	want[key{6, 1}]--
	want[key{6, 2}]++
	noRev := ins[29]
	noRev.Revision, noRev.UpdateTime = 1, now
	noRev.JSON = fmt.Appendf(nil, `{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":%d,"_update_time":%d}`, noRev.ID, noRev.EventTime, gen, noRev.Seq, now)
	ups = append(ups, noRev)
	want[key{29, 0}]++
	for _, b := range [][]target.Document{ins, ups} {
		if res, err := tg.Write(ctx, target.Batch{Generator: gen, Docs: b}); err != nil || res.Acknowledged != len(b) {
			t.Fatalf("write: %+v %v", res, err)
		}
	}
	if res, err := tg.do(ctx, http.MethodPost, "/"+tg.ip+"/_refresh", "", nil); err != nil || !is2xx(res.status) {
		t.Fatalf("refresh: %v %s", err, res.body)
	}
	for _, page := range []int{7, 5, 1000} {
		got := map[key]int{}
		var prev key
		err := tg.updated(ctx, gen, page, func(seq, rev int64) {
			if seq < prev.seq {
				t.Errorf("page %d: out of order: %d after %d", page, seq, prev.seq)
			}
			prev = key{seq, rev}
			got[prev]++
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("page %d: (seq, revision) counts %v, want %v", page, got, want)
		}
	}
}
