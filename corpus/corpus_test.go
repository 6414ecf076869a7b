package corpus

import (
	"bytes"
	"compress/gzip"
	"fmt"
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
// sending a line that was never checked.
func TestReadErrorEndsReplay(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "a.jsonl.gz", "{\"a\":1}\n")
	c, err := Open([]string{p}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("not gzip"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.AppendNext(nil); ok {
		t.Fatal("read a line from a file that is no longer gzip")
	}
	if c.Err() == nil || !strings.Contains(c.Err().Error(), p) {
		t.Fatalf("Err() = %v, want the file named", c.Err())
	}
}

// The corpus is streamed, never loaded: checking and replaying a corpus
// of 32 MB keeps the heap within a few read buffers of where it began.
func TestStreamedNotLoaded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte("{\"t\":\"" + strings.Repeat("x", 1000) + "\"}\n")
	const lines = 32 << 10
	for range lines {
		f.Write(line)
	}
	f.Close()
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
	if grew := int64(peak) - int64(before); grew > 8<<20 {
		t.Fatalf("the heap grew by %d MB halfway through a 32 MB corpus, want a few read buffers", grew>>20)
	}
}
