package seed

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
	"github.com/freshbench/freshbench/target/sqlite"
)

// testConfig is a data set of n events in streams of 1000.
func testConfig(n int64) Config {
	return Config{
		Events: n, DocSize: 500, StreamEvents: 1000, BatchSize: 100, MaxInflight: 4, Parallel: 2,
		WriteTimeout: 5 * time.Second,
	}
}

// openSQLite opens an embedded database of the test's own.
func openSQLite(t *testing.T) target.Target {
	t.Helper()
	u, err := url.Parse("sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "seed.db")))
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := sqlite.Open(context.Background(), u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tgt.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	return tgt
}

func survey(t *testing.T, tgt target.Target, cfg Config) *Plan {
	t.Helper()
	p, err := Survey(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, tgt target.Target, p *Plan) *Result {
	t.Helper()
	res, err := Load(context.Background(), tgt, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkStreams fails unless every stream of the data set holds each of its
// _seq exactly once.
func checkStreams(t *testing.T, tgt target.Target, p *Plan) {
	t.Helper()
	for _, s := range p.Streams {
		seen := make([]int, s.Events)
		err := tgt.Seqs(context.Background(), s.Generator, func(seq int64) {
			if seq < 0 || seq >= s.Events {
				t.Errorf("stream %d: _seq %d outside the stream", s.Index, seq)
				return
			}
			seen[seq]++
		})
		if err != nil {
			t.Fatal(err)
		}
		for seq, n := range seen {
			if n != 1 {
				t.Errorf("stream %d: _seq %d stored %d times", s.Index, seq, n)
				break
			}
		}
	}
}

// A data set loads completely; a second seed of the same data set finds
// everything there and writes nothing.
func TestLoadThenRepeat(t *testing.T) {
	tgt := openSQLite(t)
	cfg := testConfig(2500)
	p := survey(t, tgt, cfg)
	if len(p.Streams) != 3 || p.Streams[2].Events != 500 || p.Missing != 2500 || p.Present != 0 {
		t.Fatalf("plan of an empty target: %d streams, missing %d, present %d", len(p.Streams), p.Missing, p.Present)
	}
	res := load(t, tgt, p)
	if res.Written != 2500 || res.Failed != 0 || res.Interrupted || res.Bytes < 2500*500 {
		t.Fatalf("load: %+v", res)
	}
	checkStreams(t, tgt, p)

	again := survey(t, tgt, cfg)
	if again.Missing != 0 || again.Present != 2500 || again.Beyond != 0 {
		t.Fatalf("second survey: missing %d, present %d, beyond %d; want everything present", again.Missing, again.Present, again.Beyond)
	}
	for i, s := range again.Streams {
		if s.Generator != p.Streams[i].Generator {
			t.Errorf("stream %d is generator %s, was %s", i, s.Generator, p.Streams[i].Generator)
		}
	}
	if res := load(t, tgt, again); res.Written != 0 {
		t.Errorf("a second load wrote %d events", res.Written)
	}

	// A smaller data set is part of this one; the survey says what lies
	// beyond it.
	smaller := survey(t, tgt, testConfig(1000))
	if smaller.Missing != 0 || smaller.Beyond != 1000 {
		t.Errorf("smaller data set: missing %d, beyond %d; want 0 and 1000 (the next stream)", smaller.Missing, smaller.Beyond)
	}
	if part := survey(t, tgt, testConfig(400)); part.Missing != 0 || part.Beyond != 1600 {
		t.Errorf("part of a stream: missing %d, beyond %d; want 0 and 600 + 1000", part.Missing, part.Beyond)
	}
	// Another seed is another data set.
	other := testConfig(2500)
	other.Seed = 42
	if p := survey(t, tgt, other); p.Missing != 2500 {
		t.Errorf("data set of seed 42: missing %d, want all 2500", p.Missing)
	}
}

// A stream cut short with gaps (writes in flight when a seed was killed)
// is completed exactly: the gaps are filled, nothing is written twice.
func TestResumeFillsGaps(t *testing.T) {
	tgt := openSQLite(t)
	cfg := testConfig(2500)
	// Stream 1 of the data set, written by hand: _seq 0-99 and 150-199.
	g, err := docgen.New(docgen.Config{DocSize: cfg.DocSize, Seed: DefaultSeed, Index: 1})
	if err != nil {
		t.Fatal(err)
	}
	var docs []target.Document
	for seq := range 200 {
		d, _ := g.Next(nil, time.Now().UnixMicro())
		if seq < 100 || seq >= 150 {
			docs = append(docs, d)
		}
	}
	if _, err := tgt.Write(context.Background(), target.Batch{Generator: g.ID(), Docs: docs}); err != nil {
		t.Fatal(err)
	}
	p := survey(t, tgt, cfg)
	if s := p.Streams[1]; s.Generator != g.ID() || s.Present != 150 || s.Missing() != 850 || p.Missing != 2350 {
		t.Fatalf("stream 1: generator %s (want %s), present %d, missing %d; plan missing %d",
			s.Generator, g.ID(), s.Present, s.Missing(), p.Missing)
	}
	if res := load(t, tgt, p); res.Written != 2350 || res.Failed != 0 {
		t.Fatalf("load: %+v", res)
	}
	checkStreams(t, tgt, p)
}

// Events that became visible only after the survey are written again;
// a target that refuses a second copy of an _id reports them, and the load
// counts them as already there instead of failing.
func TestStaleSurvey(t *testing.T) {
	tgt := openSQLite(t)
	cfg := testConfig(1500)
	p := survey(t, tgt, cfg)
	g, err := docgen.New(docgen.Config{DocSize: cfg.DocSize, Seed: DefaultSeed, Index: 0})
	if err != nil {
		t.Fatal(err)
	}
	var docs []target.Document
	for range 120 {
		d, _ := g.Next(nil, time.Now().UnixMicro())
		docs = append(docs, d)
	}
	if _, err := tgt.Write(context.Background(), target.Batch{Generator: g.ID(), Docs: docs}); err != nil {
		t.Fatal(err)
	}
	res := load(t, tgt, p)
	if res.Written != 1500-120 || res.Duplicates != 120 || res.Failed != 0 {
		t.Fatalf("load after a stale survey: %+v", res)
	}
	checkStreams(t, tgt, p)
}

// Interrupted, a load keeps what was acknowledged; the next survey finds
// exactly that, and the next load writes the rest.
func TestInterruptedLoadResumes(t *testing.T) {
	tgt := sim.New(sim.Config{WriteDelay: 20 * time.Millisecond}) // 4 × 100 events per 20 ms: about 1 s for the set
	cfg := testConfig(20000)
	cfg.StreamEvents = 5000
	p := survey(t, tgt, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	first, err := Load(ctx, tgt, p)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Interrupted || first.Written == 0 || first.Written >= 20000 || first.Failed != 0 {
		t.Fatalf("interrupted load: %+v", first)
	}
	again := survey(t, tgt, cfg)
	if again.Present != first.Written || again.Missing != 20000-first.Written {
		t.Fatalf("after %d written: present %d, missing %d", first.Written, again.Present, again.Missing)
	}
	second := load(t, tgt, again)
	if second.Written != again.Missing {
		t.Fatalf("resumed load wrote %d, want %d", second.Written, again.Missing)
	}
	checkStreams(t, tgt, again)
	n, err := WaitVisible(context.Background(), tgt, again, time.Second, 10*time.Millisecond)
	if err != nil || n != 20000 {
		t.Errorf("visible %d (%v), want 20000", n, err)
	}
}

// A write that fails for good stops the load, with an error that says so;
// only the batches already in flight were tried.
func TestLoadStopsOnFailedWrite(t *testing.T) {
	tgt := openSQLite(t)
	cfg := testConfig(5000)
	cfg.WriteRetries = 1
	p := survey(t, tgt, cfg)
	tgt.Close() // every write now fails as a whole
	res, err := Load(context.Background(), tgt, p)
	if !errors.Is(err, ErrWriteFailed) {
		t.Fatalf("error %v, want ErrWriteFailed", err)
	}
	if res.Written != 0 || res.Failed == 0 || res.Failed > int64(cfg.MaxInflight*cfg.BatchSize) || len(res.Errors) == 0 {
		t.Errorf("result %+v: want failures of at most the %d batches in flight", res, cfg.MaxInflight)
	}
	if res.Retries == 0 {
		t.Error("no retries counted")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Events = 0 }, "events 0"},
		{func(c *Config) { c.DocSize = 10 }, "document size 10: want 400..1000000 bytes"},
		{func(c *Config) { c.BatchSize = 0 }, "batch size 0"},
		{func(c *Config) { c.MaxInflight = 0 }, "in-flight bound 0"},
		{func(c *Config) { c.Parallel = 0 }, "parallel streams 0"},
		{func(c *Config) { c.WriteRetries = -1 }, "write retries -1"},
	} {
		cfg := testConfig(10)
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q…", cfg, err, c.want)
		}
	}
}
