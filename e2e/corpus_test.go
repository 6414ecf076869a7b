package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/freshbench/freshbench/corpus"
	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/workload"
)

// corpusLinesEnv sets the size of the replayed corpus. Issue 30's
// acceptance is 100,000 of the project's own generator's 1 KB events (the
// RockBench sample's shape) without their head, a corpus that the study's
// queries find rows in: FRESHBENCH_TEST_CORPUS_LINES=100000 runs it. The
// test command replays 10,000 (corpusLinesDefault), 10 batches of 1,000:
// every claim of the test (each line acknowledged and found once, over
// many batches; freshness and visibility measured; the queries answered
// with rows) holds or fails for 10,000 as for 100,000, and a starved
// search engine takes 200–300 events/s (a busy round), so each of the
// three took 75–110 s for 20,000.
const (
	corpusLinesEnv     = "FRESHBENCH_TEST_CORPUS_LINES"
	corpusLinesDefault = 10_000
)

// corpusLines returns the size of the corpus to replay, at least 10
// batches of corpusBatch.
func corpusLines(t *testing.T) int {
	t.Helper()
	raw := os.Getenv(corpusLinesEnv)
	if raw == "" {
		return corpusLinesDefault
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 10*corpusBatch {
		t.Fatalf("%s=%q: want a whole number of lines, at least %d (10 batches), e.g. 100000", corpusLinesEnv, raw, 10*corpusBatch)
	}
	return n
}

// corpusSeconds and corpusBatch replay the corpus in about 5 s where the
// server keeps up (at 20,000 events/s for 100,000 lines, 2,000 for
// 10,000), long enough past the 1 s warm-up for the queries, freshness
// polls and probes to be measured beside it; a server that does not keep
// up is given the rate halved (testenv.LowerRate).
const (
	corpusSeconds = 5
	corpusBatch   = 1000
)

// writeCorpus writes the corpus once, zstd-compressed, so that the replay
// streams it through the decompressor as a user's compressed corpus is.
func writeCorpus(t *testing.T, lines int) string {
	t.Helper()
	g, err := docgen.New(docgen.Config{DocSize: 1000 + docgen.HeadSize, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "corpus.jsonl.zst")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(z, 1<<20)
	var buf []byte
	for range lines {
		var d target.Document
		d, buf = g.Next(buf[:0], 0)
		seq := bytes.Index(d.JSON, []byte(`"_seq":`))
		w.WriteByte('{')
		w.Write(d.JSON[seq+bytes.IndexByte(d.JSON[seq:], ',')+1:])
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// A corpus of 10,000 events (100,000 with FRESHBENCH_TEST_CORPUS_LINES,
// the acceptance's) replayed once into each database arrives
// whole: every line acknowledged and visible, none twice, none
// unexpected; freshness and visibility are measured; and the 20K-QPS
// study's two queries, written as queries of one's own (the qps-20k-own
// preset), run beside the ingest and find rows.
//
// The replay asks for a fifth of the corpus a second (20,000 events/s for
// 100,000) in batches of 1,000 and ends with
// the corpus: each server takes it as fast as it can, and where that is
// below the rate asked the freshness lag and visibility include the
// backlog (events carry their intended time). The test holds that they
// are measured, not what they are. A server starved on a busy machine
// may fail writes or not get through the corpus before the run's bound;
// that is the machine's state, and the replay is tried again into a new
// table at half the rate (testenv.LowerRate) before the test holds it to
// the corpus.
func TestCorpusReplayWithOwnQueries(t *testing.T) {
	lines := corpusLines(t)
	file := writeCorpus(t, lines)
	rate := float64(lines) / corpusSeconds
	preset, err := workload.Preset("qps-20k-own")
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "c.db") },
		"questdb": func(t *testing.T) string {
			return withName(t, testenv.URL(t, questdbEnv, "scripts/questdb.sh"), "corpus")
		},
	}
	for _, s := range servers {
		urls[s.name] = func(t *testing.T) string { return withName(t, serverURL(t, s.name), "corpus") }
	}
	for _, name := range []string{"sqlite", "postgres", "elasticsearch", "opensearch", "opensearch3", "questdb"} {
		t.Run(name, func(t *testing.T) {
			var settings map[string]string
			if name == "elasticsearch" || name == "opensearch" || name == "opensearch3" {
				settings = map[string]string{"refresh_interval": "200ms"}
			}
			var res *results.Result
			testenv.LowerRate(t, rate, rate/4, func(rate float64) string {
				start := time.Now()
				res = replayCorpus(t, open(t, urls[name](t), settings), file, preset.Queries, rate)
				var acked, failed, unsent int64
				for _, p := range res.Phases {
					acked, failed, unsent = acked+p.Acked, failed+p.Failed, unsent+p.Unsent
				}
				t.Logf("%d events acknowledged in %.1f s, run and audit", acked, time.Since(start).Seconds())
				if failed+unsent > 0 {
					return fmt.Sprintf("%d events failed and %d unsent (%v)", failed, unsent, res.Summary.Errors)
				}
				return ""
			})
			checkCorpusReplay(t, res, lines)
		})
	}
}

// replayCorpus replays file once into tgt at rate events/s, with the
// queries own beside it.
func replayCorpus(t *testing.T, tgt target.Target, file string, own []query.Own, rate float64) *results.Result {
	t.Helper()
	if l, ok := tgt.(target.Layouter); !ok || !strings.Contains(l.Layout(), "mapped") && !strings.Contains(l.Layout(), "column doc") {
		t.Errorf("%s does not say what it created for the events", tgt.Name())
	} else {
		t.Logf("layout: %s", l.Layout())
	}
	c, err := corpus.Open([]string{file}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The corpus ends the run; the duration only bounds a server that
	// does not keep up. Two batches in flight keep a server busy, where
	// eight of 1,000 events queued in a starved one past the write
	// timeout (a busy round: Elasticsearch took 300 events/s, its bulk
	// requests answered in 30–85 s, half of them after the client gave
	// up, at every rate the test tried).
	cfg := config(rate, 5*time.Minute, 100*time.Millisecond)
	cfg.Ingest.Corpus = c
	cfg.Ingest.BatchSize = corpusBatch
	cfg.Ingest.MaxInflight = 2
	cfg.Ingest.WriteTimeout = 30 * time.Second
	cfg.Queries = &query.Config{
		Mix: query.Mix{{Kind: "by-worker", Weight: 1}, {Kind: "by-email", Weight: 1}}, Own: own,
		QPS: 5, MaxInflight: 4, Limit: 10, Timeout: 30 * time.Second, Settle: time.Second, Seed: 5,
	}
	return run(t, tgt, cfg)
}

// checkCorpusReplay holds a replay of a whole corpus of lines to it: every
// line acknowledged and found once by the audit, freshness and visibility
// measured, the preset's two queries answered with rows.
func checkCorpusReplay(t *testing.T, res *results.Result, lines int) {
	t.Helper()
	var acked, visible, missing, unexpected, dups int64
	for _, cp := range res.Target().Completeness {
		acked, visible, missing = acked+cp.Acknowledged, visible+cp.Visible, missing+cp.Missing
		unexpected, dups = unexpected+cp.Unexpected, dups+cp.Duplicates
	}
	if acked != int64(lines) || visible != int64(lines) || missing+unexpected+dups != 0 {
		t.Errorf("acknowledged %d, visible %d, missing %d, unexpected %d, duplicates %d; want all %d lines once",
			acked, visible, missing, unexpected, dups, lines)
	}
	var dispatched, phaseAcked, failed, unsent int64
	for _, p := range res.Phases {
		dispatched, phaseAcked, failed, unsent = dispatched+p.Dispatched, phaseAcked+p.Acked, failed+p.Failed, unsent+p.Unsent
	}
	if dispatched != int64(lines) || phaseAcked+failed != dispatched || unsent != 0 {
		t.Errorf("accounting: %d dispatched, %d acknowledged, %d failed, %d unsent; want the %d lines dispatched and each acknowledged",
			dispatched, phaseAcked, failed, unsent, lines)
	}
	if cp := res.Config.Corpus; cp == nil || cp.Replayed != int64(lines) || cp.Passes != 1 || cp.AtEnd != "stop" {
		t.Errorf("results say of the corpus %+v, want %d lines replayed once, stopping at its end", cp, lines)
	}
	if res.Summary.VisibilityLatency.Count == 0 || res.Summary.FreshnessLag.Count == 0 {
		t.Errorf("visibility %d probes, freshness %d polls: want both measured", res.Summary.VisibilityLatency.Count, res.Summary.FreshnessLag.Count)
	}
	if res.Target().Queries == nil || len(res.Target().Queries.Kinds) != 2 {
		t.Fatalf("queries %+v, want the preset's two", res.Target().Queries)
	}
	for _, k := range res.Target().Queries.Kinds {
		t.Logf("%s: %d queries, %d rows, %d failed, latency p50 %.1f ms p99 %.1f ms", k.Kind, k.Queries, k.Rows, k.Failed, k.Latency.P50Ms, k.Latency.P99Ms)
		if k.Queries == 0 || k.Failed != 0 || k.Rows == 0 {
			t.Errorf("%s: %d queries, %d failed, %d rows; want answers with rows", k.Kind, k.Queries, k.Failed, k.Rows)
		}
	}
}
