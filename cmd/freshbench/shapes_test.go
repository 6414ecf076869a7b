package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/pace"
)

// Bad shapes are refused in one line, exit 2, naming the flag.
func TestShapeBadInput(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) []string {
		return append(shortRun("--target", "sim://", "--out", filepath.Join(dir, "r.json")), args...)
	}
	query := func(args ...string) []string {
		return append([]string{"query", "--target", "sim://", "--rate", "100", "--duration", "2s", "--warmup", "0s",
			"--metrics-addr", "", "--out", filepath.Join(dir, "q.json")}, args...)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"negative rate", run("--write-shape", "const -1x"), `--write-shape: shape "const -1x": factor "-1x": want a factor of the rate of 0 or more`},
		{"negative ramp end", run("--write-shape", "ramp 1..-1 for 1s"), `factor "-1"`},
		{"burst outside the run", run("--write-shape", "burst 5x at 1s for 5s"), `--write-shape "burst 5x at 1s for 5s": the shape ends at 6s, after the run's 2s`},
		{"overlapping bursts", run("--write-shape", "burst 2x at 0s for 1s; burst 3x at 500ms for 1s"), "bursts overlap"},
		{"sine below 0", run("--write-shape", "sine 1x±2x every 1s"), "below 0"},
		{"query burst outside the run", query("--qps", "10", "--query-shape", "burst 2x at 1s for 2s"), `--query-shape "burst 2x at 1s for 2s": the shape ends at 3s, after the run's 2s`},
		{"query shape of a closed loop", query("--concurrency", "2", "--query-shape", "burst 2x at 0s for 1s"), "--query-shape \"burst 2x at 0s for 1s\": want a shape of an open-loop load"},
	} {
		t.Run(c.name, func(t *testing.T) { wantUsageError(t, c.args, c.want) })
	}
}

// A shaped run asks, interval by interval, for the rate times the shape's
// mean there; the summary's target is what the schedule made due; a
// shaped query load's target QPS is its mean over the window.
func TestShapedRun(t *testing.T) { synctest.Test(t, testShapedRun) }

func testShapedRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	const writeShape, queryShape = "ramp 0.5x..2x for 2s; const 1x", "burst 4x at 1s for 1s"
	code, stdout, stderr := freshbench(t, "query", "--target", "sim://?visibility_delay=10ms", "--rate", "400", "--batch-size", "10",
		"--write-shape", writeShape, "--qps", "50", "--query-shape", queryShape, "--duration", "4s", "--warmup", "0s",
		"--drain", "2s", "--settle", "0s", "--quiet", "--metrics-addr", "", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readResult(t, out)
	shape, _ := pace.ParseShape(r.Config.WriteShape)
	if r.Config.WriteShape != writeShape {
		t.Fatalf("results record the write shape %q", r.Config.WriteShape)
	}
	var due int64
	for _, p := range r.Series {
		want := 400 * shape.Mean(sec(p.StartS), sec(p.StartS+p.WidthS)) * p.WidthS
		// Batches of 10: the count in an interval is within one batch.
		if math.Abs(float64(p.TargetEvents)-want) > 10 {
			t.Errorf("interval at %gs: %d events due, want 400/s × the shape's mean there = %.0f within a batch", p.StartS, p.TargetEvents, want)
		}
		due += p.TargetEvents
	}
	if got, want := r.Summary.TargetEventsPerSec, float64(r.Summary.EventsDue)/r.Summary.MeasuredS; got != want || due != r.Summary.EventsDue {
		t.Errorf("target %.1f events/s, events due %d (series %d): want the due events over the window, %.1f", got, r.Summary.EventsDue, due, want)
	}
	q := r.Target().Queries
	if q == nil || q.Shape != queryShape {
		t.Fatalf("queries %+v: want the query shape recorded", q)
	}
	qshape, _ := pace.ParseShape(queryShape)
	from := sec(q.WaitedS)
	if want := 50 * qshape.Mean(from, sec(4)); math.Abs(q.TargetQPS-want) > 1e-9 {
		t.Errorf("target QPS %g, want 50 × the shape's mean over the window from %s = %g", q.TargetQPS, from, want)
	}
	if !strings.Contains(stdout, "write shape: "+writeShape) || !strings.Contains(stdout, "open loop shaped") {
		t.Errorf("console does not show the shapes:\n%s", stdout)
	}
}

// sec is s seconds as a duration.
func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
