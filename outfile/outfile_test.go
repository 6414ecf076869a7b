package outfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// unprivileged makes this test binary run one test as a helper without
// the capabilities that let root write where the modes forbid.
const unprivileged = "OUTFILE_TEST_UNPRIVILEGED_DIR"

func wantContent(t *testing.T, path string, want []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(b, want) {
		t.Errorf("%s: %q, %v; want %q", path, b, err, want)
	}
}

func wantType(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil || st.Mode().Type() != want {
		t.Errorf("%s: %v, %v; want type %v", path, st.Mode(), err, want)
	}
}

// Links are followed to the file they lead to, relative ones from where
// they lie, through linked directories and chains of links; the links
// stay.
func TestWriteThroughLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o777)
	os.WriteFile(filepath.Join(real, "a.json"), []byte("old"), 0o640)
	os.Symlink("real", filepath.Join(dir, "linked"))                             // a linked directory
	os.Symlink("a.json", filepath.Join(real, "rel"))                             // relative, read from real/
	os.Symlink(filepath.Join(dir, "linked", "rel"), filepath.Join(dir, "chain")) // a chain
	os.Symlink("../real/b.json", filepath.Join(real, "dangling"))

	for _, p := range []string{filepath.Join(dir, "chain"), filepath.Join(dir, "linked", "rel")} {
		if err := Check(p); err != nil {
			t.Fatalf("Check(%s): %v", p, err)
		}
		if err := Write(p, []byte("new "+p)); err != nil {
			t.Fatal(err)
		}
		wantType(t, p, fs.ModeSymlink)
		wantContent(t, filepath.Join(real, "a.json"), []byte("new "+p))
	}
	// The file replaced keeps its mode.
	if st, _ := os.Stat(filepath.Join(real, "a.json")); st.Mode().Perm() != 0o640 {
		t.Errorf("replaced file's mode %v, want -rw-r----- as before", st.Mode())
	}
	if err := Write(filepath.Join(real, "dangling"), []byte("made")); err != nil {
		t.Fatal(err)
	}
	wantType(t, filepath.Join(real, "dangling"), fs.ModeSymlink)
	wantContent(t, filepath.Join(real, "b.json"), []byte("made"))
	if names, _ := filepath.Glob(filepath.Join(real, ".*")); len(names) != 0 {
		t.Errorf("files left beside the targets: %q", names)
	}

	loop := filepath.Join(dir, "loop")
	os.Symlink("loop", loop)
	if err := Check(loop); err == nil || !strings.Contains(err.Error(), "too many links") {
		t.Errorf("a link to itself: %v; want too many links", err)
	}
}

// What is not a regular file is refused at the write too, not only by
// Check: a FIFO, a directory or a link to a device that took the path
// after the check is left as it is, and Save keeps the data elsewhere.
func TestWriteRefusesWhatIsNotAFile(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	sub := filepath.Join(dir, "sub")
	dev := filepath.Join(dir, "dev")
	for _, c := range []struct {
		path, want string
		typ        fs.FileMode
		make       func() error
	}{
		{fifo, "named pipe (FIFO)", fs.ModeNamedPipe, func() error { return syscall.Mkfifo(fifo, 0o666) }},
		{sub, "is a directory", fs.ModeDir, func() error { return os.Mkdir(sub, 0o777) }},
		{dev, "character device", fs.ModeSymlink, func() error { return os.Symlink("/dev/null", dev) }},
	} {
		if err := Check(c.path); err != nil {
			t.Fatalf("Check(%s) before anything is there: %v", c.path, err)
		}
		if err := c.make(); err != nil {
			t.Fatal(err)
		}
		if err := Check(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%s): %v; want %q", c.path, err, c.want)
		}
		err := Save(c.path, []byte("figures"))
		var e *Error
		if !errors.As(err, &e) || e.Path != c.path || e.Fallback == "" || e.FallbackErr != nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("Save(%s): %v; want it refused, the data kept elsewhere", c.path, err)
		}
		wantContent(t, e.Fallback, []byte("figures"))
		if !strings.Contains(err.Error(), e.Fallback) {
			t.Errorf("the error does not name the fallback: %v", err)
		}
		wantType(t, c.path, c.typ)
	}
}

// A full disk: the file is not written, nothing is left beside it, and
// the data is kept in the user's cache.
func TestSaveDiskFull(t *testing.T) {
	dir := t.TempDir()
	unmount, err := mountSmall(dir)
	if err != nil {
		t.Skipf("cannot mount a small tmpfs (%v): TestSaveFallsBackToTemp injects the failure instead", err)
	}
	t.Cleanup(unmount)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	path := filepath.Join(dir, "run.json")
	data := bytes.Repeat([]byte("x"), 64<<10)
	if err := Check(path); err != nil {
		t.Fatalf("Check on an empty tmpfs: %v", err)
	}
	err = Save(path, data)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, syscall.ENOSPC) || e.FallbackErr != nil || !strings.HasPrefix(e.Fallback, filepath.Join(cache, "freshbench", "unsaved", "run-")) {
		t.Fatalf("Save on a full disk: %v", err)
	}
	wantContent(t, e.Fallback, data)
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("left on the full disk: %v", names)
	}
}

// With no usable cache directory the data goes to the temporary
// directory; the error names both paths.
func TestSaveFallsBackToTemp(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o666)
	t.Setenv("XDG_CACHE_HOME", notDir) // a file: no directory can be made in it
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	path := filepath.Join(notDir, "run.json") // a path under a file cannot be written
	err := Save(path, []byte("figures"))
	var e *Error
	if !errors.As(err, &e) || e.FallbackErr != nil || !strings.HasPrefix(e.Fallback, filepath.Join(tmp, "freshbench-unsaved", "run-")) {
		t.Fatalf("Save: %v; want the data kept under %s", err, tmp)
	}
	wantContent(t, e.Fallback, []byte("figures"))
	for _, want := range []string{path, e.Fallback, "not a directory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	// Nowhere to keep it: the error says so.
	t.Setenv("TMPDIR", notDir)
	err = Save(path, []byte("figures"))
	if !errors.As(err, &e) || e.FallbackErr == nil || !strings.Contains(err.Error(), "nor could it be kept in") {
		t.Errorf("Save with nowhere to keep the data: %v", err)
	}
}

// New files are made 0666 less the umask, as os.WriteFile makes them,
// the fallback too.
func TestModes(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, umask := range []int{0o022, 0o077, 0o002} {
		old := syscall.Umask(umask)
		dir := t.TempDir()
		path := filepath.Join(dir, "new", "r.json") // its directory made too
		err := Write(path, []byte("{}"))
		e := Keep(path, []byte("{}"), errors.New("test"))
		syscall.Umask(old)
		if err != nil || e.FallbackErr != nil {
			t.Fatal(err, e.FallbackErr)
		}
		want := fs.FileMode(0o666 &^ umask)
		for _, p := range []string{path, e.Fallback} {
			if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
				t.Errorf("umask %03o: %s: %v, %v; want %v", umask, p, st.Mode(), err, want)
			}
		}
		if st, _ := os.Stat(filepath.Dir(path)); st.Mode().Perm() != fs.FileMode(0o777&^umask) {
			t.Errorf("umask %03o: directory made %v", umask, st.Mode())
		}
	}
}

func TestStreamOf(t *testing.T) {
	dir := t.TempDir()
	os.Symlink("/proc/self/fd/2", filepath.Join(dir, "err"))
	regular := filepath.Join(dir, "r.json")
	os.WriteFile(regular, nil, 0o666)
	for path, want := range map[string]Stream{
		"-": Stdout, "/dev/stdout": Stdout, "/proc/self/fd/1": Stdout, "/dev/stderr": Stderr,
		regular: NoStream, filepath.Join(dir, "none.json"): NoStream, "/dev/null": NoStream,
	} {
		if got := StreamOf(path); got != want {
			t.Errorf("StreamOf(%s) = %v, want %v", path, got, want)
		}
	}
	if got := StreamOf(filepath.Join(dir, "err")); got != Stderr {
		t.Errorf("a link to /proc/self/fd/2: %v, want Stderr", got)
	}
	os.Symlink("loop", filepath.Join(dir, "loop"))
	if got := StreamOf(filepath.Join(dir, "loop")); got != NoStream {
		t.Errorf("a link to itself: %v", got)
	}
	// A link to the file standard error is (a pipe or a terminal under go
	// test) is standard error, unless standard output is the same file.
	if st, err := os.Stderr.Stat(); err == nil && !st.Mode().IsRegular() {
		if target, err := os.Readlink("/proc/self/fd/2"); err == nil && filepath.IsAbs(target) {
			os.Symlink(target, filepath.Join(dir, "tty"))
			out, _ := os.Stdout.Stat()
			if got := StreamOf(filepath.Join(dir, "tty")); got != Stderr && !(got == Stdout && os.SameFile(st, out)) {
				t.Errorf("a link to %s: %v, want Stderr", target, got)
			}
		}
	}
}

// A directory that does not take a new file fails Check; one that stops
// taking files after the check fails the write, and the data is kept.
// Root writes anywhere: the test runs as a child without the capability.
func TestReadOnlyDirectory(t *testing.T) {
	if dir := os.Getenv(unprivileged); dir != "" {
		readOnlyHelper(t, dir)
		return
	}
	if os.Getuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("root, and no setpriv to drop CAP_DAC_OVERRIDE with")
		}
		dir := t.TempDir()
		cmd := exec.Command("setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", os.Args[0], "-test.run=^TestReadOnlyDirectory$", "-test.v")
		cmd.Env = append(os.Environ(), unprivileged+"="+dir, "XDG_CACHE_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestReadOnlyDirectory") {
			t.Fatalf("unprivileged child: %v\n%s", err, out)
		}
		t.Logf("unprivileged child:\n%s", out)
		return
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	readOnlyHelper(t, t.TempDir())
}

func readOnlyHelper(t *testing.T, dir string) {
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	if err := Check(filepath.Join(ro, "r.json")); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("Check in a read-only directory: %v; want permission denied", err)
	}
	later := filepath.Join(dir, "later")
	os.Mkdir(later, 0o777)
	path := filepath.Join(later, "r.json")
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	os.Chmod(later, 0o555)
	defer os.Chmod(later, 0o777)
	err := Save(path, []byte("figures"))
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, fs.ErrPermission) || e.FallbackErr != nil {
		t.Fatalf("Save into a directory made read-only: %v", err)
	}
	wantContent(t, e.Fallback, []byte("figures"))
	t.Log(err)
}

// BenchmarkWrite is the cost of writing a results file whole and synced
// (levels and peak files are rewritten as each trial or step ends).
func BenchmarkWrite(b *testing.B) {
	for _, size := range []int{8 << 10, 1 << 20} {
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "r.json")
			data := bytes.Repeat([]byte("x"), size)
			b.SetBytes(int64(size))
			for b.Loop() {
				if err := Write(path, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
