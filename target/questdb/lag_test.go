package questdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// freshnessSample is one answer of the freshness query: when it came and
// the newest event time it saw.
type freshnessSample struct {
	start  time.Time // the query was sent
	at     time.Time // its answer came
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
			start := time.Now()
			et, ok, err := s.Freshness(ctx, gen)
			at := time.Now()
			if err == nil && ok {
				mu.Lock()
				samples = append(samples, freshnessSample{start, at, time.UnixMicro(et)})
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
	// The backlog's apply may take seconds on a busy server: the lag
	// after it is sampled once it is applied, while the writes go on.
	writeFor(1500 * time.Millisecond)
	if err := waitApplied(ctx, s, time.Minute); err != nil {
		t.Fatal(err)
	}
	writeFor(1500 * time.Millisecond)
	samples := stop()

	lagDuring, err := suspensionLag(samples, suspended, resumeSent, lastBefore)
	if err != nil {
		t.Error(err)
	}
	lagAfter := time.Duration(1<<63 - 1) // the least after the resume
	for _, x := range samples {
		if !x.at.Before(resumeSent) {
			lagAfter = min(lagAfter, x.at.Sub(x.newest))
		}
	}
	t.Logf("freshness lag: ≤ %s during the %s suspension, down to %s after (%d samples)",
		lagDuring.Round(time.Millisecond), resumeSent.Sub(suspended).Round(time.Millisecond), lagAfter.Round(time.Millisecond), len(samples))
	if lagAfter > lagDuring/2 {
		t.Errorf("freshness lag after the resume at least %s, want it back below half the lag of the suspension (%s) once the backlog is applied", lagAfter, lagDuring)
	}
}

// suspensionLag checks the freshness samples against a suspension of the
// apply from suspended to resumeSent, every event up to lastBefore (the
// last one acknowledged before it) applied when it began, and returns the
// largest lag sampled during it. A query sent and answered within the
// suspension sees exactly lastBefore, so its lag is the time since that
// event, to the microsecond: no share of the suspension is assumed, which
// a slow query (its answer long before the resume) would miss. One
// answered during it but sent before may see less, never more.
func suspensionLag(samples []freshnessSample, suspended, resumeSent, lastBefore time.Time) (time.Duration, error) {
	last := time.UnixMicro(lastBefore.UnixMicro()) // as stored
	var lagDuring time.Duration
	var within int
	var errs []error
	for _, x := range samples {
		if x.at.Before(suspended) || !x.at.Before(resumeSent) {
			continue
		}
		lagDuring = max(lagDuring, x.at.Sub(x.newest))
		switch {
		case x.newest.After(last):
			errs = append(errs, fmt.Errorf("at %s into the suspension a query saw an event of %s, after the last one acknowledged before it (%s)",
				x.at.Sub(suspended), x.newest.Sub(suspended), last.Sub(suspended)))
		case !x.start.Before(suspended) && !x.newest.Equal(last):
			errs = append(errs, fmt.Errorf("a query sent %s into the suspension saw an event of %s; want the last one acknowledged and applied before it (%s): lag %s, want %s",
				x.start.Sub(suspended), x.newest.Sub(suspended), last.Sub(suspended), x.at.Sub(x.newest), x.at.Sub(last)))
		case !x.start.Before(suspended):
			within++
		}
	}
	if within == 0 {
		errs = append(errs, fmt.Errorf("no freshness query was sent and answered within the %s suspension (%d samples in all)", resumeSent.Sub(suspended), len(samples)))
	}
	return lagDuring, errors.Join(errs...)
}

// The lag during a suspension is held against what the test knows, not
// against a share of the suspension: a server that keeps to it but
// answers each query in 500 ms, the last answer during the suspension
// 550 ms before the resume, passes; one whose queries see an event older
// than the last one applied (a stale read), or one written after the
// suspension began, fails.
func TestSuspensionLagSlowQueries(t *testing.T) {
	lastBefore := time.UnixMicro(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC).UnixMicro())
	suspended := lastBefore.Add(50 * time.Millisecond) // the ALTER's round trip
	resumeSent := suspended.Add(3 * time.Second)
	// polls answers 500 ms after their queries, every 600 ms from first
	// to last, seeing newest.
	polls := func(first, last time.Time, newest func(at time.Time) time.Time) (s []freshnessSample) {
		for at := first; !at.After(last); at = at.Add(600 * time.Millisecond) {
			s = append(s, freshnessSample{start: at.Add(-500 * time.Millisecond), at: at, newest: newest(at)})
		}
		return s
	}
	kept := func(at time.Time) time.Time {
		if at.Before(suspended) {
			return at.Add(-30 * time.Millisecond)
		}
		return lastBefore
	}
	before := polls(lastBefore.Add(-time.Second), suspended.Add(-time.Millisecond), kept)
	during := polls(suspended.Add(150*time.Millisecond), resumeSent.Add(-550*time.Millisecond), kept)
	correct := append(slices.Clone(before), during...)
	if lag, err := suspensionLag(correct, suspended, resumeSent, lastBefore); err != nil {
		t.Errorf("a server that kept the suspension, queried slowly: %v (largest lag %s)", err, lag)
	}

	stale := slices.Clone(correct)
	stale[len(stale)-1].newest = lastBefore.Add(-time.Second)
	if _, err := suspensionLag(stale, suspended, resumeSent, lastBefore); err == nil {
		t.Error("a query during the suspension saw an event 1 s older than the last one applied: want an error")
	}
	leaked := slices.Clone(correct)
	leaked[len(leaked)-1].newest = suspended.Add(time.Second)
	if _, err := suspensionLag(leaked, suspended, resumeSent, lastBefore); err == nil {
		t.Error("a query during the suspension saw an event written after it began: want an error")
	}
	if _, err := suspensionLag(before, suspended, resumeSent, lastBefore); err == nil {
		t.Error("no query ran during the suspension: want an error")
	}
}
