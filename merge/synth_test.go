package merge_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/freshbench/freshbench/merge"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// truth holds, by name, a histogram of every sample recorded into the
// synthetic results' histograms of that name: what one process recording
// every instance's samples would hold.
type truth map[string]*stats.Histogram

// record adds d to h and, when tr is kept, to tr's histogram of that name.
func (tr truth) record(name string, h *stats.Histogram, d time.Duration) {
	h.Record(d)
	if tr == nil {
		return
	}
	if tr[name] == nil {
		tr[name] = stats.NewHistogram()
	}
	tr[name].Record(d)
}

// shape is what a synthetic instance's result looks like.
type shape struct {
	instance, instances int
	seconds             int     // measured length, one series point a second
	rate                float64 // events/s
	batchSize           int
	scale               float64 // samples per histogram per second of the run
	queries             bool
	readEndpoint        bool // one read endpoint, read1, and the probes visible everywhere
}

var base = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// logNormal draws a latency around median with a spread of sigma (in
// log space): the long right tail latencies have.
func logNormal(rng *rand.Rand, median time.Duration, sigma float64) time.Duration {
	return time.Duration(float64(median) * math.Exp(sigma*rng.NormFloat64()))
}

// synthetic builds an instance's result as a run writes it, with samples
// drawn at random in every histogram (recorded into tr as well), counts
// that balance in every phase, and its summary by results.Summarize.
func synthetic(rng *rand.Rand, s shape, tr truth) *results.Result {
	n := func() int { return max(1, int(float64(s.seconds)*s.scale*(0.8+0.4*rng.Float64()))) }
	gens := []string{fmt.Sprintf("gen-%d-a", s.instance), fmt.Sprintf("gen-%d-b", s.instance)}
	r := &results.Result{
		SchemaVersion: results.SchemaVersion, Kind: results.KindRun, Command: "run",
		Tool: results.Tool{Name: "freshbench", Version: "v0.1.0"},
		Environment: results.Environment{
			Host: fmt.Sprintf("host-%d", s.instance), OS: "linux", Arch: "amd64", Cores: 2, GoVersion: "go1.26",
			Target: "sqlite", TargetURL: "sqlite:///data/freshbench.db", TargetVersion: "3.50",
		},
		Config: results.Config{
			Rate: fmt.Sprintf("%g events/s", s.rate), RateUnit: "events/s", RatePerSecond: s.rate, BatchSize: s.batchSize,
			DurationS: float64(s.seconds + 10), WarmupS: 10, Generators: len(gens), MaxInflight: 16, DocSize: 1000,
			Seed: rng.Uint64(), IDNonce: rng.Uint64(), WriteTimeoutS: 30, ProbeRate: 20, PollIntervalS: 0.2, DrainS: 30,
			TargetSettings: map[string]string{"table": "events"},
		},
		// Instances start within a few milliseconds of the common start.
		StartedAt:  base.Add(time.Duration(rng.IntN(5)) * time.Millisecond),
		Generators: gens,
		Experiment: &results.Experiment{Name: "exp", Instance: s.instance, Instances: s.instances, StartAt: base},
	}
	r.EndedAt = r.StartedAt.Add(time.Duration(s.seconds+40) * time.Second)
	for _, name := range []string{results.PhaseWarmup, results.PhaseMeasured, results.PhaseTail} {
		p := results.NewPhase(name)
		r.Phases = append(r.Phases, p)
		if name == results.PhaseTail {
			p.Throughput = int64(rng.IntN(100))
			p.ThroughputBytes = p.Throughput * 1000
			continue
		}
		p.Batches = int64(n())
		for range p.Batches {
			tr.record(name+" write latency", p.WriteLatency, logNormal(rng, 20*time.Millisecond, 0.7))
			tr.record(name+" service time", p.ServiceTime, logNormal(rng, 12*time.Millisecond, 0.5))
			tr.record(name+" lateness", p.Lateness, logNormal(rng, 200*time.Microsecond, 1.5))
		}
		unsent := rng.IntN(20)
		for range unsent {
			tr.record(name+" unsent wait", p.UnsentWait, logNormal(rng, time.Second, 0.3))
		}
		p.Dispatched = p.Batches * int64(s.batchSize)
		p.Failed = int64(rng.IntN(5))
		p.Acked = p.Dispatched - p.Failed
		p.AckedBytes = p.Acked * 1000
		p.Unsent = int64(unsent * s.batchSize)
		p.Due = p.Dispatched + p.Unsent
		p.LateBatches = int64(rng.IntN(10))
		p.Retries = int64(rng.IntN(3))
		p.Throughput, p.ThroughputBytes = p.Acked-int64(rng.IntN(20)), p.AckedBytes
		if p.Failed > 0 {
			stats.AddError(p.Errors, "timeout", p.Failed, "write: context deadline exceeded")
		}
	}
	// One value past the histograms' hour, to see it counted as clamped.
	if s.instance == 1 {
		tr.record(results.PhaseMeasured+" unsent wait", r.Phases[1].UnsentWait, 2*time.Hour)
	}
	r.Target().Freshness = results.Freshness{Lag: stats.NewHistogram(), QueryService: stats.NewHistogram(), Errors: map[string]*stats.ErrorCount{}}
	for range n() {
		tr.record("freshness lag", r.Target().Freshness.Lag, logNormal(rng, 300*time.Millisecond, 0.6))
		tr.record("freshness query service", r.Target().Freshness.QueryService, logNormal(rng, 3*time.Millisecond, 0.4))
		r.Target().Freshness.Samples++
	}
	// Failed polls: each enters the lag as a lower bound, and apart.
	r.Target().Freshness.Censored = int64(1 + rng.IntN(3))
	stats.AddError(r.Target().Freshness.Errors, "timeout", r.Target().Freshness.Censored, "freshness query of generator: timeout")
	r.Target().Freshness.CensoredLag = stats.NewHistogram()
	for range r.Target().Freshness.Censored {
		d := logNormal(rng, 300*time.Millisecond, 0.6)
		tr.record("freshness lag", r.Target().Freshness.Lag, d)
		tr.record("freshness censored lag", r.Target().Freshness.CensoredLag, d)
	}
	r.Target().Visibility = results.Visibility{
		Latency: stats.NewHistogram(), QueryService: stats.NewHistogram(), Gap: stats.NewHistogram(),
		Errors: map[string]*stats.ErrorCount{},
	}
	for range n() {
		tr.record("visibility latency", r.Target().Visibility.Latency, logNormal(rng, 400*time.Millisecond, 0.5))
		tr.record("probe query service", r.Target().Visibility.QueryService, logNormal(rng, 4*time.Millisecond, 0.4))
		tr.record("visibility gap", r.Target().Visibility.Gap, logNormal(rng, 200*time.Millisecond, 0.3))
		r.Target().Visibility.Probes++
		r.Target().Visibility.Seen++
	}
	r.Target().Visibility.SetResolution()
	m := r.Phases[1]
	for i, g := range gens {
		acked := m.Acked / 2
		if i == 0 {
			acked = m.Acked - acked
		}
		r.Target().Completeness = append(r.Target().Completeness, results.Completeness{Generator: g, Acknowledged: acked, Visible: acked})
	}
	if s.queries {
		r.Kind = results.KindQuery
		r.Target().Queries = syntheticQueries(rng, s, n, tr)
	}
	if s.readEndpoint {
		syntheticEndpoint(rng, s, n, tr, r)
	}
	for i := range s.seconds + 10 {
		acked := int64(s.rate) + int64(rng.IntN(50)) - 25
		r.Series = append(r.Series, stats.Point{
			StartS: float64(i), WidthS: 1, TargetEvents: int64(s.rate), Batches: int64(s.rate) / int64(s.batchSize),
			AckedEvents: acked, AckedBytes: acked * 1000, Inflight: int64(1 + rng.IntN(16)),
			WriteP99Ms: 40 + 20*rng.Float64(), WriteMaxMs: 60 + 40*rng.Float64(), WriteMeanMs: 15 + 10*rng.Float64(),
			FreshnessLagMs: 400 + 100*rng.Float64(), FreshnessLagMinMs: 100 + 100*rng.Float64(), FreshnessN: 5,
		})
	}
	r.Summary = results.Summarize(r, float64(s.seconds))
	for _, e := range r.Endpoints {
		if e.Queries != nil {
			e.Queries.Beside = r.Summary.Beside()
		}
	}
	return r
}

// syntheticEndpoint gives r a read endpoint, read1, with figures of its
// own (named "read1 …" in tr), and the probes visible everywhere.
func syntheticEndpoint(rng *rand.Rand, s shape, n func() int, tr truth, r *results.Result) {
	e := &results.Endpoint{
		Name: "read1", URL: fmt.Sprintf("postgres://bench@standby-%d:5432/db", s.instance),
		Freshness: results.Freshness{Lag: stats.NewHistogram(), QueryService: stats.NewHistogram(), Errors: map[string]*stats.ErrorCount{}},
		Visibility: results.Visibility{
			Latency: stats.NewHistogram(), QueryService: stats.NewHistogram(), Gap: stats.NewHistogram(),
			Errors: map[string]*stats.ErrorCount{},
		},
	}
	for range n() {
		tr.record("read1 freshness lag", e.Freshness.Lag, logNormal(rng, 500*time.Millisecond, 0.6))
		tr.record("read1 freshness query service", e.Freshness.QueryService, logNormal(rng, 3*time.Millisecond, 0.4))
		e.Freshness.Samples++
	}
	e.Freshness.Censored = int64(1 + rng.IntN(3))
	stats.AddError(e.Freshness.Errors, "connection refused", e.Freshness.Censored, "freshness query of generator: connection refused")
	e.Freshness.CensoredLag = stats.NewHistogram()
	for range e.Freshness.Censored {
		d := logNormal(rng, 500*time.Millisecond, 0.6)
		tr.record("read1 freshness lag", e.Freshness.Lag, d)
		tr.record("read1 freshness censored lag", e.Freshness.CensoredLag, d)
	}
	every := results.Visibility{Latency: stats.NewHistogram(), QueryService: stats.NewHistogram(), Gap: stats.NewHistogram()}
	for range r.Target().Visibility.Probes {
		tr.record("read1 visibility latency", e.Visibility.Latency, logNormal(rng, 600*time.Millisecond, 0.5))
		tr.record("read1 probe query service", e.Visibility.QueryService, logNormal(rng, 4*time.Millisecond, 0.4))
		tr.record("read1 visibility gap", e.Visibility.Gap, logNormal(rng, 200*time.Millisecond, 0.3))
		tr.record("everywhere latency", every.Latency, logNormal(rng, 650*time.Millisecond, 0.5))
		tr.record("everywhere gap", every.Gap, logNormal(rng, 250*time.Millisecond, 0.3))
		e.Visibility.Probes++
		e.Visibility.Seen++
		every.Probes++
		every.Seen++
	}
	e.Visibility.BeforeTarget = int64(rng.IntN(4))
	e.Visibility.SetResolution()
	every.SetResolution()
	e.Completeness = append(e.Completeness, r.Target().Completeness...)
	for i := range s.seconds + 10 {
		e.Series = append(e.Series, stats.Point{
			StartS: float64(i), WidthS: 1,
			FreshnessLagMs: 600 + 100*rng.Float64(), FreshnessLagMinMs: 200 + 100*rng.Float64(), FreshnessN: int64(3 + rng.IntN(5)),
		})
	}
	e.Completeness[0].Missing, e.Completeness[0].Visible = 1, e.Completeness[0].Visible-1
	if s.queries {
		e.Queries = syntheticQueries(rng, s, n, nil)
	}
	r.Endpoints, r.VisibleEverywhere = []*results.Endpoint{r.Target(), e}, &every
}

func syntheticQueries(rng *rand.Rand, s shape, n func() int, tr truth) *results.Queries {
	q := &results.Queries{
		Mode: "open", TargetQPS: 100, MaxInflight: 64, Mix: "point=3,newest=1", Limit: 10, TimeoutS: 5,
		MeasuredS: float64(s.seconds), AchievedQPS: 99, Seed: rng.Uint64(),
		Total: &results.QueryKind{Kind: "all", TargetQPS: 100, AchievedQPS: 99, Errors: map[string]*stats.ErrorCount{},
			LatencyHistogram: stats.NewHistogram(), ServiceTimeHistogram: stats.NewHistogram()},
	}
	for _, kind := range []string{"point", "newest"} {
		k := &results.QueryKind{Kind: kind, Weight: 1, TargetQPS: 50, AchievedQPS: 49.5, Errors: map[string]*stats.ErrorCount{},
			LatencyHistogram: stats.NewHistogram(), ServiceTimeHistogram: stats.NewHistogram()}
		for range n() {
			lat, svc := logNormal(rng, 5*time.Millisecond, 0.8), logNormal(rng, 4*time.Millisecond, 0.6)
			tr.record("query "+kind+" latency", k.LatencyHistogram, lat)
			tr.record("query "+kind+" service time", k.ServiceTimeHistogram, svc)
			tr.record("query all latency", q.Total.LatencyHistogram, lat)
			tr.record("query all service time", q.Total.ServiceTimeHistogram, svc)
			k.Queries++
			k.Rows += 3
		}
		k.Failed = int64(rng.IntN(3))
		k.Queries += k.Failed
		if k.Failed > 0 {
			stats.AddError(k.Errors, "timeout", k.Failed, "query: timeout")
			stats.AddError(q.Total.Errors, "timeout", k.Failed, "query: timeout")
		}
		q.Total.Queries += k.Queries
		q.Total.Failed += k.Failed
		q.Total.Rows += k.Rows
		k.Latency, k.ServiceTime = k.LatencyHistogram.Summarize(), k.ServiceTimeHistogram.Summarize()
		q.Kinds = append(q.Kinds, k)
	}
	q.Total.Latency, q.Total.ServiceTime = q.Total.LatencyHistogram.Summarize(), q.Total.ServiceTimeHistogram.Summarize()
	return q
}

// roundTrip writes each result with results.WriteFile and reads it back
// with results.ReadFile, as the merge command does.
func roundTrip(tb testing.TB, rs []*results.Result) []merge.Input {
	tb.Helper()
	dir := tb.TempDir()
	var ins []merge.Input
	for i, r := range rs {
		path := filepath.Join(dir, fmt.Sprintf("instance-%d.json", i))
		if err := results.WriteFile(path, r); err != nil {
			tb.Fatal(err)
		}
		back, err := results.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		ins = append(ins, merge.Input{Name: path, Result: back})
	}
	return ins
}
