package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/noop"
	"github.com/freshbench/freshbench/results"
)

// unreachable is a target no command gets to: a command that opened it
// fails with the target's error, not with its output's.
const unreachable = "elasticsearch://127.0.0.1:1"

// instanceFile is the results file of a short run, an experiment of one
// instance, that report and merge read.
func instanceFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "instance.json")
	if code, out, errOut := freshbenchVirtual(t, shortRun("--target", "sim://", "--rate", "500", "--metrics-addr=", "--quiet", "--out", f,
		"--experiment", "out", "--instance", "0", "--instances", "1")...); code != 0 {
		t.Fatalf("run: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	return f
}

// outputCommands are the commands that write a file, each with its
// output at out and its input (a results file) where it needs one.
func outputCommands(in string) map[string]func(out string) []string {
	return map[string]func(out string) []string{
		"run": func(out string) []string {
			return shortRun("--target", unreachable, "--metrics-addr=", "--quiet", "--out", out)
		},
		"run --levels": func(out string) []string {
			return shortLevels("--target", unreachable, "--levels", "100,200", "--trials", "1", "--warmup-trials", "0", "--out", out)
		},
		"calibrate": func(out string) []string { return shortCalibration(out, "--target", unreachable) },
		"calibrate --calibration": func(out string) []string {
			return shortCalibration(filepath.Join(filepath.Dir(out), "c.json"), "--target", unreachable, "--calibration", out)
		},
		"calibrate --cpuprofile": func(out string) []string {
			return shortCalibration(filepath.Join(filepath.Dir(out), "c.json"), "--target", unreachable, "--cpuprofile", out)
		},
		"merge":  func(out string) []string { return []string{"merge", "--out", out, in} },
		"report": func(out string) []string { return []string{"report", in, "-o", out} },
	}
}

// A path that holds something other than a regular file, itself or at
// the end of its links, is refused in one line, exit 2, before anything
// runs (the target is never reached), and is left as it was. A FIFO
// stands in for a device node.
func TestOutputRefusesWhatIsNotAFile(t *testing.T) {
	in := instanceFile(t)
	for name, args := range outputCommands(in) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o666); err != nil {
				t.Fatal(err)
			}
			// A reader that drains it, so that a writer does not block.
			r, err := os.OpenFile(fifo, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			go io.Copy(io.Discard, r)
			sub := filepath.Join(dir, "sub")
			os.Mkdir(sub, 0o777)
			for _, c := range []struct {
				name, path, want string
				mode             fs.FileMode
			}{
				{"fifo", fifo, "named pipe", fs.ModeNamedPipe},
				{"link to a fifo", link(t, fifo, filepath.Join(dir, "to-fifo")), "named pipe", fs.ModeSymlink},
				{"link to a device", link(t, "/dev/null", filepath.Join(dir, "to-null")), "device", fs.ModeSymlink},
				{"directory", sub, "directory", fs.ModeDir},
			} {
				t.Run(c.name, func(t *testing.T) {
					wantUsageError(t, args(c.path), c.path)
					wantUsageError(t, args(c.path), c.want)
					st, err := os.Lstat(c.path)
					if err != nil || st.Mode().Type() != c.mode {
						t.Errorf("%s after: %v, %v; want it left a %v", c.path, st.Mode(), err, c.mode)
					}
				})
			}
		})
	}
}

func link(t *testing.T, to, name string) string {
	t.Helper()
	if err := os.Symlink(to, name); err != nil {
		t.Fatal(err)
	}
	return name
}

// wantThrough checks that the link at name is still a link and that the
// file it leads to, to, holds a complete file of kind (JSON results, or
// HTML when kind is "html").
func wantThrough(t *testing.T, name, to, kind string) {
	t.Helper()
	if st, err := os.Lstat(name); err != nil || st.Mode().Type() != fs.ModeSymlink {
		t.Errorf("%s: %v, %v; want the link kept", name, st.Mode(), err)
	}
	b, err := os.ReadFile(to)
	if err != nil {
		t.Fatalf("the file the link leads to: %v", err)
	}
	if kind == "html" {
		if !bytes.Contains(b, []byte("</html>")) {
			t.Errorf("%s: not a complete HTML page (%d bytes)", to, len(b))
		}
		return
	}
	var r results.Result
	if err := json.Unmarshal(b, &r); err != nil || (kind != "" && r.Kind != kind) {
		t.Errorf("%s: kind %q, %v; want a results file of kind %s", to, r.Kind, err, kind)
	}
}

// A symbolic link is written through: the file it leads to is replaced
// (or made, when the link dangles), the link kept.
func TestOutputThroughLinks(t *testing.T) {
	in := instanceFile(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args func(out string) []string
		kind string
	}{
		{"merge", func(out string) []string { return []string{"merge", "--out", out, in} }, results.KindMerged},
		{"report", func(out string) []string { return []string{"report", in, "-o", out} }, "html"},
	} {
		t.Run(c.name, func(t *testing.T) {
			to := filepath.Join(dir, c.name+"-old")
			os.WriteFile(to, []byte("old"), 0o666)
			l := link(t, filepath.Base(to), filepath.Join(dir, c.name+"-link"))
			if code, _, errOut := freshbench(t, c.args(l)...); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			wantThrough(t, l, to, c.kind)
			dangling := link(t, filepath.Join(dir, c.name+"-new"), filepath.Join(dir, c.name+"-dangling"))
			if code, _, errOut := freshbench(t, c.args(dangling)...); code != 0 {
				t.Fatalf("dangling: exit %d: %s", code, errOut)
			}
			wantThrough(t, dangling, filepath.Join(dir, c.name+"-new"), c.kind)
		})
	}
	t.Run("run --levels", func(t *testing.T) {
		to := filepath.Join(dir, "levels-old")
		os.WriteFile(to, []byte("old"), 0o666)
		l := link(t, to, filepath.Join(dir, "levels-link"))
		if code, _, errOut := freshbenchVirtual(t, shortLevels("--target", "sim://", "--levels", "200", "--trials", "1", "--warmup-trials", "0", "--out", l)...); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		wantThrough(t, l, to, results.KindLevels)
	})
	t.Run("calibrate", func(t *testing.T) {
		srv, err := noop.Start(noop.Config{HTTPAddr: "127.0.0.1:0", Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		out := filepath.Join(dir, "calibrate-old")
		os.WriteFile(out, []byte("old"), 0o666)
		outLink := link(t, out, filepath.Join(dir, "calibrate-link"))
		saved := filepath.Join(dir, "machine.json")
		savedLink := link(t, saved, filepath.Join(dir, "machine-dangling"))
		// A starved machine may find no ceiling in 3 s (the first steps
		// not yet decided), and then nothing is saved (seen in a busy
		// round): the calibration is given longer before the test fails.
		for _, d := range []string{"3s", "30s"} {
			code, _, errOut := freshbench(t, shortCalibration(outLink, "--target", srv.ElasticsearchURL("cal-out"), "--calibration", savedLink, "--batch-sizes", "100", "--max-duration", d)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(errOut, "no batch size found a ceiling") {
				break
			}
			t.Logf("within %s: %s", d, strings.TrimSpace(errOut))
		}
		wantThrough(t, outLink, out, results.KindCalibration)
		wantThrough(t, savedLink, saved, "")
	})
}

// --out - and a link to this process's standard output write the JSON
// there; the console then goes to standard error.
func TestOutputToStdout(t *testing.T) {
	in := instanceFile(t)
	dir := t.TempDir()
	t.Chdir(dir) // where a file named - would land
	stdoutLink := link(t, "/proc/self/fd/1", filepath.Join(dir, "stdout"))
	for _, c := range []struct {
		name    string
		args    []string
		kind    string
		console string
	}{
		{"run -", shortRun("--target", "sim://", "--rate", "200", "--metrics-addr=", "--out", "-"), results.KindRun, "freshbench run: sim://"},
		{"run --levels -", shortLevels("--target", "sim://", "--levels", "200", "--trials", "1", "--warmup-trials", "0", "--out", "-"), results.KindLevels, "level 1 (200 events/s), trial 1 of 1"},
		{"merge -", []string{"merge", "--out", "-", in}, results.KindMerged, "experiment out: 1 of 1 instances merged"},
		{"merge link", []string{"merge", "--out", stdoutLink, in}, results.KindMerged, "experiment out: 1 of 1 instances merged"},
		{"report link", []string{"report", in, "-o", stdoutLink}, "html", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := freshbenchVirtual(t, c.args...)
			if code != 0 {
				t.Fatalf("exit %d\nstderr: %s", code, stderr)
			}
			if _, err := os.Lstat("-"); err == nil {
				t.Errorf("a file named - was written")
			}
			if st, err := os.Lstat(stdoutLink); err != nil || st.Mode().Type() != fs.ModeSymlink {
				t.Errorf("%s: %v, %v; want the link kept", stdoutLink, st.Mode(), err)
			}
			if c.kind == "html" {
				if !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(stdout), "</html>") {
					t.Errorf("stdout is not the page: %.200q", stdout)
				}
				return
			}
			var r results.Result
			if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Kind != c.kind {
				t.Errorf("stdout: kind %q, %v; want the results JSON alone:\n%.300s", r.Kind, err, stdout)
			}
			for _, want := range []string{c.console, "results: standard output"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

// New files are made as os.WriteFile makes them: 0666 less the umask.
func TestOutputModes(t *testing.T) {
	in := instanceFile(t)
	for _, umask := range []int{0o022, 0o077} {
		old := syscall.Umask(umask)
		dir := t.TempDir()
		for name, args := range map[string][]string{
			"merge":  {"merge", "--out", filepath.Join(dir, "merge.json"), in},
			"report": {"report", in, "-o", filepath.Join(dir, "report.html")},
		} {
			if code, _, errOut := freshbench(t, args...); code != 0 {
				t.Errorf("%s: exit %d: %s", name, code, errOut)
			}
		}
		for _, f := range []string{"merge.json", "report.html"} {
			st, err := os.Stat(filepath.Join(dir, f))
			if want := fs.FileMode(0o666 &^ umask); err != nil || st.Mode().Perm() != want {
				t.Errorf("umask %03o: %s: %v, %v; want %v", umask, f, st.Mode(), err, want)
			}
		}
		syscall.Umask(old)
	}
}

// tmpfs mounts a file system of 4 KiB, too small for a results file, or
// skips the test where none can be mounted (not root).
func tmpfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	unmount, err := mountSmall(dir)
	if err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (%v); the outfile tests inject the failure instead", err)
	}
	t.Cleanup(unmount)
	return dir
}

// A results file that cannot be written on a full disk leaves its figures
// in a file of the user's cache; the error names both, exit 3.
func TestOutputDiskFull(t *testing.T) {
	full := tmpfs(t)
	in := instanceFile(t)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	for _, c := range []struct {
		name string
		args []string
		kind string
	}{
		{"run", shortRun("--target", "sim://", "--rate", "500", "--metrics-addr=", "--quiet", "--out", filepath.Join(full, "run.json")), results.KindRun},
		{"run --levels", shortLevels("--target", "sim://", "--levels", "200", "--trials", "1", "--warmup-trials", "0", "--out", filepath.Join(full, "levels.json")), results.KindLevels},
		{"merge", []string{"merge", "--out", filepath.Join(full, "merge.json"), in}, results.KindMerged},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := freshbenchVirtual(t, c.args...)
			if code != 3 {
				t.Errorf("exit %d, want 3 (the command's output failed)\nstderr: %s", code, stderr)
			}
			saved, _ := filepath.Glob(filepath.Join(cache, "freshbench", "unsaved", "*"))
			if len(saved) == 0 {
				t.Fatalf("no fallback file in %s; stderr: %s", cache, stderr)
			}
			if len(saved) != 1 {
				t.Fatalf("fallback files %q, want one", saved)
			}
			fallback := saved[0]
			seen := filepath.Join(t.TempDir(), "seen.json") // out of the next case's way
			os.Rename(fallback, seen)
			out := c.args[len(c.args)-1]
			if c.name == "merge" {
				out = c.args[2]
			}
			for _, want := range []string{out, "no space left on device", fallback} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			r, err := results.ReadFile(seen)
			if err != nil || r.Kind != c.kind || (c.kind == results.KindRun && r.Summary.EventsAcked == 0) {
				t.Errorf("fallback file: %v; want the figures of kind %s", err, c.kind)
			}
		})
	}
}

// asUnprivileged runs this test binary as freshbench without the
// capabilities that let root write where the modes forbid.
func asUnprivileged(t *testing.T, args ...string) (int, string) {
	t.Helper()
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv to drop CAP_DAC_OVERRIDE with")
	}
	cmd := exec.Command("setpriv", append([]string{"--bounding-set=-dac_override,-dac_read_search", "--", os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), asMain+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// A directory that cannot take the file is refused before the run.
func TestOutputReadOnlyDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(dir, 0o555)
	out := filepath.Join(dir, "run.json")
	code, stderr := asUnprivileged(t, shortRun("--target", unreachable, "--metrics-addr=", "--quiet", "--out", out)...)
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, out) || !strings.Contains(stderr, "permission denied") {
		t.Errorf("exit %d, stderr %q; want one line naming %s, exit 2", code, stderr, out)
	}
}

// The levels file is written again, and checked again, as each trial
// ends: a FIFO that took its place during the run is left as it is, the
// trials go on, and the figures are kept in the user's cache, exit 3.
func TestOutputLevelsRewriteRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("two trials of 2 s")
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	synctest.Test(t, func(t *testing.T) { testOutputLevelsRewriteRefused(t, cache) })
}

func testOutputLevelsRewriteRefused(t *testing.T, cache string) {
	out := filepath.Join(t.TempDir(), "levels.json")
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), shortLevels("--target", "sim://", "--levels", "200", "--trials", "2", "--warmup-trials", "0", "--out", out), &stdout, &stderr)
	}()
	deadline := time.After(30 * time.Second)
	for {
		if _, err := results.ReadFile(out); err == nil {
			break
		}
		select {
		case code := <-done:
			t.Fatalf("exit code %d before the levels file held a trial\nstderr: %s", code, stderr.String())
		case <-deadline:
			t.Fatal("no levels file after 30 s")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(out, 0o666); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 3 {
		t.Errorf("exit code %d, want 3\nstderr: %s", code, stderr.String())
	}
	if st, err := os.Lstat(out); err != nil || st.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("%s after: %v, %v; want the FIFO left", out, st.Mode(), err)
	}
	errText := stderr.String()
	for _, want := range []string{"is a named pipe (FIFO), not a regular file, and is not replaced", "(the measurement goes on)", "kept instead in " + filepath.Join(cache, "freshbench", "unsaved")} {
		if !strings.Contains(errText, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errText)
		}
	}
	saved, _ := filepath.Glob(filepath.Join(cache, "freshbench", "unsaved", "levels-*.json"))
	if len(saved) != 1 {
		t.Fatalf("fallback files %q, want one", saved)
	}
	r, err := results.ReadFile(saved[0])
	if err != nil || r.Kind != results.KindLevels || len(r.Levels.Levels[0].Trials) != 2 {
		t.Errorf("fallback file: %v; want both trials", err)
	}
}
