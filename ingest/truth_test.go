package ingest

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
	"github.com/freshbench/freshbench/timeline"
)

func allPhases(a *Accounting) []*results.Phase {
	return []*results.Phase{a.Phase(results.PhaseWarmup), a.Phase(results.PhaseMeasured), a.Phase(results.PhaseTail)}
}

// A request that failed as a whole acknowledged no byte.
func TestFailedRequestsAcknowledgeNoBytes(t *testing.T) {
	synctest.Test(t, testFailedRequestsAcknowledgeNoBytes)
}

func testFailedRequestsAcknowledgeNoBytes(t *testing.T) {
	a := run(t, testConfig(500, 10, time.Second), failing{})
	for _, p := range allPhases(a) {
		if p.AckedBytes != 0 {
			t.Fatalf("phase %s: %d bytes acknowledged by a target that refused every request, want 0", p.Name, p.AckedBytes)
		}
	}
}

// The measured window is the schedule, not the time of the last dispatch:
// with one batch a second, a 3 s run measures 3 s.
func TestMeasuredWindowIsTheSchedule(t *testing.T) { synctest.Test(t, testMeasuredWindowIsTheSchedule) }

func testMeasuredWindowIsTheSchedule(t *testing.T) {
	cfg := testConfig(10, 10, 3*time.Second)
	a := run(t, cfg, sim.New(sim.Config{Discard: true}))
	from, to := a.Timeline().Measured()
	if got := to.Sub(from); got != 3*time.Second {
		t.Fatalf("measured window %s, want the 3s of the schedule", got)
	}
}

// Every event the schedule made due is dispatched or unsent, exactly, in
// whole batches; every dispatched one is acknowledged or failed — also when
// the target falls far behind and when the run is interrupted.
func TestAccountingBalancesUnderBacklog(t *testing.T) {
	for _, tc := range []struct {
		name      string
		gens      int
		rate      pace.Rate
		interrupt time.Duration
	}{
		{"one stream", 1, pace.Rate{PerSecond: 1000, Unit: pace.Events}, 0},
		{"three streams", 3, pace.Rate{PerSecond: 1500, Unit: pace.Events}, 0},
		{"interrupted", 2, pace.Rate{PerSecond: 1000, Unit: pace.Events}, 700 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := testConfig(0, 50, 2*time.Second)
				cfg.Rate, cfg.Generators, cfg.MaxInflight = tc.rate, tc.gens, 1
				in, err := New(cfg, sim.New(sim.Config{WriteDelay: 120 * time.Millisecond}), nil, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.interrupt > 0 {
					time.AfterFunc(tc.interrupt, cancel)
				}
				start := time.Now()
				a := in.Run(ctx, timeline.New(start, cfg.Warmup, cfg.Duration), stats.NewSeries(start, 0))
				var due int64
				for _, p := range allPhases(a) {
					if p.Dispatched != p.Acked+p.Failed {
						t.Errorf("phase %s: dispatched %d ≠ acknowledged %d + failed %d", p.Name, p.Dispatched, p.Acked, p.Failed)
					}
					if (p.Dispatched+p.Unsent)%50 != 0 {
						t.Errorf("phase %s: dispatched %d + unsent %d is not a whole number of batches of 50", p.Name, p.Dispatched, p.Unsent)
					}
					due += p.Dispatched + p.Unsent
				}
				// Each stream's batches due before the end (the instant of the
				// interruption, when there was one).
				_, end := a.Timeline().Measured()
				interval := time.Duration(float64(time.Second) * 50 * float64(tc.gens) / tc.rate.PerSecond)
				perStream := int64((end.Sub(start) + interval - 1) / interval)
				if want := perStream * 50 * int64(tc.gens); due != want {
					t.Fatalf("dispatched + unsent = %d, want the %d events the schedule made due before %s", due, want, end.Sub(start))
				}
				var unsentBatches int64
				for _, p := range allPhases(a) {
					unsentBatches += p.UnsentWait.Count()
					if p.Unsent/50 != p.UnsentWait.Count() {
						t.Errorf("phase %s: %d events unsent but %d lower bounds of their latency", p.Name, p.Unsent, p.UnsentWait.Count())
					}
				}
				if tc.interrupt == 0 && unsentBatches == 0 {
					t.Error("no batch unsent although the target took a fifth of the schedule")
				}
			})
		})
	}
}

// committing acknowledges nothing on the first attempt although it stored
// the batch (a client-side timeout after the commit); the retry then finds
// every _id stored already.
type committing struct {
	target.Target
	mu     sync.Mutex
	stored map[string]bool
}

func (c *committing) Write(_ context.Context, b target.Batch) (target.WriteResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stored[b.Docs[0].ID] {
		for _, d := range b.Docs {
			c.stored[d.ID] = true
		}
		return target.WriteResult{}, context.DeadlineExceeded
	}
	var r target.WriteResult
	for _, d := range b.Docs {
		r.Failed++
		r.FailedSeqs = append(r.FailedSeqs, d.Seq)
	}
	r.AddError(target.ErrorDuplicateID, r.Failed)
	return r, nil
}

// A retry never turns a success into a failure.
func TestRetryOfACommittedWriteIsASuccess(t *testing.T) {
	synctest.Test(t, testRetryOfACommittedWriteIsASuccess)
}

func testRetryOfACommittedWriteIsASuccess(t *testing.T) {
	cfg := testConfig(200, 10, time.Second)
	cfg.WriteRetries = 1
	a := run(t, cfg, &committing{stored: map[string]bool{}})
	var acked, failed int64
	for _, p := range allPhases(a) {
		acked += p.Acked
		failed += p.Failed
	}
	if acked != 200 || failed != 0 {
		t.Fatalf("acknowledged %d, failed %d; want 200 and 0: the first attempt stored every batch", acked, failed)
	}
}

// shortCounting acknowledges all but two items of every batch and says
// nothing of those two.
type shortCounting struct{ target.Target }

func (shortCounting) Write(_ context.Context, b target.Batch) (target.WriteResult, error) {
	return target.WriteResult{Acknowledged: len(b.Docs) - 2}, nil
}

// Items a target neither acknowledged nor reported failed are failed, of
// kind unaccounted: nothing vanishes from the accounting.
func TestUnaccountedItemsAreFailed(t *testing.T) {
	b := target.Batch{Generator: "g", Docs: []target.Document{{Seq: 0, JSON: []byte("{}")}, {Seq: 1, JSON: []byte("{}")}, {Seq: 2, JSON: []byte("{}")}}}
	a := WriteBatch(context.Background(), shortCounting{}, b, time.Second, 0)
	if a.Acked != 1 || a.Failed != 2 || a.ErrorKinds[ErrorUnaccounted] != 2 || !a.ProbeFailed {
		t.Fatalf("acknowledged %d, failed %d %v, probe failed %v; want 1, 2 unaccounted, and the probe not trusted", a.Acked, a.Failed, a.ErrorKinds, a.ProbeFailed)
	}
}

// mixedRetry fails its first attempt as a whole after storing the batch;
// the re-send reports one duplicate and one rejected item without saying
// which seq is which.
type mixedRetry struct {
	target.Target
	calls int
}

func (m *mixedRetry) Write(_ context.Context, b target.Batch) (target.WriteResult, error) {
	m.calls++
	if m.calls == 1 {
		return target.WriteResult{}, context.DeadlineExceeded
	}
	r := target.WriteResult{Acknowledged: len(b.Docs) - 2, Failed: 2, FailedSeqs: []int64{0, 1}}
	r.AddError(target.ErrorDuplicateID, 1)
	r.AddError("mapper_parsing_exception", 1)
	return r, nil
}

// When a re-send mixes duplicates with other failures and the target does
// not say which seq is which, the duplicates stay failed: a failure too
// many, never a success too many.
func TestMixedRetryFailuresStayFailed(t *testing.T) {
	b := target.Batch{Generator: "g", Docs: []target.Document{{Seq: 0}, {Seq: 1}, {Seq: 2}, {Seq: 3}}}
	a := WriteBatch(context.Background(), &mixedRetry{}, b, time.Second, 1)
	if a.Acked != 2 || a.Failed != 2 || a.AckedOnRetry != 0 || a.ErrorKinds[target.ErrorDuplicateID] != 1 || a.Retries != 1 {
		t.Fatalf("acknowledged %d (%d on retry), failed %d %v, re-sends %d; want 2, 0, 2 with the duplicate kept, 1", a.Acked, a.AckedOnRetry, a.Failed, a.ErrorKinds, a.Retries)
	}
}
