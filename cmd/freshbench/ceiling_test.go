package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/results"
)

// writeCalibration writes a calibration of this host at batch size 50
// (the runs' default) whose ceiling is ceiling events/s.
func writeCalibration(t *testing.T, path string, ceiling float64) {
	t.Helper()
	host, _ := os.Hostname()
	b, err := json.Marshal(results.MachineCalibration{
		Host: host, Cores: runtime.NumCPU(), CalibratedAt: time.Now().UTC(),
		Points: []results.CalibrationPoint{{BatchSize: 50, Found: true, CeilingEventsPerSec: ceiling}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunCeiling runs against sim:// at 1000 events/s with a calibration
// whose ceiling is below twice that rate, which warns in the console, the
// results file and the HTML report, and with one above, which does not.
func TestRunCeiling(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("FRESHBENCH_CACHE", filepath.Join(dir, "cache")) // no default calibration
	for _, c := range []struct {
		name    string
		ceiling float64
		warn    bool
	}{{"below twice the rate", 1800, true}, {"above twice the rate", 2500, false}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cal := filepath.Join(dir, c.name+".json")
				writeCalibration(t, cal, c.ceiling)
				out := filepath.Join(dir, c.name+"-run.json")
				code, stdout, stderr := freshbench(t, shortRun("--target", "sim://", "--rate", "1000", "--out", out, "--metrics-addr=", "--quiet", "--calibration", cal)...)
				if code != 0 {
					t.Fatalf("exit code %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
				}
				res, err := results.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				ce := res.Ceiling
				if ce == nil || ce.NotUsed != "" || ce.File != cal || ce.EventsPerSec != c.ceiling || ce.TargetShare != 1000/c.ceiling {
					t.Fatalf("results file ceiling %+v, want %s at %.0f events/s, target share %.2f", ce, cal, c.ceiling, 1000/c.ceiling)
				}
				if got := ce.Warning != ""; got != c.warn {
					t.Errorf("results file warning %q, want one: %v", ce.Warning, c.warn)
				}
				if got := strings.Contains(stdout, "warning: the run used"); got != c.warn {
					t.Errorf("console warns: %v, want %v:\n%s", got, c.warn, stdout)
				}
				if !c.warn && !strings.Contains(stdout, "driver ceiling: 40% of it targeted") {
					t.Errorf("console does not say the share:\n%s", stdout)
				}
				code, page, stderr := freshbench(t, "report", out, "-o", "-")
				if code != 0 {
					t.Fatalf("report: exit code %d: %s", code, stderr)
				}
				if got := strings.Contains(page, `<div class="notice warn">The run used`); got != c.warn {
					t.Errorf("HTML notice of the ceiling: %v, want %v", got, c.warn)
				}
			})
		})
	}
}

func TestRunCalibrationFiles(t *testing.T) { synctest.Test(t, testRunCalibrationFiles) }

func testRunCalibrationFiles(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	if err := os.WriteFile(corrupt, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := func(args ...string) []string {
		return append(shortRun("--target", "sim://", "--rate", "200", "--metrics-addr=", "--quiet", "--out", filepath.Join(dir, "r.json")), args...)
	}
	// Given explicitly, a calibration must be there and readable.
	wantUsageError(t, base("--calibration", filepath.Join(dir, "none.json")), "none.json: no such file; run freshbench calibrate --calibration")
	wantUsageError(t, base("--calibration", corrupt), "--calibration: unreadable calibration "+corrupt)

	// The default one: absent, a hint; corrupt, one warning; the run goes
	// on either way.
	cache := filepath.Join(dir, "cache")
	t.Setenv("FRESHBENCH_CACHE", cache)
	code, stdout, stderr := freshbench(t, base()...)
	if code != 0 || !strings.Contains(stdout, "driver ceiling unknown (no calibration at "+filepath.Join(cache, "calibration.json")+"): run freshbench calibrate") || strings.Contains(stderr, "warning") {
		t.Errorf("no default calibration: exit code %d, want 0 and a hint\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "calibration.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = freshbench(t, base()...)
	if code != 0 || strings.Count(stderr, "warning: unreadable calibration") != 1 || !strings.Contains(stdout, "driver ceiling unknown") {
		t.Errorf("corrupt default calibration: exit code %d, want 0, one warning and the ceiling unknown\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	res, err := results.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Ceiling == nil || !strings.Contains(res.Ceiling.NotUsed, "unreadable") {
		t.Errorf("results file ceiling %+v, want not used: unreadable", res.Ceiling)
	}
}
