package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// A short peak search against each server completes, judges every step
// and reports a peak. Steps are short (1 s warm-up, 5 s held at the
// first rate tried) so the whole search stays well under a minute; the
// peak's value is not asserted, it depends on the machine.
//
// The premise is a first step the server and the driver hold: a few
// hundred events/s on a quiet machine. A starved machine may hold none
// of the steps (the driver falls behind, or the server's batches run
// late), and then no peak is found though nothing is wrong; the search
// starts again at half the rate, down to a quarter, before it fails
// naming the step that did not hold (firstStepUnmet).
func TestPeakSearch(t *testing.T) {
	for _, name := range []string{"elasticsearch", "postgres"} {
		t.Run(name, func(t *testing.T) {
			const start = 250.0
			var res *results.Result
			_, unmet := testenv.LowerRate(t, start, start/4, func(rate float64) string {
				tgt := open(t, withName(t, serverURL(t, name), "peak"), nil)
				// 125 batches in a first step at 250 events/s: one
				// acknowledged after its end costs < 1 % of the achieved
				// rate. A lower rate's steps are as much longer, so that
				// they hold as many batches, and a stall of a starved
				// server or driver costs as small a share (seen beside two
				// CPU hogs per core: 62.5 events/s held 5 s, 80 % achieved,
				// its shortfall all in the first half).
				run := config(rate, time.Duration(float64(6*time.Second)*start/rate), 100*time.Millisecond)
				run.Ingest.BatchSize = 10
				run.Drain = 10 * time.Second
				// Room for a server's stall (a GC, a merge) on a busy machine:
				// 32 batches in flight cover 1.3 s of a step at 250 events/s.
				run.Ingest.MaxInflight = 32
				cfg := bench.PeakConfig{Run: run, Increase: bench.RateStep{Factor: 2}, MaxSteps: 3, Rule: stats.DefaultRule()}
				cfg.Rule.MaxGrowth = 0 // 5 s steps are too short to judge a trend (about 20 s are needed)
				// The late-share bound itself is tested in stats; here a few
				// late batches of a 5 s step under CPU hogs (seen: 5 % of 62,
				// timer jitter and a write p99 of 207 ms) must not hide
				// whether the search completes.
				cfg.Rule.MaxLateShare = 0.15
				var err error
				if res, err = bench.SearchPeak(context.Background(), tgt, cfg); err != nil {
					t.Fatal(err)
				}
				for i, s := range res.Steps {
					if s.Verdict == nil {
						t.Fatalf("step %d has no verdict", i+1)
					}
					m := s.Summary
					t.Logf("step %d: %s, achieved %.0f events/s, write p99 %.1f ms, freshness lag p50/p95/p99 %.0f/%.0f/%.0f ms, visibility p95 %.0f ms, failed %d: %s",
						i+1, s.Config.Rate, m.AchievedEventsPerSec, m.WriteLatency.P99Ms, m.FreshnessLag.P50Ms, m.FreshnessLag.P95Ms, m.FreshnessLag.P99Ms,
						m.VisibilityLatency.P95Ms, m.EventsFailed, s.Verdict.Reason())
					if !m.Audited || m.Missing != 0 {
						t.Errorf("step %d: audited %v, missing %d", i+1, m.Audited, m.Missing)
					}
				}
				return firstStepUnmet(res)
			})
			p := res.Peak
			if p == nil || !p.Found || res.EndedEarly {
				t.Fatalf("no peak reported: %+v (ended early %v; %s)", p, res.EndedEarly, unmet)
			}
			t.Logf("peak: %s, %.0f events/s achieved; %s; %.0f s", p.Rate, p.AchievedEventsPerSec, p.Reason, p.ElapsedS)
			if p.Reason == "" || len(res.Steps) == 0 || len(res.Steps) > 4 {
				t.Errorf("%d steps, stop reason %q", len(res.Steps), p.Reason)
			}
		})
	}
}

// firstStepUnmet says why a peak search that ran its steps whole found no
// peak ("" if it found one, or did not run whole): no step held, and its
// first, the lowest, is named with its verdict. A search that ended early
// or left a step unjudged is not a premise a lower rate restores.
func firstStepUnmet(res *results.Result) string {
	if res.EndedEarly || res.Peak == nil || res.Peak.Found || len(res.Steps) == 0 || res.Steps[0].Verdict == nil {
		return ""
	}
	first := res.Steps[0]
	return fmt.Sprintf("no step held, the first (%s): %s", first.Config.Rate, first.Verdict.Reason())
}

// quotaPeak runs the peak search of a pipeline whose consumer Kafka
// holds to capacity records/s (a client quota): steps from 500 events/s,
// doubling, three at most, each a 5 s warm-up then 6 s held. Kafka holds
// a client to its quota on average over its window (11 s by default): a
// consumer that read below it has credit left, and reads faster for a
// while; the step above capacity spends that credit (about 4 s of it) in
// its warm-up, so that the 6 s held show the backlog the quota builds.
// Every step accounts for its events and is logged with what backlog(s)
// says of it. The search must find its peak at a sustainable step below
// capacity (Kafka's quota is an average over its window: a little over it
// passes early in a step) followed by the unsustainable one it stopped at,
// which Kafka acknowledged in full: what failed it is the backlog behind,
// in what (the database, the pipeline). It returns that step and how long
// its load was held.
func quotaPeak(t *testing.T, tgt target.Target, capacityOf func() float64, what string, backlog func(*results.Result) string) (peak, over *results.Result, capacity, hold float64) {
	t.Helper()
	run := pipelineConfig(500, 11*time.Second)
	run.Ingest.Warmup = 5 * time.Second
	run.Drain = 30 * time.Second
	// A step the rule cannot yet decide is held on, up to a minute (seen
	// with a CPU hog per core: 500 events/s "not yet known" after 6 s,
	// "a hold of at least 20s is needed", and the search stopped there).
	cfg := bench.PeakConfig{Run: run, Increase: bench.RateStep{Factor: 2}, MaxSteps: 3, Rule: stats.DefaultRule(), MaxHold: time.Minute}
	// A 6 s hold resolves a trend only coarsely: 100 ms/s tolerated is an
	// overload of 10 %, far below that of the step above capacity.
	cfg.Rule.MaxGrowth = 0.1
	// The test's premise is Kafka taking every step's produce at once: a
	// step the driver could not keep (seen on a loaded machine: Druid's
	// 500 events/s "6% of batches late in the second half: the in-flight
	// bound is saturated", no backlog) says nothing of the consumer, so
	// the search starts again at half the rate, its steps still
	// bracketing the quota.
	var res *results.Result
	testenv.LowerRate(t, run.Ingest.Rate.PerSecond, run.Ingest.Rate.PerSecond/2, func(rate float64) string {
		cfg.Run.Ingest.Rate.PerSecond = rate
		var err error
		if res, err = bench.SearchPeak(context.Background(), tgt, cfg); err != nil {
			t.Fatal(err)
		}
		if pk := res.Peak; pk != nil && !pk.Found && len(res.Steps) > 0 {
			last := res.Steps[len(res.Steps)-1]
			if v := last.Verdict; v != nil && !strings.Contains(v.Reason(), "backlog") && !strings.Contains(v.Reason(), "missing") {
				return fmt.Sprintf("the search stopped at %s on the driver's side (%s)", last.Config.Rate, v.Reason())
			}
			// A starved database's lag may be too noisy to judge the
			// first step within the longest hold (a busy round: Druid's
			// lag p95 23.7 s at 500 events/s, "a hold of at least 2m0s
			// is needed"); the search then went on to the step above
			// capacity, and no step held. The steps from half the rate
			// still bracket the capacity.
			if first := res.Steps[0]; first.Verdict != nil && first.Verdict.Undecided {
				return fmt.Sprintf("the first step, %s, was not yet known (%s)", first.Config.Rate, first.Verdict.Reason())
			}
		}
		return ""
	})
	run = cfg.Run
	// The bytes a record takes are known once the topic holds records.
	capacity = capacityOf()
	for i, s := range res.Steps {
		m := s.Summary
		t.Logf("step %d: %s, achieved %.0f events/s, freshness lag p50/p95 %.0f/%.0f ms, %s: %s",
			i+1, s.Config.Rate, m.AchievedEventsPerSec, m.FreshnessLag.P50Ms, m.FreshnessLag.P95Ms, backlog(s), s.Verdict.Reason())
		step := run
		step.Ingest.Rate.PerSecond = s.Config.RatePerSecond
		// A step held until decided streamed as long as its schedule's due says.
		var due int64
		for _, p := range s.Phases {
			due += p.Due
		}
		step.Ingest.Duration = time.Duration(float64(due) / step.Ingest.Rate.PerSecond * float64(time.Second))
		checkAccounting(t, step, s)
	}
	pk := res.Peak
	if pk == nil || !pk.Found || res.EndedEarly || pk.Step+2 != len(res.Steps) {
		t.Fatalf("peak %+v after %d steps (ended early %v): want a sustainable step followed by the unsustainable one the search stopped at", pk, len(res.Steps), res.EndedEarly)
	}
	t.Logf("capacity %.0f records/s; peak %s: %s", capacity, pk.Rate, pk.Reason)
	peak, over = res.Steps[pk.Step], res.Steps[pk.Step+1]
	if r := peak.Config.RatePerSecond; r > 1.1*capacity {
		t.Errorf("peak %s above the %s's capacity %.0f records/s: the search measured Kafka's produce rate", peak.Config.Rate, what, capacity)
	}
	if r := over.Config.RatePerSecond; r < capacity/2 {
		t.Errorf("step %s failed at under half the %s's capacity %.0f records/s", over.Config.Rate, what, capacity)
	}
	if a := over.Summary.AchievedEventsPerSec / over.Summary.TargetEventsPerSec; a < cfg.Rule.MinAchieved {
		t.Errorf("step %s: Kafka acknowledged %.0f%% of the target; want all of it", over.Config.Rate, 100*a)
	}
	return peak, over, capacity, (run.Ingest.Duration - run.Ingest.Warmup).Seconds()
}

// checkPeakIsTheDatabases: the peak search through Kafka into a database
// that consumes the topic itself (tgt, reading topic with Kafka client id
// clientID) finds the database's ingestion capacity, not Kafka's produce
// rate. A client quota on the database's consumer caps what it reads at
// about capacity records/s (its bytes/s over the bytes a record takes in
// the topic, as Kafka reports them), while Kafka acknowledges every
// step's produce at once. The search holds the step below the capacity,
// fails the one above it on the backlog the freshness lag and the
// database's own lag show, and accounts for every event.
func checkPeakIsTheDatabases(t *testing.T, tgt target.Target, topic, clientID string) {
	t.Helper()
	consumerQuota(t, clientID, consumerQuotaBytes)
	peak, over, capacity, _ := quotaPeak(t, tgt, quotaCapacity(t, topic, consumerQuotaBytes), "database", func(s *results.Result) string {
		_, _, backlog := spike(s.Series)
		return fmt.Sprintf("the database's largest lag %d", backlog)
	})
	_, _, below := spike(peak.Series)
	_, _, above := spike(over.Series)
	if err := databaseBacklogError(over.Config.RatePerSecond, capacity, below, above); err != nil {
		t.Errorf("step %s: %v", over.Config.Rate, err)
	}
}

// databaseBacklogError holds the database's own account of its lag to
// the search's verdict: at the step over its capacity (rate, records/s)
// its largest lag (above) exceeds that of the step below (below) and one
// second of the overload. Not the overload over the whole hold: Kafka
// averages a quota over eleven one-second windows, so a consumer that
// read below it in the step before reads above it for seconds, and the
// database's account is up to its fetch period old (Druid's: 5 s, later
// on a busy machine), so the lag it shows by the step's end is that of
// an overload seconds shorter than the step (a busy round: 650 records
// at 1,000 events/s over a capacity of 736, against 792 for half the 6 s
// hold).
func databaseBacklogError(rate, capacity float64, below, above int64) error {
	if want := max(below+1, int64(rate-capacity)); above < want {
		return fmt.Errorf("the database's largest lag %d records, %d at the step below; want %d at least: more than below, and one second of the overload %.0f − %.0f records/s", above, below, want, rate, capacity)
	}
	return nil
}

// quotaCapacity returns what a consumer capped at quota bytes/s reads of
// topic, in records/s: the quota over the bytes a record takes in the
// topic's log, as Kafka reports them.
func quotaCapacity(t *testing.T, topic string, quota float64) func() float64 {
	return func() float64 {
		perRecord := bytesPerRecord(t, topic)
		t.Logf("capacity: %.0f bytes/s consumed at %.0f bytes a record", quota, perRecord)
		return quota / perRecord
	}
}

// consumerQuotaBytes caps a database's consumer at about 700 records/s of
// the document format's 1,000-byte documents (about 1,100 bytes a record
// in the log): between the search's steps of 500 and 1,000, below what
// Druid and Pinot consume unthrottled on a quiet machine (2,000 events/s
// with a freshness lag of tens of milliseconds, docs/measurement.md). On
// a machine at a load average of 20 Druid alone did not sustain 1,000
// (not yet known after the hold), so the test tells the quota apart only
// on a machine that leaves Druid that much. (A lower quota, 350 records/s
// between steps of 250 and 500, is throttled in bursts the 6 s hold
// cannot judge: "nothing became visible".)
const consumerQuotaBytes = 700 * 1100
