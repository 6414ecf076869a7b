package sim

import (
	"context"
	"errors"
	"testing"

	"github.com/freshbench/freshbench/target"
)

// discard:// keeps nothing, so it has nothing to read back: every Reader
// method says so with target.ErrNotKept instead of answering "nothing
// visible", which the probes would turn into lost writes and a lag as old
// as the run (issue 12, item 20).
func TestDiscardReaderIsNotKept(t *testing.T) {
	tgt := New(Config{Discard: true})
	ctx := context.Background()
	b := target.Batch{Generator: "g", Docs: []target.Document{{ID: "a", Generator: "g", Seq: 0, EventTime: 1, JSON: []byte(`{"_id":"a"}`)}}}
	if res, err := tgt.Write(ctx, b); err != nil || res.Acknowledged != 1 {
		t.Fatalf("write: %+v, %v; want 1 acknowledged", res, err)
	}
	_, _, err := tgt.Freshness(ctx, "g")
	check := func(method string, err error) {
		t.Helper()
		if !errors.Is(err, target.ErrNotKept) {
			t.Errorf("%s: error %v, want target.ErrNotKept", method, err)
		}
	}
	check("Freshness", err)
	_, err = tgt.Visible(ctx, "g", []string{"a"})
	check("Visible", err)
	_, err = tgt.Count(ctx, "g")
	check("Count", err)
	check("Seqs", tgt.Seqs(ctx, "g", func(int64) {}))

	// The sim keeps what it is written and is not affected.
	sim := New(Config{})
	if _, err := sim.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	if n, err := sim.Count(ctx, "g"); err != nil || n != 1 {
		t.Errorf("sim count %d, %v; want 1", n, err)
	}
}
