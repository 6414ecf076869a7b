package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

func TestBuckets(t *testing.T) {
	b := Buckets()
	if b[0] > 0.001 || b[len(b)-1] < 60 {
		t.Errorf("buckets %g … %g do not cover 1ms … 60s", b[0], b[len(b)-1])
	}
	for i := 1; i < len(b); i++ {
		if f := b[i] / b[i-1]; f < 1.2 || f > 1.3 {
			t.Errorf("bucket %g follows %g: factor %.3f, want about 1.26", b[i], b[i-1], f)
		}
	}
	// The le labels must read as the short decimals they were written as.
	for _, v := range b {
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if len(strings.TrimLeft(strings.NewReplacer(".", "", "e-", "").Replace(s), "0")) > 5 {
			t.Errorf("bound %s is not a short decimal", s)
		}
	}
	if got := b[len(b)-1]; got != 100 {
		t.Errorf("last bound %g, want 100", got)
	}
}

func TestObserverMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := New(reg, "postgres://freshbench:secret@127.0.0.1:15432/freshbench?table=events", nil)
	o.Phase("warmup")
	o.TargetRate(500)
	o.Scheduled("g1", 10, false, 1)
	o.Written("g1", 10, 0, 1000, nil, 30*time.Millisecond, 20*time.Millisecond)
	o.Phase("measured")
	o.Unsent("g2", 20)
	o.Scheduled("g1", 10, true, 1)
	o.Scheduled("g2", 10, false, 2)
	o.Written("g1", 7, 3, 700, map[string]int{"rejected": 2}, 40*time.Millisecond, 10*time.Millisecond)
	o.Freshness("target", "g1", 1500*time.Millisecond)
	o.Visible("read1", "g2", 2*time.Second)
	o.Query("target", "point", 5*time.Millisecond, 1, false)
	o.Query("target", "point", time.Second, 0, true)

	// Series a generator has not touched yet read 0 rather than being
	// absent, so that rate() and sums see them from their first scrape.
	const target = `target="postgres://freshbench:xxxxx@127.0.0.1:15432/freshbench?table=events"`
	want := strings.ReplaceAll(`
# HELP freshbench_batches_total Write batches dispatched.
# TYPE freshbench_batches_total counter
freshbench_batches_total{generator="g1",phase="measured",TARGET} 1
freshbench_batches_total{generator="g1",phase="warmup",TARGET} 1
freshbench_batches_total{generator="g2",phase="measured",TARGET} 1
# HELP freshbench_events_failed_total Events whose write failed, by error kind.
# TYPE freshbench_events_failed_total counter
freshbench_events_failed_total{generator="g1",kind="rejected",phase="measured",TARGET} 2
freshbench_events_failed_total{generator="g1",kind="unknown",phase="measured",TARGET} 1
# HELP freshbench_events_scheduled_total Events in dispatched write batches (the rate the schedule asked for).
# TYPE freshbench_events_scheduled_total counter
freshbench_events_scheduled_total{generator="g1",phase="measured",TARGET} 10
freshbench_events_scheduled_total{generator="g1",phase="warmup",TARGET} 10
freshbench_events_scheduled_total{generator="g2",phase="measured",TARGET} 10
# HELP freshbench_events_unsent_total Events never sent: still waiting for a write slot when the schedule ended.
# TYPE freshbench_events_unsent_total counter
freshbench_events_unsent_total{generator="g1",phase="measured",TARGET} 0
freshbench_events_unsent_total{generator="g1",phase="warmup",TARGET} 0
freshbench_events_unsent_total{generator="g2",phase="measured",TARGET} 20
# HELP freshbench_events_written_total Events acknowledged by the target.
# TYPE freshbench_events_written_total counter
freshbench_events_written_total{generator="g1",phase="measured",TARGET} 7
freshbench_events_written_total{generator="g1",phase="warmup",TARGET} 10
freshbench_events_written_total{generator="g2",phase="measured",TARGET} 0
# HELP freshbench_late_batches_total Write batches dispatched late: the in-flight bound was reached or the pacer fell behind.
# TYPE freshbench_late_batches_total counter
freshbench_late_batches_total{generator="g1",phase="measured",TARGET} 1
freshbench_late_batches_total{generator="g1",phase="warmup",TARGET} 0
freshbench_late_batches_total{generator="g2",phase="measured",TARGET} 0
# HELP freshbench_queries_failed_total Queries of the query load that failed.
# TYPE freshbench_queries_failed_total counter
freshbench_queries_failed_total{endpoint="target",kind="point",phase="measured",TARGET} 1
# HELP freshbench_queries_total Queries of the query load that finished, failed or not.
# TYPE freshbench_queries_total counter
freshbench_queries_total{endpoint="target",kind="point",phase="measured",TARGET} 2
# HELP freshbench_written_bytes_total Bytes of serialized events acknowledged by the target.
# TYPE freshbench_written_bytes_total counter
freshbench_written_bytes_total{generator="g1",phase="measured",TARGET} 700
freshbench_written_bytes_total{generator="g1",phase="warmup",TARGET} 1000
freshbench_written_bytes_total{generator="g2",phase="measured",TARGET} 0
# HELP freshbench_target_events_per_second Rate the run's schedule asks for, in events per second; 0 once the schedule ended.
# TYPE freshbench_target_events_per_second gauge
freshbench_target_events_per_second{TARGET} 500
# HELP freshbench_writes_in_flight Write requests sent and not yet finished.
# TYPE freshbench_writes_in_flight gauge
freshbench_writes_in_flight{TARGET} 1
`, "TARGET", target)
	err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"freshbench_batches_total", "freshbench_events_failed_total", "freshbench_events_scheduled_total",
		"freshbench_events_written_total", "freshbench_late_batches_total", "freshbench_queries_failed_total",
		"freshbench_queries_total", "freshbench_written_bytes_total", "freshbench_writes_in_flight",
		"freshbench_events_unsent_total", "freshbench_target_events_per_second")
	if err != nil {
		t.Error(err)
	}

	hists := map[string]struct {
		labels map[string]string
		count  uint64
		sum    float64
	}{
		"freshbench_write_latency_seconds":      {map[string]string{"generator": "g1", "phase": "measured"}, 1, 0.040},
		"freshbench_write_service_time_seconds": {map[string]string{"generator": "g1", "phase": "warmup"}, 1, 0.020},
		"freshbench_freshness_lag_seconds":      {map[string]string{"endpoint": "target", "generator": "g1", "phase": "measured"}, 1, 1.5},
		"freshbench_visibility_latency_seconds": {map[string]string{"endpoint": "read1", "generator": "g2", "phase": "measured"}, 1, 2},
		// The failed query is counted, not timed.
		"freshbench_query_latency_seconds": {map[string]string{"endpoint": "target", "kind": "point", "phase": "measured"}, 1, 0.005},
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		want, ok := hists[mf.GetName()]
		if !ok {
			continue
		}
		if mf.GetType() != dto.MetricType_HISTOGRAM {
			t.Errorf("%s is a %s, want a histogram", mf.GetName(), mf.GetType())
			continue
		}
		for _, m := range mf.GetMetric() {
			if !hasLabels(m, want.labels) {
				continue
			}
			seen[mf.GetName()] = true
			h := m.GetHistogram()
			if h.GetSampleCount() != want.count || h.GetSampleSum() != want.sum {
				t.Errorf("%s%v: count %d sum %g, want %d and %g", mf.GetName(), want.labels, h.GetSampleCount(), h.GetSampleSum(), want.count, want.sum)
			}
			if n := len(h.GetBucket()); n != len(Buckets()) {
				t.Errorf("%s: %d buckets, want %d", mf.GetName(), n, len(Buckets()))
			}
			checkNative(t, mf.GetName(), h)
		}
	}
	for name := range hists {
		if !seen[name] {
			t.Errorf("%s%v not gathered", name, hists[name].labels)
		}
	}

	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// nativeSchema is the schema of the native histograms: 2^(2^-3), the
// largest factor of that form not above NativeBucketFactor.
const nativeSchema = 3

// checkNative checks that h is also a native histogram of nativeSchema
// whose buckets hold every observation.
func checkNative(t *testing.T, name string, h *dto.Histogram) {
	t.Helper()
	if h.Schema == nil || h.GetSchema() != nativeSchema {
		t.Errorf("%s: native schema %v, want %d", name, h.Schema, nativeSchema)
	}
	var n, count int64
	for _, d := range h.GetPositiveDelta() {
		n += d
		count += n
	}
	if got := uint64(count) + h.GetZeroCount(); got != h.GetSampleCount() {
		t.Errorf("%s: native buckets hold %d observations, want %d", name, got, h.GetSampleCount())
	}
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// An instance of an experiment carries the experiment's name and its
// index on every metric, beside the target.
func TestObserverExperimentLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := New(reg, "sim", &results.Experiment{Name: "pg-3x", Instance: 2, Instances: 3})
	o.TargetRate(100)
	o.Phase("measured")
	o.Scheduled("g", 1, false, 1)
	o.Written("g", 1, 0, 10, nil, time.Millisecond, time.Millisecond)
	o.Freshness("target", "g", time.Second)
	o.Query("target", "point", time.Millisecond, 1, false)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{LabelTarget: "sim", LabelExperiment: "pg-3x", LabelInstance: "2"}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if !hasLabels(m, want) {
				t.Errorf("%s%v: want labels %v among them", mf.GetName(), m.GetLabel(), want)
			}
		}
	}
	if len(mfs) < 10 {
		t.Errorf("%d metric families gathered, want every one of the Observer", len(mfs))
	}

	// Instances of two experiments in one registry stay apart.
	New(reg, "sim", &results.Experiment{Name: "pg-4x", Instance: 0, Instances: 4}).Written("g", 3, 0, 30, nil, time.Millisecond, time.Millisecond)
	if n := seriesCount(t, reg, "freshbench_events_written_total"); n != 2 {
		t.Errorf("%d events_written series, want 2 (one per experiment)", n)
	}
}

// TestServeNegotiatesProtobuf scrapes as Prometheus does with native
// histograms enabled (its Accept header, verbatim from Prometheus 2.42)
// and checks that the answer is protobuf holding native histograms.
func TestServeNegotiatesProtobuf(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg, "sim", nil).Written("g", 3, 0, 30, nil, 3*time.Millisecond, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+srv.Addr()+Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,"+
		"application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	format := expfmt.ResponseFormat(resp.Header)
	if format.FormatType() != expfmt.TypeProtoDelim {
		t.Fatalf("answered %q, want delimited protobuf", resp.Header.Get("Content-Type"))
	}
	dec := expfmt.NewDecoder(resp.Body, format)
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		if mf.GetName() == "freshbench_write_latency_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			checkNative(t, mf.GetName(), h)
			if len(h.GetBucket()) != len(Buckets()) {
				t.Errorf("%d classic buckets beside the native ones, want %d", len(h.GetBucket()), len(Buckets()))
			}
			return
		}
	}
	t.Error("no write latency histogram in the protobuf answer")
}

// TestObserverReuse covers one Observer per peak step on one registry, and
// two targets side by side.
func TestObserverReuse(t *testing.T) {
	reg := prometheus.NewRegistry()
	for step := range 3 {
		o := New(reg, "sim", nil)
		o.Phase(fmt.Sprintf("step%d-measured", step))
		o.Written("g", 5, 0, 0, nil, time.Millisecond, time.Millisecond)
	}
	New(reg, "sqlite:///tmp/x.db", nil).Written("g", 1, 0, 0, nil, time.Millisecond, time.Millisecond)
	if n := seriesCount(t, reg, "freshbench_events_written_total"); n != 4 {
		t.Errorf("%d events_written series, want 4 (3 steps of sim, 1 of sqlite)", n)
	}
}

func seriesCount(t *testing.T, g prometheus.Gatherer, name string) int {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}

// TestObserverConcurrent is for the race detector: generators, phases and
// query kinds appearing while other goroutines observe.
func TestObserverConcurrent(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := New(reg, "sim", nil)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				gen := fmt.Sprint("g", (w+i)%5)
				if w == 0 && i%100 == 0 {
					o.Phase(fmt.Sprint("p", i/100))
				}
				o.Scheduled(gen, 2, i%7 == 0, i%4)
				o.Written(gen, 2, 0, 20, nil, time.Millisecond, time.Microsecond)
				o.Freshness("target", gen, time.Second)
				o.Query("target", fmt.Sprint("k", i%3), time.Millisecond, 1, i%11 == 0)
			}
		}()
	}
	wg.Wait()
	total := 0.0
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "freshbench_events_written_total":
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		case "freshbench_writes_in_flight":
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v != 0 {
				t.Errorf("in flight %g after every write finished, want 0", v)
			}
		}
	}
	if total != 8*1000*2 {
		t.Errorf("events written %g, want %d", total, 8*1000*2)
	}
}

func TestServe(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg, "sim", nil).Written("g", 3, 0, 30, nil, time.Millisecond, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	if strings.HasSuffix(addr, ":0") || !IsLoopback(addr) {
		t.Fatalf("bound %s, want a loopback address with a real port", addr)
	}
	resp, err := http.Get("http://" + addr + Path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `freshbench_events_written_total{generator="g",phase="",target="sim"} 3`) {
		t.Errorf("GET %s: %s\n%s", Path, resp.Status, body)
	}

	// A second endpoint on the same port says so.
	_, err = Serve(ctx, addr, reg)
	if err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("Serve on a taken port: %v, want an 'already in use' error", err)
	}

	cancel()
	checkClosed(t, addr)
}

// checkClosed checks that nothing accepts connections at addr any more.
func checkClosed(t *testing.T, addr string) {
	t.Helper()
	if err := waitFor(context.Background(), 5*time.Second, func() (bool, error) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return true, nil
		}
		c.Close()
		return false, errors.New("still accepting connections")
	}); err != nil {
		t.Errorf("endpoint %s after it ended: %v", addr, err)
	}
}

// TestServerCloseLingers checks that Close keeps serving while it
// lingers, that the end of Serve's context cuts the linger short, and
// that Close(0) closes at once.
func TestServerCloseLingers(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg, "sim", nil).Written("g", 3, 0, 30, nil, time.Millisecond, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		srv.Close(time.Hour)
		close(closed)
	}()
	resp, err := http.Get("http://" + srv.Addr() + Path)
	if err != nil {
		t.Fatalf("scrape while Close lingers: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("scrape while Close lingers: %s", resp.Status)
	}
	select {
	case <-closed:
		t.Fatal("Close(1h) returned before its linger or its context ended")
	default:
	}
	cancel()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close still lingers 10s after Serve's context ended")
	}
	checkClosed(t, srv.Addr())

	srv, err = Serve(context.Background(), "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close(0)
	checkClosed(t, srv.Addr())
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:9464": true,
		"127.0.0.1:0":    true,
		"[::1]:9464":     true,
		"localhost:9464": true,
		":9464":          false,
		"0.0.0.0:9464":   false,
		"[::]:9464":      false,
		"10.1.2.3:9464":  false,
		"example:9464":   false,
		"9464":           false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// BenchmarkWritten measures the per-batch cost on the ingest hot path,
// from many goroutines at once as in a run; "uncached" resolves the label
// values on every call, for comparison.
func BenchmarkWritten(b *testing.B) {
	gens := []string{"a1b2c3d4e5f60718", "0f1e2d3c4b5a6978", "1122334455667788", "99aabbccddeeff00"}
	b.Run("observer", func(b *testing.B) {
		o := New(prometheus.NewRegistry(), "sim", nil)
		o.Phase("measured")
		benchParallel(b, gens, o)
	})
	b.Run("uncached", func(b *testing.B) {
		benchParallel(b, gens, newUncached(prometheus.NewRegistry()))
	})
}

func benchParallel(b *testing.B, gens []string, o stats.Observer) {
	b.ReportAllocs()
	var next sync.Mutex
	i := 0
	b.RunParallel(func(pb *testing.PB) {
		next.Lock()
		gen := gens[i%len(gens)]
		i++
		next.Unlock()
		lat := 17 * time.Millisecond
		for pb.Next() {
			o.Written(gen, 500, 0, 500_000, nil, lat, lat/2)
			lat += time.Microsecond
		}
	})
}

// uncached is the straightforward Observer the cached one is measured
// against: a label lookup per metric and call.
type uncached struct {
	stats.NopObserver
	written, bytes *prometheus.CounterVec
	lat, svc       *prometheus.HistogramVec
	inflight       prometheus.Gauge
}

func newUncached(reg prometheus.Registerer) *uncached {
	labels := []string{LabelGenerator, LabelPhase}
	h := func(name string) *prometheus.HistogramVec {
		return register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: name, Buckets: Buckets()}, labels))
	}
	c := func(name string) *prometheus.CounterVec {
		return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: name}, labels))
	}
	return &uncached{
		written: c("w_total"), bytes: c("b_total"), lat: h("l_seconds"), svc: h("s_seconds"),
		inflight: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: "i", Help: "i"})),
	}
}

func (u *uncached) Written(gen string, acked, _, bytes int, _ map[string]int, latency, service time.Duration) {
	u.inflight.Dec()
	u.written.WithLabelValues(gen, "measured").Add(float64(acked))
	u.bytes.WithLabelValues(gen, "measured").Add(float64(bytes))
	u.lat.WithLabelValues(gen, "measured").Observe(latency.Seconds())
	u.svc.WithLabelValues(gen, "measured").Observe(service.Seconds())
}

// A freshness sample taken just before the run's start instant is
// negative; it must not subtract from the histogram's sum.
func TestObserverNegativeDuration(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := New(reg, "sim", nil)
	o.Freshness("target", "g", -15*time.Millisecond)
	o.Freshness("target", "g", 300*time.Millisecond)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "freshbench_freshness_lag_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != 2 || h.GetSampleSum() != 0.3 || h.GetBucket()[0].GetCumulativeCount() != 1 {
			t.Errorf("count %d, sum %g, first bucket %d: want 2 samples summing to 0.3 s, one of them in the first bucket",
				h.GetSampleCount(), h.GetSampleSum(), h.GetBucket()[0].GetCumulativeCount())
		}
		return
	}
	t.Error("no freshness lag histogram gathered")
}

// No credential of a target URL reaches a label, whatever its form.
func TestTargetLabelHidesCredentials(t *testing.T) {
	for _, raw := range []string{
		"postgres://u:s3cret@127.0.0.1/db",
		"postgres://u@127.0.0.1/db?password=s3cret&table=t",
		"postgres://u@127.0.0.1/db?table=t&SSLPassword=s3cret",
		"elasticsearch://127.0.0.1:9200/i?ApiKey=s3cret",
		"host=127.0.0.1 password=s3cret",
	} {
		reg := prometheus.NewRegistry()
		o := New(reg, raw, nil)
		o.Scheduled("g", 1, false, 1)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if len(mfs) == 0 {
			t.Fatalf("%s: nothing gathered", raw)
		}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if strings.Contains(l.GetValue(), "s3cret") {
						t.Errorf("%s: %s{%s=%q} shows the secret", raw, mf.GetName(), l.GetName(), l.GetValue())
					}
				}
			}
		}
	}
}
