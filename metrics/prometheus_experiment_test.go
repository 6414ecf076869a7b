package metrics

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/merge"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// instance is one freshbench process of the experiment under test.
type instance struct {
	cmd    *exec.Cmd
	out    string // its results file
	addr   chan string
	exited chan struct{}
	exitAt time.Time
	err    error

	mu     sync.Mutex
	stderr bytes.Buffer
}

func (in *instance) log() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.stderr.String()
}

var metricsLine = regexp.MustCompile(`^metrics: http://(\S+)` + regexp.QuoteMeta(Path))

// startInstance starts bin with args and reads the address of its metrics
// endpoint from its standard error. The process is killed, if still
// running, when the test ends.
func startInstance(t *testing.T, ctx context.Context, bin, out string, args ...string) *instance {
	t.Helper()
	in := &instance{out: out, addr: make(chan string, 1), exited: make(chan struct{})}
	in.cmd = exec.CommandContext(ctx, bin, args...)
	stderr, err := in.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			in.mu.Lock()
			fmt.Fprintln(&in.stderr, sc.Text())
			in.mu.Unlock()
			if m := metricsLine.FindStringSubmatch(sc.Text()); m != nil {
				in.addr <- m[1]
			}
		}
		in.err = in.cmd.Wait()
		in.exitAt = time.Now()
		close(in.exited)
	}()
	t.Cleanup(func() {
		_ = in.cmd.Process.Kill()
		<-in.exited
	})
	return in
}

// TestPrometheusExperiment runs an experiment of three freshbench
// processes against simulated databases, scraped by two real Prometheus
// servers with deploy/prometheus/rules.yml loaded: one that scrapes
// native histograms, one the classic buckets. Each server's view across
// the instances must match the instances' results files merged: totals
// exactly, quantiles within one bucket of the exact quantile of the
// merged HDR histograms, 9.05 % wide for the native buckets
// (2^(1/8), schema 3) and 26 % for the classic ones (R10). Every
// recording rule must evaluate, and every query of the Grafana dashboard
// must run.
func TestPrometheusExperiment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds freshbench, runs three instances for 3s under two Prometheus servers")
	}
	// Its own Prometheus and scrape targets: beside the other Prometheus tests.
	t.Parallel()
	prometheusBin(t) // skips before the build when there is none
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin, err := testenv.BuildFreshbench(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// One simulated database setting for every instance (merge refuses
	// instances of other settings), but rates of their own: a stream's
	// batches come every batch size / its rate, so each instance's
	// freshness lag has a sawtooth of its own and the pooled distribution
	// is unlike any instance's; a quantile of one instance, or an average
	// of the instances' quantiles, would not pass for the pooled one.
	const experiment = "prom-3x"
	rates := []string{"150", "300", "450"} // 900 in all
	// Far enough ahead for three processes to start on a busy machine.
	startAt := time.Now().Add(10 * time.Second).UTC()
	instances := make([]*instance, len(rates))
	for i, rate := range rates {
		out := filepath.Join(dir, fmt.Sprintf("instance-%d.json", i))
		instances[i] = startInstance(t, ctx, bin, out, "run",
			"--target", "sim://?visibility_delay=100ms&write_delay=4ms",
			"--experiment", experiment, "--instance", strconv.Itoa(i), "--instances", strconv.Itoa(len(rates)),
			"--start-at", startAt.Format(time.RFC3339Nano), "--rate", rate,
			"--generators", "2", "--batch-size", "10", "--doc-size", "400",
			// No warm-up: every write and probe is then in the results
			// file's measured window, as in the live metrics. 3 s hold
			// 60 probes and 450 to 1,350 events per instance: the
			// figures compared are exact counts and bucket bounds, which a
			// longer run would not make more exact.
			"--duration", "3s", "--warmup", "0s", "--drain", "2s",
			"--poll-interval", "50ms", "--probe-rate", "20",
			// Eight scrapes after the run.
			"--metrics-addr", "127.0.0.1:0", "--metrics-linger", (8 * scrapeEvery).String(),
			"--out", out, "--quiet")
	}
	var targets []string
	for i, in := range instances {
		select {
		case a := <-in.addr:
			targets = append(targets, a)
		case <-in.exited:
			t.Fatalf("instance %d exited before serving metrics (%v):\n%s", i, in.err, in.log())
		case <-ctx.Done():
			t.Fatalf("instance %d never said where it serves metrics:\n%s", i, in.log())
		}
	}
	servers := map[string]*prometheusServer{
		"native":  startPrometheusWith(t, prometheusOptions{targets: targets, native: true, rules: rulesFile}),
		"classic": startPrometheusWith(t, prometheusOptions{targets: targets, rules: rulesFile}),
	}
	for kind, p := range servers {
		if err := waitFor(ctx, 30*time.Second, func() (bool, error) {
			v, err := p.scalar(ctx, `count(up{job="freshbench"} == 1)`)
			return v == float64(len(targets)), err
		}); err != nil {
			t.Fatalf("%s prometheus never scraped every instance %v: %v\n%s", kind, targets, err, p.logTail())
		}
	}

	// The processes end once they have lingered; Prometheus then marks
	// their series stale, so the queries look at an instant before the
	// first one ended (settledAt).
	firstExit := time.Time{}
	for i, in := range instances {
		select {
		case <-in.exited:
		case <-ctx.Done():
			t.Fatalf("instance %d still running after 4 minutes:\n%s", i, in.log())
		}
		if in.err != nil {
			t.Fatalf("instance %d: %v\n%s", i, in.err, in.log())
		}
		if firstExit.IsZero() || in.exitAt.Before(firstExit) {
			firstExit = in.exitAt
		}
	}

	// The exact figures: the results files merged, as freshbench merge
	// merges them.
	var inputs []merge.Input
	perInstance := map[string]int64{}
	var ended time.Time // the last run's end: every value final
	for i, in := range instances {
		r, err := results.ReadFile(in.out)
		if err != nil {
			t.Fatal(err)
		}
		if r.EndedAt.After(ended) {
			ended = r.EndedAt
		}
		if e := r.Experiment; e == nil || e.Name != experiment || e.Instance != i {
			t.Fatalf("instance %d's results file places it as %v", i, e)
		}
		if r.Summary.EventsFailed != 0 || r.Summary.Missing != 0 || r.Target().Visibility.Censored != 0 || r.Target().Visibility.Seen == 0 {
			t.Fatalf("instance %d went wrong: %d failed, %d missing, %d probes censored, %d seen", i,
				r.Summary.EventsFailed, r.Summary.Missing, r.Target().Visibility.Censored, r.Target().Visibility.Seen)
		}
		for _, p := range r.Phases {
			perInstance[strconv.Itoa(i)] += p.Acked
		}
		inputs = append(inputs, merge.Input{Name: in.out, Result: r})
	}
	merged, err := merge.Merge(inputs)
	if err != nil {
		t.Fatal(err)
	}
	writes, fresh, vis := stats.NewHistogram(), merged.Target().Freshness.Lag, merged.Target().Visibility.Latency
	var acked, ackedBytes, batches, unsent int64
	for _, p := range merged.Phases {
		writes.Merge(p.WriteLatency)
		acked += p.Acked
		ackedBytes += p.AckedBytes
		batches += p.Batches
		unsent += p.Unsent
	}

	sel := fmt.Sprintf(`{experiment=%q}`, experiment)
	for kind, p := range servers {
		at, err := settledAt(ctx, p, sel, len(instances), ended, firstExit)
		if err != nil {
			t.Fatalf("%s prometheus: %v\n%s", kind, err, p.logTail())
		}
		scalar := func(q string) float64 {
			t.Helper()
			v, err := p.vectorAt(ctx, q, at)
			if err != nil {
				t.Fatalf("%s prometheus: %v", kind, err)
			}
			if len(v) != 1 {
				t.Fatalf("%s prometheus: %s: %d series, want 1: %v", kind, q, len(v), v)
			}
			return v[0].value
		}
		for _, c := range []struct {
			q    string
			want int64
		}{
			{`sum(freshbench_events_written_total` + sel + `)`, acked},
			{`sum(freshbench_written_bytes_total` + sel + `)`, ackedBytes},
			{`sum(freshbench_batches_total` + sel + `)`, batches},
			{`sum(freshbench_events_unsent_total` + sel + `)`, unsent},
			{`sum(freshbench_events_failed_total` + sel + `) or vector(0)`, 0},
			// Every instance ran at its share of --total-rate at once.
			{`max_over_time(sum(freshbench_target_events_per_second` + sel + `)[1m:1s])`, 900},
		} {
			if got := scalar(c.q); got != float64(c.want) {
				t.Errorf("%s prometheus: %s = %g, the results files say %d", kind, c.q, got, c.want)
			}
		}
		v, err := p.vectorAt(ctx, `sum by (freshbench_instance) (freshbench_events_written_total`+sel+`)`, at)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, s := range v {
			got[s.labels[LabelInstance]] = int64(s.value)
		}
		if fmt.Sprint(got) != fmt.Sprint(perInstance) {
			t.Errorf("%s prometheus: events written by freshbench_instance %v, the results files say %v", kind, got, perInstance)
		}

		// Counts and quantiles: of the native histograms from one server,
		// of the classic buckets from the other.
		count, quantile, bucket := `histogram_count(sum(%s`+sel+`))`, `histogram_quantile(%g, sum(%s`+sel+`))`, nativeBucketOf
		if kind == "classic" {
			count, quantile, bucket = `sum(%s_count`+sel+`)`, `histogram_quantile(%g, sum by (le) (%s_bucket`+sel+`))`, bucketOf
		}
		for _, h := range []struct {
			metric string
			hdr    *stats.Histogram
		}{
			{"freshbench_write_latency_seconds", writes},
			{"freshbench_visibility_latency_seconds", vis},
			{"freshbench_freshness_lag_seconds", fresh},
		} {
			// The live freshness lag also counts the few samples taken just
			// before the common start and after the schedule, which the
			// results files leave out of their window.
			n := int64(scalar(fmt.Sprintf(count, h.metric)))
			extra := n - h.hdr.Count()
			if extra < 0 || (h.metric != "freshbench_freshness_lag_seconds" && extra != 0) || extra > 4*2*int64(len(instances)) {
				t.Errorf("%s prometheus: %d samples of %s, the results files %d", kind, n, h.metric, h.hdr.Count())
			}
			for _, q := range []float64{0.5, 0.95, 0.99} {
				checkQuantileOf(t, kind+" "+h.metric, q, scalar(fmt.Sprintf(quantile, q, h.metric)), h.hdr, extra, bucket)
			}
			checkRule(t, ctx, p, kind, at, experiment, h.metric, h.hdr, bucket)
		}
		checkRulesHealthy(t, ctx, p, kind)
		checkDashboardQueries(t, ctx, p, kind, at, experiment)
	}
}

// settledAt is the latest instant between ended (the last run's end)
// and before (the first instance's exit) at which p holds the series of
// all n instances, each last scraped after ended: their final values. A
// fixed instant may miss one: a scrape that times out on a busy machine
// leaves its target's series stale until the next one (seen: one
// instance of three missing a second before the first exit, in one of
// the two servers).
func settledAt(ctx context.Context, p *prometheusServer, sel string, n int, ended, before time.Time) (time.Time, error) {
	q := `min by (` + LabelInstance + `) (timestamp(freshbench_events_written_total` + sel + `))`
	for at := before; !at.Before(ended); at = at.Add(-scrapeEvery / 5) {
		v, err := p.vectorAt(ctx, q, at)
		if err != nil {
			return time.Time{}, err
		}
		final := 0
		for _, s := range v {
			if s.value >= float64(ended.UnixMilli())/1000 {
				final++
			}
		}
		if final == n {
			return at, nil
		}
	}
	return time.Time{}, fmt.Errorf("no instant between the runs' end %s and the first exit %s holds the final values of all %d instances", ended.Format(time.RFC3339Nano), before.Format(time.RFC3339Nano), n)
}

// checkRule checks that the recording rule of metric's quantiles gives,
// in p, the three quantiles of the experiment from the histograms of
// kind, each within the buckets of the smallest and the largest of
// hdr's samples: the rule's window holds some of the samples hdr holds.
func checkRule(t *testing.T, ctx context.Context, p *prometheusServer, kind string, at time.Time, experiment, metric string, hdr *stats.Histogram, bucket func(float64) (float64, float64)) {
	t.Helper()
	rule := fmt.Sprintf(`experiment:%s:quantile_rate1m{experiment=%q,histogram=%q}`, metric, experiment, kind)
	v, err := p.vectorAt(ctx, rule, at)
	if err != nil {
		t.Fatal(err)
	}
	lo, _ := bucket(hdr.Quantile(0).Seconds())
	_, hi := bucket(hdr.Quantile(1).Seconds())
	quantiles := map[string]bool{}
	for _, s := range v {
		quantiles[s.labels["quantile"]] = true
		if math.IsNaN(s.value) || s.value < lo-1e-6 || s.value > hi*1.001 {
			t.Errorf("%s prometheus: %s%v = %g, outside the buckets (%g, %g] of the samples", kind, rule, s.labels, s.value, lo, hi)
		}
	}
	if len(quantiles) != 3 || !quantiles["0.5"] || !quantiles["0.95"] || !quantiles["0.99"] {
		t.Errorf("%s prometheus: %s gave quantiles %v, want 0.5, 0.95 and 0.99", kind, rule, quantiles)
	}
}

// checkRulesHealthy checks that p loaded every rule of the rules file and
// evaluates each without error.
func checkRulesHealthy(t *testing.T, ctx context.Context, p *prometheusServer, kind string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/api/v1/rules", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name, Health, LastError string
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range body.Data.Groups {
		for _, r := range g.Rules {
			n++
			if r.Health != "ok" {
				t.Errorf("%s prometheus: rule %s is %q: %s", kind, r.Name, r.Health, r.LastError)
			}
		}
	}
	if _, exprs := rules(t); n != len(exprs) {
		t.Errorf("%s prometheus loaded %d rules, the rules file has %d", kind, n, len(exprs))
	}
}

// checkDashboardQueries runs every query of the Grafana dashboard in p,
// for the experiment, and checks that each panel shows something.
func checkDashboardQueries(t *testing.T, ctx context.Context, p *prometheusServer, kind string, at time.Time, experiment string) {
	t.Helper()
	_, panels := readDashboard(t)
	vars := strings.NewReplacer("$experiment", experiment, "$__rate_interval", "1m")
	for _, pn := range panels {
		series := 0
		for _, tg := range pn.Targets {
			v, err := p.vectorAt(ctx, vars.Replace(tg.Expr), at)
			if err != nil {
				t.Errorf("%s prometheus: panel %q: %v", kind, pn.Title, err)
			}
			series += len(v)
		}
		if series == 0 && len(pn.Targets) > 0 {
			t.Errorf("%s prometheus: panel %q shows nothing", kind, pn.Title)
		}
	}
}
