package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/freshbench/freshbench/results"
)

// At the defaults, the probes resolve visibility at the pace the target
// answers, not at a fixed 200 ms: on the simulated target, whose queries
// take microseconds and whose delay is injected, the window in which a
// probe became visible (the poll gap) is a few milliseconds, and the
// visibility median is the injected delay plus the write, not the poll
// (issue 27).
func TestDefaultRunProbesAtTheTargetsPace(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	const delay = 50 * time.Millisecond
	code, _, stderr := freshbench(t, "run", "--duration", "3s", "--warmup", "1s", "--drain", "2s", "--quiet",
		"--metrics-addr", "127.0.0.1:0", "--target", "sim://?visibility_delay="+delay.String(), "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	v := r.Visibility
	if v.Seen == 0 {
		t.Fatalf("no probe seen: %+v", v)
	}
	// The median gap, not its tail: a busy machine delays some polls.
	if gap := v.Gap.Quantile(0.5); gap > 10*time.Millisecond {
		t.Errorf("poll gap p50 %s, want ≤ 10ms: the probes poll as often as the target answers, within the budget", gap)
	}
	// The probe cannot be visible before its write is acknowledged and the
	// delay has passed; the poll may add its gap.
	write := time.Duration(r.Summary.WriteLatency.P50Ms * float64(time.Millisecond))
	p50 := time.Duration(r.Summary.VisibilityLatency.P50Ms * float64(time.Millisecond))
	if lo, hi := delay, delay+2*write+v.Gap.Quantile(0.5)+2*time.Millisecond; p50 < lo || p50 > hi {
		t.Errorf("visibility p50 %s, want within [%s, %s]: the injected delay, plus the write and the median poll gap", p50, lo, hi)
	}
}
