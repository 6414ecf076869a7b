package main

import (
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/results"
)

func TestExperimentBadInput(t *testing.T) {
	dir := t.TempDir()
	ahead := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"instance without experiment", shortRunIn(dir, "--instance", "1"), "--instance needs --experiment NAME"},
		{"start without experiment", shortRunIn(dir, "--start-at", ahead), "--start-at needs --experiment NAME"},
		{"instance past the count", shortRunIn(dir, "--experiment", "x", "--instance", "3", "--instances", "3"), "--instance 3: want 0..2"},
		{"no instances", shortRunIn(dir, "--experiment", "x", "--instances", "0"), "--instances 0: want 1 or more"},
		{"start not an instant", shortRunIn(dir, "--experiment", "x", "--start-at", "10:00"), `--start-at "10:00": want an RFC 3339 instant`},
		{"start passed", shortRunIn(dir, "--experiment", "x", "--start-at", "2020-01-01T00:00:00Z"), "--start-at 2020-01-01T00:00:00Z: that instant has passed"},
		{"rate and total rate", shortRunIn(dir, "--experiment", "x", "--rate", "1000", "--total-rate", "3000"), "--total-rate and --rate: give one"},
		{"bad total rate", shortRunIn(dir, "--experiment", "x", "--total-rate", "fast"), `--total-rate: rate "fast"`},
		{"query alone in an experiment", []string{"query", "--qps", "10", "--experiment", "x", "--data-dir", filepath.Join(dir, "data")}, "--experiment: an experiment's instances run an ingest"},
	} {
		t.Run(c.name, func(t *testing.T) { wantUsageError(t, c.args, c.want) })
	}
}

// An instance records its experiment, runs at its share of the total
// rate, starts on the common instant and names its default results file
// after the experiment and its index.
func TestExperimentInstance(t *testing.T) { synctest.Test(t, testExperimentInstance) }

func testExperimentInstance(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	startAt := time.Now().Add(3 * time.Second).UTC().Truncate(time.Millisecond)
	code, stdout, stderr := freshbench(t, shortRun("--data-dir", filepath.Join(dir, "data"), "--quiet", "--metrics-addr=",
		"--experiment", "pair", "--instance", "1", "--instances", "2", "--total-rate", "2000",
		"--start-at", startAt.Format(time.RFC3339Nano))...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "freshbench-results", "run-pair-1-*.json"))
	if len(files) != 1 {
		t.Fatalf("results files %v; want one named run-pair-1-<time>.json\n%s", files, stdout)
	}
	r, err := results.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	want := results.Experiment{Name: "pair", Instance: 1, Instances: 2, StartAt: startAt}
	if r.Experiment == nil || *r.Experiment != want || !r.StartedAt.Equal(startAt) {
		t.Errorf("experiment %+v started %s; want %+v started on its start", r.Experiment, r.StartedAt, want)
	}
	if r.Config.RatePerSecond != 1000 {
		t.Errorf("rate %.0f/s; want half the total of 2000/s", r.Config.RatePerSecond)
	}
}
