package stats

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Hold-independence of the verdict (issue 12, item 5): a step at a rate
// above the capacity X by more than the rule's tolerance fails, and a
// step at or below X (down to 98 % of it) passes, for holds of 20 s,
// 60 s, 300 s and 45 minutes, wherever the rate falls in that range. The steps are
// the sim's queue modelled batch by batch (see queueModel), with the
// noise of a busy test machine; seeds are fixed, so a failure repeats.
func TestVerdictFindsCapacityAtAnyHold(t *testing.T) {
	t.Parallel() // a simulation of its own, from its own seed
	r := DefaultRule()
	const capacity = 1000.0
	for _, hold := range []float64{20, 60, 300, 2700} {
		t.Run(fmt.Sprintf("hold %gs", hold), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(hold), 12))
			trials := map[float64]int{20: 30, 60: 30, 300: 10, 2700: 3}[hold]
			wrong := 0
			for i := range trials {
				// Above: overloads from just over the tolerance up to the 2 %
				// that the old 98 % rule let through. Below: 98 %–100 %.
				over := resolution(r) + (0.0204-resolution(r))*rng.Float64()
				under := 0.02 * rng.Float64()
				if i == 0 {
					over, under = 0.015, 0 // the 1015 events/s against 1000, and a step exactly at the capacity
				}
				for _, c := range []struct {
					rate        float64
					sustainable bool
				}{{capacity * (1 + over), false}, {capacity * (1 - under), true}} {
					v, _ := simModel(c.rate, capacity, hold).judge(r, rng)
					if v.Sustainable != c.sustainable {
						wrong++
						t.Errorf("trial %d: %.1f events/s against a capacity of %g: sustainable = %v (%s)", i, c.rate, capacity, v.Sustainable, v.Reason())
					}
				}
			}
			t.Logf("%d of %d steps misjudged", wrong, 2*trials)
		})
	}
}

// The peak search's outcome on modelled steps: whatever the start and
// increment, the highest sustainable step below the first unsustainable
// one lies within one increment below the capacity (or within the rule's
// tolerance above it).
func TestVerdictPeakWithinOneStep(t *testing.T) {
	r := DefaultRule()
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 12 {
		capacity := 500 + 4500*rng.Float64()
		inc := capacity * (0.02 + 0.2*rng.Float64())
		rate := capacity - inc*(1+3*rng.Float64()) // two to four steps below
		hold := []float64{20, 60, 120}[trial%3]
		peak := 0.0
		for ; ; rate += inc {
			m := simModel(rate, capacity, hold)
			m.batch = max(10, int(rate/20)) // about 20 batches a second
			v, _ := m.judge(r, rng)
			if !v.Sustainable {
				break
			}
			peak = rate
		}
		if peak <= capacity-inc || peak > capacity*(1+resolution(r)) {
			t.Errorf("trial %d: capacity %.0f, increment %.0f, hold %g s: peak %.0f", trial, capacity, inc, hold, peak)
		}
	}
}

// A refresh sawtooth (issue 12, item 4): the lag ages by a second per
// second between refreshes and drops at each. With any period up to the
// hold, random phase and noise, a flat sawtooth is judged sustainable,
// or, when the step is too short to judge its trend, the verdict names
// the hold that is needed, and at that hold the same sawtooth is judged
// sustainable. A sawtooth over a growing backlog is never sustainable.
func TestVerdictSawtooth(t *testing.T) {
	t.Parallel() // a simulation of its own, from its own seed
	r := DefaultRule()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, hold := range []float64{20, 60, 300} {
		t.Run(fmt.Sprintf("hold %gs", hold), func(t *testing.T) {
			trials := 60
			if hold > 100 {
				trials = 15
			}
			var direct, named, caught, resolved int
			for trial := range trials {
				period := 2 + (hold-2)*rng.Float64()
				m := queueModel{
					rate: 1000, batch: 50, maxInflight: 16, warmup: 5, hold: hold, service: 0.02, serviceNoise: 0.3,
					timerJitter: 0.003, visDelay: 0.01, refresh: period, phase: period * rng.Float64(),
					refreshJitter: 0.2 * rng.Float64(), poll: 0.2, lagNoise: 0.05 * rng.Float64(),
				}
				name := fmt.Sprintf("trial %d: period %.1f s, hold %g s", trial, period, hold)
				if ok, _ := judgedAtNamedHold(t, r, m, rng, name); ok {
					direct++
				} else {
					named++
				}
				// A backlog: the writes keep up but the lag's floor rises by
				// 10–50 ms a second (a visibility path 1–5 % short of the
				// rate). Where the step is too short to tell, the named
				// hold tells: the lag grows.
				m.visBacklog = 0.01 + 0.04*rng.Float64()
				v, _ := m.judge(r, rng)
				if v.Sustainable {
					t.Errorf("%s: sawtooth over a backlog of %.1f%% judged sustainable", name, 100*m.visBacklog)
					continue
				}
				caught++
				if v.NeedHoldS > 0 && !strings.Contains(v.Reason(), "grows") {
					m.hold = v.NeedHoldS
					if v2, _ := m.judge(r, rng); v2.Sustainable || !strings.Contains(v2.Reason(), "grows") {
						t.Errorf("%s: backlog of %.1f%% at the named hold of %.0f s judged %q", name, 100*m.visBacklog, m.hold, v2.Reason())
					}
					resolved++
				}
			}
			t.Logf("flat: %d sustainable at once, %d at the hold the verdict named; backlog: %d caught, %d of them at the named hold", direct, named, caught, resolved)
		})
	}
}

// judgedAtNamedHold judges a flat sawtooth m: sustainable (true), or not
// with a named hold at which it is sustainable (false).
func judgedAtNamedHold(t *testing.T, r Rule, m queueModel, rng *rand.Rand, name string) (bool, Verdict) {
	t.Helper()
	v, _ := m.judge(r, rng)
	if v.Sustainable {
		return true, v
	}
	if v.NeedHoldS <= m.hold || !strings.Contains(v.Reason(), "hold of at least") {
		t.Errorf("%s: flat sawtooth judged %q without naming a longer hold", name, v.Reason())
		return false, v
	}
	m.hold = v.NeedHoldS
	if v2, _ := m.judge(r, rng); !v2.Sustainable {
		t.Errorf("%s: flat sawtooth at the named hold of %.0f s judged %q", name, m.hold, v2.Reason())
	}
	return false, v
}

// resolution is the smallest overload share the rule must catch.
func resolution(r Rule) float64 { return r.MaxGrowth }

// The series keeps what the rule reads: each interval's exact mean write
// latency and smallest freshness lag, through coarsening too.
func TestSeriesKeepsMeanAndFloor(t *testing.T) {
	start := time.Now()
	s := NewSeries(start, 4)
	for i, ms := range []int{10, 20, 30, 40, 50, 60} {
		at := start.Add(time.Duration(i/2)*time.Second + 100*time.Millisecond)
		s.Written(at, 1, 1, 0, time.Duration(ms)*time.Millisecond)
		s.Freshness(at, time.Duration(1000-ms)*time.Millisecond)
	}
	pts := s.Points()
	if len(pts) != 3 || pts[0].WriteMeanMs != 15 || pts[2].WriteMeanMs != 55 || pts[0].FreshnessLagMinMs != 980 || pts[0].FreshnessLagMs != 990 {
		t.Fatalf("points %+v", pts)
	}
	// A fifth interval makes the series merge neighbours: the first
	// point then holds the first four writes and lags.
	s.Written(start.Add(4500*time.Millisecond), 1, 1, 0, 70*time.Millisecond)
	pts = s.Points()
	if pts[0].WidthS != 2 || pts[0].WriteMeanMs != 25 || pts[0].FreshnessLagMinMs != 960 || pts[0].FreshnessLagMs != 990 {
		t.Errorf("coarsened point %+v, want mean 25 ms, lag 960–990 ms", pts[0])
	}
}
