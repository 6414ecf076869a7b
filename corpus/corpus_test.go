package corpus

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/freshbench/freshbench/invalid"
)

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	var data []byte
	switch {
	case strings.HasSuffix(name, ".gz"):
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		z.Write([]byte(text))
		z.Close()
		data = b.Bytes()
	case strings.HasSuffix(name, ".zst"):
		z, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		data = z.EncodeAll([]byte(text), nil)
	default:
		data = []byte(text)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// drain takes every line of one pass (the corpus must not loop).
func drain(t *testing.T, c *Corpus) []string {
	t.Helper()
	var got []string
	for {
		b, ok := c.AppendNext(nil)
		if !ok {
			break
		}
		got = append(got, string(b))
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// A directory is its files by name, each plain, gzip or zstd; blank lines
// are skipped and each line comes out as its object's members.
func TestReplayInOrderAcrossFormats(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "b.jsonl.gz", "{\"n\":2}\n\n{\"n\":3,\"_id_not\":1}\n")
	write(t, dir, "c.jsonl.zst", "{\"n\":4,\"o\":{\"_id\":\"nested ids are the user's\"}}")
	write(t, dir, "a.jsonl", "  { \"n\" : 1 }  \r\n{}\n")
	c, err := Open([]string{dir}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := []string{`"n" : 1`, ``, `"n":2`, `"n":3,"_id_not":1`, `"n":4,"o":{"_id":"nested ids are the user's"}`}
	if got := drain(t, c); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("replayed %q, want %q", got, want)
	}
	if c.Lines() != 5 {
		t.Fatalf("%d lines, want 5", c.Lines())
	}
	if taken, passes := c.Passes(); taken != 5 || passes != 1 {
		t.Fatalf("taken %d in %v passes, want 5 in 1", taken, passes)
	}
	if _, ok := c.AppendNext(nil); ok {
		t.Fatal("a corpus that does not loop gave a line after its end")
	}
}

// A looping corpus starts over and says how many passes it made.
func TestLoop(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "a.jsonl", "{\"n\":1}\n{\"n\":2}\n")
	c, err := Open([]string{p}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []string
	for range 5 {
		b, ok := c.AppendNext(nil)
		if !ok {
			t.Fatal("a looping corpus ended")
		}
		got = append(got, string(b))
	}
	if want := `["n":1 "n":2 "n":1 "n":2 "n":1]`; fmt.Sprint(got) != want {
		t.Fatalf("replayed %v, want %v", got, want)
	}
	if taken, passes := c.Passes(); taken != 5 || passes != 2.5 {
		t.Fatalf("taken %d in %v passes, want 5 in 2.5", taken, passes)
	}
}

// A line longer than the read buffer is read whole.
func TestLongLine(t *testing.T) {
	long := strings.Repeat("x", 3*readBuffer)
	p := write(t, t.TempDir(), "a.jsonl", "{\"a\":1}\n{\"t\":\""+long+"\"}\n{\"b\":2}")
	c, err := Open([]string{p}, false)
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, c)
	if len(got) != 3 || got[1] != `"t":"`+long+`"` || got[2] != `"b":2` {
		t.Fatalf("lines of %d, want 3 with the long one whole", len(got))
	}
}

// Every bad corpus is refused up front in one line naming the file, the
// line and the fix.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"array", "{\"a\":1}\n[1,2]\n", "line 2: not a JSON object"},
		{"scalar", "\n\n\"x\"\n", "line 3: not a JSON object"},
		{"broken", "{\"a\":1}\n{\"a\":\n", "line 2: not valid JSON"},
		{"trailing", "{\"a\":1} {\"b\":2}\n", "line 1: not valid JSON"},
		{"id", "{\"a\":{\"x\":1},\"_id\":\"u1\"}\n", `line 1: carries the field "_id", which freshbench stamps`},
		{"seq escaped", "{\"a\":1}\n{\"_s\\u0065q\":3}\n", `line 2: carries the field "_seq"`},
		{"update time", "{\"_update_time\":3}\n", `line 1: carries the field "_update_time"`},
		{"generator", "{\"generator_identifier\":\"g\"}\n", `"generator_identifier"`},
		{"empty", "\n\n", "at least one JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, t.TempDir(), "c.jsonl.gz", tc.text)
			_, err := Open([]string{p}, false)
			if err == nil {
				t.Fatal("accepted")
			}
			if _, ok := invalid.As(err); !ok {
				t.Fatalf("%v: not the user's to fix (invalid.Error)", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q, want one line with %q", msg, tc.want)
			}
			if tc.name != "empty" && !strings.Contains(msg, p) {
				t.Fatalf("error %q does not name the file %s", msg, p)
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Open([]string{filepath.Join(t.TempDir(), "nope.jsonl")}, false)
	if _, ok := invalid.As(err); !ok || !strings.Contains(err.Error(), "nope.jsonl") {
		t.Fatalf("error %v, want an invalid.Error naming the file", err)
	}
}

// A file that changed after Open ends the replay with an error instead of
// sending a line that was never checked, also when its decompressor is
// one kept from an earlier file (b, after a).
func TestReadErrorEndsReplay(t *testing.T) {
	for _, suffix := range []string{".gz", ".zst"} {
		t.Run(suffix, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.jsonl"+suffix, "{\"a\":1}\n")
			p := write(t, dir, "b.jsonl"+suffix, "{\"b\":1}\n")
			c, err := Open([]string{dir}, true)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := os.WriteFile(p, []byte("not compressed at all"), 0o600); err != nil {
				t.Fatal(err)
			}
			if b, ok := c.AppendNext(nil); !ok || string(b) != `"a":1` {
				t.Fatalf("first line %q, %v: want a's", b, c.Err())
			}
			if b, ok := c.AppendNext(nil); ok {
				t.Fatalf("read %q from a file that is no longer %s", b, suffix)
			}
			if c.Err() == nil || !strings.Contains(c.Err().Error(), p) {
				t.Fatalf("Err() = %v, want the file named", c.Err())
			}
		})
	}
}

// The corpus is streamed, never loaded: checking and replaying a corpus
// of 32 MB, plain or compressed, keeps the heap within a few read buffers
// of where it began, and for zstd the window its frame declares.
func TestStreamedNotLoaded(t *testing.T) {
	for _, suffix := range []string{"", ".gz", ".zst"} {
		t.Run("jsonl"+suffix, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "big.jsonl"+suffix)
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			var w io.WriteCloser = f
			switch suffix {
			case ".gz":
				w = gzip.NewWriter(f)
			case ".zst":
				if w, err = zstd.NewWriter(f); err != nil {
					t.Fatal(err)
				}
			}
			line := []byte("{\"t\":\"" + strings.Repeat("x", 1000) + "\"}\n")
			const lines = 32 << 10
			for range lines {
				w.Write(line)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			var window uint64
			if suffix == ".zst" {
				head, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				var h zstd.Header
				if err := h.Decode(head); err != nil {
					t.Fatal(err)
				}
				window = h.WindowSize
			}
			heap := func() uint64 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				return m.HeapAlloc
			}
			before := heap()
			c, err := Open([]string{p}, false)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var peak uint64
			buf := make([]byte, 0, 2048)
			for i := 0; ; i++ {
				var ok bool
				if buf, ok = c.AppendNext(buf[:0]); !ok {
					break
				}
				if i == lines/2 {
					peak = heap()
				}
			}
			if taken, _ := c.Passes(); taken != lines {
				t.Fatalf("replayed %d lines, want %d", taken, lines)
			}
			grew := int64(peak) - int64(before)
			t.Logf("the heap grew by %.1f MB halfway; zstd window %d MB", float64(grew)/1e6, window>>20)
			if bound := int64(8<<20 + window); grew > bound {
				t.Fatalf("the heap grew by %d MB halfway through a 32 MB corpus, want a few read buffers and the %d MB window", grew>>20, window>>20)
			}
		})
	}
}

// A looping corpus keeps its read buffers and decompressors from file to
// file and pass to pass: a pass over a short compressed corpus allocates
// a few bytes for each file it opens, not a decompressor's buffers (a
// zstd decoder made anew is megabytes of window, a read buffer 1 MiB);
// and the lines come out in order on every pass.
func TestLoopReusesReaders(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.jsonl.zst", "{\"n\":1}\n{\"n\":2}\n")
	write(t, dir, "b.jsonl.gz", "{\"n\":3}\n")
	write(t, dir, "c.jsonl", "{\"n\":4}\n")
	write(t, dir, "d.jsonl.zst", "{\"n\":5}\n")
	c, err := Open([]string{dir}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 0, 64)
	var got []byte
	pass := func() {
		got = got[:0]
		for range c.Lines() {
			var ok bool
			if buf, ok = c.AppendNext(buf[:0]); !ok {
				t.Fatalf("a looping corpus ended: %v", c.Err())
			}
			got = append(append(got, buf...), ' ')
		}
	}
	got = make([]byte, 0, 64)
	pass() // the first pass makes the readers
	allocated := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.TotalAlloc
	}
	const passes = 10
	before := allocated()
	for range passes {
		pass()
		if want := `"n":1 "n":2 "n":3 "n":4 "n":5 `; string(got) != want {
			t.Fatalf("pass %q, want %q", got, want)
		}
	}
	if per := (allocated() - before) / passes; per > readBuffer/4 {
		t.Fatalf("%d KiB allocated a pass over 4 small files, want the readers kept (a read buffer is %d KiB)", per>>10, readBuffer>>10)
	}
}

// Head reads the first events across the files, each whole, apart from
// the replay: the replay then starts at the first line still; a head
// longer than the corpus is the whole corpus; a head is cut at the line
// that takes it over its bytes, but holds one line at least.
func TestHead(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.jsonl.gz", "{\"n\":1}\n\n{\"n\":2}\n")
	write(t, dir, "b.jsonl", "{\"n\":3}\n{\"n\":4}\n")
	c, err := Open([]string{dir}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if b, ok := c.AppendNext(nil); !ok || string(b) != `"n":1` {
		t.Fatalf("first line %q, %v", b, ok)
	}
	for n, want := range map[int]string{0: "[]", 1: `[{"n":1}]`, 3: `[{"n":1} {"n":2} {"n":3}]`, 9: `[{"n":1} {"n":2} {"n":3} {"n":4}]`} {
		head, err := c.Head(n, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%s", head); got != want {
			t.Errorf("head %d: %s, want %s", n, got, want)
		}
	}
	for max, want := range map[int64]string{1: `[{"n":1}]`, 14: `[{"n":1} {"n":2}]`, 15: `[{"n":1} {"n":2}]`, 21: `[{"n":1} {"n":2} {"n":3}]`} {
		head, err := c.Head(9, max)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%s", head); got != want {
			t.Errorf("head of at most %d bytes: %s, want %s", max, got, want)
		}
	}
	if got, want := drain(t, c), []string{`"n":2`, `"n":3`, `"n":4`}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the replay after the heads: %q, want %q", got, want)
	}
}
