package query

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

func batch(tb testing.TB, n int) target.Batch {
	tb.Helper()
	g, err := docgen.New(docgen.Config{Seed: 9})
	if err != nil {
		tb.Fatal(err)
	}
	b := target.Batch{Generator: g.ID()}
	var buf []byte
	for range n {
		var d target.Document
		d, buf = g.Next(buf, 1)
		b.Docs = append(b.Docs, d)
	}
	return b
}

// The tap offers an acknowledged document, never a failed one, and the
// pool draws it only once it has settled.
func TestTapOffersSettledAcknowledgedDocuments(t *testing.T) {
	p := newPool(time.Hour, rand.New(rand.NewPCG(1, 1)))
	tp := &tap{Target: failLast{sim.New(sim.Config{})}, pool: p}
	b := batch(t, 3)
	if _, err := tp.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if len(p.pending) != 1 || string(p.pending[0].json) != string(b.Docs[1].JSON) {
		t.Fatalf("pending %d documents; want the last acknowledged one", len(p.pending))
	}
	now := time.Now()
	if _, _, ok := p.draw(target.QueryNewest, 0, now); ok {
		t.Fatal("drew a value before it settled")
	}
	v, miss, ok := p.draw(target.QueryNewest, 0, now.Add(time.Hour))
	if !ok || miss || v != b.Generator {
		t.Fatalf("draw after settling = %q miss=%v ok=%v, want the generator %s", v, miss, ok, b.Generator)
	}
}

// failLast acknowledges every document of a batch but the last.
type failLast struct{ target.Target }

func (f failLast) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	res, err := f.Target.Write(ctx, b)
	last := b.Docs[len(b.Docs)-1].Seq
	res.Acknowledged--
	res.Failed, res.FailedSeqs = 1, []int64{last}
	return res, err
}

func TestReservoirIsBounded(t *testing.T) {
	p := newPool(0, rand.New(rand.NewPCG(1, 1)))
	b := batch(t, 2*poolSize)
	docs := make([][]byte, len(b.Docs))
	for i, d := range b.Docs {
		docs[i] = d.JSON
	}
	p.seed(docs)
	if len(p.docs) != poolSize || p.seen != int64(2*poolSize) {
		t.Fatalf("reservoir holds %d of %d documents, want %d", len(p.docs), p.seen, poolSize)
	}
}

// BenchmarkTapWrite is the cost the tap adds to a batch write of 50
// events (the ingest's default batch size).
func BenchmarkTapWrite(b *testing.B) {
	p := newPool(0, rand.New(rand.NewPCG(1, 1)))
	tp := &tap{Target: sim.New(sim.Config{Discard: true}), pool: p}
	bt := batch(b, 50)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := tp.Write(ctx, bt); err != nil {
			b.Fatal(err)
		}
		if i%64 == 0 { // as the workload's draws do
			p.draw(target.QueryPoint, 0, time.Now())
		}
	}
}

// BenchmarkNext is the cost of picking one query: kind and parameter.
func BenchmarkNext(b *testing.B) {
	s := sim.New(sim.Config{})
	l, err := New(Config{Mix: DefaultMix(), QPS: 1, MaxInflight: 1, Limit: 10, Timeout: time.Second, Seed: 1}, s, nil)
	if err != nil {
		b.Fatal(err)
	}
	bt := batch(b, 100)
	docs := make([][]byte, len(bt.Docs))
	for i, d := range bt.Docs {
		docs[i] = d.JSON
	}
	l.pool.seed(docs)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		l.next(now)
	}
}
