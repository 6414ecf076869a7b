package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// buildFreshbench builds the command once per test binary, so that the
// experiment tests run real processes, as a user would.
var buildFreshbench = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "freshbench-e2e-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "freshbench")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/freshbench/freshbench/cmd/freshbench").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

func freshbenchBinary(t *testing.T) string {
	t.Helper()
	bin, err := buildFreshbench()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// instance is one freshbench process of an experiment.
type instance struct {
	cmd    *exec.Cmd
	out    string // its results file
	stderr bytes.Buffer
	done   chan error
}

// startLead is how far ahead of their launch the instances' common start
// is set at first: enough for every process to open its target on a
// quiet machine. On a starved one a process can be ready after it, and
// then refuses to start behind the others (missedStart); the experiment
// is run again on a fresh index or table, its start twice as far ahead,
// twice at most (runExperiment).
const startLead = 8 * time.Second

// startInstances starts n processes of one experiment against raw, the
// same --seed and --repeat-ids in each (the ids the seed alone gives, the
// strongest case for a collision), all starting their schedules on one
// instant, lead after now, which it returns.
func startInstances(t *testing.T, raw, name string, n int, rate float64, d, lead time.Duration) ([]*instance, time.Time) {
	t.Helper()
	bin := freshbenchBinary(t)
	dir := t.TempDir()
	start := time.Now().Add(lead)
	startAt := start.UTC().Format(time.RFC3339Nano)
	var ins []*instance
	for i := range n {
		in := &instance{out: filepath.Join(dir, fmt.Sprintf("run-%d.json", i)), done: make(chan error, 1)}
		in.cmd = exec.Command(bin, "run", "--quiet", "--metrics-addr=", "--target", raw,
			"--experiment", name, "--instance", strconv.Itoa(i), "--instances", strconv.Itoa(n), "--start-at", startAt,
			"--seed", "42", "--repeat-ids", "--rate", strconv.FormatFloat(rate, 'f', -1, 64), "--batch-size", "25",
			"--duration", d.String(), "--warmup", "2s", "--poll-interval", "100ms", "--drain", "15s",
			"--write-timeout", "30s", "--out", in.out)
		in.cmd.Stderr = &in.stderr
		if err := in.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { in.done <- in.cmd.Wait() }()
		ins = append(ins, in)
	}
	t.Cleanup(func() {
		for _, in := range ins {
			in.cmd.Process.Kill()
		}
	})
	return ins, start
}

// runExperiment opens a fresh index or table (rawFor gives its URL) and
// runs the experiment's instances on it (through do, which starts them
// with startInstances and waits for them, returning their errors), once
// more on a fresh one, its start twice as far ahead, while an instance
// was ready only after the common start and refused it; the test fails
// if the last try still missed it. It returns the URL of the try that
// started whole, and its instances.
func runExperiment(t *testing.T, rawFor func() string, do func(raw string, lead time.Duration) ([]*instance, []error)) (string, []*instance, []error) {
	t.Helper()
	for lead := startLead; ; lead *= 2 {
		raw := rawFor()
		ins, errs := do(raw, lead)
		missed := ""
		for i, in := range ins {
			if missedStart(errs[i], in.stderr.String()) {
				missed = fmt.Sprintf("instance %d was ready after the common start %s after its launch: %s", i, lead, strings.TrimSpace(in.stderr.String()))
			}
		}
		if missed == "" {
			return raw, ins, errs
		}
		if lead >= 4*startLead {
			t.Fatalf("the premise, every instance ready before the common start, was not met: %s", missed)
		}
		t.Logf("%s: not the premise of this test; again on a fresh index or table, the start %s ahead", missed, 2*lead)
	}
}

// missedStart reports whether an instance exited refusing its common
// start because that instant had passed when it was ready (bad input,
// exit 2, naming --start-at): the machine was too slow for the lead,
// not a defect of the experiment.
func missedStart(err error, stderr string) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == 2 && strings.Contains(stderr, "freshbench run: --start-at ")
}

// wait waits for the process, bounded so that a hung one fails the test.
func (in *instance) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-in.done:
		return err
	case <-time.After(3 * time.Minute):
		in.cmd.Process.Kill()
		t.Fatalf("%s: still running after 3 minutes; stderr:\n%s", in.out, in.stderr.String())
		return nil
	}
}

// waitAll waits for every instance, in order, and returns their errors.
func waitAll(t *testing.T, ins []*instance) []error {
	t.Helper()
	errs := make([]error, len(ins))
	for i, in := range ins {
		errs[i] = in.wait(t)
	}
	return errs
}

// mergeFiles runs freshbench merge on files and reads what it wrote.
func mergeFiles(t *testing.T, files ...string) *results.Result {
	t.Helper()
	out := filepath.Join(t.TempDir(), "merged.json")
	cmd := exec.Command(freshbenchBinary(t), append([]string{"merge", "--out", out}, files...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("freshbench merge: %v\n%s", err, b)
	}
	m, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func measuredPhase(t *testing.T, r *results.Result) *results.Phase {
	t.Helper()
	for _, p := range r.Phases {
		if p.Name == results.PhaseMeasured {
			return p
		}
	}
	t.Fatalf("no %s phase", results.PhaseMeasured)
	return nil
}

// Three processes of one experiment against a real PostgreSQL and three
// against a real Elasticsearch, all at once: each instance has generators
// of its own although all share one seed, the three schedules start on
// one instant, and the merge of the three results files is exact: counts
// and rates are the sums, and each merged histogram is the one histogram
// of all three processes' samples.
func TestExperimentOfThreeProcesses(t *testing.T) {
	for _, name := range []string{"postgres", "elasticsearch"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var settings map[string]string
			if name != "postgres" {
				settings = map[string]string{"refresh_interval": "200ms"}
			}
			const n, rate, d = 3, 200.0, 10 * time.Second
			var tgt target.Target // one index or table for all three
			_, ins, errs := runExperiment(t, func() string { return withName(t, serverURL(t, name), "exp") }, func(raw string, lead time.Duration) ([]*instance, []error) {
				tgt = open(t, raw, settings)
				ins, _ := startInstances(t, raw, "e2e-"+name, n, rate, d, lead)
				return ins, waitAll(t, ins)
			})
			var rs []*results.Result
			var files []string
			for i, in := range ins {
				if err := errs[i]; err != nil {
					t.Fatalf("%s: %v; stderr:\n%s", in.out, err, in.stderr.String())
				}
				r, err := results.ReadFile(in.out)
				if err != nil {
					t.Fatal(err)
				}
				rs, files = append(rs, r), append(files, in.out)
			}

			// One seed, three instances: no generator and no event shared.
			var gens []string
			for i, r := range rs {
				if r.Experiment == nil || r.Experiment.Instance != i || !r.StartedAt.Equal(rs[0].StartedAt) {
					t.Errorf("instance %d: experiment %+v, started %s; want instance %d of 3 starting on the common %s", i, r.Experiment, r.StartedAt, i, rs[0].StartedAt)
				}
				gens = append(gens, r.Generators...)
				s := r.Summary
				// A request that failed as a whole (the shared server
				// dropped a connection) is not what this test is about and
				// its events are accounted for; an event refused by the
				// database (a duplicate id) is.
				for kind, e := range s.Errors {
					t.Logf("instance %d: %d failed events of kind %s: %s", i, e.Count, kind, e.Sample)
					if !wholeRequest(kind) {
						t.Errorf("instance %d: %d events failed as %s (%s): want none refused by the database", i, e.Count, kind, e.Sample)
					}
				}
				if !s.Audited || s.Missing != 0 || s.Unexpected != 0 || s.Duplicates != 0 || s.EventsFailed != 0 && len(s.Errors) == 0 {
					t.Errorf("instance %d: audited %v, missing %d, unexpected %d, duplicates %d, failed %d; want an audited run with all 0 (an id shared with another instance shows as unexpected or duplicate)",
						i, s.Audited, s.Missing, s.Unexpected, s.Duplicates, s.EventsFailed)
				}
			}
			slices.Sort(gens)
			if len(slices.Compact(slices.Clone(gens))) != n {
				t.Errorf("generators %v; want %d distinct ones", gens, n)
			}
			var stored, acked, failed int64
			for _, r := range rs {
				for _, p := range r.Phases {
					acked, failed = acked+p.Acked, failed+p.Failed
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for _, g := range gens {
				c, err := tgt.Count(ctx, g)
				if err != nil {
					t.Fatal(err)
				}
				stored += c
			}
			if err := storedCount(stored, acked, failed); err != nil {
				t.Error(err)
			}

			m := mergeFiles(t, files...)
			if m.Kind != results.KindMerged || m.Merged == nil || len(m.Merged.Missing) != 0 || len(m.Merged.Partial) != 0 || m.EndedEarly {
				t.Fatalf("merged: kind %q, merged %+v, ended early %v; want a whole merge of 3 instances", m.Kind, m.Merged, m.EndedEarly)
			}
			checkMergedSums(t, rs, m)
		})
	}
}

// checkMergedSums holds a merged result against its parts: every count the
// sum, every histogram the one of all samples.
func checkMergedSums(t *testing.T, rs []*results.Result, m *results.Result) {
	t.Helper()
	var want results.Summary
	var achieved float64
	var comp int
	lat, lag, vis := stats.NewHistogram(), stats.NewHistogram(), stats.NewHistogram()
	for _, r := range rs {
		s := r.Summary
		want.EventsDue += s.EventsDue
		want.EventsAcked += s.EventsAcked
		want.EventsFailed += s.EventsFailed
		want.EventsUnsent += s.EventsUnsent
		want.Batches += s.Batches
		achieved += s.AchievedEventsPerSec
		comp += len(r.Target().Completeness)
		lat.Merge(measuredPhase(t, r).WriteLatency)
		lag.Merge(r.Target().Freshness.Lag)
		vis.Merge(r.Target().Visibility.Latency)
	}
	s := m.Summary
	if s.EventsDue != want.EventsDue || s.EventsAcked != want.EventsAcked || s.EventsFailed != want.EventsFailed ||
		s.EventsUnsent != want.EventsUnsent || s.Batches != want.Batches {
		t.Errorf("merged summary due %d acked %d failed %d unsent %d batches %d; want the sums %d %d %d %d %d",
			s.EventsDue, s.EventsAcked, s.EventsFailed, s.EventsUnsent, s.Batches,
			want.EventsDue, want.EventsAcked, want.EventsFailed, want.EventsUnsent, want.Batches)
	}
	if d := s.AchievedEventsPerSec - achieved; d > 1e-6*achieved || d < -1e-6*achieved {
		t.Errorf("merged achieved %.3f events/s; want the sum of the instances' %.3f", s.AchievedEventsPerSec, achieved)
	}
	if len(m.Target().Completeness) != comp || !s.Audited {
		t.Errorf("merged completeness: %d rows, audited %v; want the %d rows of the instances, audited", len(m.Target().Completeness), s.Audited, comp)
	}
	for _, c := range []struct {
		name      string
		got, want *stats.Histogram
	}{
		{"write latency", measuredPhase(t, m).WriteLatency, lat},
		{"freshness lag", m.Target().Freshness.Lag, lag},
		{"visibility latency", m.Target().Visibility.Latency, vis},
	} {
		if !sameHistogram(c.got, c.want) {
			t.Errorf("merged %s: %+v; want the histogram of all the instances' samples, %+v", c.name, c.got.Summarize(), c.want.Summarize())
		}
	}
}

// sameHistogram compares two histograms: count, mean, minimum and the
// value at every 0.1 percentile.
func sameHistogram(a, b *stats.Histogram) bool {
	if a.Summarize() != b.Summarize() {
		return false
	}
	for i := range 1001 {
		if q := float64(i) / 1000; a.Quantile(q) != b.Quantile(q) {
			return false
		}
	}
	return true
}

// An instance killed mid-run (SIGKILL: no results file) and one stopped
// (SIGTERM, as Kubernetes stops a pod: it writes what it measured and
// ends early) are named by the merge, which still merges what was
// written; the instance that ran to the end is audited whole.
func TestExperimentWithKilledInstances(t *testing.T) {
	_, ins, errs := runExperiment(t, func() string { return withName(t, serverURL(t, "postgres"), "expkill") }, func(raw string, lead time.Duration) ([]*instance, []error) {
		open(t, raw, nil)
		ins, start := startInstances(t, raw, "e2e-kill", 3, 200, 14*time.Second, lead)
		// Mid-run: 5 s into the common schedule.
		time.Sleep(time.Until(start.Add(5 * time.Second)))
		ins[1].cmd.Process.Signal(syscall.SIGKILL)
		ins[2].cmd.Process.Signal(syscall.SIGTERM)
		// Instance 1's error is the signal; instance 2 exits with the
		// run's interruption.
		return ins, waitAll(t, ins)
	})
	if errs[0] != nil {
		t.Fatalf("instance 0: %v\n%s", errs[0], ins[0].stderr.String())
	}
	if _, err := os.Stat(ins[1].out); err == nil {
		t.Fatalf("instance 1 was killed but wrote %s", ins[1].out)
	}
	stopped, err := results.ReadFile(ins[2].out)
	if err != nil {
		t.Fatalf("instance 2, stopped by SIGTERM, wrote no readable results: %v\n%s", err, ins[2].stderr.String())
	}
	if !stopped.EndedEarly {
		t.Errorf("instance 2 stopped mid-run: ended early %v; want true", stopped.EndedEarly)
	}
	whole, err := results.ReadFile(ins[0].out)
	if err != nil {
		t.Fatal(err)
	}
	m := mergeFiles(t, ins[0].out, ins[2].out)
	if m.Merged == nil || !slices.Equal(m.Merged.Missing, []int{1}) || !slices.Equal(m.Merged.Partial, []int{2}) || !m.EndedEarly {
		t.Fatalf("merged: %+v, ended early %v (%s); want instance 1 missing and 2 partial, the merge ended early", m.Merged, m.EndedEarly, m.EndReason)
	}
	if got, want := m.Summary.EventsAcked, whole.Summary.EventsAcked+stopped.Summary.EventsAcked; got != want {
		t.Errorf("merged events acknowledged %d; want what the two files hold, %d", got, want)
	}
	if c := whole.Summary; !c.Audited || c.Missing != 0 {
		t.Errorf("instance 0: audited %v, missing %d; want audited whole beside its killed peers", c.Audited, c.Missing)
	}
}

// storedCount holds what the target stores of an experiment's generators
// to what the instances acknowledged: every acknowledged event, and of
// those whose write failed as a whole (a timeout on a busy server, which
// may have stored the batch all the same) none to all. Nothing else.
func storedCount(stored, acked, failed int64) error {
	if stored < acked || stored > acked+failed {
		return fmt.Errorf("the target holds %d events of the experiment's generators; the instances acknowledged %d and %d failed: want %d to %d", stored, acked, failed, acked, acked+failed)
	}
	return nil
}

// wholeRequest reports whether an error kind is a request that failed as
// a whole, in transport or on a busy server, rather than an event the
// database refused.
func wholeRequest(kind string) bool {
	switch kind {
	case "timeout", "request_failed", "connection_refused":
		return true
	}
	return false
}
