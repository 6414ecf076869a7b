package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/corpus"
	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/workload"
)

// corpusLines is the size of the replayed corpus: the project's own
// generator's 1 KB events without their head, a corpus that the study's
// queries find rows in. (The 100,000 events would take 100 s per
// server at this rate; the test keeps to a few seconds on a shared
// machine.)
const corpusLines = 5000

func writeCorpus(t *testing.T) string {
	t.Helper()
	g, err := docgen.New(docgen.Config{DocSize: 1000 + docgen.HeadSize, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for range corpusLines {
		d, _ := g.Next(nil, 0)
		seq := bytes.Index(d.JSON, []byte(`"_seq":`))
		b.WriteByte('{')
		b.Write(d.JSON[seq+bytes.IndexByte(d.JSON[seq:], ',')+1:])
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A corpus replayed once into each database arrives whole: every line
// acknowledged and visible, none twice, none unexpected; freshness and
// visibility are measured; and the 20K-QPS study's two queries, written
// as queries of one's own (the qps-20k-own preset), run beside the ingest
// and find rows.
func TestCorpusReplayWithOwnQueries(t *testing.T) {
	file := writeCorpus(t)
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
			tgt := open(t, urls[name](t), settings)
			if l, ok := tgt.(target.Layouter); !ok || !strings.Contains(l.Layout(), "mapped") && !strings.Contains(l.Layout(), "column doc") {
				t.Errorf("%s does not say what it created for the events", name)
			} else {
				t.Logf("layout: %s", l.Layout())
			}
			c, err := corpus.Open([]string{file}, false)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// The corpus ends the run, at 5 s when the server keeps up;
			// the duration only bounds a server that does not.
			cfg := config(1000, 2*time.Minute, 100*time.Millisecond)
			cfg.Ingest.Corpus = c
			cfg.Ingest.WriteTimeout = 30 * time.Second
			cfg.Queries = &query.Config{
				Mix: query.Mix{{Kind: "by-worker", Weight: 1}, {Kind: "by-email", Weight: 1}}, Own: preset.Queries,
				QPS: 20, MaxInflight: 8, Limit: 10, Timeout: 10 * time.Second, Settle: time.Second, Seed: 5,
			}
			res := run(t, tgt, cfg)
			var acked, visible, missing, unexpected, dups int64
			for _, cp := range res.Target().Completeness {
				acked, visible, missing = acked+cp.Acknowledged, visible+cp.Visible, missing+cp.Missing
				unexpected, dups = unexpected+cp.Unexpected, dups+cp.Duplicates
			}
			if acked != corpusLines || visible != corpusLines || missing+unexpected+dups != 0 {
				t.Errorf("acknowledged %d, visible %d, missing %d, unexpected %d, duplicates %d; want all %d lines once",
					acked, visible, missing, unexpected, dups, corpusLines)
			}
			if cp := res.Config.Corpus; cp == nil || cp.Replayed != corpusLines || cp.Passes != 1 {
				t.Errorf("results say of the corpus %+v, want %d lines replayed once", cp, corpusLines)
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
		})
	}
}
