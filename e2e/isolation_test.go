package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/isolation"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

// The isolation experiment runs end to end on a primary and a copy it
// replicates to (a PostgreSQL standby, the second node of an
// Elasticsearch or OpenSearch cluster): every window holds what each
// load asked for on each endpoint, each burst's window as many times
// more as the burst multiplies, every event is accounted for, and each
// burst's query interference is known on every endpoint.
func TestIsolationOnReplicas(t *testing.T) {
	c := isolation.Config{Warmup: 2 * time.Second, Baseline: 8 * time.Second, Burst: 4 * time.Second, Recovery: 8 * time.Second,
		Factor: 3, Band: 1.5, Resolution: time.Second}
	const qps = 20
	experiment := func(t *testing.T, urls []string, settings map[string]string) {
		// The baseline must hold freshness samples on every endpoint for
		// the bursts' effect on freshness to be known. A starved cluster
		// may answer no freshness poll of it (seen: OpenSearch's, its
		// events 10 s from written to visible through the 8 s baseline):
		// that experiment is tried again on an index of its own at a
		// lower ingest rate, saying why, before the test fails on it.
		var res *results.Result
		var cfg bench.Config
		var reads []bench.ReadEndpoint
		_, unmet := testenv.LowerRate(t, 200, 50, func(rate float64) string {
			var tgt target.Target
			tgt, reads = openSetup(t, sameName(t, fmt.Sprintf("isolation%.0f", rate), urls), settings)
			if err := tgt.(target.Querier).SetupQueries(context.Background()); err != nil {
				t.Fatal(err)
			}
			cfg = readConfig(rate, time.Second, 0)
			cfg.ReadEndpoints = reads
			cfg.Queries = &query.Config{Mix: query.DefaultMix(), QPS: qps, MaxInflight: 256, Limit: 10, Timeout: 10 * time.Second, Settle: time.Second}
			var err error
			if res, err = isolation.Run(context.Background(), tgt, cfg, c); err != nil {
				t.Fatal(err)
			}
			return baselineUnfresh(res.Isolation.Windows[0])
		})
		if unmet != "" {
			t.Error(unmet)
		}
		lostNothing(t, res)
		iso := res.Isolation
		report := func(w *results.IsolationWindow) {
			for _, e := range w.Endpoints {
				t.Logf("%-16s %-7s queries %4d p95 %7.1f ms; freshness p95 %7.1f ms; visibility p95 %7.1f ms; writes p95 %7.1f ms",
					w.Name, e.Endpoint, e.QueryLatency.N, e.QueryLatency.P95Ms, e.FreshnessLag.P95Ms, e.Visibility.P95Ms, w.WriteLatency.P95Ms)
			}
		}
		for _, w := range iso.Windows {
			report(w)
		}
		base, queryBurst := iso.Windows[0], iso.Windows[3]
		if len(base.Endpoints) != 1+len(reads) {
			t.Fatalf("the baseline has %d endpoints, want the target and %d read endpoints", len(base.Endpoints), len(reads))
		}
		// What each load asked for is in its windows: the query burst
		// holds Factor × the baseline's queries per second on every
		// endpoint (the ingest burst Factor × its batches: burstUnasked).
		// (Asked for, not answered in time: none may go unsent at these
		// loads.)
		// The queries begin once a written document can be drawn from
		// (res.Target().Queries.WaitedS): a window before that holds fewer.
		queriesPerSecond := func(w *results.IsolationWindow, n int64) float64 {
			return float64(n) / (w.ToS - max(w.FromS, res.Target().Queries.WaitedS))
		}
		for i, e := range base.Endpoints {
			asked := func(w *results.IsolationWindow) float64 {
				var failed int64
				for _, n := range w.Endpoints[i].QueryErrors {
					failed += n
				}
				return queriesPerSecond(w, w.Endpoints[i].QueryLatency.N+failed)
			}
			// A driver behind its in-flight bound leaves queries unsent:
			// then the windows cannot hold all that was asked for.
			if b, q := asked(base), asked(queryBurst); (b < 0.9*qps || q < 0.9*c.Factor*qps) && res.Target().Queries.Unsent == 0 {
				t.Errorf("%s: %.1f queries/s in the baseline, %.1f in the query burst; want %d and %g × that", e.Endpoint, b, q, qps, c.Factor)
			}
		}
		if short := burstUnasked(iso, cfg.Ingest.BatchSize, c.Factor); short != "" {
			t.Error(short)
		}
		for _, b := range iso.Bursts {
			for _, e := range b.Endpoints {
				// Queries are answered in every window; a freshness poll
				// of a loaded server may fail throughout one, and its
				// ratio is then not known.
				if e.QueryP95Ratio == nil {
					t.Errorf("%s burst on %s: query p95 ratio not known; want queries answered in the baseline and the burst", b.Load, e.Endpoint)
					continue
				}
				fresh := "not known"
				if e.FreshnessRatio != nil {
					fresh = fmt.Sprintf("×%.2f", *e.FreshnessRatio)
				}
				t.Logf("%s burst on %s: query p95 ×%.2f, freshness p95 %s, recovered %v in %g s (not known %v)",
					b.Load, e.Endpoint, *e.QueryP95Ratio, fresh, e.Recovered, e.RecoveryS, e.RecoveryNotKnown)
			}
		}
	}
	t.Run("postgres-standby", func(t *testing.T) { experiment(t, pgPair(t), nil) })
	t.Run("elasticsearch-cluster", func(t *testing.T) {
		urls := setupURLs(t, "FRESHBENCH_TEST_ES_CLUSTER_URLS", "elasticsearch-cluster.sh")
		experiment(t, urls, map[string]string{"replicas": "1", "refresh_interval": "1s"})
	})
	t.Run("opensearch-cluster", func(t *testing.T) {
		urls := setupURLs(t, "FRESHBENCH_TEST_OS_CLUSTER_URLS", "opensearch-cluster.sh")
		experiment(t, urls, map[string]string{"replicas": "1", "refresh_interval": "1s", "replication_type": "segment"})
	})
}

// baselineUnfresh names the endpoints of the baseline w with no
// freshness sample, or is empty.
func baselineUnfresh(w *results.IsolationWindow) string {
	var none []string
	for _, e := range w.Endpoints {
		if e.FreshnessLag.N == 0 {
			none = append(none, e.Endpoint)
		}
	}
	if len(none) == 0 {
		return ""
	}
	return fmt.Sprintf("no freshness sample in the baseline on %s", strings.Join(none, ", "))
}

// burstUnasked says how the ingest burst of iso held fewer batches than
// factor times the baseline's, or is empty: each window holds the
// batches it asked for, acknowledged, failed or unsent, whatever the
// cluster made of them. (Two busy rounds: a starved cluster's burst held
// 7.8 and 8.2 batches/s after 4.0, the units given up at the end spread
// evenly over the time after the burst instead of at their own intended
// times; dispatch.TestUnsentFollowsTheShape.)
func burstUnasked(iso *results.Isolation, batch int, factor float64) string {
	base, burst := iso.Windows[0], iso.Windows[1]
	perSecond := func(w *results.IsolationWindow) float64 {
		return float64(askedBatches(w, batch)) / (w.ToS - w.FromS)
	}
	if b, i := perSecond(base), perSecond(burst); i < 0.9*factor*b {
		says := func(w *results.IsolationWindow) string {
			return fmt.Sprintf("%d acknowledged (write p95 %.0f ms), %d events failed, %d unsent", w.WriteLatency.N, w.WriteLatency.P95Ms, w.WritesFailed, w.WritesUnsent)
		}
		return fmt.Sprintf("%.1f batches/s in the baseline (%s), %.1f in the ingest burst (%s): want %g × as many", b, says(base), i, says(burst), factor)
	}
	return ""
}

// askedBatches is how many batches of size batch a window asked for:
// those acknowledged, and those whose write failed (a busy cluster times
// a burst's writes out) or that went unsent, counted in events.
func askedBatches(w *results.IsolationWindow, batch int) int64 {
	return w.WriteLatency.N + (w.WritesFailed+w.WritesUnsent)/int64(batch)
}

// A baseline of a starved cluster, its target's freshness polls all
// unanswered (the busy round's), is unmet and names the endpoint; one
// with samples everywhere is met.
func TestBaselineUnfresh(t *testing.T) {
	w := &results.IsolationWindow{Endpoints: []*results.WindowByEndpoint{
		{Endpoint: "target"}, {Endpoint: "read1", FreshnessLag: results.Quantiles{N: 40, P95Ms: 4522}},
	}}
	if got := baselineUnfresh(w); got != "no freshness sample in the baseline on target" {
		t.Errorf("a baseline without the target's freshness: %q", got)
	}
	w.Endpoints[0].FreshnessLag.N = 12
	if got := baselineUnfresh(w); got != "" {
		t.Errorf("a baseline with freshness everywhere: %q", got)
	}
}

// An ingest burst that held fewer batches than the factor asks (the busy
// round's: 4.0 batches/s in the baseline, 7.8 in the burst) is named,
// with what each window held; one that held them all is not.
func TestBurstUnasked(t *testing.T) {
	window := func(from, to float64, acked int64, failed int64) *results.IsolationWindow {
		return &results.IsolationWindow{FromS: from, ToS: to, WriteLatency: results.Quantiles{N: acked}, WritesFailed: failed}
	}
	short := &results.Isolation{Windows: []*results.IsolationWindow{window(2, 10, 32, 0), window(10, 14, 0, 31*50+10)}}
	if got := burstUnasked(short, 50, 3); !strings.Contains(got, "4.0 batches/s in the baseline") || !strings.Contains(got, "7.8 in the ingest burst") {
		t.Errorf("the busy round's burst: %q", got)
	}
	full := &results.Isolation{Windows: []*results.IsolationWindow{window(2, 10, 32, 0), window(10, 14, 40, 8*50)}}
	if got := burstUnasked(full, 50, 3); got != "" {
		t.Errorf("a burst of 12 batches/s after 4: %q", got)
	}
}
