package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/results"
)

func TestLevelsBadInput(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) []string {
		return append([]string{"run", "--target", "sim://", "--metrics-addr=", "--out", filepath.Join(dir, "l.json")}, args...)
	}
	query := func(args ...string) []string {
		return append([]string{"query", "--target", "sim://", "--rate", "500", "--metrics-addr=", "--out", filepath.Join(dir, "q.json")}, args...)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"levels and rate", run("--levels", "1000,2000", "--rate", "1000"), "--levels and --rate: give one"},
		{"unparseable level", run("--levels", "1000,fast"), `--levels: rate "fast": want events per second`},
		{"empty level", run("--levels", "1000,,2000"), `--levels: rate "": want events per second`},
		{"levels in two units", run("--levels", "1000,10MB/s"), "--levels 1000 events/s, 10.00 MB/s: want rates in one unit"},
		{"no trial", run("--levels", "1000", "--trials", "0"), "--trials 0: want 1 or more trials per level"},
		{"negative warm-up trials", run("--levels", "1000", "--warmup-trials", "-1"), "--warmup-trials -1: want 0 or more"},
		{"trials without levels", run("--trials", "3"), "--trials applies to --levels"},
		{"warm-up trials without levels", run("--warmup-trials", "0"), "--warmup-trials applies to --levels"},
		{"levels of an experiment", run("--levels", "1000", "--experiment", "x"), "--experiment x: want no experiment"},
		{"a level too slow for a batch", run("--levels", "1000,10", "--duration", "1s", "--warmup", "0s"), "at the level 10 events/s: --duration 1s: want a measured part"},
		{"query levels and qps", query("--levels", "10,20", "--qps", "10"), "--levels and --qps: give one"},
		{"query levels and concurrency", query("--levels", "10,20", "--concurrency", "2"), "--levels and --concurrency: give one"},
		{"query levels and a sweep", query("--levels", "10,20", "--sweep", "--sweep-max", "100"), "--levels and --sweep: give one"},
		{"query level of 0", query("--levels", "10,0"), `--levels: "0": want a positive number of queries per second`},
		{"query level in bytes", query("--levels", "10MB/s"), `--levels: "10MB/s": want a positive number of queries per second`},
		{"query trials without levels", query("--qps", "10", "--trials", "2"), "--trials applies to --levels"},
		{"query levels of an experiment", query("--levels", "10", "--experiment", "x"), "--experiment: an experiment's instances run an ingest (--rate or --total-rate) and one query measurement (no --sweep or --levels)"},
	} {
		t.Run(c.name, func(t *testing.T) { wantUsageError(t, c.args, c.want) })
	}
}

// shortLevels is a levels run of 2 s trials (500 ms warm-up) without a
// metrics endpoint or progress.
func shortLevels(extra ...string) []string {
	return append([]string{"run", "--duration", "2s", "--warmup", "500ms", "--drain", "2s", "--poll-interval", "50ms",
		"--batch-size", "20", "--metrics-addr=", "--quiet"}, extra...)
}

// Two levels × 2 trials against a simulated target that accepts 3000
// events/s: each trial is printed as it ends, the table of levels at the
// end; the results file holds every trial, the report renders it and
// compare reads it.
func TestLevelsCommand(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testLevelsCommand)
}

func testLevelsCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("four trials of 2 s")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "levels.json")
	code, stdout, stderr := freshbench(t, shortLevels("--target", "sim://?capacity=3000&visibility_delay=100ms",
		"--levels", "1000,4000", "--trials", "2", "--warmup-trials", "0", "--out", out)...)
	if code != 0 {
		t.Fatalf("exit code %d\nstderr: %s", code, stderr)
	}
	t.Log("\n" + stdout)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^level 1 \(1000 events/s\), trial 1 of 2: achieved [\d,]+ events/s; write latency p50 `),
		regexp.MustCompile(`(?m)^level 2 \(4000 events/s\), trial 2 of 2: achieved `),
		regexp.MustCompile(`(?m)^2 level\(s\) × 2 trial\(s\) after 0 warm-up trial\(s\); each trial 2s \(warm-up 500ms\)$`),
		regexp.MustCompile(`(?m)^1000 events/s\s+2\s+[\d,]+ \[[\d,]+–[\d,]+\]\s+write latency\s+\S+ \[\S+\]\s+\S+ \[\S+\]$`),
		regexp.MustCompile(`(?m)^\s+visibility latency\s+\S+ \[\S+\]`),
		regexp.MustCompile(`(?m)^results: ` + regexp.QuoteMeta(out) + `$`),
	} {
		if !want.MatchString(stdout) {
			t.Errorf("output does not match %s", want)
		}
	}
	if !strings.Contains(stderr, "levels: 1000 events/s, 4000 events/s; at each, 0 warm-up trial(s) then 2 trial(s) of 2s (warm-up 500ms)") {
		t.Errorf("stderr does not describe the levels: %s", stderr)
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ls := res.Levels
	if res.Kind != results.KindLevels || res.Command != "run" || res.Environment.Target != "sim" || ls == nil || ls.Trials != 2 || ls.WarmupTrials != 0 || len(ls.Levels) != 2 {
		t.Fatalf("results file: kind %q, command %q, target %q, levels %+v", res.Kind, res.Command, res.Environment.Target, ls)
	}
	for i, l := range ls.Levels {
		if len(l.Trials) != 2 || l.Achieved.N != 2 {
			t.Errorf("level %d: %d trials, %d in the figures", i+1, len(l.Trials), l.Achieved.N)
		}
	}
	// The target accepts 3000 events/s: the second level falls short.
	if a := ls.Levels[1].Achieved; a.Max > 3000*1.05 || a.Median < 3000*0.8 {
		t.Errorf("at 4000 events/s with a capacity of 3000: achieved %+v", a)
	}

	html := filepath.Join(dir, "levels.html")
	if code, _, errOut := freshbench(t, "report", out, "--out", html); code != 0 {
		t.Fatalf("report: exit code %d: %s", code, errOut)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `<section id="levels">`) || !strings.Contains(string(page), "Latency p99 against achieved throughput") {
		t.Error("the HTML report lacks the levels section or its chart")
	}
	code, cmp, errOut := freshbench(t, "compare", out, out)
	if code != 0 || !regexp.MustCompile(`(?m)^\s+at 4000 events/s: write latency p99 ms\s+\S+\s+\S+\s+1\.00x$`).MatchString(cmp) {
		t.Errorf("compare: exit code %d, stderr %q, stdout:\n%s", code, errOut, cmp)
	}
}

// The results file holds every trial as it ends, so that a killed
// process loses only the trial under way; stopped during its second
// trial, the command keeps the first and the one cut short, which is in
// no figure.
func TestLevelsInterruptedKeepsTrials(t *testing.T) {
	synctest.Test(t, testLevelsInterruptedKeepsTrials)
}

func testLevelsInterruptedKeepsTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("a trial of 2 s")
	}
	out := filepath.Join(t.TempDir(), "levels.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, shortLevels("--target", "sim://", "--levels", "1000,2000", "--trials", "2", "--warmup-trials", "0", "--out", out), &stdout, &stderr)
	}()
	deadline := time.After(30 * time.Second)
	for {
		res, err := results.ReadFile(out)
		if err == nil {
			if l := res.Levels.Levels[0]; res.Kind != results.KindLevels || len(l.Trials) != 1 || l.Achieved.N != 1 || res.Command != "run" {
				t.Fatalf("results file after the first trial: kind %q, command %q, level 1 %+v", res.Kind, res.Command, l)
			}
			break
		}
		select {
		case code := <-done:
			t.Fatalf("exit code %d before the results file held a trial: %v\nstderr: %s", code, err, stderr.String())
		case <-deadline:
			t.Fatalf("no results file after 30 s: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	time.Sleep(500 * time.Millisecond) // into the second trial
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d\nstderr: %s", code, stderr.String())
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	l := res.Levels.Levels[0]
	if !res.EndedEarly || len(l.Trials) != 2 || !l.Trials[1].EndedEarly || l.Achieved.N != 1 || len(res.Levels.Levels[1].Trials) != 0 {
		t.Fatalf("ended early %v, level 1 %d trials (%d in the figures); want the first whole, the second cut short", res.EndedEarly, len(l.Trials), l.Achieved.N)
	}
	if !strings.Contains(stdout.String(), "ended early: interrupted (the trials measured are kept") {
		t.Errorf("output does not say the run was interrupted:\n%s", stdout.String())
	}
}
