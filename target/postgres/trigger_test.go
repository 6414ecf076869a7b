package postgres

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

// dropEvery is the modulus of the trigger below: it drops every row whose
// _seq is a multiple of it.
const dropEvery = 97

// addDroppingTrigger installs a BEFORE INSERT trigger that returns NULL,
// so that the server silently does not store, every row whose _seq is a
// multiple of dropEvery: a row filter some deployments really have.
func addDroppingTrigger(t *testing.T, s *store, table string) {
	t.Helper()
	addTrigger(t, s, table, "_drop", "INSERT", `
	IF NEW._seq % 97 = 0 THEN
		RETURN NULL;
	END IF;
	RETURN NEW;`)
}

// addTrigger installs a row trigger on table that runs body, PL/pgSQL,
// before each INSERT or UPDATE (event), and drops it at the end.
func addTrigger(t *testing.T, s *store, table, suffix, event, body string) {
	t.Helper()
	ctx := context.Background()
	fn := pgx.Identifier{table + suffix}.Sanitize()
	stmts := []string{
		`CREATE FUNCTION ` + fn + `() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN` + body + `
END $$`,
		`CREATE TRIGGER ` + fn + ` BEFORE ` + event + ` ON ` + pgx.Identifier{table}.Sanitize() + ` FOR EACH ROW EXECUTE FUNCTION ` + fn + `()`,
	}
	for _, q := range stmts {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatalf("add trigger: %v", err)
		}
	}
	t.Cleanup(func() {
		if _, err := s.pool.Exec(context.Background(), `DROP FUNCTION IF EXISTS `+fn+`() CASCADE`); err != nil {
			t.Errorf("drop trigger function: %v", err)
		}
	})
}

// dropped returns the _seq in [from, to) that the trigger drops.
func dropped(from, to int64) []int64 {
	var out []int64
	for s := from; s < to; s++ {
		if s%dropEvery == 0 {
			out = append(out, s)
		}
	}
	return out
}

// TestTriggerSkippedRowsAreFailed checks that a row the server did not
// store, because a BEFORE INSERT trigger returned NULL, is a failed item
// of kind not_stored with its _seq, for every write method, and that
// INSERT and pipeline tell it apart from a duplicate _id.
func TestTriggerSkippedRowsAreFailed(t *testing.T) {
	serverURL(t)
	for _, method := range WriteMethods() {
		t.Run(method, func(t *testing.T) {
			ctx := context.Background()
			s, table := openTest(t, map[string]string{"write_method": method}, target.Options{})
			if err := s.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			addDroppingTrigger(t, s, table)
			const n, per = 1000, 250
			gen := "trg"
			docs := makeDocs(gen, 0, n, "p")
			for from := 0; from < n; from += per {
				batch := docs[from : from+per]
				res := write(t, s, batch)
				want := dropped(int64(from), int64(from+per))
				slices.Sort(res.FailedSeqs)
				if res.Acknowledged != per-len(want) || res.Failed != len(want) ||
					res.ErrorKinds[target.ErrorNotStored] != len(want) || len(res.ErrorKinds) != 1 ||
					!slices.Equal(res.FailedSeqs, want) {
					t.Fatalf("batch from _seq %d: got acknowledged %d, failed %d, kinds %v, failed seqs %v; want acknowledged %d, failed %d of kind %s, seqs %v",
						from, res.Acknowledged, res.Failed, res.ErrorKinds, res.FailedSeqs, per-len(want), len(want), target.ErrorNotStored, want)
				}
			}
			stored := n - len(dropped(0, n))
			if c, err := s.Count(ctx, gen); err != nil || c != int64(stored) {
				t.Fatalf("count = %d, %v; want %d", c, err, stored)
			}
			var seqs []int64
			if err := s.Seqs(ctx, gen, func(seq int64) { seqs = append(seqs, seq) }); err != nil {
				t.Fatal(err)
			}
			slices.Sort(seqs)
			for i, seq := range seqs {
				if seq%dropEvery == 0 || (i > 0 && seq == seqs[i-1]) {
					t.Fatalf("stored _seq %d: the trigger drops it, or it is stored twice", seq)
				}
			}

			// Written again: the stored rows are duplicates, the dropped
			// ones are dropped again, with every method (COPY, which has no
			// ON CONFLICT, writes a batch that hits a stored _id again by
			// INSERT).
			again := docs[:200]
			res := write(t, s, again)
			if res.Acknowledged+res.Failed != len(again) {
				t.Fatalf("rewrite: acknowledged %d + failed %d != %d written", res.Acknowledged, res.Failed, len(again))
			}
			wantKinds := map[string]int{target.ErrorDuplicateID: 197, target.ErrorNotStored: 3}
			if res.Failed != 200 || len(res.FailedSeqs) != 200 || !maps.Equal(res.ErrorKinds, wantKinds) {
				t.Fatalf("rewrite: failed %d (%d seqs), kinds %v; want 200 failed, kinds %v", res.Failed, len(res.FailedSeqs), res.ErrorKinds, wantKinds)
			}
		})
	}
}

// revise returns revision rev of each of docs, the update of _seq s
// generated at updateTime(s).
func revise(docs []target.Document, rev int64, updateTime func(seq int64) int64) []target.Document {
	out := make([]target.Document, len(docs))
	for i, d := range docs {
		out[i] = targettest.Revision(d, rev, updateTime(d.Seq))
	}
	return out
}

// checkStored holds what the target reports of gen against want, the
// revision the server stores per _seq (absent: not stored): Revisions of
// every id, Updated, UpdateFreshness (the newest update time of a stored
// update, newest), the seqs once each, and each row's document being
// the revision its _revision column names.
func checkStored(t *testing.T, s *store, table, gen string, docs []target.Document, want map[int64]int64, newest int64) {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	revs, err := s.Revisions(ctx, gen, ids)
	if err != nil {
		t.Fatalf("revisions: %v", err)
	}
	for _, d := range docs {
		if got, seen := revs[d.ID]; !seen || got != want[d.Seq] {
			t.Errorf("revision of _seq %d = %d (seen %v), want %d, the one stored", d.Seq, got, seen, want[d.Seq])
		}
	}
	updated := map[int64]int64{}
	if err := s.Updated(ctx, gen, func(seq, rev int64) { updated[seq] = rev }); err != nil {
		t.Fatalf("updated: %v", err)
	}
	wantUpdated := maps.Clone(want)
	maps.DeleteFunc(wantUpdated, func(_, rev int64) bool { return rev == 0 })
	if !maps.Equal(updated, wantUpdated) {
		t.Errorf("updated = %v, want %v", updated, wantUpdated)
	}
	if ut, ok, err := s.UpdateFreshness(ctx, gen); err != nil || !ok || ut != newest {
		t.Errorf("update freshness = %d, found %v, %v; want %d, the newest stored update time", ut, ok, err, newest)
	}
	var seqs []int64
	if err := s.Seqs(ctx, gen, func(seq int64) { seqs = append(seqs, seq) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(seqs)
	if !slices.Equal(seqs, slices.Sorted(maps.Keys(want))) {
		t.Errorf("seqs = %v, want each stored event once", seqs)
	}
	var mismatched int
	err = s.pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()+
		` WHERE coalesce((doc->>'_revision')::bigint, 0) <> _revision`).Scan(&mismatched)
	if err != nil || mismatched != 0 {
		t.Errorf("rows whose document is not their _revision: %d, %v; want 0", mismatched, err)
	}
}

// TestUpdateSkippedByTriggerIsFailed checks that an update the server did
// not store, because a BEFORE UPDATE trigger returned NULL, is a failed
// item of kind not_stored with its _seq, with every write method, in a
// batch that mixes updates and inserts; the rest are acknowledged, and
// the reads show exactly what is stored.
func TestUpdateSkippedByTriggerIsFailed(t *testing.T) {
	serverURL(t)
	for _, method := range WriteMethods() {
		t.Run(method, func(t *testing.T) {
			ctx := context.Background()
			s, table := openTest(t, map[string]string{"write_method": method}, target.Options{})
			if err := s.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			addTrigger(t, s, table, "_skip", "UPDATE", `
	IF NEW._seq % 3 = 0 THEN
		RETURN NULL;
	END IF;
	RETURN NEW;`)
			const n, more = 30, 10
			gen := "upd"
			docs := makeDocs(gen, 0, n+more, "p")
			if res := write(t, s, docs[:n]); res.Acknowledged != n || res.Failed != 0 {
				t.Fatalf("write %d inserts: %+v", n, res)
			}
			// The newest update time is that of _seq 0, which the
			// trigger skips.
			base := time.Now().UnixMicro()
			mixed := append(revise(docs[:n], 1, func(seq int64) int64 { return base + 100 - seq }), docs[n:]...)
			res := write(t, s, mixed)
			want := map[int64]int64{}
			var skipped []int64
			for seq := range int64(n + more) {
				want[seq] = 0
				if seq < n && seq%3 != 0 {
					want[seq] = 1
				} else if seq < n {
					skipped = append(skipped, seq)
				}
			}
			slices.Sort(res.FailedSeqs)
			if res.Acknowledged != len(mixed)-len(skipped) || res.Failed != len(skipped) ||
				!maps.Equal(res.ErrorKinds, map[string]int{target.ErrorNotStored: len(skipped)}) ||
				!slices.Equal(res.FailedSeqs, skipped) {
				t.Fatalf("%d updates and %d inserts: acknowledged %d, failed %d, kinds %v, failed seqs %v; want acknowledged %d, failed seqs %v of kind %s",
					n, more, res.Acknowledged, res.Failed, res.ErrorKinds, res.FailedSeqs, len(mixed)-len(skipped), skipped, target.ErrorNotStored)
			}
			checkStored(t, s, table, gen, docs, want, base+99)
		})
	}
}

// TestUpdateKeptOldByTriggerIsAcknowledged checks the update the server
// says it stored but did not: a BEFORE UPDATE trigger that returns OLD
// keeps the stored row. The server reports the row as written, so the
// update is acknowledged, and the reads show the old revision, exactly
// what is stored: the lost update that the audit counts.
func TestUpdateKeptOldByTriggerIsAcknowledged(t *testing.T) {
	serverURL(t)
	for _, method := range WriteMethods() {
		t.Run(method, func(t *testing.T) {
			ctx := context.Background()
			s, table := openTest(t, map[string]string{"write_method": method}, target.Options{})
			if err := s.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			addTrigger(t, s, table, "_keep", "UPDATE", `
	IF NEW._revision >= 2 AND NEW._seq % 3 = 0 THEN
		RETURN OLD;
	END IF;
	RETURN NEW;`)
			const n, more = 30, 6
			gen := "keep"
			docs := makeDocs(gen, 0, n+more, "p")
			base := time.Now().UnixMicro()
			batches := [][]target.Document{
				docs[:n],
				revise(docs[:n], 1, func(seq int64) int64 { return base + seq }),
				// The newest update time is that of _seq 0, whose
				// revision 2 the trigger throws away.
				append(revise(docs[:n], 2, func(seq int64) int64 { return base + 1000 - seq }), docs[n:]...),
			}
			for i, b := range batches {
				if res := write(t, s, b); res.Acknowledged != len(b) || res.Failed != 0 {
					t.Fatalf("batch %d: acknowledged %d, failed %d (%v); want all %d acknowledged: the server reported each row written",
						i, res.Acknowledged, res.Failed, res.ErrorKinds, len(b))
				}
			}
			want := map[int64]int64{}
			for seq := range int64(n + more) {
				switch {
				case seq >= n:
					want[seq] = 0
				case seq%3 == 0:
					want[seq] = 1
				default:
					want[seq] = 2
				}
			}
			checkStored(t, s, table, gen, docs, want, base+999)
		})
	}
}
