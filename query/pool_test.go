package query

import (
	"context"
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
	p := newPool(time.Hour, 1)
	c := &compiled{fields: []int{p.field(Param{Field: KindField(target.QueryNewest)})}}
	tp := &tap{Target: failLast{sim.New(sim.Config{})}, pool: p}
	b := batch(t, 3)
	if _, err := tp.Write(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if len(p.pending) != 1 || string(p.pending[0].json) != string(b.Docs[1].JSON) {
		t.Fatalf("pending %d documents; want the last acknowledged one", len(p.pending))
	}
	now := time.Now()
	p.settleDue(now)
	if _, _, ok := p.draw(c, 0); ok {
		t.Fatal("drew a value before it settled")
	}
	p.settleDue(now.Add(time.Hour))
	v, miss, ok := p.draw(c, 0)
	if !ok || miss || len(v) != 1 || v[0] != b.Generator {
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

// jsonOf is the documents of b, as seed takes them.
func jsonOf(b target.Batch) [][]byte {
	docs := make([][]byte, len(b.Docs))
	for i, d := range b.Docs {
		docs[i] = d.JSON
	}
	return docs
}

func TestReservoirIsBounded(t *testing.T) {
	p := newPool(0, 1)
	f := p.own[p.field(Param{Field: "processBy"})]
	p.seed(jsonOf(batch(t, 2*poolSize)))
	if len(f.vals) != poolSize || p.adding.seen != int64(2*poolSize) {
		t.Fatalf("reservoir holds %d of %d values, want %d", len(f.vals), p.adding.seen, poolSize)
	}
}

// The reservoir decides before it parses, and what it keeps is still a
// uniform sample of every document offered: of 8·poolSize documents, the
// first half's share of the sample is about a half (a binomial of
// poolSize draws: its standard deviation is under 0.01).
func TestReservoirIsUniform(t *testing.T) {
	p := newPool(0, 1)
	f := p.own[p.field(Param{Field: "_seq"})]
	p.seed(jsonOf(batch(t, 8*poolSize)))
	first := 0
	for _, v := range f.vals {
		if v.(int64) < 4*poolSize {
			first++
		}
	}
	if share := float64(first) / float64(len(f.vals)); share < 0.45 || share > 0.55 {
		t.Fatalf("the first half of the documents is %.3f of the sample of %d, want about 0.5", share, len(f.vals))
	}
}

// BenchmarkTapWrite is the cost of the tap per batch of 50 events (the
// ingest's default batch size): a copy on the write path, and the
// settler's parse of the documents the reservoir keeps, which runs beside.
func BenchmarkTapWrite(b *testing.B) {
	p := newPool(0, 1)
	tp := &tap{Target: sim.New(sim.Config{Discard: true}), pool: p}
	bt := batch(b, 50)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := tp.Write(ctx, bt); err != nil {
			b.Fatal(err)
		}
		if i%64 == 0 { // as the workload's settler does
			p.settleDue(time.Now())
		}
	}
}

// BenchmarkNext is the cost of picking one query of the default mix on
// the simulator: kind, parameter and statement.
func BenchmarkNext(b *testing.B) { benchmarkNext(b, sim.New(sim.Config{})) }

// BenchmarkNextFamily is BenchmarkNext for the families whose statement
// is built otherwise: numbered placeholders (the text is built once),
// Druid's positional ones, literals written in (Pinot), a search body.
func BenchmarkNextFamily(b *testing.B) {
	for _, f := range []string{"postgres", "druid", "pinot", "elasticsearch"} {
		b.Run(f, func(b *testing.B) { benchmarkNext(b, &planner{family: f}) })
	}
}

func benchmarkNext(b *testing.B, q target.Querier) {
	l, err := New(Config{Mix: DefaultMix(), QPS: 1, MaxInflight: 1, Limit: 10, Timeout: time.Second, Seed: 1}, "target", q, nil)
	if err != nil {
		b.Fatal(err)
	}
	bt := batch(b, 100)
	docs := make([][]byte, len(bt.Docs))
	for i, d := range bt.Docs {
		docs[i] = d.JSON
	}
	l.pool.seed(docs)
	b.ReportAllocs()
	for b.Loop() {
		l.next()
	}
}
