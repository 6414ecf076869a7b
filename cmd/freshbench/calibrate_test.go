package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/noop"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
)

// asMain makes the test binary act as freshbench when calibrate starts
// it as its noop child (os.Executable is the test binary here).
const asMain = "FRESHBENCH_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		main()
	}
	// No test reads or replaces the calibration of the user's machine.
	cache, err := os.MkdirTemp("", "freshbench-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("FRESHBENCH_CACHE", cache)
	testenv.WaitingTests(6)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

// shortCalibration is a calibration of a few seconds (against a server
// on loopback: the network holds a synctest bubble's clock).
func shortCalibration(out string, extra ...string) []string {
	return append([]string{"calibrate", "--batch-sizes", "20,100", "--start", "1000", "--step", "x2", "--refine", "",
		"--hold", "1s", "--warmup", "0s", "--max-duration", "4s", "--poll-interval", "50ms",
		"--metrics-addr=", "--quiet", "--out", out}, extra...)
}

func readCalibration(t *testing.T, path string) *results.Result {
	t.Helper()
	res, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != results.KindCalibration || res.Calibration == nil || len(res.Calibration.Points) != 2 || len(res.Steps) != 2 {
		t.Fatalf("kind %s, %d searches; want a calibration of batch sizes 20 and 100", res.Kind, len(res.Steps))
	}
	for _, p := range res.Calibration.Points {
		if p.Found && p.CPUPer100kS <= 0 {
			t.Errorf("batch %d: ceiling %.0f without its CPU per 100k events", p.BatchSize, p.CeilingEventsPerSec)
		}
	}
	return res
}

// Without --target, calibrate starts freshbench noop as a child process,
// drives it and records the child's CPU apart from the driver's.
func TestCalibrateStartsNoop(t *testing.T) {
	t.Setenv(asMain, "1")
	cache := t.TempDir()
	t.Setenv("FRESHBENCH_CACHE", cache) // where the calibration is saved by default
	out := filepath.Join(t.TempDir(), "c.json")
	code, stdout, stderr := freshbench(t, shortCalibration(out)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	saved := filepath.Join(cache, "calibration.json")
	if !strings.Contains(stdout, "calibration: saved as this machine's: "+saved) {
		t.Errorf("stdout does not say the calibration was saved at %s:\n%s", saved, stdout)
	}
	if _, err := os.Stat(saved); err != nil {
		t.Errorf("calibration not saved: %v", err)
	}
	for _, want := range []string{"batch 20 step 1: target 1,000 events/s", "batch size", "CPU s per 100k events", "the noop server used"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	res := readCalibration(t, out)
	if res.Calibration.NoopCPUS <= 0 || !strings.HasPrefix(res.Environment.TargetURL, "elasticsearch://127.0.0.1:") {
		t.Errorf("noop CPU %g s, target %s; want the child's CPU and its Elasticsearch endpoint", res.Calibration.NoopCPUS, res.Environment.TargetURL)
	}
}

// With --target, calibrate drives a noop server that runs already, here
// its PostgreSQL endpoint with COPY.
func TestCalibrateTarget(t *testing.T) {
	srv, err := noop.Start(noop.Config{PostgresAddr: "127.0.0.1:0", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "c.json")
	profile := filepath.Join(t.TempDir(), "cpu.pprof")
	saved := filepath.Join(t.TempDir(), "machine.json")
	code, stdout, stderr := freshbench(t, shortCalibration(out, "--target", srv.PostgresURL("cal"), "--set", "write_method=copy", "--cpuprofile", profile, "--calibration", saved)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	// A run reads the calibration saved: its batch size, 50, lies between
	// the calibrated 20 and 100.
	run := filepath.Join(t.TempDir(), "run.json")
	synctest.Test(t, func(t *testing.T) {
		if code, stdout, stderr := freshbench(t, shortRun("--target", "sim://", "--rate", "200", "--metrics-addr=", "--quiet", "--out", run, "--calibration", saved)...); code != 0 {
			t.Fatalf("run with the calibration: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
	})
	r, err := results.ReadFile(run)
	if err != nil {
		t.Fatal(err)
	}
	if r.Ceiling == nil || r.Ceiling.NotUsed != "" || r.Ceiling.EventsPerSec <= 0 {
		t.Errorf("run with the calibration saved: ceiling %+v; want one used", r.Ceiling)
	}
	if st, err := os.Stat(profile); err != nil || st.Size() == 0 {
		t.Errorf("CPU profile: %v", err)
	}
	res := readCalibration(t, out)
	if res.Config.TargetSettings["write_method"] != "copy" || res.Calibration.NoopCPUS != 0 {
		t.Errorf("settings %v, noop CPU %g; want write_method=copy and no child", res.Config.TargetSettings, res.Calibration.NoopCPUS)
	}
	// Not read as a run by the commands that do not render calibrations.
	wantUsageError(t, []string{"report", out}, "is a calibration, which report and compare do not render yet")
	wantUsageError(t, []string{"compare", out, out}, "is a calibration")
}

func TestCalibrateBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c.json")
	base := func(args ...string) []string {
		return append([]string{"calibrate", "--out", out, "--metrics-addr="}, args...)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o666)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"batch size not a number", base("--batch-sizes", "50,x"), `--batch-sizes "50,x": want positive whole numbers`},
		{"batch size 0", base("--batch-sizes", "0"), `--batch-sizes "0": want positive whole numbers`},
		{"batch too large for memory", base("--batch-sizes", "50,10000000"), "--batch-sizes 10000000: want batches that fit the memory limit"},
		{"start in bytes", base("--start", "10MB/s"), `--start "10MB/s": want a rate in events/s`},
		{"step not a factor", base("--step", "1000"), `--step "1000": want a factor above 1`},
		{"refinement coarser than the step", base("--refine", "x2"), "--refine x2: want a factor above 1 and below the step's x1.5"},
		{"no time", base("--max-duration", "0s"), "--max-duration 0s: want a positive duration"},
		{"rate limit below the start", base("--max-rate", "10"), "--max-rate 10: want at least the start rate"},
		{"unknown protocol", base("--protocol", "mysql"), `--protocol "mysql": want elasticsearch, opensearch or postgres`},
		{"protocol with a target", base("--target", "sim://", "--protocol", "postgres"), "--protocol chooses the endpoint"},
		{"target not a noop server", base("--target", "sim://"), "--target sim:// is not a freshbench noop server"},
		{"unknown target scheme", base("--target", "mongodb://x/y"), "--target: bad target URL"},
		{"profile under a file", base("--cpuprofile", filepath.Join(file, "cpu.pprof")), "--cpuprofile " + filepath.Join(file, "cpu.pprof") + ": directory cannot be created"},
		{"profile a FIFO", base("--cpuprofile", fifo), "--cpuprofile " + fifo + " is a named pipe (FIFO)"},
	} {
		t.Run(c.name, func(t *testing.T) { wantUsageError(t, c.args, c.want) })
	}
}

// freshbench noop announces its URLs and serves them until interrupted;
// freshbench's own targets recognise it.
func TestNoopCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr lockedBuffer
	done := make(chan int)
	go func() { done <- Main(ctx, []string{"noop"}, &stdout, &stderr) }()
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(stdout.String(), "\n") < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	urls := strings.Fields(stdout.String())
	if len(urls) != 3 {
		cancel()
		t.Fatalf("announced %q, want three URLs", stdout.String())
	}
	for _, u := range urls {
		tgt, err := all.Registry().Open(ctx, u, target.Options{})
		if err != nil {
			t.Fatalf("open %s: %v", u, err)
		}
		if v, err := tgt.Version(ctx); err != nil || !strings.Contains(v, noop.Product) {
			t.Errorf("%s: version %q, %v", u, v, err)
		}
		tgt.Close()
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after the interrupt: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("freshbench noop did not stop when interrupted")
	}
}

func TestNoopBadInput(t *testing.T) {
	wantUsageError(t, []string{"noop", "--http-listen=", "--postgres-listen="}, "--http-listen and --postgres-listen are both empty")
	wantUsageError(t, []string{"noop", "--http-listen", "nowhere"}, "(--http-listen, --postgres-listen)")
}
