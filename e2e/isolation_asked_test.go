package e2e

import (
	"testing"

	"github.com/freshbench/freshbench/results"
)

// A burst window asks for its batches whether they are acknowledged or
// time out: a busy cluster that fails a third of the ingest burst's
// writes still shows the burst three times the baseline (the old count,
// acknowledged and unsent only, saw twice). A burst that did not multiply
// the load is still short.
func TestIsolationAskedBatches(t *testing.T) {
	const batch = 50
	window := func(acked, failedBatches, unsentBatches int64) *results.IsolationWindow {
		return &results.IsolationWindow{FromS: 0, ToS: 4, WriteLatency: results.Quantiles{N: acked}, WritesFailed: failedBatches * batch, WritesUnsent: unsentBatches * batch}
	}
	base := askedBatches(window(16, 0, 0), batch)
	if got := askedBatches(window(32, 14, 2), batch); float64(got) < 0.9*3*float64(base) {
		t.Errorf("a burst of 48 batches, 14 of them timed out and 2 unsent: %d asked for; want 3 × the baseline's %d", got, base)
	}
	if got := askedBatches(window(16, 0, 0), batch); float64(got) >= 0.9*3*float64(base) {
		t.Errorf("a burst no larger than the baseline: %d asked for, taken for 3 × the baseline's %d", got, base)
	}
}
