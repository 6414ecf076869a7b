package stats

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Point is one interval of the run as it happened.
type Point struct {
	StartS         float64 `json:"t_s"`                     // interval start, seconds since the run started
	WidthS         float64 `json:"width_s"`                 // interval width in seconds
	TargetEvents   int64   `json:"target_events"`           // events the schedule asked for in this interval
	UnsentEvents   int64   `json:"unsent_events,omitempty"` // of those, never sent
	Batches        int64   `json:"batches"`                 // batches dispatched
	AckedEvents    int64   `json:"acked_events"`            // events acknowledged in this interval
	AckedBytes     int64   `json:"acked_bytes"`             // serialized bytes acknowledged
	FailedEvents   int64   `json:"failed_events"`           // events whose write failed
	LateBatches    int64   `json:"late_batches"`            // batches dispatched late
	Inflight       int64   `json:"inflight_max"`            // most in-flight writes seen
	WriteP99Ms     float64 `json:"write_latency_p99_ms"`
	WriteMaxMs     float64 `json:"write_latency_max_ms"`
	FreshnessLagMs float64 `json:"freshness_lag_ms"`  // largest freshness lag sampled in the interval
	FreshnessN     int64   `json:"freshness_samples"` // freshness samples in the interval
	QueryCount     int64   `json:"queries,omitempty"` // queries completed (query load)
	QueryP99Ms     float64 `json:"query_latency_p99_ms,omitempty"`
	QueryErrors    int64   `json:"query_errors,omitempty"`
	writeLat       intervalLatency
	queryLat       intervalLatency

	// WriteMeanMs is the exact mean write latency of the interval's
	// acknowledgements: the sustainability rule fits its trend (a mean
	// of many writes is far less noisy than a tail quantile).
	WriteMeanMs float64 `json:"write_latency_mean_ms"`
	// FreshnessLagMinMs is the smallest freshness lag sampled in the
	// interval: right after a refresh, the floor of a refresh sawtooth,
	// which the sustainability rule follows.
	FreshnessLagMinMs float64 `json:"freshness_lag_min_ms"`
	// Backlog is the largest number of events the intermediary of a run
	// --via held, acknowledged but not yet taken by the sink (Kafka: the
	// sink's consumer lag), as it reported in the interval; sampled once
	// a second.
	Backlog  int64         `json:"backlog,omitempty"`
	writeSum time.Duration // of the latencies recorded in writeLat
	writeN   int64
	// ServiceMeanMs is the mean service time (sent → acknowledged) of
	// the interval's writes: unlike the write latency, it leaves out the
	// time a batch waited for its dispatch, so that a driver that falls
	// behind does not pass for a target that slows down.
	ServiceMeanMs float64 `json:"service_time_mean_ms,omitempty"`
	serviceSum    time.Duration
	serviceN      int64
}

// AddCounts adds q's counts to p, keeps the larger of their largest
// freshness lags and the smaller of their floors: what two intervals
// joined (a coarser series, or two instances merged) hold exactly. The
// latency quantiles, the mean and the in-flight figure are left to the
// caller, which knows how the two intervals relate.
func (p *Point) AddCounts(q *Point) {
	p.TargetEvents += q.TargetEvents
	p.UnsentEvents += q.UnsentEvents
	p.Batches += q.Batches
	p.AckedEvents += q.AckedEvents
	p.AckedBytes += q.AckedBytes
	p.FailedEvents += q.FailedEvents
	p.LateBatches += q.LateBatches
	p.FreshnessLagMs = max(p.FreshnessLagMs, q.FreshnessLagMs)
	if q.FreshnessN > 0 && (p.FreshnessN == 0 || q.FreshnessLagMinMs < p.FreshnessLagMinMs) {
		p.FreshnessLagMinMs = q.FreshnessLagMinMs
	}
	p.FreshnessN += q.FreshnessN
	p.Backlog = max(p.Backlog, q.Backlog)
	p.QueryCount += q.QueryCount
	p.QueryErrors += q.QueryErrors
}

// Series is a per-interval record of a run with bounded memory: when it
// holds maxPoints intervals it merges neighbours and doubles the width, so
// a week-long run costs the same memory as an hour-long one. Only the
// newest intervals keep live latency histograms; older ones keep their
// counts compact (see intervalLatency), so an hour at full resolution
// costs about a megabyte, not the 31 MB of two live histograms a second.
type Series struct {
	mu        sync.Mutex
	start     time.Time
	width     time.Duration
	maxPoints int
	points    []*Point
}

// NewSeries starts a series at start with one-second intervals.
// maxPoints below 2 means the default, 3600 (an hour at full resolution).
func NewSeries(start time.Time, maxPoints int) *Series {
	if maxPoints < 2 {
		maxPoints = 3600
	}
	return &Series{start: start, width: time.Second, maxPoints: maxPoints}
}

// Start is when the series' first interval begins.
func (s *Series) Start() time.Time { return s.start }

// at returns the point covering t, growing or coarsening the series.
// Callers hold s.mu.
func (s *Series) at(t time.Time) *Point {
	i := int(t.Sub(s.start) / s.width)
	if i < 0 {
		i = 0
	}
	for i >= s.maxPoints {
		s.coarsen()
		i = int(t.Sub(s.start) / s.width)
	}
	for len(s.points) <= i {
		n := len(s.points)
		s.points = append(s.points, &Point{StartS: (time.Duration(n) * s.width).Seconds(), WidthS: s.width.Seconds()})
		// Writes and queries are recorded when they finish, so at the
		// newest intervals; one that lands later reopens its interval.
		if old := n - liveIntervals; old >= 0 {
			s.points[old].writeLat.compact()
			s.points[old].queryLat.compact()
		}
	}
	return s.points[i]
}

// liveIntervals is how many of the newest intervals keep live histograms.
const liveIntervals = 3

func (s *Series) coarsen() {
	s.width *= 2
	merged := make([]*Point, 0, (len(s.points)+1)/2)
	for i := 0; i < len(s.points); i += 2 {
		p := s.points[i]
		p.WidthS = s.width.Seconds()
		if i+1 < len(s.points) {
			q := s.points[i+1]
			p.AddCounts(q)
			p.Inflight = max(p.Inflight, q.Inflight)
			p.writeSum += q.writeSum
			p.writeN += q.writeN
			p.serviceSum += q.serviceSum
			p.serviceN += q.serviceN
			p.writeLat.merge(&q.writeLat)
			p.queryLat.merge(&q.queryLat)
		}
		if i < len(s.points)-liveIntervals {
			p.writeLat.compact()
			p.queryLat.compact()
		}
		merged = append(merged, p)
	}
	s.points = merged
}

// Scheduled records events the schedule asked for at t.
func (s *Series) Scheduled(t time.Time, events int64, late bool, inflight int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.at(t)
	p.TargetEvents += events
	p.Batches++
	if late {
		p.LateBatches++
	}
	p.Inflight = max(p.Inflight, inflight)
}

// Unsent records events due at t that were never sent: they are part of
// the target all the same.
func (s *Series) Unsent(t time.Time, events int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.at(t)
	p.TargetEvents += events
	p.UnsentEvents += events
}

// Written records a finished write at t.
func (s *Series) Written(t time.Time, acked, bytes, failed int64, latency time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.at(t)
	p.AckedEvents += acked
	p.AckedBytes += bytes
	p.FailedEvents += failed
	p.writeLat.record(latency)
	p.writeSum += latency
	p.writeN++
}

// Served records the service time of a write finished at t.
func (s *Series) Served(t time.Time, service time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.at(t)
	p.serviceSum += service
	p.serviceN++
}

// Freshness records one freshness lag sample at t.
func (s *Series) Freshness(t time.Time, lag time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.at(t)
	ms := float64(lag.Microseconds()) / 1000
	if p.FreshnessN == 0 || ms < p.FreshnessLagMinMs {
		p.FreshnessLagMinMs = ms
	}
	p.FreshnessLagMs = max(p.FreshnessLagMs, ms)
	p.FreshnessN++
}

// Backlog records one sample of the intermediary's backlog at t.
func (s *Series) Backlog(t time.Time, events int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.at(t)
	p.Backlog = max(p.Backlog, events)
}

// Query records one finished query at t.
func (s *Series) Query(t time.Time, latency time.Duration, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.at(t)
	p.QueryCount++
	if failed {
		p.QueryErrors++
	}
	p.queryLat.record(latency)
}

// Points returns a copy of the series with the latency figures filled in.
func (s *Series) Points() []Point {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Point, len(s.points))
	for i, p := range s.points {
		out[i] = *p
		out[i].writeLat, out[i].queryLat = intervalLatency{}, intervalLatency{}
		out[i].WriteP99Ms, out[i].WriteMaxMs = p.writeLat.p99max()
		out[i].QueryP99Ms, _ = p.queryLat.p99max()
		if p.writeN > 0 {
			out[i].WriteMeanMs = float64(p.writeSum.Microseconds()) / 1000 / float64(p.writeN)
		}
		if p.serviceN > 0 {
			out[i].ServiceMeanMs = float64(p.serviceSum.Microseconds()) / 1000 / float64(p.serviceN)
		}
	}
	return out
}

// intervalLatency is the latency histogram of one interval: a live coarse
// histogram while the interval is recent, then only its non-zero counts
// (a few bytes each, a few dozen in a typical interval, instead of 464
// eight-byte counters) with its p99 and max worked out once. Nothing is
// lost: a late value or a merge rebuilds the histogram exactly.
type intervalLatency struct {
	live *Histogram
	// The compact form, when live is nil: pairs of uvarints, the gap to
	// the next non-zero counter's index and its count.
	packed   []byte
	p99, max float64
}

func (l *intervalLatency) record(d time.Duration) {
	l.open()
	l.live.Record(d)
}

// open makes the histogram live again, from its compact form if it has
// one.
func (l *intervalLatency) open() {
	if l.live != nil {
		return
	}
	l.live = newCoarseHistogram()
	if len(l.packed) == 0 {
		return
	}
	snap := l.live.h.Export()
	idx, b := uint64(0), l.packed
	for len(b) > 0 {
		gap, n := binary.Uvarint(b)
		count, m := binary.Uvarint(b[n:])
		b = b[n+m:]
		idx += gap
		snap.Counts[idx] = int64(count)
	}
	l.live.h = hdrhistogram.Import(snap)
	l.packed = nil
}

// compact keeps only the non-zero counts and the figures Points reports.
func (l *intervalLatency) compact() {
	if l.live == nil {
		return
	}
	sum := l.live.Summarize()
	l.p99, l.max = sum.P99Ms, sum.MaxMs
	if sum.Count > 0 {
		var buf []byte
		last := 0
		for idx, c := range l.live.h.Export().Counts {
			if c > 0 {
				buf = binary.AppendUvarint(buf, uint64(idx-last))
				buf = binary.AppendUvarint(buf, uint64(c))
				last = idx
			}
		}
		l.packed = append([]byte(nil), buf...) // no spare capacity kept
	}
	l.live = nil
}

// merge adds o's values into l.
func (l *intervalLatency) merge(o *intervalLatency) {
	if o.live == nil && len(o.packed) == 0 {
		return
	}
	o.open()
	l.open()
	l.live.Merge(o.live)
}

// p99max returns the interval's p99 and max in milliseconds.
func (l *intervalLatency) p99max() (p99, max float64) {
	if l.live == nil {
		return l.p99, l.max
	}
	s := l.live.Summarize()
	return s.P99Ms, s.MaxMs
}
