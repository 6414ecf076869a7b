package sqlite

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/freshbench/freshbench/target"
)

// TestTriggerSkippedRowsAreFailed checks that a row SQLite did not store,
// because a BEFORE INSERT trigger ran RAISE(IGNORE), is a failed item of
// kind not_stored with its _seq, told apart from a duplicate _id.
func TestTriggerSkippedRowsAreFailed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	tgt := open(t, path, target.Options{})
	if err := tgt.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tgt.(*Target).writer.ExecContext(ctx, `CREATE TRIGGER drop97 BEFORE INSERT ON freshbench_events
		WHEN NEW._seq % 97 = 0 BEGIN SELECT RAISE(IGNORE); END`); err != nil {
		t.Fatal(err)
	}
	const n, per = 1000, 250
	for from := 0; from < n; from += per {
		res, err := tgt.Write(ctx, docs("g", from, per))
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for s := int64(from); s < int64(from+per); s++ {
			if s%97 == 0 {
				want = append(want, s)
			}
		}
		slices.Sort(res.FailedSeqs)
		if res.Acknowledged != per-len(want) || res.Failed != len(want) || !slices.Equal(res.FailedSeqs, want) ||
			!maps.Equal(res.ErrorKinds, map[string]int{target.ErrorNotStored: len(want)}) {
			t.Fatalf("batch from _seq %d: got acknowledged %d, failed %d, kinds %v, seqs %v; want %d acknowledged, %d failed of kind %s, seqs %v",
				from, res.Acknowledged, res.Failed, res.ErrorKinds, res.FailedSeqs, per-len(want), len(want), target.ErrorNotStored, want)
		}
	}
	if c, err := tgt.Count(ctx, "g"); err != nil || c != n-11 {
		t.Fatalf("count = %d, %v; want %d", c, err, n-11)
	}
	// Written again: _seq 0..199 hold three dropped rows (0, 97, 194) and
	// 197 stored ones, now duplicates.
	res, err := tgt.Write(ctx, docs("g", 0, 200))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{target.ErrorDuplicateID: 197, target.ErrorNotStored: 3}
	if res.Acknowledged != 0 || res.Failed != 200 || len(res.FailedSeqs) != 200 || !maps.Equal(res.ErrorKinds, want) {
		t.Fatalf("rewrite: acknowledged %d, failed %d (%d seqs), kinds %v; want 200 failed, kinds %v",
			res.Acknowledged, res.Failed, len(res.FailedSeqs), res.ErrorKinds, want)
	}
}
