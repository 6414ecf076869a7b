package bench

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

// balanced checks that every probe due in the measured window is
// accounted for once: seen, never seen, or dropped.
func balanced(t *testing.T, name string, v results.Visibility) {
	t.Helper()
	if v.Probes == 0 || v.Probes != v.Seen+v.NeverSeen+v.Dropped || v.Censored != v.NeverSeen {
		t.Errorf("%s: %d probes, %d seen + %d never seen + %d dropped, %d censored: not balanced",
			name, v.Probes, v.Seen, v.NeverSeen, v.Dropped, v.Censored)
	}
}

// Each read endpoint is measured on its own, and a probe is visible
// everywhere at the latest of its sightings: per probe the latest is at
// least each endpoint's, so every quantile of the everywhere latency is
// at least that endpoint's (the same probes, each no earlier).
func TestReadEndpointsEachAndEverywhere(t *testing.T) {
	synctest.Test(t, testReadEndpointsEachAndEverywhere)
}

func testReadEndpointsEachAndEverywhere(t *testing.T) {
	const (
		delay = 100 * time.Millisecond
		lag   = 300 * time.Millisecond
	)
	tgt := sim.New(sim.Config{VisibilityDelay: delay})
	cfg := simConfig(3 * time.Second)
	cfg.ReadEndpoints = []ReadEndpoint{
		{Name: "read1", URL: "postgres://bench:s3cret@127.0.0.1:15434/db", Reader: tgt.Replica(lag)},
		{Name: "read2", URL: "sim://", Reader: tgt.Replica(0)},
	}
	res, err := Run(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reads()) != 2 || res.VisibleEverywhere == nil || len(res.Summary.ReadEndpoints) != 2 {
		t.Fatalf("%d read endpoints, %d summaries, everywhere %v; want 2, 2 and set", len(res.Reads()), len(res.Summary.ReadEndpoints), res.VisibleEverywhere)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret") {
		t.Error("the results carry a read endpoint's password")
	}
	every := *res.VisibleEverywhere
	for _, e := range res.Endpoints {
		balanced(t, e.Name, e.Visibility)
		if e.Visibility.Seen != e.Visibility.Probes-e.Visibility.Dropped {
			t.Errorf("%s: %d of %d probes seen; want all", e.Name, e.Visibility.Seen, e.Visibility.Probes)
		}
		if e.Freshness.Samples == 0 || e.Freshness.Censored != 0 {
			t.Errorf("%s: %d freshness samples, %d failed; want some, none failed", e.Name, e.Freshness.Samples, e.Freshness.Censored)
		}
		if len(e.Completeness) != len(res.Generators) || e.AuditError != "" {
			t.Errorf("%s: audited %d of %d generators (%s)", e.Name, len(e.Completeness), len(res.Generators), e.AuditError)
		}
		if e.Visibility.Probes != every.Probes {
			t.Errorf("%s: %d probes, everywhere %d: every probe is watched on every endpoint", e.Name, e.Visibility.Probes, every.Probes)
		}
		for _, q := range []float64{0, 0.5, 0.95, 0.99, 1} {
			if got, own := every.Latency.Quantile(q), e.Visibility.Latency.Quantile(q); got < own {
				t.Errorf("q%g visible everywhere %s, earlier than on %s (%s)", q, got, e.Name, own)
			}
		}
	}
	balanced(t, "everywhere", every)
	if every.Seen != every.Probes-every.Dropped || every.ResolutionMs <= 0 {
		t.Errorf("everywhere: %d of %d probes seen, resolution %v ms", every.Seen, every.Probes, every.ResolutionMs)
	}
	for _, s := range res.Summary.ReadEndpoints {
		if !s.Audited || s.Missing != 0 {
			t.Errorf("%s: audited %v, missing %d; want a clean audit", s.Name, s.Audited, s.Missing)
		}
	}
	// The lagging replica shows the lag; it cannot show a probe before
	// the target, which sees each one lag earlier.
	lagged, target := res.Summary.ReadEndpoints[0].VisibilityLatency, res.Summary.VisibilityLatency
	if min := float64((delay + lag).Milliseconds()) * 0.999; lagged.MinMs < min || lagged.P50Ms < target.P50Ms+float64(lag.Milliseconds())/2 {
		t.Errorf("read1 visibility p50 %v ms (min %v), target p50 %v ms: want the %s lag to show", lagged.P50Ms, lagged.MinMs, target.P50Ms, lag)
	}
	if n := res.Reads()[0].Visibility.BeforeTarget; n != 0 {
		t.Errorf("read1, %s behind the target, showed %d probes before it", lag, n)
	}
	if s := res.Summary.VisibleEverywhere; s == nil || s.P50Ms < lagged.P50Ms {
		t.Errorf("visible everywhere %+v, want at least read1's p50 %v ms", s, lagged.P50Ms)
	}
}

// errDown is what an endpoint that is down answers.
var errDown = errors.New("connection refused")

// outage is a read endpoint that is down from from until until, by the
// clock: an outage timed by the run's progress ticks stayed on when
// a busy machine delivered the tick that should end it after the run.
type outage struct {
	target.Reader
	from, until time.Time
}

func (o *outage) err() error {
	if now := time.Now(); !now.Before(o.from) && now.Before(o.until) {
		return errDown
	}
	return nil
}

func (o *outage) Freshness(ctx context.Context, gen string) (int64, bool, error) {
	if err := o.err(); err != nil {
		return 0, false, err
	}
	return o.Reader.Freshness(ctx, gen)
}

func (o *outage) Visible(ctx context.Context, gen string, ids []string) (map[string]bool, error) {
	if err := o.err(); err != nil {
		return nil, err
	}
	return o.Reader.Visible(ctx, gen, ids)
}

func (o *outage) Count(ctx context.Context, gen string) (int64, error) {
	if err := o.err(); err != nil {
		return 0, err
	}
	return o.Reader.Count(ctx, gen)
}

func (o *outage) Seqs(ctx context.Context, gen string, fn func(int64)) error {
	if err := o.err(); err != nil {
		return err
	}
	return o.Reader.Seqs(ctx, gen, fn)
}

// An endpoint down for a while shows its failed polls and probe queries,
// and catches up after; one down for good shows every probe as never
// seen (lower bounds) and its audit as failed. The target and the other
// endpoints go on as if neither were there, and the accounting stays
// balanced everywhere.
func TestReadEndpointDown(t *testing.T) { synctest.Test(t, testReadEndpointDown) }

func testReadEndpointDown(t *testing.T) {
	tgt := sim.New(sim.Config{VisibilityDelay: 50 * time.Millisecond})
	cfg := simConfig(3 * time.Second)
	cfg.Drain = time.Second
	// read1 is down over the middle of the measured window (the run
	// starts about now, its warm-up ends at 1 s and its writes at 3 s);
	// read2 is down throughout.
	start := time.Now()
	flaky := &outage{Reader: tgt.Replica(0), from: start.Add(1500 * time.Millisecond), until: start.Add(2500 * time.Millisecond)}
	gone := &outage{Reader: tgt.Replica(0), until: start.Add(time.Hour)}
	cfg.ReadEndpoints = []ReadEndpoint{
		{Name: "read1", Reader: flaky},
		{Name: "read2", Reader: gone},
	}
	res, err := Run(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Endpoints {
		balanced(t, e.Name, e.Visibility)
	}
	balanced(t, "everywhere", *res.VisibleEverywhere)

	if f, v := res.Target().Freshness, res.Target().Visibility; f.Censored != 0 || len(v.Errors) != 0 || v.NeverSeen != 0 || !res.Summary.Audited || res.Summary.Missing != 0 {
		t.Errorf("target: %d failed polls, probe errors %v, %d never seen, audited %v, missing %d: the endpoints' outages reached it",
			f.Censored, v.Errors, v.NeverSeen, res.Summary.Audited, res.Summary.Missing)
	}
	r1, r2 := res.Reads()[0], res.Reads()[1]
	if r1.Freshness.Censored == 0 || len(r1.Freshness.Errors) == 0 || len(r1.Visibility.Errors) == 0 {
		t.Errorf("read1: %d failed polls, errors %v, probe errors %v; want its outage shown", r1.Freshness.Censored, r1.Freshness.Errors, r1.Visibility.Errors)
	}
	if r1.Freshness.Samples == 0 || r1.Visibility.NeverSeen != 0 || !res.Summary.ReadEndpoints[0].Audited {
		t.Errorf("read1: %d polls answered, %d probes never seen, audited %v; want it back after its outage",
			r1.Freshness.Samples, r1.Visibility.NeverSeen, res.Summary.ReadEndpoints[0].Audited)
	}
	if v := r2.Visibility; v.Seen != 0 || v.NeverSeen != v.Probes-v.Dropped || r2.Freshness.Samples != 0 || r2.AuditError == "" {
		t.Errorf("read2, down throughout: %d seen, %d never seen of %d, %d polls answered, audit error %q",
			v.Seen, v.NeverSeen, v.Probes, r2.Freshness.Samples, r2.AuditError)
	}
	if s := res.Summary.ReadEndpoints[1]; s.Audited {
		t.Error("read2 counts as audited")
	}
	// No probe is visible everywhere while read2 is down: each is a lower
	// bound, its age at the end.
	if e := res.VisibleEverywhere; e.Seen != 0 || e.NeverSeen != e.Probes-e.Dropped {
		t.Errorf("everywhere: %d seen, %d never seen of %d; want none seen", e.Seen, e.NeverSeen, e.Probes)
	}
}

// With a query workload beside an ingest, every endpoint gets the whole
// of it. (The sim keeps no documents to draw the parameters of a
// workload alone from; the end-to-end tests run one.)
func TestReadEndpointsQueryLoad(t *testing.T) { synctest.Test(t, testReadEndpointsQueryLoad) }

func testReadEndpointsQueryLoad(t *testing.T) {
	tgt := sim.New(sim.Config{})
	reads := []ReadEndpoint{{Name: "read1", Reader: tgt.Replica(100 * time.Millisecond)}}
	qc := query.Config{Mix: query.DefaultMix(), QPS: 50, MaxInflight: 8, Limit: 10, Timeout: time.Second, Settle: 100 * time.Millisecond}
	cfg := simConfig(2 * time.Second)
	cfg.Drain = time.Second
	var got []string
	obs := &queryObserver{endpoints: map[string]int{}}
	beside, err := MeasureQueries(context.Background(), tgt, QueryRun{Queries: qc, Ingest: &cfg, ReadEndpoints: reads, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range beside.Endpoints {
		if e.Queries == nil || e.Queries.Total.Queries == 0 || e.Queries.Beside == nil {
			t.Errorf("no query measured beside the ingest on %s", e.Name)
			continue
		}
		got = append(got, e.Name)
	}
	if strings.Join(got, ",") != "target,read1" {
		t.Errorf("query loads on %v", got)
	}
	if obs.endpoints["read1"] == 0 || obs.endpoints["target"] == 0 {
		t.Errorf("queries observed by endpoint: %v", obs.endpoints)
	}
}

// queryObserver counts the queries it sees by endpoint.
type queryObserver struct {
	stats.NopObserver
	mu        sync.Mutex
	endpoints map[string]int
}

func (o *queryObserver) Query(endpoint, _ string, _ time.Duration, _ int, _ bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.endpoints[endpoint]++
}

// Read endpoints are refused where they cannot be told apart, or where
// their figures would go unseen.
func TestReadEndpointsRefused(t *testing.T) { synctest.Test(t, testReadEndpointsRefused) }

func testReadEndpointsRefused(t *testing.T) {
	r := sim.New(sim.Config{})
	for _, eps := range [][]ReadEndpoint{
		{{Name: "target", Reader: r}},
		{{Name: "", Reader: r}},
		{{Name: "a", Reader: r}, {Name: "a", Reader: r}},
	} {
		cfg := simConfig(time.Second)
		cfg.ReadEndpoints = eps
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v accepted", eps)
		}
	}
	eps := []ReadEndpoint{{Name: "read1", URL: "sim://", Reader: r}}
	cfg := simConfig(time.Second)
	cfg.ReadEndpoints = eps
	lc := LevelsConfig{Run: cfg, Rates: []pace.Rate{cfg.Ingest.Rate}, LevelTrials: LevelTrials{Trials: 1}}
	if err := lc.Validate(); err == nil || !strings.Contains(err.Error(), "read endpoint") {
		t.Errorf("levels with read endpoints: %v", err)
	}
	qc := query.Config{Mix: query.DefaultMix(), QPS: 10, MaxInflight: 8, Limit: 10, Timeout: time.Second}
	sweep := &query.SweepConfig{Start: 10, Step: 10, Max: 20, SLO: &stats.SLO{Quantile: 0.5, Bound: time.Second}}
	if err := (QueryRun{Queries: qc, Duration: time.Second, Sweep: sweep, ReadEndpoints: eps}).Validate(); err == nil || !strings.Contains(err.Error(), "read endpoint") {
		t.Errorf("a sweep with read endpoints: %v", err)
	}
}
