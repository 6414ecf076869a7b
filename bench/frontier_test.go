package bench

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target/sim"
)

// On a database whose one queue takes 4000 events/s and where a query
// costs 20 events' worth, an ingest of R events/s leaves room for
// (4000 − R)/20 queries a second: 150 at 1000 events/s, 50 at 3000. The
// frontier must find at each rate a QPS below that room, lower at the
// higher rate, with the freshness measured at that point.
func TestFrontierFollowsCapacity(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testFrontierFollowsCapacity)
}

func testFrontierFollowsCapacity(t *testing.T) {
	const capacity, cost = 4000.0, 20.0
	tgt := sim.New(sim.Config{Capacity: capacity, QueryCost: cost, VisibilityDelay: 50 * time.Millisecond})
	ingest := simConfig(2500 * time.Millisecond)
	ingest.Ingest.BatchSize, ingest.Ingest.Generators, ingest.Drain = 50, 1, 2*time.Second
	slo, err := stats.ParseSLO("p95<100ms")
	if err != nil {
		t.Fatal(err)
	}
	rates := []pace.Rate{{PerSecond: 1000, Unit: pace.Events}, {PerSecond: 3000, Unit: pace.Events}}
	var steps int
	res, err := MeasureQueries(context.Background(), tgt, QueryRun{
		Queries:  query.Config{Mix: query.DefaultMix(), QPS: 30, MaxInflight: 64, Limit: 10, Timeout: time.Second, Settle: 100 * time.Millisecond},
		Ingest:   &ingest,
		Sweep:    &query.SweepConfig{Start: 30, Step: 30, Max: 240, SLO: slo, MaxErrorShare: query.DefaultMaxErrorShare, MinAchievedShare: query.DefaultMinAchievedShare},
		Frontier: rates,
		OnStep:   func(r *results.Result) { steps++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	fr := res.Frontier
	if res.Kind != results.KindFrontier || fr == nil || len(fr.Points) != 2 {
		t.Fatalf("kind %s, frontier %+v: want 2 points", res.Kind, fr)
	}
	total := 0
	for i, p := range fr.Points {
		room := (capacity - rates[i].PerSecond) / cost
		t.Logf("%s: achieved %.0f events/s; highest QPS %g (achieved %.1f, room %g); query p95 %.1f ms; freshness lag p50 %.0f ms p95 %.0f ms; %s",
			p.IngestRate, p.IngestAchieved, p.QPS, p.AchievedQPS, room, p.QueryLatency.P95Ms, p.FreshnessLag.P50Ms, p.FreshnessLag.P95Ms, p.Sweep.Reason)
		if !p.Found || p.QPS <= 0 || p.QPS > room {
			t.Errorf("%s: highest QPS %g (found %v), want one above 0 and at most the room of %g", p.IngestRate, p.QPS, p.Found, room)
		}
		if p.FreshnessLag.Count == 0 || p.IngestAchieved < 0.9*rates[i].PerSecond {
			t.Errorf("%s: freshness %+v, ingest achieved %.0f: want both measured at the point", p.IngestRate, p.FreshnessLag, p.IngestAchieved)
		}
		total += len(p.Sweep.Steps)
	}
	if fr.Points[1].QPS >= fr.Points[0].QPS {
		t.Errorf("highest QPS %g at 3000 events/s, not below %g at 1000: the frontier does not fall", fr.Points[1].QPS, fr.Points[0].QPS)
	}
	if steps != total {
		t.Errorf("%d steps reported as they ended, %d in the sweeps", steps, total)
	}
}

// A frontier interrupted in its first sweep keeps what it measured: the
// points so far, marked as ended early.
func TestFrontierInterrupted(t *testing.T) { t.Parallel(); synctest.Test(t, testFrontierInterrupted) }

func testFrontierInterrupted(t *testing.T) {
	tgt := sim.New(sim.Config{Capacity: 4000, QueryCost: 20})
	ingest := simConfig(2 * time.Second)
	slo, err := stats.ParseSLO("p95<100ms")
	if err != nil {
		t.Fatal(err)
	}
	// Interrupted as the first step ends: on a busy machine a fixed
	// timeout might cut the first step short.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := MeasureQueries(ctx, tgt, QueryRun{
		Queries:  query.Config{Mix: query.DefaultMix(), QPS: 20, MaxInflight: 64, Limit: 10, Timeout: time.Second, Settle: 100 * time.Millisecond},
		Ingest:   &ingest,
		Sweep:    &query.SweepConfig{Start: 20, Step: 20, Max: 200, SLO: slo, MaxErrorShare: query.DefaultMaxErrorShare, MinAchievedShare: query.DefaultMinAchievedShare},
		Frontier: []pace.Rate{{PerSecond: 500, Unit: pace.Events}, {PerSecond: 1000, Unit: pace.Events}},
		OnStep:   func(*results.Result) { cancel() },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res == nil || res.Kind != results.KindFrontier || !res.EndedEarly || len(res.Frontier.Points) != 1 || len(res.Frontier.Points[0].Sweep.Steps) == 0 {
		t.Fatalf("result %+v: want the first rate's steps so far, ended early", res)
	}
}
