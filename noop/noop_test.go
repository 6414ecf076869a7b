package noop

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
	"github.com/freshbench/freshbench/target/sim"
)

// start runs a server on loopback for the test.
func start(t *testing.T) *Server {
	t.Helper()
	s, err := Start(Config{HTTPAddr: "127.0.0.1:0", PostgresAddr: "127.0.0.1:0", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// open opens and sets up freshbench's own target at url, recreated.
func open(t *testing.T, ctx context.Context, url string, set map[string]string) target.Target {
	t.Helper()
	tgt, err := all.Registry().Open(ctx, url, target.Options{Recreate: true, Settings: set, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	if err := tgt.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	return tgt
}

// everyKind mixes every query kind freshbench sends, those the default
// mix leaves out too: the server must answer each.
func everyKind() query.Mix {
	var m query.Mix
	for _, k := range target.QueryKinds() {
		m = append(m, query.Weighted{Kind: k, Weight: 1})
	}
	return m
}

// shortRun is a run of a second at rate events/s with the query
// workload beside it, bounded in time however slow the machine.
func shortRun(batch int, rate float64) bench.Config {
	return bench.Config{
		Ingest: ingest.Config{
			Rate: pace.Rate{PerSecond: rate, Unit: pace.Events}, BatchSize: batch, Duration: time.Second, Warmup: 250 * time.Millisecond,
			Generators: 2, MaxInflight: 8, DocSize: 600, WriteTimeout: 5 * time.Second, ProbeRate: 40,
		},
		PollInterval: 50 * time.Millisecond, Drain: 5 * time.Second,
		Queries: &query.Config{
			Mix: everyKind(), QPS: 50, MaxInflight: 4, Limit: 10, Timeout: 5 * time.Second, Settle: 100 * time.Millisecond,
		},
	}
}

// fullRate is the rate of the runs; a run that cannot keep it is tried
// again at lower rates, down to minRate.
const fullRate, minRate = 2000.0, 250.0

// runKeepingUp runs against tgt at the full rate. The server answers at
// once, but it shares the machine with the test: on a starved machine
// (CPU hogs, a build, JVMs beside it) neither keeps 2000 events/s, and the
// in-flight bound fills and leaves events unsent (seen: 80 unsent of
// 2000). That is the machine, not what this test is about, so the run is
// tried again at a lower rate, saying why (testenv.LowerRate); the last
// run is returned whatever it shows.
func runKeepingUp(t *testing.T, ctx context.Context, tgt target.Target, batch int) *results.Result {
	t.Helper()
	var res *results.Result
	testenv.LowerRate(t, fullRate, minRate, func(rate float64) string {
		var err error
		if res, err = bench.Run(ctx, tgt, shortRun(batch, rate)); err != nil {
			t.Fatal(err)
		}
		s := res.Summary
		if s.EventsUnsent == 0 || ctx.Err() != nil {
			return ""
		}
		return fmt.Sprintf("%d of %d events due were left unsent (achieved %.0f events/s, %d of %d batches late): the server and the test did not keep up on this machine now",
			s.EventsUnsent, s.EventsDue, s.AchievedEventsPerSec, s.LateBatches, s.Batches)
	})
	return res
}

// checkRun holds a run against the server to what a database that makes
// every event visible at once must show: every event due acknowledged,
// none failed, freshness sampled, every probe seen, a clean audit, and
// the queries beside it answered without error.
func checkRun(t *testing.T, res *results.Result) {
	t.Helper()
	s := res.Summary
	if s.EventsDue == 0 || s.EventsDue != s.EventsAcked+s.EventsFailed+s.EventsUnsent {
		t.Errorf("accounting: due %d ≠ acknowledged %d + failed %d + unsent %d", s.EventsDue, s.EventsAcked, s.EventsFailed, s.EventsUnsent)
	}
	if s.EventsFailed != 0 || s.EventsUnsent != 0 || len(s.Errors) != 0 {
		t.Errorf("failed %d, unsent %d, errors %v; want none", s.EventsFailed, s.EventsUnsent, s.Errors)
	}
	if !s.Audited || s.Missing != 0 || s.Unexpected != 0 || s.Duplicates != 0 || res.Target().AuditError != "" {
		t.Errorf("audit: audited %v, missing %d, unexpected %d, duplicates %d, error %q; want clean", s.Audited, s.Missing, s.Unexpected, s.Duplicates, res.Target().AuditError)
	}
	for _, c := range res.Target().Completeness {
		if c.Visible != c.Acknowledged {
			t.Errorf("generator %s: %d visible of %d acknowledged", c.Generator, c.Visible, c.Acknowledged)
		}
	}
	if res.Target().Freshness.NotMeasured != "" || s.FreshnessLag.Count == 0 || len(res.Target().Freshness.Errors) != 0 {
		t.Errorf("freshness: not measured %q, %d samples, errors %v", res.Target().Freshness.NotMeasured, s.FreshnessLag.Count, res.Target().Freshness.Errors)
	}
	v := res.Target().Visibility
	if v.NotMeasured != "" || v.Seen == 0 || v.NeverSeen != 0 || len(v.Errors) != 0 {
		t.Errorf("visibility: not measured %q, %d seen, %d never seen, errors %v", v.NotMeasured, v.Seen, v.NeverSeen, v.Errors)
	}
	q := res.Target().Queries
	if q == nil {
		t.Fatal("no query results")
	}
	if q.Total.Queries == 0 || q.Total.Failed != 0 {
		t.Errorf("queries: %d sent, %d failed: %v", q.Total.Queries, q.Total.Failed, q.Total.Errors)
	}
}

// freshbench's own targets run a whole measurement against the server:
// the ingest with its probes and audit, the query workload beside it, and
// then the query workload alone on what the server kept.
func TestRunAgainstNoop(t *testing.T) {
	srv := start(t)
	cases := []struct {
		name, url string
		set       map[string]string
		batch     int
	}{
		{"elasticsearch", srv.ElasticsearchURL("bench"), nil, 50},
		{"opensearch", srv.OpenSearchURL("bench_os"), nil, 20},
		{"postgres insert", srv.PostgresURL("ev_insert"), map[string]string{"write_method": "insert"}, 50},
		{"postgres copy", srv.PostgresURL("ev_copy"), map[string]string{"write_method": "copy"}, 50},
		{"postgres pipeline", srv.PostgresURL("ev_pipeline"), map[string]string{"write_method": "pipeline"}, 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // a table or index of its own; a run that cannot keep the rate is tried again lower
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tgt := open(t, ctx, c.url, c.set)
			if v, err := tgt.Version(ctx); err != nil {
				t.Errorf("version: %v", err)
			} else {
				t.Logf("version: %s", v)
			}
			q := tgt.(target.Querier)
			if err := q.SetupQueries(ctx); err != nil {
				t.Fatalf("setup queries: %v", err)
			}
			checkRun(t, runKeepingUp(t, ctx, tgt, c.batch))

			alone, err := bench.RunQueries(ctx, q, nil, query.Config{
				Mix: everyKind(), Concurrency: 2, Limit: 10, Timeout: 5 * time.Second, SampleSize: 50,
			}, 0, 500*time.Millisecond, nil)
			if err != nil {
				t.Fatalf("queries alone: %v", err)
			}
			if a := alone.Target().Queries.Total; a.Queries == 0 || a.Failed != 0 {
				t.Errorf("queries alone: %d sent, %d failed: %v", a.Queries, a.Failed, a.Errors)
			}
		})
	}
}

// A server that cannot keep the full rate gets a run at a rate it keeps:
// here a sim target that accepts at most 1500 events/s (on virtual time,
// so that nothing else holds it up) leaves events unsent at 2000
// events/s, and none at 1000.
func TestRunKeepingUpLowersTheRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tgt := sim.New(sim.Config{Capacity: 1500})
		if err := tgt.SetupQueries(context.Background()); err != nil {
			t.Fatal(err)
		}
		s := runKeepingUp(t, context.Background(), tgt, 20).Summary
		if s.TargetEventsPerSec != fullRate/2 || s.EventsUnsent != 0 {
			t.Errorf("the last run at %.0f events/s left %d unsent; want the run at %.0f events/s, none unsent", s.TargetEventsPerSec, s.EventsUnsent, fullRate/2)
		}
	})
}

// The check before a query run passes on the server: it asks PostgreSQL
// to plan every shipped kind (EXPLAIN, with null parameters), and a
// search body is checked as JSON.
func TestCheckBeforeAQueryRun(t *testing.T) {
	srv := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, url := range []string{srv.PostgresURL("ev_check"), srv.ElasticsearchURL("check")} {
		q := open(t, ctx, url, nil).(target.Querier)
		if err := query.CheckOwn(ctx, q, query.Config{Mix: everyKind(), Limit: 10}); err != nil {
			t.Errorf("%s: %v", url, err)
		}
	}
}
