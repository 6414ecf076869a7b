package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/corpus"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

// A run that ends with its corpus ends its queries there too, instead of
// querying on to the duration it was given as a bound.
func TestQueriesEndWithTheCorpus(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "{\"processBy\":\"w%d\",\"emails\":[\"e%d@x.invalid\"],\"company\":\"c%d\"}\n", i%10, i, i%3)
	}
	p := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		c, err := corpus.Open([]string{p}, false)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cfg := simConfig(time.Minute) // 2000 events/s: the corpus ends at 1 s
		cfg.Ingest.Corpus = c
		cfg.Queries = &query.Config{Mix: query.Mix{{Kind: target.QueryNewest, Weight: 1}}, QPS: 20, MaxInflight: 8, Limit: 10, Timeout: time.Second, Settle: 100 * time.Millisecond}
		start := time.Now()
		res, err := Run(context.Background(), sim.New(sim.Config{}), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Target().Queries == nil || res.Target().Queries.MeasuredS > 5 || time.Since(start) > 30*time.Second {
			t.Fatalf("queries measured over %v s, the run took %s: want them ended with the corpus, at about 1 s", res.Target().Queries.MeasuredS, time.Since(start))
		}
	})
}
