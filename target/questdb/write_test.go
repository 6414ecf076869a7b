package questdb

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// docs builds n events of generator gen with _seq 0 … n-1; the event
// times rise from base by one microsecond.
func docs(gen string, n int, base int64) target.Batch {
	b := target.Batch{Generator: gen, Docs: make([]target.Document, n)}
	for i := range b.Docs {
		id := fmt.Sprintf("%s-%d", gen, i)
		b.Docs[i] = target.Document{ID: id, Generator: gen, Seq: int64(i), EventTime: base + int64(i),
			JSON: fmt.Appendf(nil, `{"_id":%q,"generator_identifier":%q,"_seq":%d,"processBy":"w \"1\"","tags":["a","b"]}`, id, gen, i)}
	}
	return b
}

// stored reads the _seq values QuestDB holds for gen, sorted.
func stored(t *testing.T, s *store, gen string) []int64 {
	t.Helper()
	var seqs []int64
	if err := s.Seqs(context.Background(), gen, func(q int64) { seqs = append(seqs, q) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(seqs)
	return seqs
}

// Rows QuestDB rejects are failed one by one, each with its _seq, and the
// rest of the batch is stored exactly once: QuestDB's own account shows one
// transaction committed for the batch, however many rejections it took.
// A batch with more bad rows than maxRejections fails as a whole, the rows
// never judged counted apart, and nothing of it is stored.
func TestRejectedRowsCountedExactly(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, nil)
	before, err := walTable(ctx, s)
	if err != nil {
		t.Fatal(err)
	}

	gen := "rej" + randomHex(t, 4)
	b := docs(gen, 40, time.Now().UnixMicro())
	bad := []int{0, 7, 8, 39} // first, two adjacent, last
	for _, i := range bad {
		b.Docs[i].EventTime = -1
	}
	res, err := s.Write(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(res.FailedSeqs)
	wantFailed := []int64{0, 7, 8, 39}
	if res.Acknowledged != 36 || res.Failed != 4 || !slices.Equal(res.FailedSeqs, wantFailed) || res.ErrorKinds["ilp_invalid"] != 4 || len(res.ErrorKinds) != 1 {
		t.Fatalf("write: %+v; want 36 acknowledged, failed seqs %v of kind ilp_invalid", res, wantFailed)
	}
	if err := waitApplied(ctx, s, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	after, err := walTable(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.SequencerTxn - before.SequencerTxn; got != 1 {
		t.Errorf("wal_tables(): %d transactions committed for the batch, want 1 (a rejected request commits nothing)", got)
	}
	var want []int64
	for i := range 40 {
		if !slices.Contains(bad, i) {
			want = append(want, int64(i))
		}
	}
	if got := stored(t, s, gen); !slices.Equal(got, want) {
		t.Errorf("stored seqs %v, want the acknowledged %v, each once", got, want)
	}

	gen2 := "rej" + randomHex(t, 4)
	b = docs(gen2, 30, time.Now().UnixMicro())
	for i := range 20 {
		b.Docs[i].EventTime = -1
	}
	res, err = s.Write(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Acknowledged != 0 || res.Failed != 30 || len(res.FailedSeqs) != 30 ||
		res.ErrorKinds["ilp_invalid"] != maxRejections || res.ErrorKinds[errorAbandoned] != 30-maxRejections {
		t.Errorf("write of 20 bad rows in 30: %+v; want all 30 failed: %d ilp_invalid, %d %s", res, maxRejections, 30-maxRejections, errorAbandoned)
	}
	if err := waitApplied(ctx, s, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, s, gen2); len(got) != 0 {
		t.Errorf("stored %v of a batch that failed whole", got)
	}
}

// A server that is not there fails the write as a whole, acknowledging
// nothing, with an error the ingest classifies.
func TestWriteToNoServer(t *testing.T) {
	s := openTest(t, nil)
	s.cfg.httpAddr = "127.0.0.1:1" // nothing listens on port 1
	s.senders.close()
	res, err := s.Write(context.Background(), docs("gone", 5, time.Now().UnixMicro()))
	if err == nil || res.Acknowledged != 0 {
		t.Fatalf("write to a closed port: %+v, %v; want an error and nothing acknowledged", res, err)
	}
	t.Log(err)
}

// A server that takes the request and never answers (a stopped process
// whose socket still accepts) fails the write once the request timeout
// has passed, as a timeout, acknowledging nothing.
func TestWriteTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	tg, err := Open(context.Background(), withTable(t, serverURL(t), "fbt_"+randomHex(t, 6)), target.Options{RequestTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := storeOf(t, tg)
	defer s.Close()
	s.cfg.httpAddr = ln.Addr().String()
	start := time.Now()
	res, err := s.Write(context.Background(), docs("slow", 5, time.Now().UnixMicro()))
	took := time.Since(start)
	if err == nil || res.Acknowledged != 0 || stats.ErrorKind(err) != "timeout" || !strings.Contains(err.Error(), "request timeout 500ms") {
		t.Fatalf("write to a server that never answers: %+v, %v (kind %s); want a timeout naming the request timeout, nothing acknowledged", res, err, stats.ErrorKind(err))
	}
	if took < 500*time.Millisecond || took > 5*time.Second {
		t.Errorf("the write took %s, want the 500ms request timeout", took)
	}
}

// A re-send of a batch that was stored (a retry after a timeout that hid
// the commit) is acknowledged again and replaces its rows: the WAL table
// deduplicates on (_event_time, _id), so the audit sees each event once.
func TestResendReplaces(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, nil)
	gen := "dup" + randomHex(t, 4)
	b := docs(gen, 30, time.Now().UnixMicro())
	for i := range 2 {
		if res, err := s.Write(ctx, b); err != nil || res.Acknowledged != 30 {
			t.Fatalf("write #%d: %+v, %v; want 30 acknowledged", i+1, res, err)
		}
	}
	if err := waitApplied(ctx, s, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, s, gen); len(got) != 30 || got[0] != 0 || got[29] != 29 {
		t.Errorf("stored seqs %v after the batch was written twice, want 0 … 29 once each", got)
	}
}
