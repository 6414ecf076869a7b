package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// stepSeries is a synthetic measured part of a step: one point a second
// at 1000 events/s in batches of 50, with the freshness lag (ms) that
// lagAt gives for second i, sampled five times a second, every sample
// of a second alike (not sampled at all when lagAt is negative).
func stepSeries(n int, lagAt func(i int) float64) []Point {
	pts := make([]Point, n)
	for i := range pts {
		pts[i] = Point{
			StartS: float64(i), WidthS: 1,
			TargetEvents: 1000, AckedEvents: 1000, Batches: 20,
		}
		if lag := lagAt(i); lag >= 0 {
			pts[i].FreshnessLagMs, pts[i].FreshnessLagMinMs, pts[i].FreshnessN = lag, lag, 5
		}
	}
	return pts
}

func figures(pts []Point) StepFigures {
	var acked, target int64
	for _, p := range pts {
		acked += p.AckedEvents
		target += p.TargetEvents
	}
	s := float64(len(pts))
	return StepFigures{TargetPerSec: float64(target) / s, AchievedPerSec: float64(acked) / s, Attempted: acked, Series: pts, Audited: true}
}

func TestJudgeSeries(t *testing.T) {
	noise := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name        string
		pts         []Point
		sustainable bool
		reason      string // part of the reason when not sustainable
	}{
		{"steady", stepSeries(60, func(int) float64 { return 1000 }), true, ""},
		{
			// A database that falls behind by 1 % keeps adding 10 ms of lag
			// a second: +1.5 s over the second half of a five-minute step.
			"slowly growing backlog", stepSeries(300, func(i int) float64 { return 800 + 10*float64(i) }),
			false, "freshness lag grows",
		},
		{
			// Refresh sawtooth and query jitter: ±400 ms around 1 s, flat.
			"noisy but flat", stepSeries(120, func(int) float64 { return 1000 + 800*(noise.Float64()-0.5) }),
			true, "",
		},
		{
			// The same noise on top of a 1 % backlog (5 minutes).
			"noisy growing backlog", stepSeries(300, func(i int) float64 { return 1000 + 10*float64(i) + 800*(noise.Float64()-0.5) }),
			false, "freshness lag grows",
		},
		{
			// A 10 s refresh interval: each second's newest sample ages by
			// a second until the refresh, then drops. Wide, but flat.
			"sawtooth of a long refresh interval", stepSeries(120, func(i int) float64 { return 1000 * float64(i%10+1) }),
			true, "",
		},
		{
			// A merge stalls visibility for 3 s near the end of the step,
			// then the lag is back to normal: not a backlog.
			"spike that recovers", stepSeries(60, func(i int) float64 {
				if i >= 50 && i < 53 {
					return 6000
				}
				return 1000
			}), true, "",
		},
		{
			// The same stall at the very end has not recovered yet, but
			// three bad seconds out of thirty are still not a trend.
			"spike at the end", stepSeries(60, func(i int) float64 {
				if i >= 57 {
					return 6000
				}
				return 1000
			}), true, "",
		},
		{
			// Nothing becomes visible: the lag is the time since the start.
			"nothing visible", stepSeries(30, func(i int) float64 { return 1000 * float64(i+5) }),
			false, "nothing became visible",
		},
		{
			// A sink that carries 45 % of the rate: events keep becoming
			// visible, ever later, and the lag rises by 1 − 0.45 s a
			// second, steadily enough to pass for the ramp of a sawtooth
			// (a pipeline capped by a Kafka quota, seen with 6 s held).
			"backlog of a pipeline at 45 %", stepSeries(6, func(i int) float64 { return 3000 + 550*float64(i) + 100*(noise.Float64()-0.5) }),
			false, "a backlog builds",
		},
		{
			"backlog of a pipeline at 40 %, long step", stepSeries(60, func(i int) float64 { return 1000 + 600*float64(i) + 200*(noise.Float64()-0.5) }),
			false, "a backlog builds",
		},
		{
			"lag not measured", stepSeries(30, func(int) float64 { return -1 }),
			false, "freshness lag sampled in only 0",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := DefaultRule().Judge(figures(c.pts))
			if v.Sustainable != c.sustainable {
				t.Fatalf("sustainable = %v, want %v (reason: %s, trend %.1f ms/s)", v.Sustainable, c.sustainable, v.Reason(), v.LagSlopeMs)
			}
			if !c.sustainable && !strings.Contains(v.Reason(), c.reason) {
				t.Errorf("reason %q does not say %q", v.Reason(), c.reason)
			}
			if c.sustainable && v.Reason() != "sustainable" {
				t.Errorf("reason %q for a sustainable step", v.Reason())
			}
		})
	}
}

// The trend is the rise of the lag per second, whatever the noise: a clean
// line reads back as its slope.
func TestJudgeTrendReadsBackSlope(t *testing.T) {
	for _, want := range []float64{0, 5, 40, -20} {
		v := DefaultRule().Judge(figures(stepSeries(100, func(i int) float64 { return 3000 + want*float64(i) })))
		if v.LagSlopeMs < want-1e-9 || v.LagSlopeMs > want+1e-9 {
			t.Errorf("trend %.3f ms/s, want %v", v.LagSlopeMs, want)
		}
	}
}

func TestJudgeRateErrorsAndLateness(t *testing.T) {
	flat := func() []Point { return stepSeries(40, func(int) float64 { return 500 }) }
	r := DefaultRule()

	f := figures(flat())
	f.AchievedPerSec = 0.975 * f.TargetPerSec
	if v := r.Judge(f); v.Sustainable || !strings.Contains(v.Reason(), "achieved 97.5% of the target rate") {
		t.Errorf("97.5%% achieved: %s", v.Reason())
	}
	f.AchievedPerSec = 0.985 * f.TargetPerSec
	if v := r.Judge(f); !v.Sustainable {
		t.Errorf("98.5%% achieved: %s", v.Reason())
	}

	f = figures(flat())
	f.Failed = f.Attempted / 500 // 0.2 %
	if v := r.Judge(f); v.Sustainable || !strings.Contains(v.Reason(), "error rate 0.20%") {
		t.Errorf("0.2%% errors: %s", v.Reason())
	}
	f.Failed = f.Attempted / 2000 // 0.05 %
	if v := r.Judge(f); !v.Sustainable {
		t.Errorf("0.05%% errors: %s", v.Reason())
	}

	// Late batches count in the second half only: a slow start is warm-up
	// the user chose too short, not a backlog.
	pts := flat()
	for i := range pts[:20] {
		pts[i].LateBatches = pts[i].Batches
	}
	if v := r.Judge(figures(pts)); !v.Sustainable || v.LateShare != 0 {
		t.Errorf("late batches in the first half only: %s (late share %v)", v.Reason(), v.LateShare)
	}
	pts = flat()
	for i := range pts[20:] {
		pts[20+i].LateBatches = 2 // 10 % of the batches
	}
	if v := r.Judge(figures(pts)); v.Sustainable || !strings.Contains(v.Reason(), "10% of batches late") {
		t.Errorf("10%% late in the second half: %s", v.Reason())
	}
}

func TestJudgeSLO(t *testing.T) {
	slo, err := ParseSLO("p95<2s")
	if err != nil {
		t.Fatal(err)
	}
	r := DefaultRule()
	r.SLO = slo
	lag := NewHistogram()
	for i := range 100 {
		lag.Record(time.Duration(1000+20*i) * time.Millisecond) // p95 = 2.9 s
	}
	f := figures(stepSeries(20, func(int) float64 { return 1500 }))
	f.FreshnessLag = lag
	v := r.Judge(f)
	if v.Sustainable || !strings.Contains(v.Reason(), "exceeds the SLO p95<2s") {
		t.Errorf("p95 2.9 s under p95<2s: %s", v.Reason())
	}
	r.SLO.Bound = 3 * time.Second
	if v := r.Judge(f); !v.Sustainable {
		t.Errorf("p95 2.9 s under p95<3s: %s", v.Reason())
	}
}

func TestParseSLO(t *testing.T) {
	for in, want := range map[string]SLO{
		"p95<2s":      {Quantile: 0.95, Bound: 2 * time.Second},
		"p99.9<500ms": {Quantile: 0.999, Bound: 500 * time.Millisecond},
		" p50<1m ":    {Quantile: 0.5, Bound: time.Minute},
	} {
		got, err := ParseSLO(in)
		if err != nil {
			t.Errorf("ParseSLO(%q): %v", in, err)
			continue
		}
		if got.Quantile < want.Quantile-1e-12 || got.Quantile > want.Quantile+1e-12 || got.Bound != want.Bound {
			t.Errorf("ParseSLO(%q) = %+v, want %+v", in, *got, want)
		}
	}
	for _, in := range []string{"", "p95", "95<2s", "p0<1s", "p100<1s", "p95<-1s", "p95<fast", "pxx<1s"} {
		if _, err := ParseSLO(in); err == nil || !strings.Contains(err.Error(), "want pNN<duration") {
			t.Errorf("ParseSLO(%q) = %v, want an error saying what is accepted", in, err)
		}
	}
}

// Lost writes fail a step; so does a step whose completeness was never
// audited, since lost writes cannot be ruled out then.
func TestJudgeLostWrites(t *testing.T) {
	f := figures(stepSeries(30, func(int) float64 { return 500 }))
	f.Missing = 400
	if v := DefaultRule().Judge(f); v.Sustainable || v.Missing != 400 || !strings.Contains(v.Reason(), "400 acknowledged events missing after the drain") {
		t.Errorf("400 lost writes: %+v", v)
	}
	f.Missing, f.Audited = 0, false
	if v := DefaultRule().Judge(f); v.Sustainable || !strings.Contains(v.Reason(), "not audited") {
		t.Errorf("no audit: %+v", v)
	}
}

// A read endpoint is held to the rules on lost writes, failed polls and
// the SLO as the target is, and its reasons name it; a clean one changes
// nothing.
func TestJudgeReadEndpoints(t *testing.T) {
	slo, err := ParseSLO("p95<2s")
	if err != nil {
		t.Fatal(err)
	}
	r := DefaultRule()
	r.SLO = slo
	fast, slow := NewHistogram(), NewHistogram()
	for range 100 {
		fast.Record(500 * time.Millisecond)
		slow.Record(3 * time.Second)
	}
	f := figures(stepSeries(30, func(int) float64 { return 500 }))
	f.FreshnessLag = fast
	f.ReadEndpoints = []EndpointFigures{{Name: "read1", FreshnessLag: fast, Audited: true}}
	if v := r.Judge(f); !v.Sustainable {
		t.Fatalf("a clean read endpoint: %s", v.Reason())
	}
	f.ReadEndpoints = []EndpointFigures{
		{Name: "read1", FreshnessLag: fast, Audited: true, Missing: 7},
		{Name: "read2", FreshnessLag: slow, FreshnessFailed: 1, Audited: false},
	}
	v := r.Judge(f)
	for _, want := range []string{
		"on read endpoint read1: 7 acknowledged events missing",
		"on read endpoint read2: 1 of 100 freshness polls failed",
		"on read endpoint read2: freshness lag p95 3s exceeds the SLO p95<2s (1 failed polls counted",
	} {
		if v.Sustainable || !strings.Contains(v.Reason(), want) {
			t.Errorf("want %q in: %s", want, v.Reason())
		}
	}
	if v.Missing != 0 {
		t.Errorf("verdict's missing %d, want the target's 0", v.Missing)
	}
	// An audit that did not run is no evidence of lost writes: alone, it
	// leaves the step not yet known.
	f.ReadEndpoints = []EndpointFigures{{Name: "read2", FreshnessLag: fast, Audited: false}}
	if v := r.Judge(f); v.Decision() != DecisionNotYetKnown || !strings.Contains(v.Reason(), "on read endpoint read2: completeness not audited") {
		t.Errorf("an endpoint not audited: %s", v)
	}
}

// A standby that replays more slowly than the primary takes writes falls
// further behind while the target keeps up: its freshness lag's trend is
// judged on its own series, and the step is not sustainable. A replica
// whose lag is steady, though larger than the target's, is.
func TestJudgeReadEndpointTrend(t *testing.T) {
	r := DefaultRule()
	f := figures(stepSeries(120, func(int) float64 { return 500 }))
	steady := stepSeries(120, func(int) float64 { return 900 })
	f.ReadEndpoints = []EndpointFigures{{Name: "read1", Audited: true, Series: steady}}
	v := r.Judge(f)
	if !v.Sustainable {
		t.Fatalf("a steady read endpoint: %s", v.Reason())
	}
	if len(v.ReadEndpointTrends) != 1 || v.ReadEndpointTrends[0].Name != "read1" || math.Abs(v.ReadEndpointTrends[0].LagSlopeMs) > 0.1 {
		t.Errorf("read endpoint trends %+v, want read1's flat trend", v.ReadEndpointTrends)
	}
	// 5 % slower: 50 ms more lag every second.
	behind := stepSeries(120, func(i int) float64 { return 900 + 50*float64(i) })
	f.ReadEndpoints = []EndpointFigures{{Name: "read1", Audited: true, Series: steady}, {Name: "read2", Audited: true, Series: behind}}
	v = r.Judge(f)
	if want := "on read endpoint read2: freshness lag grows 50.0 ms/s"; v.Sustainable || !strings.Contains(v.Reason(), want) {
		t.Errorf("want %q in: %s", want, v.Reason())
	}
	if strings.Contains(v.Reason(), "read1") {
		t.Errorf("read1 is steady, but: %s", v.Reason())
	}
	if v.LagSlopeMs > 0.1 {
		t.Errorf("the target's trend %.1f ms/s, want its own (flat)", v.LagSlopeMs)
	}
}

// Over the measured part, the events scheduled but not acknowledged can
// be no more than the in-flight bound holds.
func TestJudgeShortfallBeyondInflight(t *testing.T) {
	pts := stepSeries(30, func(int) float64 { return 500 })
	f := figures(pts)
	f.InflightEvents = 800
	pts[29].AckedEvents -= 800 // 800 still in flight at the end: possible
	if v := DefaultRule().Judge(f); !v.Sustainable {
		t.Errorf("800 events short with 800 in flight allowed: %s", v.Reason())
	}
	pts[28].AckedEvents-- // one more than the bound holds
	if v := DefaultRule().Judge(f); v.Sustainable || !strings.Contains(v.Reason(), "801 events fewer acknowledged than scheduled") {
		t.Errorf("801 events short: %s", v.Reason())
	}
}

// Failed freshness polls know their lag only as a lower bound: beyond the
// error bound they fail the step, and an SLO counts them as over its
// bound.
func TestJudgeFailedPolls(t *testing.T) {
	lag := NewHistogram()
	lag.RecordN(500*time.Millisecond, 101) // 100 answered, 1 failed (its lower bound)
	f := figures(stepSeries(30, func(int) float64 { return 500 }))
	f.FreshnessLag = lag
	f.FreshnessFailed = 1
	if v := DefaultRule().Judge(f); v.Sustainable || !strings.Contains(v.Reason(), "1 of 101 freshness polls failed") {
		t.Errorf("1 of 101 polls failed: %s", v.Reason())
	}
	r := DefaultRule()
	r.MaxErrorRate = 1 // the SLO alone
	r.SLO, _ = ParseSLO("p95<1s")
	lag.RecordN(500*time.Millisecond, 9) // 110 polls, 10 failed
	f.FreshnessFailed = 10               // p95 of 110 is the 105th: with 10 failed over the bound, not measured
	if v := r.Judge(f); v.Sustainable || !strings.Contains(v.Reason(), "freshness lag p95 not measured: 10 of 110 polls failed, counted as over the SLO p95<1s") {
		t.Errorf("10 failed polls against p95<1s: %s", v.Reason())
	}
	f.FreshnessFailed = 4 // the 105th + 4 of 110: answered, under 1 s
	if v := r.Judge(f); !v.Sustainable {
		t.Errorf("4 failed polls against p95<1s: %s", v.Reason())
	}
	// Lower bounds under the SLO do not pass it: of 110 polls, 3 answered
	// ones took 2 s and 3 failed ones read 500 ms as their bound; p95
	// allows 5 over the bound, and 6 are not known to be under it.
	lag = NewHistogram()
	lag.RecordN(500*time.Millisecond, 107)
	lag.RecordN(2*time.Second, 3)
	f.FreshnessLag, f.FreshnessFailed = lag, 3
	if v := r.Judge(f); v.Sustainable || !strings.Contains(v.Reason(), "exceeds the SLO p95<1s (3 failed polls counted as over it)") {
		t.Errorf("3 failed polls and 3 slow ones against p95<1s: %s", v.Reason())
	}
	f.FreshnessFailed = 2 // 5 not known to be under 1 s: p95 holds
	if v := r.Judge(f); !v.Sustainable {
		t.Errorf("2 failed polls and 3 slow ones against p95<1s: %s", v.Reason())
	}
}

// A step too short for a trend says so and names a hold.
func TestJudgeTooShortNamesHold(t *testing.T) {
	v := DefaultRule().Judge(figures(stepSeries(2, func(int) float64 { return 500 })))
	if v.Sustainable || v.NeedHoldS < 20 || !strings.Contains(v.Reason(), "too short to judge a trend; a hold of at least") {
		t.Errorf("2 s step: %+v", v)
	}
}

// The trend's bounds hold what they promise: over many noisy lines the
// true slope is above the upper bound in about 0.5 % of cases and below
// the lower one as often, from the 20 points of the shortest hold the rule
// is designed for to many, with independent and with correlated noise.
func TestFitTrendCoverage(t *testing.T) {
	t.Parallel() // a simulation of its own, from its own seed
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{20, 60, 200} {
		for _, rho := range []float64{0, 0.6} {
			trials := 2000
			if n > 100 {
				trials = 300
			}
			var above, below int
			for range trials {
				x, y := make([]float64, n), make([]float64, n)
				e := 0.0
				for i := range x {
					x[i] = float64(i)
					e = rho*e + math.Sqrt(1-rho*rho)*rng.NormFloat64()*50
					y[i] = 1000 + 3*x[i] + e
				}
				f := fitTrend(x, y, 0, true, confidenceAlpha)
				if f.upper < 3 {
					above++
				}
				if f.lower > 3 {
					below++
				}
			}
			// 0.5 % expected each way; up to 2 % accepted, since the AR(1)
			// correction is approximate.
			t.Logf("n=%d, ρ=%g: above %d, below %d of %d", n, rho, above, below, trials)
			if above > trials/50 || below > trials/50 {
				t.Errorf("n=%d, ρ=%g: true slope above the upper bound %d times, below the lower %d times in %d", n, rho, above, below, trials)
			}
		}
	}
}

// Lost updates make a step unsustainable, as lost writes do, on the
// target and on a read endpoint.
func TestJudgeLostUpdates(t *testing.T) {
	rule := DefaultRule()
	f := figures(stepSeries(30, func(int) float64 { return 300 }))
	if v := rule.Judge(f); !v.Sustainable {
		t.Fatalf("a steady step: %v", v.Reasons)
	}
	f.LostUpdates = 3
	if v := rule.Judge(f); v.Sustainable || !strings.Contains(strings.Join(v.Reasons, "; "), "3 updated events show an older revision") {
		t.Errorf("a step with 3 lost updates: sustainable %v, %v", v.Sustainable, v.Reasons)
	}
}
