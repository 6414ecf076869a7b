package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/stats"
)

// prometheusBinEnv overrides where the prometheus binary is looked up.
const prometheusBinEnv = "FRESHBENCH_PROMETHEUS_BIN"

// prometheusServer is a Prometheus started for one test.
type prometheusServer struct {
	URL string // http://127.0.0.1:port
	cmd *exec.Cmd
	log string
}

// prometheusBin returns the prometheus binary to run. It skips the test
// when there is none, unless FRESHBENCH_REQUIRE_SERVERS=1, which fails it.
func prometheusBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(prometheusBinEnv); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		testenv.Unavailable(t, "no prometheus binary on PATH; install it with scripts/prometheus.sh install (or set "+prometheusBinEnv+")")
	}
	return bin
}

// prometheusOptions say what a test's Prometheus scrapes, and how.
type prometheusOptions struct {
	targets []string // freshbench metrics endpoints, host:port
	native  bool     // scrape native histograms (protobuf)
	rules   string   // a rule file to load, if any
}

// scrapeEvery is how often a test's Prometheus scrapes and evaluates its
// rules: the tests wait for scrapes after their feed, which a shorter
// interval shortens. Prometheus allows a timeout no longer than the
// interval.
const scrapeEvery = 500 * time.Millisecond

// startPrometheus starts a throwaway Prometheus that scrapes
// http://scrapeAddr/metrics every scrapeEvery, waits until it is ready
// and stops it when the test ends. It skips the test as prometheusBin
// does.
func startPrometheus(t *testing.T, scrapeAddr string) *prometheusServer {
	t.Helper()
	return startPrometheusWith(t, prometheusOptions{targets: []string{scrapeAddr}})
}

// startPrometheusWith starts a throwaway Prometheus as o says, scraping
// and evaluating rules every scrapeEvery; see startPrometheus.
func startPrometheusWith(t *testing.T, o prometheusOptions) *prometheusServer {
	t.Helper()
	bin := prometheusBin(t)
	dir := t.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, `global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
`, scrapeEvery)
	if o.rules != "" {
		abs, err := filepath.Abs(o.rules)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&cfg, "rule_files: [%q]\n", abs)
	}
	fmt.Fprintf(&cfg, `scrape_configs:
  - job_name: freshbench
    metrics_path: %s
    static_configs:
      - targets: [`, Path)
	for i, a := range o.targets {
		if i > 0 {
			cfg.WriteString(", ")
		}
		fmt.Fprintf(&cfg, "%q", a)
	}
	cfg.WriteString("]\n")
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	listen := freeLoopbackAddr(t)
	logPath := filepath.Join(dir, "prometheus.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	args := []string{
		"--config.file=" + cfgPath,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + listen,
		"--log.level=warn",
	}
	if o.native {
		args = append(args, "--enable-feature=native-histograms")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	p := &prometheusServer{URL: "http://" + listen, cmd: cmd, log: logPath}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { p.stop(t, exited) })

	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case err := <-exited:
			exited <- err // for stop
			t.Fatalf("prometheus exited before it was ready (%v):\n%s", err, p.logTail())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready at %s after 30s:\n%s", p.URL, p.logTail())
		}
	}
}

// stop ends Prometheus gracefully, so that its temporary directory can be
// removed, and kills it if it does not stop in time.
func (p *prometheusServer) stop(t *testing.T, exited chan error) {
	select {
	case <-exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Logf("prometheus did not stop on SIGTERM within 10s; killing it")
		_ = p.cmd.Process.Kill()
		<-exited
	}
}

func (p *prometheusServer) logTail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// sample is one element of an instant vector.
type sample struct {
	labels map[string]string
	value  float64
}

// query runs an instant PromQL query and returns its vector result as
// label set → value.
func (p *prometheusServer) query(ctx context.Context, q string) (map[string]float64, error) {
	v, err := p.vector(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(v))
	for _, s := range v {
		out[fmt.Sprint(s.labels)] = s.value
	}
	return out, nil
}

// labelValues returns the values that label takes in the series of q,
// sorted.
func (p *prometheusServer) labelValues(ctx context.Context, q, label string) ([]string, error) {
	v, err := p.vector(ctx, fmt.Sprintf("group by (%s) (%s)", label, q))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(v))
	for _, s := range v {
		out = append(out, s.labels[label])
	}
	sort.Strings(out)
	return out, nil
}

// vector runs an instant PromQL query whose result is a vector.
func (p *prometheusServer) vector(ctx context.Context, q string) ([]sample, error) {
	return p.vectorAt(ctx, q, time.Time{})
}

// vectorAt runs an instant PromQL query at time at (now if zero) whose
// result is a vector.
func (p *prometheusServer) vectorAt(ctx context.Context, q string, at time.Time) ([]sample, error) {
	params := url.Values{"query": {q}}
	if !at.IsZero() {
		params.Set("time", strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64))
	}
	u := p.URL + "/api/v1/query?" + params.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("query %s: %w", q, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, body.Error)
	}
	if body.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: result type %s, want vector", q, body.Data.ResultType)
	}
	out := make([]sample, 0, len(body.Data.Result))
	for _, r := range body.Data.Result {
		s, ok := r.Value[1].(string)
		if !ok {
			return nil, fmt.Errorf("query %s: value %v is not a string", q, r.Value[1])
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q, err)
		}
		out = append(out, sample{r.Metric, v})
	}
	return out, nil
}

// scalar runs a query that must return exactly one value.
func (p *prometheusServer) scalar(ctx context.Context, q string) (float64, error) {
	r, err := p.query(ctx, q)
	if err != nil {
		return 0, err
	}
	if len(r) != 1 {
		return 0, fmt.Errorf("query %s: %d series, want 1: %v", q, len(r), r)
	}
	for _, v := range r {
		return v, nil
	}
	panic("unreachable")
}

// freeLoopbackAddr returns a loopback address whose port was free a moment
// ago. Prometheus cannot be handed a listener, so there is a small window
// in which another process could take the port.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// feed is the known load the end-to-end test drives through an Observer
// and, value for value, through HDR histograms.
type feed struct {
	writeLatency, freshness *stats.Histogram
	batches, acked, failed  int64
	timeouts                int64
	queries                 map[string]*queryFeed // by kind
}

// queryFeed is what was fed for one query kind.
type queryFeed struct {
	latency       *stats.Histogram // successful queries only
	total, failed int64
}

// TestPrometheusScrape checks the whole path: Observer → /metrics →
// a real Prometheus → PromQL quantiles and totals, against HDR histograms
// of the same values.
func TestPrometheusScrape(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus and feeds it for about 3s")
	}
	// Its own Prometheus and scrape targets: beside the other Prometheus tests.
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()

	reg := prometheus.NewRegistry()
	obs := New(reg, "sim", nil)
	srv, err := Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	prom := startPrometheus(t, addr)
	if err := waitFor(ctx, 15*time.Second, func() (bool, error) {
		up, err := prom.query(ctx, `up{job="freshbench"}`)
		for _, v := range up {
			return v == 1, err
		}
		return false, err
	}); err != nil {
		t.Fatalf("prometheus never scraped %s: %v\n%s", addr, err, prom.logTail())
	}

	// Six scrapes during the feed, as during a run; the figures compared
	// are exact counts and bucket bounds, which a longer feed would not
	// make more exact.
	f := driveObserver(obs, 6*scrapeEvery)

	// The final values are in Prometheus once it has scraped after the
	// feed ended.
	if err := waitFor(ctx, 15*time.Second, func() (bool, error) {
		v, err := prom.scalar(ctx, `sum(freshbench_events_written_total)`)
		return err == nil && v == float64(f.acked), nil
	}); err != nil {
		t.Fatalf("events written never reached %d in prometheus: %v", f.acked, err)
	}

	type total struct {
		q    string
		want int64
	}
	totals := []total{
		{`sum(freshbench_events_written_total)`, f.acked},
		{`sum(freshbench_events_failed_total{kind="timeout"})`, f.timeouts},
		{`sum(freshbench_events_failed_total)`, f.failed},
		{`sum(freshbench_batches_total)`, f.batches},
		{`sum(freshbench_write_latency_seconds_count)`, f.batches},
		{`sum(freshbench_freshness_lag_seconds_count)`, f.freshness.Count()},
		{`sum(freshbench_writes_in_flight)`, 0},
		{`count(count by (phase) (freshbench_events_written_total))`, 2},
		{`count(count by (generator) (freshbench_events_written_total))`, 3},
		{`count(freshbench_writes_in_flight{target="sim"})`, 1},
	}
	for kind, qf := range f.queries {
		totals = append(totals,
			total{fmt.Sprintf(`sum(freshbench_queries_total{kind=%q})`, kind), qf.total},
			total{fmt.Sprintf(`sum(freshbench_queries_failed_total{kind=%q})`, kind), qf.failed},
			total{fmt.Sprintf(`sum(freshbench_query_latency_seconds_count{kind=%q})`, kind), qf.latency.Count()})
	}
	for _, c := range totals {
		got, err := prom.scalar(ctx, c.q)
		if err != nil {
			t.Fatal(err)
		}
		if got != float64(c.want) {
			t.Errorf("%s = %g, want %d", c.q, got, c.want)
		}
	}

	type hist struct {
		metric, selector string
		hdr              *stats.Histogram
	}
	hists := []hist{
		{"freshbench_write_latency_seconds", "", f.writeLatency},
		{"freshbench_freshness_lag_seconds", "", f.freshness},
	}
	// Per query kind: the kind label keeps their distributions apart.
	for kind, qf := range f.queries {
		hists = append(hists, hist{"freshbench_query_latency_seconds", fmt.Sprintf(`{kind=%q}`, kind), qf.latency})
	}
	for _, h := range hists {
		for _, q := range []float64{0.5, 0.95, 0.99} {
			pq := fmt.Sprintf(`histogram_quantile(%g, sum by (le) (%s_bucket%s))`, q, h.metric, h.selector)
			got, err := prom.scalar(ctx, pq)
			if err != nil {
				t.Fatal(err)
			}
			checkQuantileOf(t, h.metric+h.selector, q, got, h.hdr, 0, bucketOf)
		}
	}
}

// driveObserver feeds obs for about d with write latencies from a
// log-normal distribution (median 20 ms, long tail) and freshness lags of
// 200 ms plus an exponential part (mean 400 ms), from three generators at
// once, in two phases, and queries of two kinds whose latencies differ
// tenfold, and returns what it fed.
func driveObserver(obs *Observer, d time.Duration) *feed {
	const (
		generators = 3
		ticks      = 60
		perTick    = 70 // batches per generator and tick
		batchSize  = 50
		failEvery  = 97 // every 97th batch fails as a whole
		// Far more often than a real poll interval, for a tail that
		// thousands of samples pin down.
		freshPerTick   = 10
		queriesPerTick = 20 // per generator and kind
	)
	f := &feed{writeLatency: stats.NewHistogram(), freshness: stats.NewHistogram(), queries: map[string]*queryFeed{}}
	queryMedian := map[string]float64{"point": 0.004, "aggregate": 0.040}
	for kind := range queryMedian {
		f.queries[kind] = &queryFeed{latency: stats.NewHistogram()}
	}
	var mu sync.Mutex
	tick := d / ticks
	obs.Phase("warmup")
	var wg sync.WaitGroup
	start := time.Now()
	for g := range generators {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gen := fmt.Sprintf("%016x", g+1)
			rng := rand.New(rand.NewPCG(1, uint64(g)))
			var batches, acked, failed int64
			for k := range ticks {
				if g == 0 && k == ticks/4 {
					obs.Phase("measured")
				}
				for range perTick {
					obs.Scheduled(gen, batchSize, batches%13 == 0, 1)
					// Whole microseconds, as the HDR histogram keeps them,
					// so both sides see exactly the same values.
					lat := micros(0.020 * math.Exp(rng.NormFloat64()))
					var kinds map[string]int
					a, fl := batchSize, 0
					if batches%failEvery == 0 {
						a, fl, kinds = 0, batchSize, map[string]int{"timeout": batchSize}
					}
					obs.Written(gen, a, fl, a*1000, kinds, lat, lat/2)
					f.writeLatency.Record(lat)
					batches++
					acked += int64(a)
					failed += int64(fl)
				}
				for range freshPerTick {
					lag := micros(0.2 + rng.ExpFloat64()*0.4)
					obs.Freshness("target", gen, lag)
					f.freshness.Record(lag)
				}
				for kind, median := range queryMedian {
					for i := range queriesPerTick {
						lat := micros(median * math.Exp(0.7*rng.NormFloat64()))
						failed := i == 0 && k%10 == 0
						obs.Query("target", kind, lat, 1, failed)
						mu.Lock()
						qf := f.queries[kind]
						qf.total++
						if failed {
							qf.failed++
						} else {
							qf.latency.Record(lat)
						}
						mu.Unlock()
					}
				}
				time.Sleep(time.Until(start.Add(time.Duration(k+1) * tick)))
			}
			mu.Lock()
			defer mu.Unlock()
			f.batches += batches
			f.acked += acked
			f.failed += failed
			f.timeouts += failed
		}()
	}
	wg.Wait()
	return f
}

func micros(seconds float64) time.Duration {
	return time.Duration(math.Round(seconds*1e6)) * time.Microsecond
}

// bucketOf returns the bounds of the bucket of Buckets that holds v
// seconds: the resolution of a quantile Prometheus estimates from them.
func bucketOf(v float64) (lower, upper float64) {
	for _, ub := range Buckets() {
		if v <= ub {
			return lower, ub
		}
		lower = ub
	}
	return lower, math.Inf(1)
}

// nativeBucketOf returns the bounds of the native histogram bucket that
// holds v seconds: (2^((i-1)/8), 2^(i/8)] for schema 3, a bucket 9.05 %
// wide, the resolution of a quantile Prometheus estimates from it.
func nativeBucketOf(v float64) (lower, upper float64) {
	if v <= 0 {
		return 0, 0 // the zero bucket
	}
	per := math.Exp2(nativeSchema) // buckets per doubling
	i := math.Ceil(math.Log2(v) * per)
	return math.Exp2((i - 1) / per), math.Exp2(i / per)
}

// waitFor polls cond every 200 ms until it holds or within has passed,
// and then returns the last error cond reported.
func waitFor(ctx context.Context, within time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error
	for {
		ok, err := cond()
		if err != nil {
			last = err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// The three Prometheus tests run at once: each waits on its own servers
// and schedule rather than on a CPU.
func TestMain(m *testing.M) {
	testenv.WaitingTests(3)
	os.Exit(m.Run())
}
