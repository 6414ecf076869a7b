package questdb

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

// An update becomes visible with the WAL apply, as an insert does, and
// QuestDB's own account says so: while the apply of the table is
// suspended, an acknowledged update is committed to the log (wal_tables():
// one more sequencer transaction, none more applied) and no query sees
// its revision; once the apply resumes and QuestDB says it caught up, the
// revision has replaced the row. Over both transports: TCP commits to the
// log on the server's own schedule, which the account shows too.
func TestUpdateVisibleWithApply(t *testing.T) {
	// Mostly a wait on the server's ILP/TCP schedule: beside the others.
	t.Parallel()
	for _, transport := range []string{transportHTTP, transportTCP} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := openTest(t, map[string]string{"ilp_transport": transport})
			up := walStore{s}
			gen := "upd" + randomHex(t, 4)
			ins := docs(gen, 5, time.Now().UnixMicro())
			if res, err := s.Write(ctx, ins); err != nil || res.Acknowledged != 5 {
				t.Fatalf("write of 5 inserts: %+v, %v", res, err)
			}
			waitCount(t, s, gen, 5, 30*time.Second)
			if err := waitApplied(ctx, s, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			before, err := walTable(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.exec(ctx, "suspend WAL of", `ALTER TABLE `+s.tbl+` SUSPEND WAL`); err != nil {
				t.Fatal(err)
			}
			upd := targettest.Revision(ins.Docs[2], 1, time.Now().UnixMicro())
			if res, err := s.Write(ctx, target.Batch{Generator: gen, Docs: []target.Document{upd}}); err != nil || res.Acknowledged != 1 {
				t.Fatalf("write of the update: %+v, %v; want it acknowledged", res, err)
			}
			mid := waitCommitted(t, s, before.SequencerTxn+1)
			if !mid.Suspended || mid.SequencerTxn != before.SequencerTxn+1 || mid.WriterTxn != before.WriterTxn {
				t.Errorf("wal_tables() after the update into the suspended table: %+v (before: %+v); want it suspended, 1 more committed, none applied", mid, before)
			}
			// Long enough for an apply that was not held to have run
			// (milliseconds, on an idle machine): the reads then show the
			// suspension, not a race won.
			time.Sleep(500 * time.Millisecond)
			want := map[string]int64{}
			for _, d := range ins.Docs {
				want[d.ID] = 0
			}
			seesRevisions(t, up, gen, want, map[int64]int64{}, 0, "while the apply is suspended")

			if err := s.exec(ctx, "resume WAL of", `ALTER TABLE `+s.tbl+` RESUME WAL`); err != nil {
				t.Fatal(err)
			}
			if err := waitApplied(ctx, s, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			want[upd.ID] = 1
			seesRevisions(t, up, gen, want, map[int64]int64{upd.Seq: 1}, upd.UpdateTime, "once the apply caught up")
			if got := stored(t, s, gen); !slices.Equal(got, []int64{0, 1, 2, 3, 4}) {
				t.Errorf("stored seqs %v, want 0 … 4 once each: an update replaces", got)
			}
		})
	}
}

// waitCommitted waits until wal_tables() shows the table's log at
// transaction txn or beyond, and returns its row.
func waitCommitted(t *testing.T, s *store, txn int64) WALTable {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		w, err := walTable(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if w.SequencerTxn >= txn || time.Now().After(deadline) {
			return w
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// seesRevisions checks what the reads of updates see of gen: the revision
// of each id of want, the updated events' revisions by _seq, and the
// newest update time (0: none).
func seesRevisions(t *testing.T, up walStore, gen string, want map[string]int64, wantUpdated map[int64]int64, newest int64, when string) {
	t.Helper()
	ctx := context.Background()
	revs, err := up.Revisions(ctx, gen, slices.Collect(maps.Keys(want)))
	if err != nil || !maps.Equal(revs, want) {
		t.Errorf("%s: revisions %v, %v; want %v", when, revs, err, want)
	}
	ut, ok, err := up.UpdateFreshness(ctx, gen)
	if err != nil || ok != (newest != 0) || ut != newest {
		t.Errorf("%s: update freshness %d, found %v, %v; want %d", when, ut, ok, err, newest)
	}
	updated := map[int64]int64{}
	if err := up.Updated(ctx, gen, func(seq, rev int64) { updated[seq] = rev }); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(updated, wantUpdated) {
		t.Errorf("%s: updated %v, want %v", when, updated, wantUpdated)
	}
}

// A batch that mixes inserts and updates is accounted item by item, as
// one of inserts is: a row QuestDB rejects, update or insert, is failed
// with its _seq, and the rows sent again after the rejection keep their
// revisions.
func TestMixedBatchRejectionsCountedExactly(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, nil)
	up := walStore{s}
	gen := "mix" + randomHex(t, 4)
	ins := docs(gen, 6, time.Now().UnixMicro())
	if res, err := s.Write(ctx, target.Batch{Generator: gen, Docs: ins.Docs[:4]}); err != nil || res.Acknowledged != 4 {
		t.Fatalf("write of 4 inserts: %+v, %v", res, err)
	}
	now := time.Now().UnixMicro()
	b := target.Batch{Generator: gen, Docs: []target.Document{
		targettest.Revision(ins.Docs[0], 1, now),
		targettest.Revision(ins.Docs[1], 1, now), // rejected below
		ins.Docs[4],
		ins.Docs[5], // rejected below
		targettest.Revision(ins.Docs[2], 3, now+1),
	}}
	b.Docs[1].EventTime, b.Docs[3].EventTime = -1, -1
	res, err := s.Write(ctx, b)
	slices.Sort(res.FailedSeqs)
	if err != nil || res.Acknowledged != 3 || res.Failed != 2 || !slices.Equal(res.FailedSeqs, []int64{1, 5}) || res.ErrorKinds["ilp_invalid"] != 2 {
		t.Fatalf("write of 3 updates and 2 inserts, one of each rejected: %+v, %v; want 3 acknowledged, seqs 1 and 5 failed as ilp_invalid", res, err)
	}
	if err := waitApplied(ctx, s, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{ins.Docs[0].ID: 1, ins.Docs[1].ID: 0, ins.Docs[2].ID: 3, ins.Docs[3].ID: 0, ins.Docs[4].ID: 0}
	seesRevisions(t, up, gen, want, map[int64]int64{0: 1, 2: 3}, now+1, "after the write")
	if got := stored(t, s, gen); !slices.Equal(got, []int64{0, 1, 2, 3, 4}) {
		t.Errorf("stored seqs %v, want 0 … 4 once each", got)
	}
}

// The reads of updates, like the others, give up at once on a cancelled
// context, with an error that says so.
func TestUpdateReadsCancelled(t *testing.T) {
	up := walStore{openTest(t, nil)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := map[string]func() error{
		"update freshness": func() error { _, _, err := up.UpdateFreshness(ctx, "g"); return err },
		"revisions":        func() error { _, err := up.Revisions(ctx, "g", []string{"g-0"}); return err },
		"updated":          func() error { return up.Updated(ctx, "g", func(int64, int64) {}) },
	}
	for name, call := range calls {
		start := time.Now()
		if err := call(); !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second {
			t.Errorf("%s with a cancelled context: %v after %s; want context.Canceled at once", name, err, time.Since(start))
		}
	}
}
