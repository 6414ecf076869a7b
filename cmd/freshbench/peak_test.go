package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/results"
)

// shortPeak is a peak search of short steps (0.5 s warm-up, 1.5 s held,
// judged once, no refinement) without a metrics endpoint. Such steps are
// too short to judge a trend (the rule needs about 20 s), so none is
// judged.
func shortPeak(extra ...string) []string {
	return append([]string{"peak", "--warmup", "500ms", "--hold", "1500ms", "--max-hold", "0", "--precision", "0", "--drain", "2s",
		"--poll-interval", "50ms", "--metrics-addr=", "--max-trend", "0"}, extra...)
}

func TestPeakBadInput(t *testing.T) {
	dir := t.TempDir()
	base := func(args ...string) []string {
		return append(shortPeak("--target", "sim://", "--out", filepath.Join(dir, "p.json")), args...)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unparseable start", base("--start", "fast"), `--start: rate "fast"`},
		{"unparseable step", base("--step", "more"), `--step: step "more": want an increment`},
		{"factor not above 1", base("--step", "x0.9"), "a factor must be above 1"},
		{"step in another unit", base("--start", "10MB/s", "--step", "1000"), "--step 1000 events/s: want the unit of the start rate 10.00 MB/s"},
		{"max rate in another unit", base("--max-rate", "50MB/s"), "--max-rate 50.00 MB/s and --start 1000 events/s count different things"},
		{"max rate below start", base("--start", "5000", "--max-rate", "1000"), "--max-rate 1000 events/s: want at least the start rate 5000 events/s"},
		{"no limit", base("--max-steps", "0"), "--max-steps 0: want a limit"},
		{"hold 0", base("--hold", "0s"), "--hold 0s: want a positive duration"},
		{"negative trend", base("--max-trend", "-1"), "--max-trend -1: want 0 (no trend judged) or more ms/s"},
		{"negative warmup", base("--warmup", "-1s"), "--warmup -1s: want 0 or more"},
		{"bad SLO", base("--slo", "p95>2s"), `--slo: SLO "p95>2s": want pNN<duration`},
		{"rate flag of run", base("--rate", "1000"), "flag provided but not defined: -rate"},
		{"batch size 0", base("--batch-size", "0"), "--batch-size 0"},
		{"max hold under the hold", base("--max-hold", "1s"), "--max-hold 1s: want 0 (judge each step once) or at least the hold 1.5s"},
		{"precision 1", base("--precision", "1"), "--precision 1: want a share from 0 (no refinement) to below 1, e.g. 0.05"},
	} {
		t.Run(c.name, func(t *testing.T) { wantUsageError(t, c.args, c.want) })
	}
}

// A search on a simulated target of known capacity prints each step as it
// ends, the table of steps and the peak, and writes every step to the
// results file.
func TestPeakCommand(t *testing.T) { synctest.Test(t, testPeakCommand) }

func testPeakCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "peak.json")
	// Batches of 100 are due every 50 ms at 2000 events/s: a busy
	// machine's timer jitter below that does not make them late, so the
	// step below the capacity passes on any machine (seen failing with
	// batches of 50: 3 late batches under two CPU hogs and the e2e lane).
	code, stdout, stderr := freshbench(t, shortPeak("--target", "sim://?capacity=2500", "--start", "1000", "--step", "1000", "--batch-size", "100", "--out", out)...)
	if code != 0 {
		t.Fatalf("exit code %d\nstderr: %s", code, stderr)
	}
	t.Log("\n" + stdout)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^step 1  1000 events/s: achieved \d+ events/s .*: sustainable$`),
		regexp.MustCompile(`(?m)^step 3  3000 events/s: .*: not sustainable: achieved 8\d\.\d% of the target rate`),
		regexp.MustCompile(`(?m)^\s+2\*\s+2000 events/s\s+\d+ .* sustainable$`),
		regexp.MustCompile(`(?m)^peak \(\*\): step 2 at 2000 events/s, achieved \d+ events/s`),
		regexp.MustCompile(`(?m)^stopped: step 3 \(3000 events/s\) was not sustainable`),
		regexp.MustCompile(`(?m)^results: ` + regexp.QuoteMeta(out) + `$`),
	} {
		if !want.MatchString(stdout) {
			t.Errorf("output does not match %s", want)
		}
	}
	if !strings.Contains(stderr, "peak search: from 1000 events/s, step +1000 events/s") {
		t.Errorf("stderr does not describe the search: %s", stderr)
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Command != "peak" || len(res.Steps) != 3 || res.Peak == nil || res.Peak.Step != 1 || res.Environment.Target != "sim" {
		t.Fatalf("results file: command %q, %d steps, peak %+v, target %q", res.Command, len(res.Steps), res.Peak, res.Environment.Target)
	}
	for i, s := range res.Steps {
		if s.Verdict == nil || len(s.Series) == 0 || s.Summary.WriteLatency.Count == 0 {
			t.Errorf("step %d lacks its verdict or figures", i+1)
		}
	}
}

// Interrupted in its second step, the search still writes every step
// measured so far, and says so.
func TestPeakInterruptedWritesResults(t *testing.T) {
	synctest.Test(t, testPeakInterruptedWritesResults)
}

func testPeakInterruptedWritesResults(t *testing.T) {
	out := filepath.Join(t.TempDir(), "peak.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, shortPeak("--target", "sim://", "--start", "500", "--out", out), &stdout, &stderr)
	}()
	for !strings.Contains(stdout.String(), "step 1 ") {
		select {
		case code := <-done:
			t.Fatalf("exit code %d before step 1 ended\nstderr: %s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	time.Sleep(500 * time.Millisecond) // into step 2
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d\nstderr: %s", code, stderr.String())
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !res.EndedEarly || len(res.Steps) != 2 || res.Steps[0].Verdict == nil || res.Steps[1].Verdict != nil {
		t.Fatalf("ended early %v, %d steps; want step 1 judged and step 2 cut short", res.EndedEarly, len(res.Steps))
	}
	if !strings.Contains(stdout.String(), "ended early: interrupted") || !strings.Contains(stdout.String(), "stopped: interrupted during step 2") {
		t.Errorf("output does not say the search was interrupted:\n%s", stdout.String())
	}
}
