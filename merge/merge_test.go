package merge_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/merge"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target/sim"
)

// sameHistogram fails unless got holds what want holds: the same count,
// the same value at every percentile from 0 to 100 in steps of 0.1, the
// same min, max and values clamped at an hour.
func sameHistogram(t *testing.T, name string, got, want *stats.Histogram) {
	t.Helper()
	if got == nil || want == nil {
		t.Fatalf("%s: histogram missing (got %v, want %v)", name, got != nil, want != nil)
	}
	g, w := got.Summarize(), want.Summarize()
	if g.Count != w.Count || g.MinMs != w.MinMs || g.MaxMs != w.MaxMs || g.Clamped != w.Clamped {
		t.Fatalf("%s: count %d min %g max %g clamped %d, want %d, %g, %g, %d", name, g.Count, g.MinMs, g.MaxMs, g.Clamped, w.Count, w.MinMs, w.MaxMs, w.Clamped)
	}
	for i := 0; i <= 1000; i++ {
		q := float64(i) / 1000
		if a, b := got.Quantile(q), want.Quantile(q); a != b {
			t.Fatalf("%s: p%g is %s, want %s", name, 100*q, a, b)
		}
	}
}

// Every histogram of a merge is exactly the histogram of every sample of
// every instance: phases, freshness, visibility and queries, across the
// results files' encoding.
func TestMergeHistogramsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tr := truth{}
	var rs []*results.Result
	for i := range 3 {
		rs = append(rs, synthetic(rng, shape{instance: i, instances: 3, seconds: 30, rate: 1000, batchSize: 10, scale: 40, queries: true}, tr))
	}
	res, err := merge.Merge(roundTrip(t, rs))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*stats.Histogram{
		"freshness lag": res.Target().Freshness.Lag, "freshness query service": res.Target().Freshness.QueryService,
		"freshness censored lag": res.Target().Freshness.CensoredLag,
		"visibility latency":     res.Target().Visibility.Latency, "probe query service": res.Target().Visibility.QueryService,
		"visibility gap":    res.Target().Visibility.Gap,
		"query all latency": res.Target().Queries.Total.LatencyHistogram, "query all service time": res.Target().Queries.Total.ServiceTimeHistogram,
	}
	for _, p := range []string{results.PhaseWarmup, results.PhaseMeasured} {
		ph := res.Phase(p)
		got[p+" write latency"], got[p+" service time"] = ph.WriteLatency, ph.ServiceTime
		got[p+" lateness"], got[p+" unsent wait"] = ph.Lateness, ph.UnsentWait
	}
	for _, k := range res.Target().Queries.Kinds {
		got["query "+k.Kind+" latency"], got["query "+k.Kind+" service time"] = k.LatencyHistogram, k.ServiceTimeHistogram
	}
	if len(got) != len(tr) {
		t.Fatalf("compared %d histograms, recorded %d", len(got), len(tr))
	}
	for name, want := range tr {
		sameHistogram(t, name, got[name], want)
	}
	// Summaries are the merged histograms', never averaged.
	s := res.Summary
	for _, c := range []struct {
		name string
		got  stats.Summary
		h    *stats.Histogram
	}{
		{"write latency", s.WriteLatency, tr["measured write latency"]},
		{"freshness lag", s.FreshnessLag, tr["freshness lag"]},
		{"visibility latency", s.VisibilityLatency, tr["visibility latency"]},
		{"unsent wait", s.UnsentWait, tr["measured unsent wait"]},
		{"query latency", res.Target().Queries.Total.Latency, tr["query all latency"]},
	} {
		want := c.h.Summarize()
		if c.name == "freshness lag" {
			// The failed polls' bounds mark the figures they reach.
			want = want.WithLowerBounds(tr["freshness censored lag"])
		}
		if c.got != want {
			t.Errorf("summary of %s: %+v, want %+v", c.name, c.got, want)
		}
	}
	if want := float64(tr["visibility gap"].Quantile(0.99).Microseconds()) / 1000; s.VisibilityResolution != want || res.Target().Visibility.ResolutionMs != want {
		t.Errorf("visibility resolution %g ms (summary %g), want the merged gap's p99 %g", res.Target().Visibility.ResolutionMs, s.VisibilityResolution, want)
	}
	if s.UnsentWait.Clamped != 1 {
		t.Errorf("unsent wait: %d clamped at an hour, want the 1 of instance 1", s.UnsentWait.Clamped)
	}
}

// A read endpoint merges with the same endpoint of every instance, and
// the probes visible everywhere with theirs, exactly; its audit joins
// theirs. Instances that read from different endpoints are refused.
func TestMergeReadEndpoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tr := truth{}
	var rs []*results.Result
	for i := range 2 {
		rs = append(rs, synthetic(rng, shape{instance: i, instances: 2, seconds: 20, rate: 500, batchSize: 10, scale: 20, queries: true, readEndpoint: true}, tr))
		// Polls that went back to an older view: counts add, the
		// largest step is the larger.
		f := &rs[i].Reads()[0].Freshness
		f.StepsBack, f.StepBackMaxMs = int64(2-i), float64(300+500*i)
	}
	res, err := merge.Merge(roundTrip(t, rs))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reads()) != 1 || res.VisibleEverywhere == nil {
		t.Fatalf("%d read endpoints, everywhere %v; want 1 and set", len(res.Reads()), res.VisibleEverywhere)
	}
	e, every := res.Reads()[0], res.VisibleEverywhere
	for name, got := range map[string]*stats.Histogram{
		"read1 freshness lag": e.Freshness.Lag, "read1 freshness query service": e.Freshness.QueryService,
		"read1 freshness censored lag": e.Freshness.CensoredLag,
		"read1 visibility latency":     e.Visibility.Latency, "read1 probe query service": e.Visibility.QueryService,
		"read1 visibility gap": e.Visibility.Gap, "everywhere latency": every.Latency, "everywhere gap": every.Gap,
		"visibility latency": res.Target().Visibility.Latency,
	} {
		sameHistogram(t, name, got, tr[name])
	}
	var censored, before, missing, probes int64
	for _, r := range rs {
		x := r.Reads()[0]
		censored += x.Freshness.Censored
		before += x.Visibility.BeforeTarget
		missing += r.Summary.ReadEndpoints[0].Missing
		probes += r.VisibleEverywhere.Probes
	}
	s := res.Summary
	if e.Name != "read1" || e.Freshness.Censored != censored || e.Freshness.Errors["connection refused"].Count != censored || e.Visibility.BeforeTarget != before {
		t.Errorf("read1 merged: %q, %d failed polls (errors %v), %d before the target; want read1, %d, %d", e.Name, e.Freshness.Censored, e.Freshness.Errors, e.Visibility.BeforeTarget, censored, before)
	}
	if f := e.Freshness; f.StepsBack != 3 || f.StepBackMaxMs != 800 {
		t.Errorf("read1 merged: %d steps back, the largest %.0f ms; want 3 and 800", f.StepsBack, f.StepBackMaxMs)
	}
	if len(s.ReadEndpoints) != 1 || s.ReadEndpoints[0].Missing != missing || missing != 2 || !s.ReadEndpoints[0].Audited {
		t.Errorf("read1's summary %+v, want the 2 missing events of the instances' audits", s.ReadEndpoints)
	}
	if every.Probes != probes || s.VisibleEverywhere == nil || *s.VisibleEverywhere != tr["everywhere latency"].Summarize() {
		t.Errorf("everywhere: %d probes (want %d), summary %+v", every.Probes, probes, s.VisibleEverywhere)
	}
	if !strings.Contains(e.URL, "standby-0") || !strings.Contains(e.URL, "standby-1") {
		t.Errorf("read1's URL %q does not name both instances'", e.URL)
	}
	if e.Queries == nil || e.Queries.Total.Queries != rs[0].Reads()[0].Queries.Total.Queries+rs[1].Reads()[0].Queries.Total.Queries {
		t.Errorf("read1's queries not summed: %+v", e.Queries)
	}

	// read1's own series joins read1's, interval by interval (the
	// instances start at the same second here).
	if len(e.Series) != len(rs[0].Reads()[0].Series) {
		t.Fatalf("read1's merged series has %d intervals, want %d", len(e.Series), len(rs[0].Reads()[0].Series))
	}
	for i, p := range e.Series {
		a, b := rs[0].Reads()[0].Series[i], rs[1].Reads()[0].Series[i]
		if p.FreshnessN != a.FreshnessN+b.FreshnessN || p.FreshnessLagMs != max(a.FreshnessLagMs, b.FreshnessLagMs) || p.FreshnessLagMinMs != min(a.FreshnessLagMinMs, b.FreshnessLagMinMs) {
			t.Fatalf("read1's interval %d: %+v, want the join of %+v and %+v", i, p, a, b)
		}
	}

	rs[1].Reads()[0].Name = "read2"
	if msg := refused(t, roundTrip(t, rs)); !strings.Contains(msg, `read endpoints differs: "read1" in`) {
		t.Errorf("endpoints read1 and read2 merged: %s", msg)
	}
	rs[1].Endpoints, rs[1].VisibleEverywhere = []*results.Endpoint{rs[1].Target()}, nil
	if msg := refused(t, roundTrip(t, rs)); !strings.Contains(msg, `read endpoints differs`) {
		t.Errorf("an instance without read endpoints merged with one with: %s", msg)
	}
}

// Counts add up: every phase of the merge is the sum of the instances'
// and balances; the rates, completeness and queries are the sums.
func TestMergeCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var rs []*results.Result
	for i := range 3 {
		rs = append(rs, synthetic(rng, shape{instance: i, instances: 3, seconds: 20, rate: 500 * float64(i+1), batchSize: 10, scale: 10, queries: true}, nil))
	}
	ins := roundTrip(t, rs)
	res, err := merge.Merge(ins)
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, res, ins)
	if got, want := res.Target().Queries.Total.Queries, rs[0].Target().Queries.Total.Queries+rs[1].Target().Queries.Total.Queries+rs[2].Target().Queries.Total.Queries; got != want {
		t.Errorf("queries: %d, want %d", got, want)
	}
	if got := res.Target().Queries.TargetQPS; got != 300 {
		t.Errorf("target QPS %g, want the sum 300", got)
	}
	if b := res.Target().Queries.Beside; b == nil || b.AchievedEventsPerSec != res.Summary.AchievedEventsPerSec {
		t.Errorf("queries beside the ingest: %+v, want the merged ingest's figures", b)
	}
	if res.Config.Rate != "3000 events/s" || res.Config.Generators != 6 {
		t.Errorf("config rate %q, generators %d; want the sums 3000 events/s and 6", res.Config.Rate, res.Config.Generators)
	}
	if res.EndedEarly || len(res.Merged.Missing)+len(res.Merged.Partial) > 0 {
		t.Errorf("every instance complete, yet ended early %v (%s), missing %v, partial %v", res.EndedEarly, res.EndReason, res.Merged.Missing, res.Merged.Partial)
	}
	diffs := strings.Join(res.Merged.Differences, "\n")
	for _, want := range []string{"rate: 500 events/s (" + ins[0].Name + "), 1000 events/s", "seed: ", "host: host-0 (", "id nonce: "} {
		if !strings.Contains(diffs, want) {
			t.Errorf("differences do not list %q:\n%s", want, diffs)
		}
	}
	if strings.Contains(diffs, "generators") {
		t.Errorf("differences list the generators, which agree:\n%s", diffs)
	}
}

// checkSums checks what any merge must hold: phase counts and
// completeness summed, rates summed, every phase balanced.
func checkSums(t *testing.T, res *results.Result, ins []merge.Input) {
	t.Helper()
	var achieved, target, mb float64
	var gens, acked int
	var longest float64
	for _, in := range ins {
		s := in.Result.Summary
		achieved += s.AchievedEventsPerSec
		target += s.TargetEventsPerSec
		mb += s.AchievedMBPerSec
		longest = max(longest, s.MeasuredS)
		gens += len(in.Result.Generators)
		for _, c := range in.Result.Target().Completeness {
			acked += int(c.Acknowledged)
		}
	}
	s := res.Summary
	if s.AchievedEventsPerSec != achieved || s.TargetEventsPerSec != target || s.AchievedMBPerSec != mb || s.MeasuredS != longest {
		t.Errorf("summary: achieved %g events/s %g MB/s of %g over %g s; want the sums %g, %g of %g over the longest %g s",
			s.AchievedEventsPerSec, s.AchievedMBPerSec, s.TargetEventsPerSec, s.MeasuredS, achieved, mb, target, longest)
	}
	var mergedAcked int
	for _, c := range res.Target().Completeness {
		mergedAcked += int(c.Acknowledged)
	}
	if len(res.Generators) != gens || len(res.Target().Completeness) != gens || mergedAcked != acked {
		t.Errorf("%d generators, %d audited with %d acknowledged; want %d, %d and %d", len(res.Generators), len(res.Target().Completeness), mergedAcked, gens, gens, acked)
	}
	for _, p := range res.Phases {
		if p.Due != p.Dispatched+p.Unsent || p.Dispatched != p.Acked+p.Failed {
			t.Errorf("phase %s: due %d, dispatched %d, unsent %d, acknowledged %d, failed %d: does not balance", p.Name, p.Due, p.Dispatched, p.Unsent, p.Acked, p.Failed)
		}
		var due, acked, failed, batches int64
		for _, in := range ins {
			if q := in.Result.Phase(p.Name); q != nil {
				due, acked, failed, batches = due+q.Due, acked+q.Acked, failed+q.Failed, batches+q.Batches
			}
		}
		if p.Due != due || p.Acked != acked || p.Failed != failed || p.Batches != batches {
			t.Errorf("phase %s: due %d, acknowledged %d, failed %d, batches %d; want the sums %d, %d, %d, %d", p.Name, p.Due, p.Acked, p.Failed, p.Batches, due, acked, failed, batches)
		}
	}
	if s.EventsDue != s.EventsAcked+s.EventsFailed+s.EventsUnsent {
		t.Errorf("summary: due %d ≠ acknowledged %d + failed %d + unsent %d", s.EventsDue, s.EventsAcked, s.EventsFailed, s.EventsUnsent)
	}
}

// recorder is an Observer that keeps every write and visibility sample,
// as they happen.
type recorder struct {
	stats.NopObserver
	mu                      sync.Mutex
	write, service, visible *stats.Histogram
}

func newRecorder() *recorder {
	return &recorder{write: stats.NewHistogram(), service: stats.NewHistogram(), visible: stats.NewHistogram()}
}

func (r *recorder) Written(_ string, _, _, _ int, _ map[string]int, latency, service time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.write.Record(latency)
	r.service.Record(service)
}

func (r *recorder) Visible(_, _ string, latency time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.visible.Record(latency)
}

// Three real instances of one experiment, run at once against one sim
// target from a common start: their merge holds exactly every write and
// visibility sample the three observed, and every count adds up.
func TestMergeRuns(t *testing.T) { synctest.Test(t, testMergeRuns) }

func testMergeRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three instances for 2 s")
	}
	tgt := sim.New(sim.Config{})
	start := time.Now().Add(time.Second).Truncate(time.Millisecond)
	const n = 3
	rs := make([]*results.Result, n)
	recs := make([]*recorder, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		recs[i] = newRecorder()
		cfg := bench.Config{
			Ingest: ingest.Config{
				// No warm-up: every batch is of the measured phase, as
				// every sample the observer sees.
				Rate: pace.Rate{PerSecond: 500 * float64(i+1), Unit: pace.Events}, BatchSize: 10, Duration: 2 * time.Second,
				Generators: 2, MaxInflight: 16, DocSize: 500, WriteTimeout: 5 * time.Second, ProbeRate: 50,
				UpdateShare: 0.3,
			},
			PollInterval: 50 * time.Millisecond, Drain: 10 * time.Second, Observer: recs[i],
			Experiment: &results.Experiment{Name: "three", Instance: i, Instances: n, StartAt: start},
		}
		wg.Go(func() { rs[i], errs[i] = bench.Run(context.Background(), tgt, cfg) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
		if rs[i].Target().Visibility.Censored > 0 {
			t.Fatalf("instance %d: %d probes never seen after the drain; the comparison needs every probe seen", i, rs[i].Target().Visibility.Censored)
		}
	}
	ins := roundTrip(t, rs)
	res, err := merge.Merge(ins)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*stats.Histogram{"write latency": stats.NewHistogram(), "service time": stats.NewHistogram(), "visibility latency": stats.NewHistogram()}
	for _, r := range recs {
		want["write latency"].Merge(r.write)
		want["service time"].Merge(r.service)
		want["visibility latency"].Merge(r.visible)
	}
	m := res.Phase(results.PhaseMeasured)
	sameHistogram(t, "write latency", m.WriteLatency, want["write latency"])
	sameHistogram(t, "service time", m.ServiceTime, want["service time"])
	sameHistogram(t, "visibility latency", res.Target().Visibility.Latency, want["visibility latency"])
	checkSums(t, res, ins)
	if !res.Summary.Audited || res.Summary.Missing != 0 {
		t.Errorf("merged audit: audited %v, missing %d; want every instance's clean audit", res.Summary.Audited, res.Summary.Missing)
	}
	// 500 + 1000 + 1500 events/s for 2 s.
	if s := res.Summary; s.EventsDue != 6000 || s.TargetEventsPerSec != 3000 {
		t.Errorf("merged: %d events due at %g events/s, want 6000 at 3000", s.EventsDue, s.TargetEventsPerSec)
	}
	if !res.StartedAt.Equal(start) {
		t.Errorf("merged start %s, want the common start %s", res.StartedAt, start)
	}
	// The update stream's figures merge as the inserts' do.
	updVis := stats.NewHistogram()
	var updAcked, audited int64
	for _, r := range rs {
		updVis.Merge(r.Target().Updates.Visibility.Latency)
		updAcked += r.Phase(results.PhaseMeasured).UpdatesAcked
		audited += int64(len(r.Target().Updates.Audit))
	}
	sameHistogram(t, "update visibility", res.Target().Updates.Visibility.Latency, updVis)
	if u := res.Summary.Updates; u == nil || u.Acked != updAcked || updAcked == 0 || !u.Audited || u.Lost != 0 || int64(len(res.Target().Updates.Audit)) != audited {
		t.Errorf("merged updates %+v (%d audits), want %d acknowledged over %d audited generators, none lost", u, len(res.Target().Updates.Audit), updAcked, audited)
	}
}

// refused returns Merge's error on ins, failing when there is none.
func refused(t *testing.T, ins []merge.Input) string {
	t.Helper()
	res, err := merge.Merge(ins)
	if err == nil {
		t.Fatalf("merged %d inputs that differ: %+v", len(ins), res.Merged)
	}
	return err.Error()
}

func instances(n, of int) []*results.Result {
	rng := rand.New(rand.NewPCG(5, 6))
	var rs []*results.Result
	for i := range n {
		rs = append(rs, synthetic(rng, shape{instance: i, instances: of, seconds: 10, rate: 1000, batchSize: 10, scale: 5}, nil))
	}
	return rs
}

func TestMergeRefusesDifferences(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(r *results.Result)
		want   []string
	}{
		{"batch size", func(r *results.Result) { r.Config.BatchSize = 100 }, []string{"batch size differs: 10 in ", "instance-0.json", ", 100 in ", "instance-2.json"}},
		{"target setting", func(r *results.Result) { r.Config.TargetSettings["table"] = "other" }, []string{`target settings differs: "table=events" in `, `"table=other" in `}},
		{"via", func(r *results.Result) {
			r.Config.Via, r.Config.ViaSettings = "kafka://127.0.0.1:19092/t", map[string]string{"acks": "all"}
		}, []string{`via settings differs: none (direct writes) in `, `"acks=all" in `}},
		{"experiment", func(r *results.Result) { r.Experiment.Name = "other" }, []string{`experiment name differs: "exp" in `, `"other" in `}},
		{"instance count", func(r *results.Result) { r.Experiment.Instances = 4 }, []string{"instances differs: 3 in ", "4 in "}},
		{"start", func(r *results.Result) { r.Experiment.StartAt = base.Add(time.Second) }, []string{"start differs: 2026-11-23T10:00:00Z in ", "2026-11-23T10:00:01Z in "}},
		{"rate unit", func(r *results.Result) { r.Config.RateUnit = "bytes/s" }, []string{"rate unit differs: events/s in ", "bytes/s in "}},
		{"target", func(r *results.Result) { r.Environment.Target = "postgres" }, []string{"target differs: sqlite in ", "postgres in "}},
		{"kind", func(r *results.Result) { r.Kind = results.KindQuery }, []string{"kind differs: run in ", "query in "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := instances(3, 3)
			c.change(rs[2])
			msg := refused(t, roundTrip(t, rs))
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("refusal %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestMergeRefusesInputs(t *testing.T) {
	t.Run("instance twice", func(t *testing.T) {
		rs := instances(3, 3)
		rs[2].Experiment.Instance = 0
		msg := refused(t, roundTrip(t, rs))
		if !strings.Contains(msg, "instance 0 twice: in ") || !strings.Contains(msg, "instance-0.json") || !strings.Contains(msg, "instance-2.json") {
			t.Errorf("refusal %q does not name instance 0 and both files", msg)
		}
	})
	t.Run("the same file twice", func(t *testing.T) {
		ins := roundTrip(t, instances(2, 2))
		msg := refused(t, append(ins, ins[1]))
		if !strings.Contains(msg, "instance 1 twice") {
			t.Errorf("refusal %q does not name instance 1", msg)
		}
	})
	t.Run("no experiment", func(t *testing.T) {
		rs := instances(2, 2)
		rs[1].Experiment = nil
		_, err := merge.Merge(roundTrip(t, rs))
		if !errors.Is(err, merge.ErrNoExperiment) || !strings.Contains(err.Error(), "instance-1.json") {
			t.Errorf("error %v, want ErrNoExperiment naming instance-1.json", err)
		}
	})
	for kind, want := range map[string]string{
		results.KindPeak: "is a peak search: only run results and queries beside an ingest merge", results.KindStep: "a step of a peak search",
		results.KindSweep: "a QPS sweep", results.KindMerged: "is merged already",
	} {
		t.Run(kind, func(t *testing.T) {
			rs := instances(2, 2)
			rs[0].Kind = kind
			if msg := refused(t, roundTrip(t, rs)); !strings.Contains(msg, want) || !strings.Contains(msg, "instance-0.json") {
				t.Errorf("refusal %q does not contain %q and the file", msg, want)
			}
		})
	}
	t.Run("query alone", func(t *testing.T) {
		rs := instances(2, 2)
		rs[0].Kind, rs[0].Generators = results.KindQuery, nil
		if msg := refused(t, roundTrip(t, rs)); !strings.Contains(msg, "query load without an ingest") {
			t.Errorf("refusal %q", msg)
		}
	})
	t.Run("none", func(t *testing.T) {
		refused(t, nil)
	})
}

// An instance with no file is named missing, one that ended early
// partial; either makes the merge end early, naming them.
func TestMergeMissingAndPartial(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		rs := instances(3, 3)
		ins := roundTrip(t, []*results.Result{rs[2], rs[0]}) // any order
		res, err := merge.Merge(ins)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Merged
		if len(m.Missing) != 1 || m.Missing[0] != 1 || len(m.Partial) != 0 {
			t.Errorf("missing %v, partial %v; want instance 1 missing", m.Missing, m.Partial)
		}
		if len(m.Rows) != 2 || m.Rows[0].Instance != 0 || m.Rows[1].Instance != 2 || m.Rows[1].File != ins[0].Name {
			t.Errorf("rows %+v, want instances 0 and 2 in order, with their files", m.Rows)
		}
		if !res.EndedEarly || !strings.Contains(res.EndReason, "2 of 3 instances merged; no results file for instance 1") {
			t.Errorf("ended early %v: %q; want instance 1 named missing", res.EndedEarly, res.EndReason)
		}
		checkSums(t, res, ins)
	})
	t.Run("partial", func(t *testing.T) {
		rs := instances(3, 3)
		rs[1].EndedEarly, rs[1].EndReason, rs[1].Target().Completeness = true, "interrupted", nil
		rs[1].Summary = results.Summarize(rs[1], rs[1].Summary.MeasuredS)
		rs[2].Target().AuditError = "count generator gen-2-a: connection refused"
		ins := roundTrip(t, rs)
		res, err := merge.Merge(ins)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Merged
		if len(m.Partial) != 2 || m.Partial[0] != 1 || m.Partial[1] != 2 || len(m.Missing) != 0 {
			t.Errorf("partial %v, missing %v; want instances 1 and 2 partial", m.Partial, m.Missing)
		}
		for _, want := range []string{"3 of 3 instances merged", "instance 1 (" + ins[1].Name + ") ended early: interrupted", "instance 2 (" + ins[2].Name + ") was not audited: count generator"} {
			if !strings.Contains(res.EndReason, want) {
				t.Errorf("end reason %q does not contain %q", res.EndReason, want)
			}
		}
		if !res.EndedEarly || res.Summary.Audited || !strings.Contains(res.Target().AuditError, "instance 2 (") {
			t.Errorf("ended early %v, audited %v, audit error %q; want a partial, unaudited merge naming instance 2", res.EndedEarly, res.Summary.Audited, res.Target().AuditError)
		}
	})
}

// Two instances whose starts are 2 s apart line up on the earlier start;
// a coarser series sets the interval width.
func TestMergeSeriesAlignment(t *testing.T) {
	point := func(i int, width float64, target int64, p99, lagMin float64, inflight int64) stats.Point {
		return stats.Point{StartS: float64(i) * width, WidthS: width, TargetEvents: target, AckedEvents: target,
			WriteP99Ms: p99, WriteMeanMs: p99 / 2, FreshnessLagMs: 2 * lagMin, FreshnessLagMinMs: lagMin, FreshnessN: 1, Inflight: inflight}
	}
	rs := instances(2, 2)
	rs[0].Series, rs[1].Series = nil, nil
	for i := range 5 {
		rs[0].Series = append(rs[0].Series, point(i, 1, 100, 10, 50, 4))
		rs[1].Series = append(rs[1].Series, point(i, 1, 10, 30, 20, 3))
	}
	rs[1].StartedAt = rs[0].StartedAt.Add(2 * time.Second)
	res, err := merge.Merge(roundTrip(t, rs))
	if err != nil {
		t.Fatal(err)
	}
	wantTarget := []int64{100, 100, 110, 110, 110, 10, 10}
	if len(res.Series) != len(wantTarget) {
		t.Fatalf("%d points, want %d: %+v", len(res.Series), len(wantTarget), res.Series)
	}
	for i, p := range res.Series {
		both := wantTarget[i] == 110
		switch {
		case p.StartS != float64(i) || p.WidthS != 1:
			t.Errorf("point %d: at %g s, %g s wide; want %d s, 1 s wide", i, p.StartS, p.WidthS, i)
		case p.TargetEvents != wantTarget[i]:
			t.Errorf("point %d: %d events due, want %d", i, p.TargetEvents, wantTarget[i])
		case both && (p.WriteP99Ms != 30 || p.FreshnessLagMinMs != 20 || p.FreshnessLagMs != 100 || p.Inflight != 7):
			t.Errorf("point %d: write p99 %g, lag min %g max %g, in flight %d; want the largest p99 30, the smallest lag 20, the largest 100, in flight 4+3", i, p.WriteP99Ms, p.FreshnessLagMinMs, p.FreshnessLagMs, p.Inflight)
		case both && p.WriteMeanMs != (5*100+15*10)/110.0:
			t.Errorf("point %d: write mean %g ms, want the mean weighted by events %g", i, p.WriteMeanMs, (5*100+15*10)/110.0)
		}
	}

	t.Run("widest interval", func(t *testing.T) {
		rs := instances(2, 2)
		rs[0].Series, rs[1].Series = nil, nil
		for i := range 6 {
			rs[0].Series = append(rs[0].Series, point(i, 1, 100, float64(10+i), 50, int64(i)))
		}
		for i := range 3 {
			rs[1].Series = append(rs[1].Series, point(i, 2, 10, 1, 60, 1))
		}
		rs[1].StartedAt = rs[0].StartedAt
		res, err := merge.Merge(roundTrip(t, rs))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Series) != 3 {
			t.Fatalf("%d points, want 3 of 2 s", len(res.Series))
		}
		for i, p := range res.Series {
			// Instance 0's seconds 2i and 2i+1: in flight at most 2i+1 at
			// once, p99 up to 11+2i.
			if p.WidthS != 2 || p.StartS != float64(2*i) || p.TargetEvents != 210 || p.Inflight != int64(2*i+1)+1 || p.WriteP99Ms != float64(11+2*i) {
				t.Errorf("point %d: %+v; want 2 s at %d s, 210 events, in flight %d, p99 %d", i, p, 2*i, 2*i+2, 11+2*i)
			}
		}
	})
}

// A merged file reads back as it was written, and is refused as an input
// to another merge.
func TestMergedFileRoundTrip(t *testing.T) {
	res, err := merge.Merge(roundTrip(t, instances(2, 3)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "merged.json")
	if err := results.WriteFile(path, res); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Kind != results.KindMerged || back.Merged == nil || len(back.Merged.Rows) != 2 || len(back.Merged.Missing) != 1 {
		t.Fatalf("read back kind %q, merged %+v", back.Kind, back.Merged)
	}
	if back.Summary.WriteLatency != res.Summary.WriteLatency {
		t.Errorf("write latency read back %+v, written %+v", back.Summary.WriteLatency, res.Summary.WriteLatency)
	}
	if _, err := merge.Merge([]merge.Input{{Name: path, Result: back}}); err == nil || !strings.Contains(err.Error(), "merged already") {
		t.Errorf("merging a merged file: %v", err)
	}
}
