package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
)

// isolationArgs is a short isolation experiment on a sim whose one queue
// the writes and the queries share, so that each burst slows the other.
func isolationArgs(out string, extra ...string) []string {
	return append([]string{"isolation", "--target", "sim://?capacity=10000&query_cost=10&query_delay=5ms&visibility_delay=20ms",
		"--rate", "4000", "--batch-size", "10", "--max-inflight", "5000", "--query-max-inflight", "5000", "--qps", "200", "--settle", "0s",
		"--warmup", "1s", "--baseline", "2s", "--burst", "1s", "--recovery", "2s", "--burst-factor", "4", "--resolution", "100ms",
		"--drain", "1s", "--quiet", "--metrics-addr", "", "--out", out}, extra...)
}

// Bad settings of the experiment are refused in one line, exit 2, in
// flag words.
func TestIsolationBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"factor 1", isolationArgs(out, "--burst-factor", "1"), "--burst-factor 1: want a factor above 1"},
		{"band below 1", isolationArgs(out, "--band", "0.5"), "--band 0.5: want a factor of the baseline of 1 or more"},
		{"resolution past the recovery", isolationArgs(out, "--resolution", "3s"), "--resolution 3s: want a positive duration up to the recovery's 2s"},
		{"no burst", isolationArgs(out, "--burst", "0s"), "--burst 0s: want a positive duration"},
		{"closed loop", isolationArgs(out, "--concurrency", "4"), "--concurrency: the isolation experiment runs its queries open loop at --qps"},
		{"shorter than a batch", isolationArgs(out, "--rate", "1"), "the experiment's 9s (--warmup + --baseline + 2 × (--burst + --recovery)): want a measured part (after the warm-up of 1s) of at least one batch interval, 10s"},
		{"a shape of its own", isolationArgs(out, "--query-shape", "const 2"), "--query-shape: the isolation experiment"},
	} {
		t.Run(c.name, func(t *testing.T) { wantUsageError(t, c.args, c.want) })
	}
}

// The command runs the experiment, prints the interference and recovery
// table, records it; the report shades the bursts and shows the table,
// offline; compare puts the bursts of two runs side by side.
func TestIsolationCommand(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testIsolationCommand)
}

func testIsolationCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "iso.json")
	code, stdout, stderr := freshbench(t, isolationArgs(out)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`\n\s+burst\s+endpoint\s+window\s+query p95\s+query p99\s+freshness p95\s+visibility p95\s+write p95\s+recovery\s*\n`),
		regexp.MustCompile(`\n\s+ingest\s+target\s+3s–4s\s+×[0-9.]+\s`),
		regexp.MustCompile(`\n\s+query\s+target\s+6s–7s\s+×[0-9.]+\s`),
		regexp.MustCompile(`\n\s+ingest recovery\s+4s–6s\s`),
	} {
		if !want.MatchString(stdout) {
			t.Errorf("console does not match %s:\n%s", want, stdout)
		}
	}
	r := readResult(t, out)
	if r.Isolation == nil || len(r.Isolation.Windows) != 5 || len(r.Isolation.Bursts) != 2 {
		t.Fatalf("results hold isolation %+v", r.Isolation)
	}
	if r.Config.WriteShape != "burst 4x at 3s for 1s" || r.Target().Queries == nil || r.Target().Queries.Shape != "burst 4x at 6s for 1s" {
		t.Errorf("shapes recorded: write %q, queries %+v", r.Config.WriteShape, r.Target().Queries)
	}
	if ib := r.Isolation.Bursts[0].Endpoints[0]; ib.QueryP95Ratio == nil || *ib.QueryP95Ratio < 2 {
		t.Errorf("the ingest burst on one shared queue: query p95 ratio %v, want well above 1", ib.QueryP95Ratio)
	}

	if code, _, stderr := freshbench(t, "report", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(strings.TrimSuffix(out, ".json") + ".html")
	if err != nil {
		t.Fatal(err)
	}
	checkOffline(t, string(page))
	for _, want := range []string{`class="band-burst"`, `ingest ×4`, `query ×4`, `<section id="isolation">`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	code, cmp, stderr := freshbench(t, "compare", out, out)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"ingest burst on target: query p95 ×", "query burst on target: freshness p95 ×", "ingest burst on target: recovery s"} {
		if !strings.Contains(cmp, want) {
			t.Errorf("compare lacks %q:\n%s", want, cmp)
		}
	}
}
