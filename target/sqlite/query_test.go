package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/query/querytest"
	"github.com/freshbench/freshbench/target"
)

func TestQueries(t *testing.T) {
	tgt := open(t, filepath.Join(t.TempDir(), "q.db"), target.Options{})
	if err := tgt.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	querytest.Check(t, tgt, "g1")
}

// The shipped point lookup and aggregation must use the indexes that
// SetupQueries creates: their text has to repeat the indexed expression
// exactly, which a plan shows.
func TestQueriesUseTheIndexes(t *testing.T) {
	ctx := context.Background()
	tgt := open(t, filepath.Join(t.TempDir(), "q.db"), target.Options{}).(*Target)
	if err := tgt.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tgt.SetupQueries(ctx); err != nil {
		t.Fatal(err)
	}
	for kind, index := range map[target.QueryKind]string{
		target.QueryPoint:     "freshbench_events_processby",
		target.QueryAggregate: "freshbench_events_company",
		target.QueryNewest:    "freshbench_events_gen_time",
		target.QueryBucket:    "COVERING INDEX freshbench_events_gen_time",
	} {
		q := querytest.KindQuery(t, "sqlite", kind, "v", 10).Statement
		rows, err := tgt.readers.QueryContext(ctx, "EXPLAIN QUERY PLAN "+strings.ReplaceAll(q.Text, "{table}", tgt.table), q.Args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if !strings.Contains(strings.Join(plan, "\n"), index) {
			t.Errorf("%s: plan does not use %s:\n%s", kind, index, strings.Join(plan, "\n"))
		}
	}
}

// Beside an ingest, the workload draws its parameters from what the
// ingest wrote, so every lookup of a written value finds rows; the query
// figures and the freshness lag land in one result.
func TestQueriesBesideIngest(t *testing.T) { synctest.Test(t, testQueriesBesideIngest) }

func testQueriesBesideIngest(t *testing.T) {
	ctx := context.Background()
	tgt := open(t, filepath.Join(t.TempDir(), "q.db"), target.Options{})
	if err := tgt.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tgt.(target.Querier).SetupQueries(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := bench.Run(ctx, tgt, bench.Config{
		Ingest: ingest.Config{
			Rate: pace.Rate{PerSecond: 500, Unit: pace.Events}, BatchSize: 10, Duration: 3 * time.Second, Warmup: time.Second,
			Generators: 1, MaxInflight: 4, DocSize: 1000, Seed: 5, WriteTimeout: 5 * time.Second,
		},
		PollInterval: 100 * time.Millisecond, Drain: time.Second,
		Queries: &query.Config{
			Mix: query.DefaultMix(), QPS: 40, MaxInflight: 16, Limit: 10,
			Timeout: 5 * time.Second, Settle: 200 * time.Millisecond, SampleSize: 100, Seed: 5,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := res.Target().Queries
	if q == nil || q.Total.Queries < 60 {
		t.Fatalf("query results %+v, want about 80 queries", q)
	}
	if q.WaitedS > 0.5 {
		t.Errorf("first query %.2f s after the start, want within the settle time", q.WaitedS)
	}
	for _, k := range q.Kinds {
		if k.Failed != 0 || k.Empty != 0 || k.Queries == 0 {
			t.Errorf("%s: %d queries, %d failed, %d empty results (%v); want every lookup to hit", k.Kind, k.Queries, k.Failed, k.Empty, k.Errors)
		}
		if !strings.HasPrefix(k.Text, "SELECT ") {
			t.Errorf("%s: query text %q", k.Kind, k.Text)
		}
	}
	if b := q.Beside; b == nil || b.FreshnessLag.Count == 0 || b.AchievedEventsPerSec < 400 {
		t.Errorf("beside ingest %+v, want the ingest's figures", b)
	}
	var queries int64
	for _, p := range res.Series {
		queries += p.QueryCount
	}
	if queries < q.Total.Queries {
		t.Errorf("series holds %d queries, the measured window alone %d", queries, q.Total.Queries)
	}
}
