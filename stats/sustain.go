package stats

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Rule is the sustainability test of DESIGN.md: over a step, the achieved
// acknowledged rate is at least MinAchieved of the target, no backlog
// grows (late batches do not accumulate; the freshness lag shows no
// upward trend in the step's second half), and errors stay under a bound.
// An optional freshness bound (an SLO such as p95 < 2 s) can be added.
type Rule struct {
	MinAchieved    float64       // fraction of the target, e.g. 0.98
	MaxErrorRate   float64       // failed / attempted events, e.g. 0.001
	MaxLateShare   float64       // late batches / batches in the second half, e.g. 0.05
	MaxLagGrowth   time.Duration // largest tolerated rise of the freshness lag trend over the second half
	LagNoiseFactor float64       // …or that many times the lag's own noise around the trend, whichever is larger
	SLO            *SLO          // optional freshness bound
}

// DefaultRule is the rule freshbench uses unless told otherwise.
func DefaultRule() Rule {
	return Rule{MinAchieved: 0.98, MaxErrorRate: 0.001, MaxLateShare: 0.05, MaxLagGrowth: 500 * time.Millisecond, LagNoiseFactor: 3}
}

// SLO bounds a percentile of the freshness lag, e.g. p95<2s.
type SLO struct {
	Quantile float64
	Bound    time.Duration
	Text     string
}

// ParseSLO reads "p95<2s" or "p99.9<500ms".
func ParseSLO(s string) (*SLO, error) {
	bad := fmt.Errorf("SLO %q: want pNN<duration, e.g. p95<2s", s)
	p, d, ok := strings.Cut(strings.TrimSpace(s), "<")
	if !ok || !strings.HasPrefix(p, "p") {
		return nil, bad
	}
	var q float64
	if _, err := fmt.Sscanf(p[1:], "%g", &q); err != nil || q <= 0 || q >= 100 {
		return nil, bad
	}
	bound, err := time.ParseDuration(d)
	if err != nil || bound <= 0 {
		return nil, bad
	}
	return &SLO{Quantile: q / 100, Bound: bound, Text: s}, nil
}

// StepFigures is what a verdict is judged from.
type StepFigures struct {
	TargetPerSec   float64
	AchievedPerSec float64
	Attempted      int64 // events acknowledged + failed
	Failed         int64
	Series         []Point // the step's measured part, in order
	FreshnessLag   *Histogram
}

// Verdict says whether a step was sustainable and why.
type Verdict struct {
	Sustainable bool     `json:"sustainable"`
	Reasons     []string `json:"reasons,omitempty"` // every rule that failed
	LagSlopeMs  float64  `json:"freshness_lag_trend_ms_per_s"`
	LateShare   float64  `json:"late_share_second_half"`
	ErrorRate   float64  `json:"error_rate"`
	Achieved    float64  `json:"achieved_share"`
}

// Reason is the verdict in one line.
func (v Verdict) Reason() string {
	if v.Sustainable {
		return "sustainable"
	}
	return strings.Join(v.Reasons, "; ")
}

// Judge applies the rule to one step.
func (r Rule) Judge(f StepFigures) Verdict {
	v := Verdict{Sustainable: true}
	fail := func(format string, args ...any) {
		v.Sustainable = false
		v.Reasons = append(v.Reasons, fmt.Sprintf(format, args...))
	}
	if f.TargetPerSec > 0 {
		v.Achieved = f.AchievedPerSec / f.TargetPerSec
	}
	if v.Achieved < r.MinAchieved {
		fail("achieved %.1f%% of the target rate (< %.0f%%)", 100*v.Achieved, 100*r.MinAchieved)
	}
	if f.Attempted > 0 {
		v.ErrorRate = float64(f.Failed) / float64(f.Attempted)
	}
	if v.ErrorRate > r.MaxErrorRate {
		fail("error rate %.2f%% (> %.2f%%)", 100*v.ErrorRate, 100*r.MaxErrorRate)
	}
	half := f.Series[len(f.Series)/2:]
	var ts, lags []float64
	for _, p := range half {
		if p.FreshnessN > 0 {
			ts = append(ts, p.StartS)
			lags = append(lags, p.FreshnessLagMs)
		}
	}
	v.LateShare = lateShare(half)
	if v.LateShare > r.MaxLateShare {
		fail("%.0f%% of batches late in the second half (> %.0f%%): the in-flight bound is saturated", 100*v.LateShare, 100*r.MaxLateShare)
	}
	// Without lag samples a backlog cannot be ruled out; a step too short
	// to have three intervals in its second half is judged without a trend.
	if len(half) >= 3 && len(lags) < 3 {
		fail("freshness lag sampled in only %d of the second half's %d intervals (failing queries or a poll interval longer than the step?): a backlog cannot be ruled out", len(lags), len(half))
	}
	if len(lags) >= 3 {
		v.LagSlopeMs = slope(ts, lags)
		span := ts[len(ts)-1] - ts[0]
		rise := v.LagSlopeMs * span
		// A lag that swings widely (a long refresh interval's sawtooth)
		// must rise by more than its swing before the rise means anything.
		allowed := max(float64(r.MaxLagGrowth.Milliseconds()), r.LagNoiseFactor*noise(ts, lags, v.LagSlopeMs))
		if rise > allowed {
			fail("freshness lag grows %.0f ms/s over the second half (+%.0f ms, > %.0f ms allowed): a backlog builds", v.LagSlopeMs, rise, allowed)
		}
	}
	if r.SLO != nil && f.FreshnessLag != nil && f.FreshnessLag.Count() > 0 {
		if got := f.FreshnessLag.Quantile(r.SLO.Quantile); got > r.SLO.Bound {
			fail("freshness lag p%g %s exceeds the SLO %s", 100*r.SLO.Quantile, got.Round(time.Millisecond), r.SLO.Text)
		}
	}
	return v
}

// lateShare is late batches over all batches of the points.
func lateShare(pts []Point) float64 {
	var batches, late int64
	for _, p := range pts {
		batches += p.Batches
		late += p.LateBatches
	}
	if batches == 0 {
		return 0
	}
	return float64(late) / float64(batches)
}

// slope is the Theil–Sen slope of y over x: the median of the slopes
// between all pairs of points. Unlike least squares it ignores a spike
// that recovers (up to about 29 % of the points), so that a merge or GC
// pause late in a step is not taken for a growing backlog.
func slope(x, y []float64) float64 {
	slopes := make([]float64, 0, len(x)*(len(x)-1)/2)
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return 0
	}
	return median(slopes)
}

// noise is the robust standard deviation (1.4826 × the median absolute
// deviation) of y around the line of the given slope through x.
func noise(x, y []float64, slope float64) float64 {
	res := make([]float64, len(x))
	for i := range x {
		res[i] = y[i] - slope*x[i]
	}
	m := median(res)
	for i := range res {
		res[i] = math.Abs(res[i] - m)
	}
	return 1.4826 * median(res)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
