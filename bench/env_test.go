package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

// shaping is a sim target whose layout counts the events written to it,
// as a target that makes its columns from the events does.
type shaping struct {
	*sim.Target
	written int
}

func (s *shaping) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	s.written += len(b.Docs)
	return s.Target.Write(ctx, b)
}

func (s *shaping) Layout() string { return fmt.Sprintf("%d events shaped the table", s.written) }

// The layout a result records is the target's when the result is
// written, after the events were sent, not when the description was
// taken before them.
func TestDescribeLayoutWhenApplied(t *testing.T) {
	ctx := context.Background()
	tgt := &shaping{Target: sim.New(sim.Config{})}
	d := Describe(ctx, "run", tgt, "sim://")
	docs := []target.Document{{ID: "a", Generator: "g", JSON: []byte(`{"_id":"a"}`)}, {ID: "b", Generator: "g", Seq: 1, JSON: []byte(`{"_id":"b"}`)}}
	if _, err := tgt.Write(ctx, target.Batch{Generator: "g", Docs: docs}); err != nil {
		t.Fatal(err)
	}
	var res results.Result
	d.Apply(&res)
	if got, want := res.Config.TargetLayout, "2 events shaped the table"; got != want {
		t.Errorf("layout recorded %q, want %q", got, want)
	}
}
