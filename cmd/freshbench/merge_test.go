package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/results"
)

// Two instances of an experiment run at once from a common start; their
// files merge, and the merged file renders with report and compare. A
// merge that cannot be made is refused in one line, exit 2.
func TestMergeInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("two instances of about three seconds")
	}
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "i0.json"), filepath.Join(dir, "i1.json")}
	// The two instances run on virtual time, and so share its clock.
	synctest.Test(t, func(t *testing.T) {
		start := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
		var wg sync.WaitGroup
		for i, f := range files {
			wg.Go(func() {
				code, out, errOut := freshbench(t, shortRun("--target", "sim://", "--out", f, "--total-rate", "1000", "--metrics-addr=", "--quiet",
					"--experiment", "cli", "--instance", strconv.Itoa(i), "--instances", "2", "--start-at", start)...)
				if code != 0 {
					t.Errorf("instance %d: exit code %d\nstdout: %s\nstderr: %s", i, code, out, errOut)
				}
			})
		}
		wg.Wait()
	})
	if t.Failed() {
		t.FailNow()
	}
	merged := filepath.Join(dir, "merged.json")
	code, out, errOut := freshbench(t, "merge", "--out", merged, files[1], files[0])
	if code != 0 {
		t.Fatalf("merge: exit code %d\nstderr: %s", code, errOut)
	}
	t.Log("\n" + out)
	for _, want := range []string{"freshbench merge: sim://", "experiment cli: 2 of 2 instances merged", "complete", "results: " + merged} {
		if !strings.Contains(out, want) {
			t.Errorf("merge output lacks %q", want)
		}
	}
	res, err := results.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != results.KindMerged || res.Summary.TargetEventsPerSec != 1000 || res.Summary.EventsDue != 2000 || len(res.Generators) != 2 {
		t.Errorf("merged: kind %q, target %g events/s, %d due, %d generators; want 500 + 500 events/s over 2 s from 1 + 1 generators",
			res.Kind, res.Summary.TargetEventsPerSec, res.Summary.EventsDue, len(res.Generators))
	}

	t.Run("report", func(t *testing.T) {
		code, out, errOut := freshbench(t, "report", merged)
		if code != 0 {
			t.Fatalf("report: exit code %d, stdout %q, stderr %q", code, out, errOut)
		}
		page, err := os.ReadFile(strings.TrimSuffix(merged, ".json") + ".html")
		if err != nil {
			t.Fatal(err)
		}
		checkOffline(t, string(page))
		if !strings.Contains(string(page), `<section id="instances">`) {
			t.Error("the merged report has no instances section")
		}
	})
	t.Run("compare", func(t *testing.T) {
		code, out, errOut := freshbench(t, "compare", files[0], merged)
		if code != 0 {
			t.Fatalf("compare: exit code %d: %s", code, errOut)
		}
		if row := strings.Fields(lineOf(out, "target events/s")); strings.Join(row, " ") != "target events/s 500 1,000 2.00x" {
			t.Errorf("compare: target row %q", row)
		}
	})

	// A copy of instance 1 with another batch size, one without its
	// experiment, and a merged file as input.
	odd := rewrite(t, files[1], "odd.json", func(r *results.Result) { r.Config.BatchSize = 7 })
	loose := rewrite(t, files[1], "loose.json", func(r *results.Result) { r.Experiment = nil })
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"refused difference", []string{files[0], odd}, "batch size differs: 50 in " + files[0] + ", 7 in " + odd + "; only the instances of one experiment"},
		{"no experiment", []string{files[0], loose}, loose + " was not run as an instance of an experiment: only the instances of one experiment merge (run each instance with --experiment NAME --instance I --instances N)"},
		{"instance twice", []string{files[0], files[0]}, "instance 0 twice: in " + files[0] + " and in " + files[0]},
		{"merged again", []string{merged}, merged + " is merged already"},
		{"unreadable", []string{files[0], filepath.Join(dir, "none.json")}, "none.json: no such file"},
		{"no files", nil, "want the results files of an experiment's instances"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantUsageError(t, append([]string{"merge", "--out", filepath.Join(dir, "x.json")}, c.args...), c.want)
		})
	}
}

// rewrite writes a changed copy of the results file from as name in its
// directory.
func rewrite(t *testing.T, from, name string, change func(*results.Result)) string {
	t.Helper()
	r, err := results.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	change(r)
	to := filepath.Join(filepath.Dir(from), name)
	if err := results.WriteFile(to, r); err != nil {
		t.Fatal(err)
	}
	return to
}

// lineOf returns the first line of out that holds s, trimmed.
func lineOf(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
