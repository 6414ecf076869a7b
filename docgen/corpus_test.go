package docgen

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/freshbench/freshbench/corpus"
	"github.com/freshbench/freshbench/corpus/corpustest"
)

func openCorpus(t testing.TB, text string, loop bool) *corpus.Corpus {
	t.Helper()
	return corpustest.Open(t, "c.jsonl", []byte(text), loop)
}

// A corpus line goes out as it is, with the head stamped in front of its
// members; an update carries _revision and _update_time; the end of the
// corpus gives no document and leaves _seq where it was.
func TestCorpusEvents(t *testing.T) {
	c := openCorpus(t, "{\"user\":\"ann\",\"n\":[1,{\"x\":null}]}\n{}\n{\"user\":\"bob\"}\n", false)
	g, err := New(Config{Corpus: c, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	type event struct {
		ID        string `json:"_id"`
		EventTime int64  `json:"_event_time"`
		Generator string `json:"generator_identifier"`
		Seq       int64  `json:"_seq"`
		Revision  int64  `json:"_revision"`
		Update    int64  `json:"_update_time"`
		User      string `json:"user"`
	}
	var got []event
	for i := range 2 {
		d, b := g.Next(buf, int64(100+i))
		buf = b
		var e event
		if err := json.Unmarshal(d.JSON, &e); err != nil {
			t.Fatalf("event %d %s: %v", i, d.JSON, err)
		}
		if e.ID != d.ID || e.Seq != d.Seq || e.EventTime != d.EventTime || e.Generator != g.ID() {
			t.Fatalf("event %s does not carry its document's head %+v", d.JSON, d)
		}
		got = append(got, e)
	}
	if got[0].User != "ann" || got[0].Seq != 0 || got[1].Seq != 1 || got[1].EventTime != 101 {
		t.Fatalf("events %+v, want ann at _seq 0 and {} at _seq 1", got)
	}
	if d, _ := g.Next(nil, 102); !strings.Contains(string(d.JSON), `"_seq":2,"user":"bob"}`) {
		t.Fatalf("third event %s, want bob's at _seq 2", d.JSON)
	}
	d, _ := g.Revise(nil, Key{ID: got[0].ID, Seq: 0, EventTime: 100}, 1, 200)
	if d.JSON != nil {
		t.Fatalf("a revision after the end of the corpus: %s", d.JSON)
	}
	if d, b := g.Next(buf[:0], 300); d.JSON != nil || len(b) != 0 {
		t.Fatalf("Next after the end gave %q, buffer %q", d.JSON, b)
	}
	if g.Seq() != 3 {
		t.Fatalf("_seq %d after three events, want 3", g.Seq())
	}
}

// A revision takes the corpus's next line as its new payload.
func TestCorpusRevision(t *testing.T) {
	c := openCorpus(t, "{\"v\":1}\n{\"v\":2}\n", false)
	g, err := New(Config{Corpus: c, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := g.Next(nil, 100)
	r, _ := g.Revise(nil, Key{ID: d.ID, Seq: d.Seq, EventTime: d.EventTime}, 1, 200)
	var e map[string]any
	if err := json.Unmarshal(r.JSON, &e); err != nil {
		t.Fatal(err)
	}
	if e["_id"] != d.ID || e["_revision"] != 1.0 || e["_update_time"] != 200.0 || e["v"] != 2.0 || e["_event_time"] != 100.0 {
		t.Fatalf("revision %s of %s", r.JSON, d.JSON)
	}
}

// BenchmarkCorpus1KB replays lines of about 1000 bytes (this package's
// own documents without their head) from a file, looping.
func BenchmarkCorpus1KB(b *testing.B) { benchmarkCorpus(b, "") }

// The same lines compressed: decompression is part of the replay.
func BenchmarkCorpus1KBGzip(b *testing.B) { benchmarkCorpus(b, ".gz") }
func BenchmarkCorpus1KBZstd(b *testing.B) { benchmarkCorpus(b, ".zst") }

func benchmarkCorpus(b *testing.B, suffix string) {
	src, err := New(Config{DocSize: 1000 + HeadSize, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	var text bytes.Buffer
	var mean int
	const lines = 10_000
	for range lines {
		d, _ := src.Next(nil, 1_700_000_000_000_000)
		seq := bytes.Index(d.JSON, []byte(`"_seq":`))
		body := d.JSON[seq+bytes.IndexByte(d.JSON[seq:], ',')+1:]
		text.WriteString("{")
		text.Write(body)
		text.WriteString("\n")
		mean += len(body) + 1
	}
	b.Logf("mean line %d bytes", mean/lines)
	data := text.Bytes()
	switch suffix {
	case ".gz":
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(data)
		w.Close()
		data = z.Bytes()
	case ".zst":
		w, err := zstd.NewWriter(nil)
		if err != nil {
			b.Fatal(err)
		}
		data = w.EncodeAll(data, nil)
	}
	c := corpustest.Open(b, "c.jsonl"+suffix, data, true)
	benchmarkNextConfig(b, Config{Corpus: c, Seed: 1})
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
