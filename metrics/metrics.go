// Package metrics exposes a run's measurements live as Prometheus metrics.
//
// The results file stays the record of a run: its HDR histograms are exact
// and merge across machines. These metrics are for watching a run while it
// happens and for dashboards over many freshbench processes, so every
// distribution is a Prometheus histogram (never a summary): bucket counts
// add up across processes, quantiles of a summary do not. Each histogram
// is two at once: a classic one with the buckets of Buckets, which every
// scraper reads, and a native one (NativeBucketFactor), which a Prometheus
// with native histograms enabled scrapes instead, in protobuf; their
// quantiles are within 26 % and 9 % of the true value.
//
// Every metric carries the target label. A run that is an instance of an
// experiment (results.Experiment) also carries experiment, its name, and
// freshbench_instance, its index from 0 (Prometheus's own instance label
// is the scrape address): sum by (experiment) adds up the instances, and
// freshbench_instance tells them apart. The ingest metrics also carry
// generator and phase; the freshness and visibility metrics also
// endpoint, the read endpoint they were measured on ("target" for the
// write target, read1, read2, … for the read endpoints in the order
// given); the query metrics endpoint, phase and kind:
//
//	freshbench_target_events_per_second         gauge      rate the schedule asks for; 0 once it ended
//	freshbench_events_scheduled_total           counter    events in dispatched batches
//	freshbench_events_unsent_total              counter    events given up unsent when the schedule ended
//	freshbench_batches_total                    counter    batches dispatched
//	freshbench_late_batches_total               counter    batches dispatched late
//	freshbench_events_written_total             counter    events acknowledged
//	freshbench_events_failed_total{kind}        counter    events not written, by error kind
//	freshbench_written_bytes_total              counter    bytes acknowledged
//	freshbench_writes_in_flight                 gauge      requests under way (target only)
//	freshbench_write_latency_seconds            histogram  intended time → acknowledged
//	freshbench_write_service_time_seconds       histogram  sent → acknowledged
//	freshbench_freshness_lag_seconds{endpoint}  histogram  freshness lag samples
//	freshbench_visibility_latency_seconds{endpoint} histogram  probe event time → first seen there
//	freshbench_queries_total{endpoint,kind}     counter    query load queries finished
//	freshbench_queries_failed_total{endpoint,kind} counter of which failed
//	freshbench_query_latency_seconds{endpoint,kind} histogram successful queries' latency
//
// The target rate and the in-flight gauge carry neither generator nor
// phase. Generator identifiers are random per run, so a long series of
// runs scraped by one Prometheus creates many series; phase multiplies
// them by the number of phases (three per run, three per peak step).
package metrics

import (
	"errors"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// Namespace prefixes every metric name.
const Namespace = "freshbench"

// Label names.
const (
	LabelTarget     = "target"
	LabelExperiment = "experiment"
	LabelInstance   = "freshbench_instance"
	LabelGenerator  = "generator"
	LabelPhase      = "phase"
	LabelKind       = "kind"
	LabelEndpoint   = "endpoint"
)

// unknownKind counts failed events whose error kind the writer did not
// name, so that the failed counter always adds up to the failed events.
const unknownKind = "unknown"

// Buckets are the upper bounds, in seconds, of every freshbench histogram:
// the Renard R10 preferred numbers (1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3,
// 8 per decade) from 100 µs to 100 s. Ten buckets per decade is a
// geometric factor of about 1.26, so histogram_quantile is within about
// 26 % of the true value anywhere between 1 ms and 60 s, and the bounds
// read well in PromQL (le="0.0025", not le="0.0025118864315095794").
// Values above 100 s land in +Inf; a freshness lag that large already says
// that the target has fallen behind.
func Buckets() []float64 {
	r10 := []string{"1", "1.25", "1.6", "2", "2.5", "3.15", "4", "5", "6.3", "8"}
	var b []float64
	for exp := -4; exp < 2; exp++ {
		for _, m := range r10 {
			// Parsing the decimal gives the double nearest to it, which
			// formats back to the same short label; m*10^exp would not.
			v, err := strconv.ParseFloat(m+"e"+strconv.Itoa(exp), 64)
			if err != nil {
				panic(err) // unreachable: the literals above parse
			}
			b = append(b, v)
		}
	}
	return append(b, 100)
}

// NativeBucketFactor is the growth from one bucket of the native
// histograms to the next that New asks for. client_golang takes the
// largest factor 2^(2^-n) not above it: 2^(1/8) ≈ 1.0905, eight buckets
// per doubling (schema 3). histogram_quantile finds the bucket (l, u] that
// holds the quantile's rank and interpolates within it; the true value is
// in the same bucket and u/l = 2^(1/8), so the estimate is at most 9.05 %
// above or 8.3 % below the true value, at any magnitude (with the
// classic Buckets: 26 %, between 100 µs and 100 s only). The values are
// the durations of one run, so their spread bounds the populated buckets,
// eight per doubling (186 from 10 µs to 100 s), and no bucket limit is
// set: reaching one would halve the resolution and void that bound.
const NativeBucketFactor = 1.1

// Observer is a stats.Observer that updates Prometheus metrics. It is safe
// for concurrent use; the per-batch calls take no lock and do not allocate
// once a generator has been seen in the current phase.
type Observer struct {
	targetRate      prometheus.Gauge
	eventsScheduled *prometheus.CounterVec
	eventsUnsent    *prometheus.CounterVec
	batches         *prometheus.CounterVec
	lateBatches     *prometheus.CounterVec
	eventsWritten   *prometheus.CounterVec
	eventsFailed    *prometheus.CounterVec
	bytesWritten    *prometheus.CounterVec
	writeLatency    *prometheus.HistogramVec
	serviceTime     *prometheus.HistogramVec
	freshnessLag    *prometheus.HistogramVec
	visibility      *prometheus.HistogramVec
	queries         *prometheus.CounterVec
	queriesFailed   *prometheus.CounterVec
	queryLatency    *prometheus.HistogramVec
	inflight        prometheus.Gauge

	// mu serializes changes of state; readers only load it.
	mu    sync.Mutex
	state atomic.Pointer[phaseState]
}

// phaseState is the current phase with the metric children already
// resolved for its label values. It is never modified once published:
// a new generator, query kind or phase publishes a copy. Copy-on-write
// keeps the hot path to one atomic load and one map lookup, with no lock
// for the writers of many generators to contend on.
type phaseState struct {
	phase   string
	gens    map[string]*genMetrics
	reads   map[readKey]*readMetrics
	queries map[readKey]*queryMetrics
}

// genMetrics holds one generator's children in one phase.
type genMetrics struct {
	eventsScheduled, batches, lateBatches prometheus.Counter
	eventsUnsent                          prometheus.Counter
	eventsWritten, bytesWritten           prometheus.Counter
	writeLatency, serviceTime             prometheus.Observer
	// failed is curried by generator and phase; it is only used when a
	// write failed, which is rare enough for a label lookup.
	failed *prometheus.CounterVec
}

// readKey names the children of one generator, or of one query kind,
// measured on one read endpoint.
type readKey struct{ endpoint, name string }

// readMetrics holds one generator's freshness and visibility children on
// one endpoint in one phase.
type readMetrics struct {
	freshnessLag, visibility prometheus.Observer
}

// queryMetrics holds one query kind's children in one phase.
type queryMetrics struct {
	total, failed prometheus.Counter
	latency       prometheus.Observer
}

var _ stats.Observer = (*Observer)(nil)

// New returns an Observer whose metrics carry target as their target label,
// and the experiment's name and this instance's index when e is not nil,
// and are registered with reg (not registered when reg is nil). Metrics
// that reg already holds for the same labels are reused, so several
// Observers for one run (one per peak step, say) add up instead of
// failing. The target label is the URL as the results file records it, with
// every credential hidden by redact.URL: labels are readable by whoever
// can scrape. It panics if reg holds incompatible
// metrics of the same names, as prometheus.MustRegister does.
func New(reg prometheus.Registerer, target string, e *results.Experiment) *Observer {
	constLabels := prometheus.Labels{LabelTarget: redact.URL(target)}
	if e != nil {
		constLabels[LabelExperiment] = e.Name
		constLabels[LabelInstance] = strconv.Itoa(e.Instance)
	}
	buckets := Buckets()
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: name, Help: help, ConstLabels: constLabels,
		}, labels)
		return register(reg, c)
	}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: name, Help: help, ConstLabels: constLabels,
		})
		return register(reg, g)
	}
	histogram := func(name, help string, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: name, Help: help, ConstLabels: constLabels,
			Buckets: buckets, NativeHistogramBucketFactor: NativeBucketFactor,
		}, labels)
		return register(reg, h)
	}
	gp := []string{LabelGenerator, LabelPhase}
	ep := []string{LabelEndpoint, LabelGenerator, LabelPhase}
	ek := []string{LabelEndpoint, LabelPhase, LabelKind}
	o := &Observer{
		targetRate: gauge("target_events_per_second",
			"Rate the run's schedule asks for, in events per second; 0 once the schedule ended."),
		eventsScheduled: counter("events_scheduled_total",
			"Events in dispatched write batches (the rate the schedule asked for).", gp...),
		eventsUnsent: counter("events_unsent_total",
			"Events never sent: still waiting for a write slot when the schedule ended.", gp...),
		batches: counter("batches_total",
			"Write batches dispatched.", gp...),
		lateBatches: counter("late_batches_total",
			"Write batches dispatched late: the in-flight bound was reached or the pacer fell behind.", gp...),
		eventsWritten: counter("events_written_total",
			"Events acknowledged by the target.", gp...),
		eventsFailed: counter("events_failed_total",
			"Events whose write failed, by error kind.", LabelGenerator, LabelPhase, LabelKind),
		bytesWritten: counter("written_bytes_total",
			"Bytes of serialized events acknowledged by the target.", gp...),
		writeLatency: histogram("write_latency_seconds",
			"Write latency: from a batch's intended time on the open-loop schedule to its acknowledgement.", gp...),
		serviceTime: histogram("write_service_time_seconds",
			"Write service time: from sending a batch to its acknowledgement.", gp...),
		freshnessLag: histogram("freshness_lag_seconds",
			"Freshness lag on a read endpoint: when a freshness query returns, its time minus the newest event time it could see.", ep...),
		visibility: histogram("visibility_latency_seconds",
			"Visibility latency of probe events on a read endpoint: from event time to the first query of that endpoint that saw the event.", ep...),
		queries: counter("queries_total",
			"Queries of the query load that finished, failed or not.", ek...),
		queriesFailed: counter("queries_failed_total",
			"Queries of the query load that failed.", ek...),
		queryLatency: histogram("query_latency_seconds",
			"Latency of the query load's successful queries.", ek...),
		inflight: gauge("writes_in_flight",
			"Write requests sent and not yet finished."),
	}
	o.state.Store(&phaseState{})
	return o
}

// register registers c with reg and returns the collector reg holds: c, or
// the equal one registered earlier.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if prev, ok := are.ExistingCollector.(C); ok {
				return prev
			}
		}
		panic(err)
	}
	return c
}

// Phase labels the measurements that follow with name. Calls already
// under way may still count under the previous phase.
func (o *Observer) Phase(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state.Load().phase == name {
		return
	}
	o.state.Store(&phaseState{phase: name})
}

// TargetRate sets the rate the schedule asks for.
func (o *Observer) TargetRate(eventsPerSec float64) { o.targetRate.Set(eventsPerSec) }

// Scheduled counts a dispatched batch. The in-flight gauge counts
// dispatches up and finished writes down rather than taking inflight as
// is: every dispatched batch ends in one Written call, so the gauge cannot
// drift and reads zero once a run has ended.
func (o *Observer) Scheduled(generator string, events int, late bool, inflight int) {
	g := o.gen(generator)
	g.batches.Inc()
	g.eventsScheduled.Add(float64(events))
	if late {
		g.lateBatches.Inc()
	}
	o.inflight.Inc()
}

// Unsent counts events a generator gave up unsent.
func (o *Observer) Unsent(generator string, events int) {
	o.gen(generator).eventsUnsent.Add(float64(events))
}

// Written counts a finished batch write. Its latencies are observed
// whether or not the write succeeded, as in the results file.
func (o *Observer) Written(generator string, acked, failed, bytes int, errorKinds map[string]int, latency, service time.Duration) {
	o.inflight.Dec()
	g := o.gen(generator)
	if acked > 0 {
		g.eventsWritten.Add(float64(acked))
	}
	if bytes > 0 {
		g.bytesWritten.Add(float64(bytes))
	}
	if failed > 0 {
		named := 0
		for kind, n := range errorKinds {
			if n > 0 {
				g.failed.WithLabelValues(kind).Add(float64(n))
				named += n
			}
		}
		if named < failed {
			g.failed.WithLabelValues(unknownKind).Add(float64(failed - named))
		}
	}
	g.writeLatency.Observe(seconds(latency))
	g.serviceTime.Observe(seconds(service))
}

// Freshness records one freshness lag sample taken on endpoint.
func (o *Observer) Freshness(endpoint, generator string, lag time.Duration) {
	o.read(endpoint, generator).freshnessLag.Observe(seconds(lag))
}

// Visible records the visibility latency of one probe event on endpoint.
func (o *Observer) Visible(endpoint, generator string, latency time.Duration) {
	o.read(endpoint, generator).visibility.Observe(seconds(latency))
}

// Query counts one query of the query load sent to endpoint. Only
// successful queries enter the latency histogram: a fast failure would
// flatter it.
func (o *Observer) Query(endpoint, kind string, latency time.Duration, rows int, failed bool) {
	q := o.query(endpoint, kind)
	q.total.Inc()
	if failed {
		q.failed.Inc()
		return
	}
	q.latency.Observe(seconds(latency))
}

// seconds converts a duration for a histogram. A negative one (a freshness
// sample taken just before the run's start instant, when the reader's view
// is as old as the run) counts as zero: Prometheus would subtract it from
// the histogram's sum, which rate(…_sum) then misreads.
func seconds(d time.Duration) float64 { return max(d, 0).Seconds() }

// gen returns generator's children in the current phase.
func (o *Observer) gen(generator string) *genMetrics {
	return child(o, func(s *phaseState) *map[string]*genMetrics { return &s.gens }, generator, func(phase string) *genMetrics {
		l := prometheus.Labels{LabelGenerator: generator, LabelPhase: phase}
		return &genMetrics{
			eventsScheduled: o.eventsScheduled.With(l),
			eventsUnsent:    o.eventsUnsent.With(l),
			batches:         o.batches.With(l),
			lateBatches:     o.lateBatches.With(l),
			eventsWritten:   o.eventsWritten.With(l),
			bytesWritten:    o.bytesWritten.With(l),
			writeLatency:    o.writeLatency.With(l),
			serviceTime:     o.serviceTime.With(l),
			failed:          o.eventsFailed.MustCurryWith(l),
		}
	})
}

// read returns generator's freshness and visibility children on endpoint
// in the current phase.
func (o *Observer) read(endpoint, generator string) *readMetrics {
	return child(o, func(s *phaseState) *map[readKey]*readMetrics { return &s.reads }, readKey{endpoint, generator}, func(phase string) *readMetrics {
		l := prometheus.Labels{LabelEndpoint: endpoint, LabelGenerator: generator, LabelPhase: phase}
		return &readMetrics{freshnessLag: o.freshnessLag.With(l), visibility: o.visibility.With(l)}
	})
}

// query returns kind's children on endpoint in the current phase.
func (o *Observer) query(endpoint, kind string) *queryMetrics {
	return child(o, func(s *phaseState) *map[readKey]*queryMetrics { return &s.queries }, readKey{endpoint, kind}, func(phase string) *queryMetrics {
		l := prometheus.Labels{LabelEndpoint: endpoint, LabelPhase: phase, LabelKind: kind}
		return &queryMetrics{
			total:   o.queries.With(l),
			failed:  o.queriesFailed.With(l),
			latency: o.queryLatency.With(l),
		}
	})
}

// child returns the children cached under k in the map of the phase state
// that field picks. The state is copy-on-write, so the hot path reads it
// without a lock; a miss makes the children with build, under the lock,
// for the current phase, and publishes a new state holding them.
func child[K comparable, V any](o *Observer, field func(*phaseState) *map[K]V, k K, build func(phase string) V) V {
	if v, ok := (*field(o.state.Load()))[k]; ok {
		return v
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.state.Load()
	if v, ok := (*field(s))[k]; ok {
		return v
	}
	v := build(s.phase)
	next := *s
	*field(&next) = cloneWith(*field(s), k, v)
	o.state.Store(&next)
	return v
}

// cloneWith returns a copy of m with k set to v.
func cloneWith[K comparable, V any](m map[K]V, k K, v V) map[K]V {
	c := maps.Clone(m)
	if c == nil {
		c = make(map[K]V, 1)
	}
	c[k] = v
	return c
}
