package query_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// stepResult is an open-loop step of 1000 queries at 100 QPS: answered
// ones took answered each, failed ones failed (a timeout of timeout).
func stepResult(answered time.Duration, failed int64, timeout time.Duration) *results.Queries {
	h := stats.NewHistogram()
	h.RecordN(answered, 1000-failed)
	return &results.Queries{
		Mode: "open", TargetQPS: 100, AchievedQPS: 100, TimeoutS: timeout.Seconds(), MeasuredS: 10,
		Total: &results.QueryKind{Kind: "all", Queries: 1000, Failed: failed, LatencyHistogram: h},
	}
}

func sweepConfig(t *testing.T, slo string) query.SweepConfig {
	t.Helper()
	s, err := stats.ParseSLO(slo)
	if err != nil {
		t.Fatal(err)
	}
	return query.SweepConfig{Start: 100, Step: 100, Max: 100, SLO: s, MaxErrorShare: query.DefaultMaxErrorShare, MinAchievedShare: query.DefaultMinAchievedShare}
}

// A failed or timed-out query counts in the SLO's percentile at its
// timeout at least: 1 % of queries timing out after 2 s cannot meet
// p99.5<200ms, though every answered one took 50 ms and 1 % of failures
// is within the error bound.
func TestSweepCountsFailedAtTimeout(t *testing.T) { synctest.Test(t, testSweepCountsFailedAtTimeout) }

func testSweepCountsFailedAtTimeout(t *testing.T) {
	c := sweepConfig(t, "p99.5<200ms")
	v := c.Check(stepResult(50*time.Millisecond, 10, 2*time.Second))
	if v.Met {
		t.Fatalf("1%% of queries failed at a 2 s timeout, yet p99.5<200ms was met: %+v", v)
	}
	if v.LatencyMs < 2000 || !strings.Contains(v.Reason, "10 failed queries counted at the 2s timeout") {
		t.Errorf("verdict %+v: want the p99.5 at the timeout and the failed queries named", v)
	}
	if v.Answered != 990 || v.FailedAtTimeout != 10 {
		t.Errorf("answered %d, counted at the timeout %d; want 990 and 10", v.Answered, v.FailedAtTimeout)
	}
	// The same failures pass a percentile they cannot reach.
	c = sweepConfig(t, "p95<200ms")
	if v := c.Check(stepResult(50*time.Millisecond, 10, 2*time.Second)); !v.Met || v.LatencyMs > 51 || v.FailedAtTimeout != 10 {
		t.Errorf("p95 with 1%% failed: %+v, want met at 50 ms", v)
	}
	// More failures than the error bound allows fail the step on that count.
	if v := c.Check(stepResult(50*time.Millisecond, 20, 2*time.Second)); v.Met || !strings.Contains(v.Reason, "2.00% of queries failed") {
		t.Errorf("2%% failed: %+v", v)
	}
}

// Queries never sent (the open loop waiting for a slot when the step
// ended) are left out of the latency; the verdict says how many.
func TestSweepReportsUnsent(t *testing.T) { synctest.Test(t, testSweepReportsUnsent) }

func testSweepReportsUnsent(t *testing.T) {
	c := sweepConfig(t, "p95<200ms")
	r := stepResult(50*time.Millisecond, 0, 2*time.Second)
	r.Unsent = 7
	v := c.Check(r)
	if v.Unsent != 7 || !v.Met {
		t.Errorf("verdict %+v, want met with 7 unsent reported", v)
	}
}
