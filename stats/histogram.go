// Package stats holds the measurement primitives: HDR histograms of
// durations, bounded per-second series and the sustainability rule.
package stats

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs to 1 hour at 3 significant digits (0.1 % error),
// the usual HdrHistogram setting for latency.
const (
	lowestMicros  = 1
	highestMicros = int64(time.Hour / time.Microsecond)
	sigFigs       = 3
)

// Histogram is a concurrency-safe HDR histogram of durations in
// microseconds. Values beyond one hour are clamped and counted as such, so
// nothing recorded is lost.
type Histogram struct {
	mu      sync.Mutex
	h       *hdrhistogram.Histogram
	clamped int64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{h: hdrhistogram.New(lowestMicros, highestMicros, sigFigs)}
}

// newCoarseHistogram trades precision (about 6 %) for size (about 3 KB
// instead of 190 KB), for the per-interval figures of a series.
func newCoarseHistogram() *Histogram {
	return &Histogram{h: hdrhistogram.New(lowestMicros, highestMicros, 1)}
}

// Record adds one duration. Negative durations count as zero.
func (h *Histogram) Record(d time.Duration) { h.RecordN(d, 1) }

// RecordN adds n copies of one duration.
func (h *Histogram) RecordN(d time.Duration, n int64) {
	v := d.Microseconds()
	h.mu.Lock()
	defer h.mu.Unlock()
	if v < lowestMicros {
		v = lowestMicros
	}
	if v > highestMicros {
		v = highestMicros
		h.clamped += n
	}
	_ = h.h.RecordValues(v, n) // cannot fail: v is within range
}

// Merge adds every value of other into h.
func (h *Histogram) Merge(other *Histogram) {
	// A copy, so that the two locks are never held at once.
	other.mu.Lock()
	c := other.h.Clone()
	clamped := other.clamped
	other.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.h.Merge(c)
	h.clamped += clamped
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.h.TotalCount()
}

// Quantile returns the value at q (0..1), zero when empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Duration(h.h.ValueAtQuantile(q*100)) * time.Microsecond
}

// Summary is the rendered view of a histogram. Durations are in
// milliseconds so that the results file reads without conversion.
type Summary struct {
	Count   int64   `json:"count"`
	MinMs   float64 `json:"min_ms"`
	MeanMs  float64 `json:"mean_ms"`
	P50Ms   float64 `json:"p50_ms"`
	P90Ms   float64 `json:"p90_ms"`
	P95Ms   float64 `json:"p95_ms"`
	P99Ms   float64 `json:"p99_ms"`
	P999Ms  float64 `json:"p99_9_ms"`
	MaxMs   float64 `json:"max_ms"`
	Clamped int64   `json:"clamped_over_1h,omitempty"`
	// LowerFromMs, when set, says that the histogram holds right-censored
	// values (lower bounds: a probe never seen, entered at its age), the
	// least of them this. A figure at or above it may be one of them, or
	// pushed up by them: it is only a lower bound, "> X" (see LowerBound).
	LowerFromMs float64 `json:"lower_bounds_from_ms,omitempty"`
	// LowerBounds names the fields that are lower bounds, space-separated
	// ("p95_ms p99_ms max_ms"), for a reader of the results file: each is
	// "> X", not X. (A string keeps a Summary comparable.)
	LowerBounds string `json:"lower_bounds,omitempty"`
}

// LowerBound reports whether v, one of s's figures, is only a lower
// bound: the censored values reach it. Every figure of a summary is
// printed through this one rule.
func (s Summary) LowerBound(v float64) bool { return s.LowerFromMs > 0 && v >= s.LowerFromMs }

// WithLowerBounds returns s marked with the right-censored values of
// censored (nil or empty: none), which s's histogram holds too.
func (s Summary) WithLowerBounds(censored *Histogram) Summary {
	if censored != nil && censored.Count() > 0 {
		s = s.withLowerFrom(censored.Summarize().MinMs)
	}
	return s
}

// withLowerFrom marks s's figures at or above from as lower bounds.
func (s Summary) withLowerFrom(from float64) Summary {
	s.LowerFromMs = max(from, microsToMs(lowestMicros))
	// The mean holds every censored value: a lower bound as soon as
	// there is one.
	names := []string{"mean_ms"}
	for _, f := range []struct {
		name string
		v    float64
	}{{"min_ms", s.MinMs}, {"p50_ms", s.P50Ms}, {"p90_ms", s.P90Ms}, {"p95_ms", s.P95Ms}, {"p99_ms", s.P99Ms}, {"p99_9_ms", s.P999Ms}, {"max_ms", s.MaxMs}} {
		if s.LowerBound(f.v) {
			names = append(names, f.name)
		}
	}
	s.LowerBounds = strings.Join(names, " ")
	return s
}

// WithLowerFrom marks s's figures at or above from (ms) as lower bounds:
// for results that kept only how many values were censored, not which.
func (s Summary) WithLowerFrom(from float64) Summary { return s.withLowerFrom(from) }

func microsToMs(v int64) float64 { return float64(v) / 1000 }

// Summarize returns count, mean and the usual percentiles.
func (h *Histogram) Summarize() Summary {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.h.TotalCount() == 0 {
		return Summary{}
	}
	q := h.h.ValueAtPercentiles([]float64{50, 90, 95, 99, 99.9})
	return Summary{
		Count:   h.h.TotalCount(),
		MinMs:   microsToMs(h.h.Min()),
		MeanMs:  h.h.Mean() / 1000,
		P50Ms:   microsToMs(q[50]),
		P90Ms:   microsToMs(q[90]),
		P95Ms:   microsToMs(q[95]),
		P99Ms:   microsToMs(q[99]),
		P999Ms:  microsToMs(q[99.9]),
		MaxMs:   microsToMs(h.h.Max()),
		Clamped: h.clamped,
	}
}

// Percentile is one point of an HdrHistogram-style percentile curve.
type Percentile struct {
	Quantile float64 `json:"q"`
	ValueMs  float64 `json:"ms"`
}

// Curve returns the percentile distribution with the given ticks per half
// distance (HdrHistogram's outputPercentileDistribution), for plotting.
func (h *Histogram) Curve(ticksPerHalfDistance int32) []Percentile {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Percentile
	for _, b := range h.h.CumulativeDistributionWithTicks(ticksPerHalfDistance) {
		out = append(out, Percentile{Quantile: b.Quantile / 100, ValueMs: microsToMs(b.ValueAt)})
	}
	return out
}

// histogramJSON is the encoded form of a histogram whose values include
// some clamped at one hour: the HDR encoding has no room for that count, and
// without it a merge of results files would lose it.
type histogramJSON struct {
	HDR     string `json:"hdr"`
	Clamped int64  `json:"clamped_over_1h"`
}

// MarshalJSON encodes the histogram in HdrHistogram's V2 compressed,
// base64 form, which any HdrHistogram implementation can decode and merge.
// When values were clamped, it is wrapped in an object beside their count;
// otherwise it is the bare string, as results files have always held.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	if h.clamped > 0 {
		return json.Marshal(histogramJSON{HDR: string(b), Clamped: h.clamped})
	}
	return json.Marshal(string(b))
}

// UnmarshalJSON decodes what MarshalJSON wrote, in either form.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	var enc histogramJSON
	if err := json.Unmarshal(data, &enc.HDR); err != nil {
		if err := json.Unmarshal(data, &enc); err != nil {
			return fmt.Errorf("histogram: want a base64 string or an object with hdr and clamped_over_1h: %w", err)
		}
	}
	if enc.Clamped < 0 {
		return fmt.Errorf("histogram: clamped_over_1h is %d, want 0 or more", enc.Clamped)
	}
	d, err := hdrhistogram.Decode([]byte(enc.HDR))
	if err != nil {
		return fmt.Errorf("decode histogram: %w", err)
	}
	if enc.Clamped > d.TotalCount() {
		// Clamped values are recorded at one hour, so they are part of the count.
		return fmt.Errorf("histogram: clamped_over_1h is %d, more than its %d values", enc.Clamped, d.TotalCount())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.h = d
	h.clamped = enc.Clamped
	return nil
}
