package metrics

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

// spreadWrites is the simulated target with a write service time drawn
// from a log-normal distribution (median 4 ms, long tail), so that write
// latency, freshness lag and visibility latency spread over many buckets
// and the quantile comparison below has something to resolve.
type spreadWrites struct {
	target.Target
	mu  sync.Mutex
	rng *rand.Rand
}

func (s *spreadWrites) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	s.mu.Lock()
	d := time.Duration(0.004 * math.Exp(0.8*s.rng.NormFloat64()) * float64(time.Second))
	s.mu.Unlock()
	select {
	case <-time.After(min(d, time.Second)):
	case <-ctx.Done():
		return target.WriteResult{}, ctx.Err()
	}
	return s.Target.Write(ctx, b)
}

// TestPrometheusScrapesRun lets a real Prometheus scrape a real run
// (bench.Run against a simulated target) and checks its view against the
// run's own results: totals exactly, labels by name and value, and
// histogram_quantile within the resolution of the buckets.
func TestPrometheusScrapesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus and runs for about 5s")
	}
	// Its own Prometheus and scrape targets: beside the other Prometheus tests.
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const targetURL = "sim://?visibility_delay=100ms"
	reg := prometheus.NewRegistry()
	obs := New(reg, targetURL, nil)
	srv, err := Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	prom := startPrometheus(t, addr)
	if err := waitFor(ctx, 15*time.Second, func() (bool, error) {
		v, err := prom.scalar(ctx, `up{job="freshbench"}`)
		return v == 1, err
	}); err != nil {
		t.Fatalf("prometheus never scraped %s: %v\n%s", addr, err, prom.logTail())
	}

	tgt := &spreadWrites{Target: sim.New(sim.Config{VisibilityDelay: 100 * time.Millisecond}), rng: rand.New(rand.NewPCG(7, 7))}
	// No warm-up: every probe is then in the results file's measured
	// window, as every write is in its phases, so both sides hold the same
	// samples and must agree to the bucket.
	cfg := bench.Config{
		Ingest: ingest.Config{
			Rate: pace.Rate{PerSecond: 2000, Unit: pace.Events}, BatchSize: 10, Duration: 3 * time.Second,
			Generators: 2, MaxInflight: 64, DocSize: 400, Seed: 1, WriteTimeout: 5 * time.Second, ProbeRate: 200,
		},
		PollInterval: 20 * time.Millisecond, Drain: time.Second, Observer: obs,
	}
	res, err := bench.Run(ctx, tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The process would exit now; the test keeps serving until Prometheus
	// has scraped the final values.
	var batches, acked, ackedBytes int64
	writes := stats.NewHistogram()
	for _, p := range res.Phases {
		batches += p.Batches
		acked += p.Acked
		ackedBytes += p.AckedBytes
		writes.Merge(p.WriteLatency)
	}
	if err := waitFor(ctx, 15*time.Second, func() (bool, error) {
		v, err := prom.scalar(ctx, `sum(freshbench_visibility_latency_seconds_count)`)
		return err == nil && v == float64(res.Target().Visibility.Latency.Count()), nil
	}); err != nil {
		t.Fatalf("visibility samples in prometheus never reached the run's %d: %v", res.Target().Visibility.Latency.Count(), err)
	}
	if res.Summary.EventsFailed != 0 || res.Summary.Missing != 0 || res.Target().Visibility.Seen == 0 {
		t.Fatalf("the run itself went wrong: %d failed, %d missing, %d probes seen", res.Summary.EventsFailed, res.Summary.Missing, res.Target().Visibility.Seen)
	}

	for _, c := range []struct {
		q    string
		want int64
	}{
		{`sum(freshbench_events_written_total)`, acked},
		{`sum(freshbench_written_bytes_total)`, ackedBytes},
		{`sum(freshbench_batches_total)`, batches},
		{`sum(freshbench_write_latency_seconds_count)`, writes.Count()},
		{`sum(freshbench_events_failed_total) or vector(0)`, 0},
		{`sum(freshbench_writes_in_flight)`, 0},
	} {
		got, err := prom.scalar(ctx, c.q)
		if err != nil {
			t.Fatal(err)
		}
		if got != float64(c.want) {
			t.Errorf("%s = %g, the run says %d", c.q, got, c.want)
		}
	}

	// Labels: the target as given, the run's generator identifiers, its
	// phases.
	labels := func(q, name string) []string {
		r, err := prom.labelValues(ctx, q, name)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if got := labels(`freshbench_events_written_total`, LabelTarget); !slices.Equal(got, []string{targetURL}) {
		t.Errorf("target label values %q, want [%q]", got, targetURL)
	}
	gens := slices.Clone(res.Generators)
	sort.Strings(gens)
	if got := labels(`freshbench_events_written_total`, LabelGenerator); !slices.Equal(got, gens) {
		t.Errorf("generator label values %q, want the run's generators %q", got, gens)
	}
	if got := labels(`freshbench_visibility_latency_seconds_count`, LabelPhase); !slices.Contains(got, results.PhaseMeasured) || !slices.Contains(got, "drain") {
		t.Errorf("visibility latency phases %q, want measured and drain among them", got)
	}

	fresh, err := prom.scalar(ctx, `sum(freshbench_freshness_lag_seconds_count)`)
	if err != nil {
		t.Fatal(err)
	}
	// The results file keeps the freshness samples of the measured window;
	// the live metrics also count the few taken just before the start and
	// after the schedule: a couple per generator.
	extraFresh := int64(fresh) - res.Target().Freshness.Lag.Count()
	if extraFresh < 0 || extraFresh > int64(4*len(gens)) {
		t.Errorf("prometheus counted %g freshness samples, the run %d in its window", fresh, res.Target().Freshness.Lag.Count())
	}

	for _, h := range []struct {
		metric string
		hdr    *stats.Histogram
		extra  int64
	}{
		{"freshbench_write_latency_seconds", writes, 0},
		{"freshbench_visibility_latency_seconds", res.Target().Visibility.Latency, 0},
		{"freshbench_freshness_lag_seconds", res.Target().Freshness.Lag, extraFresh},
	} {
		for _, q := range []float64{0.5, 0.9, 0.99} {
			pq := fmt.Sprintf(`histogram_quantile(%g, sum by (le) (%s_bucket))`, q, h.metric)
			got, err := prom.scalar(ctx, pq)
			if err != nil {
				t.Fatal(err)
			}
			checkQuantileOf(t, h.metric, q, got, h.hdr, h.extra, bucketOf)
		}
	}
	// The headline figures of the summary are the same HDR histograms.
	if s, v := res.Summary.VisibilityLatency, res.Target().Visibility.Latency.Summarize(); s.P99Ms != v.P99Ms {
		t.Errorf("summary visibility p99 %g ms, histogram %g ms", s.P99Ms, v.P99Ms)
	}
}

// checkQuantileOf checks Prometheus' estimate of quantile q against hdr,
// given bucket, which returns the bounds of the histogram bucket that
// holds a value (bucketOf for the classic buckets, nativeBucketOf for the
// native ones). histogram_quantile can tell no more than the bucket that
// holds the sample of rank q·N, and it ranks by q·N where HDR takes the
// next whole sample, so the estimate must lie within the buckets of
// freshbench's samples one rank either side. When Prometheus saw extra
// samples that hdr does not hold, wherever they fall, the rank
// q·(n+extra) of Prometheus' set is in hdr between (q·(n+extra) − extra)/n
// and q·(n+extra)/n, which widens the window by that much.
func checkQuantileOf(t *testing.T, metric string, q, got float64, hdr *stats.Histogram, extra int64, bucket func(float64) (float64, float64)) {
	t.Helper()
	n := float64(hdr.Count())
	rank := q * (n + float64(extra))
	qlo, qhi := max(0, (rank-float64(extra)-1)/n), min(1, (rank+1)/n)
	want := hdr.Quantile(q).Seconds()
	lo, _ := bucket(hdr.Quantile(qlo).Seconds())
	_, hi := bucket(hdr.Quantile(qhi).Seconds())
	// HDR keeps whole microseconds to 3 significant digits, so a value at
	// a bucket bound may sit just across it; allow that much.
	slack := want*1e-3 + 1e-6
	t.Logf("%s p%g: prometheus %.4fs, freshbench %.4fs, %d extra samples: buckets (%g, %g], diff %+.1f%%",
		metric, q*100, got, want, extra, lo, hi, 100*(got-want)/want)
	if got < lo-slack || got > hi+slack {
		t.Errorf("%s p%g: prometheus says %.5fs, freshbench %.5fs: not within (%g, %g], the buckets of p%g…p%g of freshbench's samples",
			metric, q*100, got, want, lo, hi, qlo*100, qhi*100)
	}
}
