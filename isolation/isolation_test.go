package isolation

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target/sim"
)

// The queue the sim models: one server of capacity C events/s that
// serves the write batches and the queries (q events' worth each) in the
// order they arrive.
const (
	capacity  = 10000.0               // C
	queryCost = 10.0                  // q
	writeRate = 4000.0                // λw, events/s, in batches of b
	batch     = 10                    // b
	qps       = 200.0                 // λq
	factor    = 4.0                   // k
	burst     = time.Second           // T
	qDelay    = 20 * time.Millisecond // a query's own time, outside the queue
	visDelay  = 50 * time.Millisecond // acknowledged → visible
	res       = 20 * time.Millisecond // recovery buckets
	band      = 1.5
)

// Under the loads, the server is busy ρ = (λw + q·λq)/C = 0.6 of the time
// and nothing waits long. A burst of work arriving at rate A > C for T
// leaves a backlog that grows at A − C: a request due s into the burst
// waits a·s, a = (A − C)/C, and drains at C·(1 − ρ) after it.
//
//   - Queries are placed at their intended time: the burst window's p95 is
//     qDelay + q/C + 0.95·a·T.
//   - A freshness lag is placed when it is sampled, at t: the newest event
//     visible then was due at u = t − lag and waited a·u, so
//     lag = L + a·(t − lag), lag = (L + a·t)/(1 + a), L the baseline's:
//     the window's p95 is (L + 0.95·a·T)/(1 + a).
//   - Recovery: a figure whose baseline is B is back within band × B when
//     the wait falls below band × B minus what the figure holds besides
//     it (the query's own time; the freshness lag's L), which takes
//     (a·T − that margin)/(1 − ρ) after the burst for a request due then;
//     a freshness lag shows it band × L later, when that request is seen.
func TestIsolationAgreesWithTheQueueModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Config{Warmup: time.Second, Baseline: 2 * time.Second, Burst: burst, Recovery: 3 * time.Second, Factor: factor, Band: band, Resolution: res}
		tgt := sim.New(sim.Config{Capacity: capacity, QueryCost: queryCost, QueryDelay: qDelay, VisibilityDelay: visDelay})
		run := bench.Config{
			Ingest: ingest.Config{Rate: pace.Rate{PerSecond: writeRate}, BatchSize: batch, Generators: 1,
				// Enough slots that no request waits in the driver: the
				// queue is the server's alone.
				MaxInflight: 5000, DocSize: 400, WriteTimeout: 30 * time.Second, ProbeRate: 20},
			// Dense freshness samples: the p95 of a window is then where
			// the model puts it, not between two sparse samples.
			PollInterval: time.Millisecond,
			Drain:        2 * time.Second,
			Queries:      &query.Config{Mix: query.DefaultMix(), QPS: qps, MaxInflight: 5000, Limit: 10, Timeout: 10 * time.Second},
		}
		r, err := Run(context.Background(), tgt, run, c)
		if err != nil {
			t.Fatal(err)
		}
		iso := r.Isolation
		if iso == nil || len(iso.Windows) != 5 || len(iso.Bursts) != 2 {
			t.Fatalf("isolation %+v: want 5 windows and 2 bursts", iso)
		}
		rho := (writeRate + queryCost*qps) / capacity
		ingestGrowth := factor*writeRate + queryCost*qps - capacity // A − C
		queryGrowth := writeRate + factor*queryCost*qps - capacity
		base := iso.Windows[0].Endpoints[0]
		ingestBurst := iso.Bursts[0].Endpoints[0]
		queryBurst := iso.Bursts[1].Endpoints[0]
		if base.Endpoint != results.TargetEndpoint || base.QueryLatency.N == 0 || base.FreshnessLag.N == 0 {
			t.Fatalf("baseline %+v: want queries and freshness on the target", base)
		}
		service := func(events float64) float64 { return events / capacity * 1000 } // ms
		// Baseline: the query's own time and service, and at most one
		// batch's service ahead of it.
		baseQuery := qDelay.Seconds()*1000 + service(queryCost)
		within(t, "baseline query p95 (ms)", base.QueryLatency.P95Ms, baseQuery+service(batch)/2, service(batch)/2)

		// The ingest burst on the queries.
		wantP95 := baseQuery + 0.95*ingestGrowth*burst.Seconds()/capacity*1000
		if ingestBurst.QueryP95Ratio == nil {
			t.Fatal("no query p95 ratio for the ingest burst")
		}
		agree(t, "query p95 interference of the ingest burst", *ingestBurst.QueryP95Ratio, wantP95/(baseQuery+service(batch)/2))

		// Recovery after each burst: the later of queries and freshness.
		recovery := func(growth float64) float64 {
			wait := growth * burst.Seconds() / capacity
			lag := base.FreshnessLag.P95Ms / 1000
			queries := (wait - (band*base.QueryLatency.P95Ms-baseQuery)/1000) / (1 - rho)
			freshness := (wait-(band-1)*lag)/(1-rho) + band*lag
			return max(queries, freshness)
		}
		for _, b := range []struct {
			name   string
			got    *results.BurstEndpoint
			growth float64
		}{{"ingest", ingestBurst, ingestGrowth}, {"query", queryBurst, queryGrowth}} {
			if !b.got.Recovered {
				t.Fatalf("%s burst: not recovered; the model recovers in %.3f s of the %s", b.name, recovery(b.growth), c.Recovery)
			}
			agree(t, b.name+" burst's recovery time (s)", b.got.RecoveryS, recovery(b.growth))
		}

		// The query burst on freshness.
		if queryBurst.FreshnessRatio == nil {
			t.Fatal("no freshness ratio for the query burst")
		}
		a := queryGrowth / capacity
		wantFresh := (base.FreshnessLag.P95Ms + 0.95*a*burst.Seconds()*1000) / (1 + a)
		agree(t, "freshness interference of the query burst", *queryBurst.FreshnessRatio, wantFresh/base.FreshnessLag.P95Ms)
		t.Logf("ρ %.2f; ingest burst: query p95 ×%.2f, recovered in %.3f s; query burst: freshness ×%.2f, recovered in %.3f s",
			rho, *ingestBurst.QueryP95Ratio, ingestBurst.RecoveryS, *queryBurst.FreshnessRatio, queryBurst.RecoveryS)
	})
}

// agree fails unless got is within 10 % of the model's want.
func agree(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 0.1*want {
		t.Errorf("%s: measured %.3f, the queue model predicts %.3f (want within 10 %%)", what, got, want)
	} else {
		t.Logf("%s: measured %.3f, predicted %.3f", what, got, want)
	}
}

// within fails unless got is within tol of want.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s: %.3f, want %.3f ± %.3f", what, got, want, tol)
	}
}

// Recovery is judged bucket by bucket after the burst: the first bucket
// after the last one out of the band; a figure still out of it in the
// last bucket has "not recovered by the end"; a ratio over a window
// without samples is not known.
func TestRecoveryAndUnknowns(t *testing.T) {
	c := Config{Warmup: 0, Baseline: 10 * time.Second, Burst: 10 * time.Second, Recovery: 10 * time.Second, Factor: 2, Band: 1.5, Resolution: time.Second}
	start := time.Unix(1000, 0)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	rec := NewRecorder(nil)
	e := rec.endpoint(results.TargetEndpoint)
	for s := 0.0; s < 50; s += 0.1 {
		lat := 10 * time.Millisecond // the baseline
		switch {
		case s >= 10 && s < 20: // the ingest burst
			lat = 100 * time.Millisecond
		case s >= 20 && s < 23.5: // back within 1.5 × from 24 s on
			lat = 16 * time.Millisecond
		case s >= 30: // the query burst, and no recovery after it
			lat = 40 * time.Millisecond
		}
		e.queries = append(e.queries, sample{at(s), lat})
	}
	iso := rec.Analyze(start, c)
	ib, qb := iso.Bursts[0].Endpoints[0], iso.Bursts[1].Endpoints[0]
	if !ib.Recovered || ib.RecoveryS != 4 {
		t.Errorf("ingest burst: recovered %v in %g s, want after 4 s (the bucket from 3 s still held 16 ms > 1.5 × 10 ms)", ib.Recovered, ib.RecoveryS)
	}
	if qb.Recovered || qb.RecoveryS != 10 {
		t.Errorf("query burst: recovered %v in %g s, want not recovered by the end, > 10 s (the recovery window)", qb.Recovered, qb.RecoveryS)
	}
	// Nothing answered after 22 s: whether the ingest burst's effect
	// ended is not known, and at least 3 s.
	e.queries = slices.DeleteFunc(e.queries, func(x sample) bool { return x.at.After(at(22)) })
	if nk := rec.Analyze(start, c).Bursts[0].Endpoints[0]; nk.Recovered || !nk.RecoveryNotKnown || nk.RecoveryS != 3 {
		t.Errorf("no samples after the last bucket out of the band: recovered %v, not known %v, %g s; want not known, ≥ 3 s", nk.Recovered, nk.RecoveryNotKnown, nk.RecoveryS)
	}
	if ib.QueryP95Ratio == nil || *ib.QueryP95Ratio != 10 {
		t.Errorf("ingest burst query p95 ratio %v, want 10", ib.QueryP95Ratio)
	}
	if ib.FreshnessRatio != nil || iso.Bursts[0].WriteP95Ratio != nil {
		t.Errorf("freshness ratio %v, write ratio %v: want not known, no samples", ib.FreshnessRatio, iso.Bursts[0].WriteP95Ratio)
	}
}

// Bad settings are refused, each naming its field.
func TestConfigValidate(t *testing.T) {
	good := Default
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*Config){
		"burst factor":        func(c *Config) { c.Factor = 1 },
		"burst length":        func(c *Config) { c.Burst = 0 },
		"recovery band":       func(c *Config) { c.Band = 0.5 },
		"recovery resolution": func(c *Config) { c.Resolution = c.Recovery + 1 },
		"baseline":            func(c *Config) { c.Baseline = -1 },
	} {
		c := Default
		mod(&c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), name) {
			t.Errorf("%s: Validate = %v, want it named", name, err)
		}
	}
}
