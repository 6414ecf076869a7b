package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/freshbench/freshbench/results"
)

// A read endpoint that is not a URL of the target's database is refused
// before anything runs, on every command that takes one.
func TestReadEndpointBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"not a URL", shortRun("--target", "sim://", "--read-endpoint", "127.0.0.1:9200", "--out", out),
			"--read-endpoint 127.0.0.1:9200: not a URL; give one of the --target database, e.g. sim://host:port/…"},
		{"another scheme", shortRun("--target", "sim://", "--read-endpoint", "postgres://u:s3cret@127.0.0.1:15434/db", "--out", out),
			"--read-endpoint postgres://u:xxxxx@127.0.0.1:15434/db: scheme postgres, not the --target's sim"},
		{"not the default database", shortRun("--data-dir", filepath.Join(dir, "data"), "--read-endpoint", "sim://", "--out", out),
			"scheme sim, not the --target's sqlite"},
		{"peak", []string{"peak", "--target", "elasticsearch://127.0.0.1:9/x", "--read-endpoint", "opensearch://127.0.0.1:9/x", "--out", out},
			"--read-endpoint opensearch://127.0.0.1:9/x: scheme opensearch, not the --target's elasticsearch"},
		{"query", []string{"query", "--target", "sim://", "--qps", "10", "--read-endpoint", "sqlite:///tmp/x.db", "--out", out},
			"scheme sqlite, not the --target's sim"},
		{"a setting the read endpoint refuses", shortRun("--target", "sim://", "--read-endpoint", "sim://?visibility_delay=soon", "--out", out),
			"--read-endpoint: "},
		{"levels", append(shortRun("--target", "sim://", "--read-endpoint", "sim://", "--out", out), "--levels", "100,200"),
			"--read-endpoint sim://: want none with levels"},
	} {
		t.Run(c.name, func(t *testing.T) { wantUsageError(t, c.args, c.want) })
	}
	if strings.Contains(dir, "s3cret") {
		t.Fatal("test directory names the secret")
	}
}

// A run with a read endpoint measures it beside the target and says so:
// here one that never sees a write (another, empty, simulated database),
// so its probes are all never seen and its audit finds every event
// missing, while the target's figures are whole. No secret of its URL
// reaches the output or the results file.
func TestRunReadEndpoint(t *testing.T) { synctest.Test(t, testRunReadEndpoint) }

func testRunReadEndpoint(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := freshbench(t, shortRun("--target", "sim://?visibility_delay=20ms",
		"--read-endpoint", "sim://bench:s3cret@replica?visibility_delay=20ms", "--out", out, "--quiet", "--metrics-addr=")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"read endpoints (ms;", "read1: sim://bench:xxxxx@replica", "completeness (target): ", " 0 missing"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stdout+stderr+string(b), "s3cret") {
		t.Error("a read endpoint's password is in the output or the results file")
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reads()) != 1 || res.VisibleEverywhere == nil {
		t.Fatalf("results: %d read endpoints, everywhere %v", len(res.Reads()), res.VisibleEverywhere)
	}
	e, s := res.Reads()[0], res.Summary
	if e.Name != "read1" || e.Visibility.Seen != 0 || e.Visibility.NeverSeen == 0 || s.ReadEndpoints[0].Missing != s.EventsAcked+res.Phase(results.PhaseWarmup).Acked {
		t.Errorf("read1 %q: %d seen, %d never seen, %d missing of %d acknowledged", e.Name, e.Visibility.Seen, e.Visibility.NeverSeen, s.ReadEndpoints[0].Missing, s.EventsAcked)
	}
	if !s.Audited || s.Missing != 0 || res.Target().Visibility.NeverSeen != 0 {
		t.Errorf("target: audited %v, missing %d, %d never seen: the read endpoint's figures reached it", s.Audited, s.Missing, res.Target().Visibility.NeverSeen)
	}
}
