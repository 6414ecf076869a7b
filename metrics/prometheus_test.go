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
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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

// startPrometheus starts a throwaway Prometheus that scrapes
// http://scrapeAddr/metrics every second, waits until it is ready and
// stops it when the test ends. It skips the test when no prometheus binary
// is installed, unless FRESHBENCH_REQUIRE_SERVERS=1, which fails it.
func startPrometheus(t *testing.T, scrapeAddr string) *prometheusServer {
	t.Helper()
	bin := os.Getenv(prometheusBinEnv)
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("prometheus"); err != nil {
			msg := "no prometheus binary on PATH; install it with scripts/prometheus.sh install (or set " + prometheusBinEnv + ")"
			if os.Getenv("FRESHBENCH_REQUIRE_SERVERS") == "1" {
				t.Fatal(msg + " (FRESHBENCH_REQUIRE_SERVERS=1)")
			}
			t.Skip(msg)
		}
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: freshbench
    metrics_path: %s
    static_configs:
      - targets: [%q]
`, Path, scrapeAddr)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	listen := freeLoopbackAddr(t)
	logPath := filepath.Join(dir, "prometheus.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen,
		"--log.level=warn",
	)
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

// query runs an instant PromQL query and returns its vector result as
// label set → value.
func (p *prometheusServer) query(ctx context.Context, q string) (map[string]float64, error) {
	u := p.URL + "/api/v1/query?" + url.Values{"query": {q}}.Encode()
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
	out := make(map[string]float64, len(body.Data.Result))
	for _, r := range body.Data.Result {
		s, ok := r.Value[1].(string)
		if !ok {
			return nil, fmt.Errorf("query %s: value %v is not a string", q, r.Value[1])
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q, err)
		}
		out[fmt.Sprint(r.Metric)] = v
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
}

// TestPrometheusScrape checks the whole path: Observer → /metrics →
// a real Prometheus → PromQL quantiles and totals, against HDR histograms
// of the same values.
func TestPrometheusScrape(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus and feeds it for about 6s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()

	reg := prometheus.NewRegistry()
	obs := New(reg, "sim")
	addr, err := Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
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

	f := driveObserver(obs, 6*time.Second)

	// The final values are in Prometheus once it has scraped after the
	// feed ended.
	if err := waitFor(ctx, 15*time.Second, func() (bool, error) {
		v, err := prom.scalar(ctx, `sum(freshbench_events_written_total)`)
		return err == nil && v == float64(f.acked), nil
	}); err != nil {
		t.Fatalf("events written never reached %d in prometheus: %v", f.acked, err)
	}

	totals := []struct {
		q    string
		want int64
	}{
		{`sum(freshbench_events_written_total)`, f.acked},
		{`sum(freshbench_events_failed_total{kind="timeout"})`, f.timeouts},
		{`sum(freshbench_events_failed_total)`, f.failed},
		{`sum(freshbench_batches_total)`, f.batches},
		{`sum(freshbench_write_latency_seconds_count)`, f.batches},
		{`sum(freshbench_freshness_lag_seconds_count)`, f.freshness.Count()},
		{`sum(freshbench_writes_in_flight)`, 0},
		{`count(count by (phase) (freshbench_events_written_total))`, 2},
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

	for _, h := range []struct {
		metric string
		hdr    *stats.Histogram
	}{
		{"freshbench_write_latency_seconds", f.writeLatency},
		{"freshbench_freshness_lag_seconds", f.freshness},
	} {
		for _, q := range []float64{0.5, 0.95, 0.99} {
			pq := fmt.Sprintf(`histogram_quantile(%g, sum by (le) (%s_bucket))`, q, h.metric)
			got, err := prom.scalar(ctx, pq)
			if err != nil {
				t.Fatal(err)
			}
			want := h.hdr.Quantile(q).Seconds()
			lo, hi := bucketOf(want)
			// HDR keeps 3 significant digits, so a value at a bucket
			// bound may sit just across it; allow that much.
			slack := want * 1e-3
			ok := got >= lo-slack && got <= hi+slack
			t.Logf("%s p%g: prometheus %.4fs, HDR %.4fs, bucket (%g, %g] width %.4fs, diff %+.1f%%",
				h.metric, q*100, got, want, lo, hi, hi-lo, 100*(got-want)/want)
			if !ok {
				t.Errorf("%s p%g: prometheus says %.5fs, HDR %.5fs: not within its bucket (%g, %g]", h.metric, q*100, got, want, lo, hi)
			}
		}
	}
}

// driveObserver feeds obs for about d with write latencies from a
// log-normal distribution (median 20 ms, long tail) and freshness lags of
// 200 ms plus an exponential part (mean 400 ms), from three generators at
// once, in two phases, and returns what it fed.
func driveObserver(obs *Observer, d time.Duration) *feed {
	const (
		generators = 3
		ticks      = 60
		perTick    = 70 // batches per generator and tick
		batchSize  = 50
		failEvery  = 97 // every 97th batch fails as a whole
		// Far more often than a real poll interval, for a tail that
		// thousands of samples pin down.
		freshPerTick = 10
	)
	f := &feed{writeLatency: stats.NewHistogram(), freshness: stats.NewHistogram()}
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
					obs.Freshness(gen, lag)
					f.freshness.Record(lag)
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
