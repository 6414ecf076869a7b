package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/results"
)

// At the defaults, the probes resolve visibility at the pace the target
// answers, not at a fixed 200 ms: on the simulated target, whose queries
// take microseconds and whose delay is injected, the window in which a
// probe became visible (the poll gap) is a few milliseconds, and the
// visibility median is the injected delay plus the write, not the poll
// (issue 27).
//
// It runs on virtual time: on the wall clock a busy machine's late timers,
// not the pace, would set the gap.
func TestDefaultRunProbesAtTheTargetsPace(t *testing.T) {
	synctest.Test(t, testDefaultRunProbesAtTheTargetsPace)
}

func testDefaultRunProbesAtTheTargetsPace(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	const delay = 50 * time.Millisecond
	r, _ := runResult(t, out, "--duration", "3s", "--warmup", "1s", "--drain", "2s", "--quiet",
		"--metrics-addr", "", "--target", "sim://?visibility_delay="+delay.String())
	v := r.Target().Visibility
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

// A run that ends before most probes show: every percentile that the
// never-seen probes (lower bounds) reach is itself a lower bound, and is
// printed and stored as "> X", never as a value (issue 27).
func TestCensoredPercentilesAreLowerBounds(t *testing.T) {
	synctest.Test(t, testCensoredPercentilesAreLowerBounds)
}

func testCensoredPercentilesAreLowerBounds(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	r, stdout := runResult(t, out, "--duration", "2s", "--warmup", "1s", "--drain", "500ms", "--drain-max", "500ms", "--quiet",
		"--metrics-addr", "", "--target", "sim://?visibility_delay=3s")
	v := r.Summary.VisibilityLatency
	if r.Target().Visibility.NeverSeen == 0 || r.Target().Visibility.Seen > 0 {
		t.Fatalf("%d probes seen, %d never: want none seen within a 0.5 s drain of a 3 s delay", r.Target().Visibility.Seen, r.Target().Visibility.NeverSeen)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"p50", v.P50Ms}, {"p99", v.P99Ms}, {"max", v.MaxMs}} {
		if !v.LowerBound(p.v) {
			t.Errorf("results: visibility %s %.0f ms stored as a value; every probe was a lower bound (lower bounds from %.0f ms)", p.name, p.v, v.LowerFromMs)
		}
	}
	row := regexp.MustCompile(`(?m)^ *visibility latency +\d+ +(.*)$`).FindStringSubmatch(stdout)
	if row == nil {
		t.Fatalf("no visibility latency row in:\n%s", stdout)
	}
	cells := regexp.MustCompile(`(?:> )?\S+`).FindAllString(row[1], -1)
	if len(cells) != 4 {
		t.Fatalf("visibility latency row %q: want 4 cells (p50 p95 p99 max), got %q", row[0], cells)
	}
	for _, cell := range cells {
		if !strings.HasPrefix(cell, "> ") {
			t.Errorf("visibility latency row %q: a percentile among lower bounds printed as a value %q, want \"> X\"", row[0], cell)
		}
	}
}

// Events the target shows only after the drain are late, not lost: the
// run says so, with the freshness the target had reached, and a re-check
// after it finds every one of them (issue 27).
func TestLateIsNotLost(t *testing.T) {
	synctest.Test(t, testLateIsNotLost)
}

func testLateIsNotLost(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	r, stdout := runResult(t, out, "--duration", "2s", "--warmup", "1s", "--drain", "500ms", "--drain-max", "500ms", "--recheck", "2s", "--quiet",
		"--metrics-addr", "", "--target", "sim://?visibility_delay=2s")
	var acked, visible, late, lost, turnedUp int64
	for _, c := range r.Target().Completeness {
		acked, visible, late, lost = acked+c.Acknowledged, visible+c.Visible, late+c.Late, lost+c.Missing
		if c.Recheck != nil {
			turnedUp += c.Recheck.TurnedUp
		}
	}
	if lost != 0 || late != acked-visible || late == 0 {
		t.Errorf("%d acknowledged, %d visible: %d late, %d lost; want every one not visible late (the target was still catching up), none lost", acked, visible, late, lost)
	}
	if turnedUp != late {
		t.Errorf("the re-check found %d of the %d late events; the sim shows every one 2 s after its write", turnedUp, late)
	}
	if regexp.MustCompile(`[1-9][0-9,]* missing`).MatchString(stdout) || !strings.Contains(stdout, "not visible within the drain") {
		t.Errorf("the console calls late events missing, or does not say they were late:\n%s", stdout)
	}
}

// Events the target lost are counted exactly, apart from late ones: the
// sim drops every 100th acknowledged event and shows the rest at once.
func TestLostEventsCountedExactly(t *testing.T) {
	synctest.Test(t, testLostEventsCountedExactly)
}

func testLostEventsCountedExactly(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	r, _ := runResult(t, out, "--duration", "2s", "--warmup", "0s", "--drain", "500ms", "--drain-max", "20s", "--quiet",
		"--metrics-addr", "", "--target", "sim://?drop_every=100")
	var acked, late, lost int64
	for _, c := range r.Target().Completeness {
		acked, late, lost = acked+c.Acknowledged, late+c.Late, lost+c.Missing
	}
	if want := acked / 100; lost != want || late != 0 {
		t.Errorf("%d acknowledged: %d lost, %d late; want %d lost (every 100th), none late", acked, lost, late, want)
	}
}

// freshbench audit re-checks, on the run's own target, the events its
// results list as late: those the database shows now turned up, the
// others are still not visible (issue 27). The embedded SQLite database
// shows every event the run wrote; the results are edited to list some
// of them, and some never written, as late.
func TestAuditRechecksLateEvents(t *testing.T) {
	synctest.Test(t, testAuditRechecksLateEvents)
}

func testAuditRechecksLateEvents(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	r, _ := runResult(t, out, "--duration", "1s", "--warmup", "0s", "--drain", "1s", "--quiet",
		"--metrics-addr", "", "--data-dir", filepath.Join(dir, "data"))
	if len(r.Target().Completeness) != 1 || r.Target().Completeness[0].Acknowledged < 10 {
		t.Fatalf("completeness %+v: want one generator with 10 events or more", r.Target().Completeness)
	}
	c := &r.Target().Completeness[0]
	c.Late, c.NotVisible = 15, []results.SeqRange{{From: 0, To: 9}, {From: 1 << 40, To: 1<<40 + 4}}
	if err := results.WriteFile(out, r); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := freshbench(t, "audit", "--data-dir", filepath.Join(dir, "data"), out)
	if code != 0 {
		t.Fatalf("audit: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "10 turned up, 5 still not visible") {
		t.Errorf("audit: %q; want the 10 written events turned up, the 5 never written still not visible", stdout)
	}
}

// A bad probe budget or drain is refused in one line that names the flag.
func TestProbeBudgetBadInput(t *testing.T) {
	for _, c := range []struct{ flag, value, want string }{
		{"--poll-interval", "-1s", "--poll-interval -1s: want 0"},
		{"--probe-share", "2", "--probe-share 2: want a share"},
		{"--probe-max-rate", "-5", "--probe-max-rate -5: want a positive"},
		{"--drain-max", "-1s", "--drain-max -1s: want 0"},
		{"--recheck", "-1s", "--recheck -1s: want 0"},
	} {
		wantUsageError(t, []string{"run", "--target", "sim://", c.flag, c.value}, c.want)
	}
}

// An in-process target keeps its events only within the run that wrote
// them: a later audit would find none and call every late event still
// not visible, so it is refused in one line (exit 2) that names the way
// to re-check (--recheck).
func TestAuditRefusesAnInProcessTarget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "r.json")
		runResult(t, out, "--duration", "2s", "--warmup", "1s", "--drain", "500ms", "--drain-max", "500ms", "--quiet",
			"--metrics-addr", "", "--target", "sim://?visibility_delay=3s")
		wantUsageError(t, []string{"audit", out}, "--recheck")
	})
}

// runResult runs freshbench run with args and --out out, fails the test
// unless it exits 0, and returns the results file and the console.
func runResult(t *testing.T, out string, args ...string) (*results.Result, string) {
	t.Helper()
	code, stdout, stderr := freshbench(t, append(append([]string{"run"}, args...), "--out", out)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return r, stdout
}
