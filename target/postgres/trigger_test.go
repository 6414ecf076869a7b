package postgres

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/freshbench/freshbench/target"
)

// dropEvery is the modulus of the trigger below: it drops every row whose
// _seq is a multiple of it.
const dropEvery = 97

// addDroppingTrigger installs a BEFORE INSERT trigger that returns NULL,
// so that the server silently does not store, every row whose _seq is a
// multiple of dropEvery: a row filter some deployments really have.
func addDroppingTrigger(t *testing.T, s *store, table string) {
	t.Helper()
	ctx := context.Background()
	fn := pgx.Identifier{table + "_drop"}.Sanitize()
	stmts := []string{
		`CREATE FUNCTION ` + fn + `() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW._seq % 97 = 0 THEN
		RETURN NULL;
	END IF;
	RETURN NEW;
END $$`,
		`CREATE TRIGGER ` + fn + ` BEFORE INSERT ON ` + pgx.Identifier{table}.Sanitize() + ` FOR EACH ROW EXECUTE FUNCTION ` + fn + `()`,
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
