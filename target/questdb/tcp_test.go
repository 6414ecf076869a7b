package questdb

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

// waitCount waits until QuestDB holds n events of gen, and fails if it
// holds more.
func waitCount(t *testing.T, s *store, gen string, n int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, err := s.Count(context.Background(), gen)
		if err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if got > n || time.Now().After(deadline) {
			t.Fatalf("%d events of %s stored (waited up to %s), want %d", got, gen, within, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Over TCP, into a table without WAL, rows arrive and become visible once
// the server commits them, and a row QuestDB rejects (it logs "could not
// write line protocol measurement" and drops it) is still counted
// acknowledged: TCP has no answer. Only the audit finds it, missing. A
// table without WAL has no row in wal_tables(), so no account.
func TestTCPRejectionsOnlyInAudit(t *testing.T) {
	// Mostly a wait on the server's ILP/TCP schedule: beside the others.
	t.Parallel()
	ctx := context.Background()
	s := openTest(t, map[string]string{"ilp_transport": "tcp", "wal": "false"})
	good, bad := "tcp"+randomHex(t, 4), "tcp"+randomHex(t, 4)
	res, err := s.Write(ctx, docs(good, 20, time.Now().UnixMicro()))
	if err != nil || res.Acknowledged != 20 {
		t.Fatalf("write: %+v, %v; want 20 acknowledged", res, err)
	}
	waitCount(t, s, good, 20, 30*time.Second)

	b := docs(bad, 20, time.Now().UnixMicro())
	b.Docs[5].EventTime = -1
	res, err = s.Write(ctx, b)
	if err != nil || res.Acknowledged != 20 || res.Failed != 0 {
		t.Fatalf("write with a bad row: %+v, %v; want 20 acknowledged, as TCP cannot tell", res, err)
	}
	// What the server kept of the batch shows once a later batch on the
	// same connection is visible: the server commits a table's rows in
	// the order they came. (A fixed wait passed with nothing stored on a
	// slow server.)
	after := "tcp" + randomHex(t, 4)
	if res, err := s.Write(ctx, docs(after, 20, time.Now().UnixMicro())); err != nil || res.Acknowledged != 20 {
		t.Fatalf("write after the bad row: %+v, %v; want 20 acknowledged", res, err)
	}
	waitCount(t, s, after, 20, time.Minute)
	seqs := stored(t, s, bad)
	if slices.Contains(seqs, 5) || len(seqs) != 19 {
		t.Errorf("stored %v of the batch with a bad row 5; want the other 19, skipped only the bad line", seqs)
	}
	t.Logf("acknowledged 20, stored %d: the audit finds %d missing", len(seqs), 20-len(seqs))

	a, err := s.walTables(ctx)
	if err != nil || len(a) != 0 {
		t.Errorf("account of a table without WAL: %+v, %v; want no WAL table", a, err)
	}
}

// A table without WAL cannot deduplicate, so an update would be stored
// as a second row beside its insert: Open returns no target.Updater for
// it, and its Write fails every update item, by kind, never sending it,
// while the inserts of the batch are stored.
func TestNoUpdatesWithoutWAL(t *testing.T) {
	// Mostly a wait on the server's ILP/TCP schedule: beside the others.
	t.Parallel()
	ctx := context.Background()
	if _, ok := openTarget(t, nil).(target.Updater); !ok {
		t.Errorf("a WAL table's target takes no updates")
	}
	tg := openTarget(t, map[string]string{"ilp_transport": "tcp", "wal": "false"})
	if _, ok := tg.(target.Updater); ok {
		t.Errorf("the target of a table without WAL is a target.Updater")
	}
	s := storeOf(t, tg)
	t.Cleanup(func() {
		defer s.Close()
		if err := s.Teardown(ctx); err != nil {
			t.Errorf("teardown: %v", err)
		}
	})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	gen := "nowal" + randomHex(t, 4)
	ins := docs(gen, 8, time.Now().UnixMicro())
	if res, err := s.Write(ctx, target.Batch{Generator: gen, Docs: ins.Docs[:5]}); err != nil || res.Acknowledged != 5 {
		t.Fatalf("write of 5 inserts: %+v, %v", res, err)
	}
	mixed := target.Batch{Generator: gen, Docs: []target.Document{
		targettest.Revision(ins.Docs[1], 1, time.Now().UnixMicro()),
		ins.Docs[5],
		targettest.Revision(ins.Docs[3], 1, time.Now().UnixMicro()),
		ins.Docs[6], ins.Docs[7],
	}}
	res, err := s.Write(ctx, mixed)
	slices.Sort(res.FailedSeqs)
	if err != nil || res.Acknowledged != 3 || res.Failed != 2 || !slices.Equal(res.FailedSeqs, []int64{1, 3}) ||
		res.ErrorKinds[errorUpdateNeedsWAL] != 2 || len(res.ErrorKinds) != 1 {
		t.Fatalf("write of 2 updates and 3 inserts: %+v, %v; want 3 acknowledged, seqs 1 and 3 failed of kind %s", res, err, errorUpdateNeedsWAL)
	}
	// The updates would have been in the flush of the inserts beside
	// them, so committed with them.
	waitCount(t, s, gen, 8, 30*time.Second)
	if got := stored(t, s, gen); !slices.Equal(got, []int64{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("stored seqs %v, want 0 … 7 once each", got)
	}
}
