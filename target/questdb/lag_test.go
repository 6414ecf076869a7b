package questdb

import (
	"context"
	"sync"
	"testing"
	"time"
)

// freshnessSample is one answer of the freshness query: when it came and
// the newest event time it saw.
type freshnessSample struct {
	at     time.Time
	newest time.Time
}

// pollFreshness runs the freshness query of gen back to back until the
// returned stop is called, which returns the samples.
func pollFreshness(t *testing.T, s *store, gen string) (stop func() []freshnessSample) {
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu      sync.Mutex
		samples []freshnessSample
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			et, ok, err := s.Freshness(ctx, gen)
			at := time.Now()
			if err == nil && ok {
				mu.Lock()
				samples = append(samples, freshnessSample{at, time.UnixMicro(et)})
				mu.Unlock()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() []freshnessSample {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return samples
	}
}

// The data latency of a WAL table is its apply lag, and QuestDB's own
// account says so: while the apply of the table is suspended, every write
// is acknowledged and committed to the log (sequencerTxn counts one per
// request, exactly) but none is applied (writerTxn stays), no query sees
// an event written after the suspension, and the freshness lag freshbench
// measures grows by the length of the suspension; once the apply resumes
// the backlog drains and the lag falls back.
func TestApplyLagFollowsWALAccount(t *testing.T) {
	// A table of its own; its bounds are the suspension it holds and the
	// lag it measured before it.
	t.Parallel()
	ctx := context.Background()
	s := openTest(t, nil)
	gen := "lag" + randomHex(t, 4)
	const suspension = 3 * time.Second
	var (
		seq    int64
		newest time.Time // of the last acknowledged batch
	)
	// writeFor writes a batch of 10 events every 50 ms for d, each
	// batch's events at its own wall-clock time, and returns how many
	// requests it made.
	writeFor := func(d time.Duration) int64 {
		var n int64
		for end := time.Now().Add(d); time.Now().Before(end); n++ {
			now := time.Now()
			b := docs(gen, 10, now.UnixMicro())
			for i := range b.Docs {
				b.Docs[i].Seq = seq
				b.Docs[i].ID = gen + "-" + randomHex(t, 8)
				b.Docs[i].EventTime = now.UnixMicro()
				seq++
			}
			res, err := s.Write(ctx, b)
			if err != nil || res.Acknowledged != len(b.Docs) {
				t.Fatalf("write: %+v, %v; want every event acknowledged", res, err)
			}
			newest = now
			time.Sleep(50 * time.Millisecond)
		}
		return n
	}
	stop := pollFreshness(t, s, gen)

	writeFor(1500 * time.Millisecond)
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
	suspended, lastBefore := time.Now(), newest
	requests := writeFor(suspension)
	mid, err := walTable(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if !mid.Suspended || mid.SequencerTxn-before.SequencerTxn != requests || mid.WriterTxn != before.WriterTxn {
		t.Errorf("wal_tables() after %d acknowledged requests into the suspended table: %+v (before: %+v); want it suspended, %d more committed, none applied",
			requests, mid, before, requests)
	}
	t.Logf("suspended %s: %d requests committed, backlog %d transactions", time.Since(suspended).Round(time.Millisecond), requests, mid.Backlog)
	resumeSent := time.Now()
	if err := s.exec(ctx, "resume WAL of", `ALTER TABLE `+s.tbl+` RESUME WAL`); err != nil {
		t.Fatal(err)
	}
	writeFor(1500 * time.Millisecond)
	samples := stop()

	var lagBefore, lagDuring time.Duration
	lagAfter := time.Duration(1<<63 - 1) // the least after the resume
	for _, x := range samples {
		lag := x.at.Sub(x.newest)
		switch {
		case x.at.Before(suspended):
			lagBefore = max(lagBefore, lag)
		case x.at.Before(resumeSent):
			if x.newest.After(lastBefore) {
				t.Errorf("at %s into the suspension a query saw an event of %s, after the last one acknowledged before it (%s)",
					x.at.Sub(suspended), x.newest.Sub(suspended), lastBefore.Sub(suspended))
			}
			lagDuring = max(lagDuring, lag)
		default:
			lagAfter = min(lagAfter, lag)
		}
	}
	held := resumeSent.Sub(suspended)
	t.Logf("freshness lag: ≤ %s before, ≤ %s during the %s suspension, down to %s after (%d samples)",
		lagBefore.Round(time.Millisecond), lagDuring.Round(time.Millisecond), held.Round(time.Millisecond), lagAfter.Round(time.Millisecond), len(samples))
	if lagDuring < held*9/10 || lagDuring > held+lagBefore+time.Second {
		t.Errorf("freshness lag during the suspension reached %s; want about the %s the apply was suspended (90%% of it to it plus the %s lag before and 1 s)",
			lagDuring, held, lagBefore)
	}
	if lagAfter > lagDuring/2 {
		t.Errorf("freshness lag after the resume at least %s, want it back below half the lag of the suspension (%s) once the backlog is applied", lagAfter, lagDuring)
	}
}
