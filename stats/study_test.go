package stats

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// decideSequentially holds a modelled step as a sequential peak step
// holds (bench.looker): it judges the series so far once minHold has
// passed and after each whole refresh period (at least 10 s) from then,
// up to maxHold, spending the error over the looks. It returns the
// verdict and the hold at which it was given.
func decideSequentially(m queueModel, r Rule, rng *rand.Rand, minHold, maxHold float64) (Verdict, float64) {
	m.hold = maxHold
	pts := m.points(rng)
	var v Verdict
	look := 0
	for h := minHold; ; {
		h = min(h, maxHold)
		n := int(h)
		var acked, target int64
		for _, p := range pts[:n] {
			acked += p.AckedEvents
			target += p.TargetEvents
		}
		look++
		v = r.Judge(StepFigures{
			TargetPerSec: float64(target) / h, AchievedPerSec: float64(acked) / h, Attempted: acked,
			Series: pts[:n], InflightEvents: m.inflightEvents(), Audited: true, Look: look,
		})
		if !v.Undecided || h >= maxHold {
			return v, h
		}
		h += max(10, v.VisibilityPeriodS)
	}
}

// studyOutcome counts the misjudgements of simulated peak searches.
type studyOutcome struct {
	searches, steps                  int
	sustainableAbove, overloadPassed int // steps above capacity judged sustainable; of them, 1.5 % over or more
	notSustainableBelow              int // steps at or below 98 % of capacity judged not sustainable
	undecided                        int // steps not yet known at the maximum hold
	missed                           int // searches whose interval does not hold the capacity, or is wider than 5 %
	missedBeyond                     int // of them, by more than the rule's resolution (MaxGrowth: 0.5 %)
	heldS                            float64
}

// searchModel runs one peak search at the level of the judge: steps
// from start by step until one is not sustainable, then bisection to
// precision, each step held sequentially between minHold and maxHold.
// It returns the interval found (hi 0: none) and adds its steps to o.
func searchModel(base queueModel, r Rule, rng *rand.Rand, start, step, precision, minHold, maxHold float64, o *studyOutcome) (lo, hi float64) {
	c := base.capacity
	judgeAt := func(rate float64) Verdict {
		m := base
		m.rate = rate
		v, held := decideSequentially(m, r, rng, minHold, maxHold)
		o.steps++
		o.heldS += held
		switch {
		case v.Undecided:
			o.undecided++
		case v.Sustainable && rate > c:
			o.sustainableAbove++
			if rate >= 1.015*c {
				o.overloadPassed++
			}
		case !v.Sustainable && rate <= 0.98*c:
			o.notSustainableBelow++
		}
		return v
	}
	for rate := start; rate < 10*c; rate += step {
		v := judgeAt(rate)
		if v.Undecided {
			return lo, 0
		}
		if !v.Sustainable {
			hi = rate
			break
		}
		lo = rate
	}
	for lo > 0 && hi-lo > precision*hi {
		mid := (lo + hi) / 2
		v := judgeAt(mid)
		switch {
		case v.Undecided:
			return lo, hi
		case v.Sustainable:
			lo = mid
		default:
			hi = mid
		}
	}
	return lo, hi
}

// A study of the sequential rule on many simulated searches, at the
// level of the judge (no run is real-time): a capacity of 1,000–5,000
// events/s, batches of 10–100, a refresh period of 0–30 s (0: visible
// 50 ms after the acknowledgement), service, refresh and query noise
// drawn at random; steps held from 60 s up to 30 minutes. It reports how
// often a step is misjudged and how often a search's interval misses the
// capacity. FRESHBENCH_STUDY=N runs N searches (the closing note's 200);
// the test runs 20.
func TestSequentialStudy(t *testing.T) {
	t.Parallel() // a simulation of its own, from its own seed
	n := 20
	if s := os.Getenv("FRESHBENCH_STUDY"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(33, 2))
	var o studyOutcome
	for range n {
		c := []float64{1000, 2000, 5000}[rng.IntN(3)]
		m := queueModel{
			capacity: c, batch: []int{10, 50, 100}[rng.IntN(3)], maxInflight: 16, warmup: 10,
			timerJitter: 0.003, wakeJitter: 0.003, visDelay: 0.05, poll: 0.2,
			serviceNoise: 0.3 * rng.Float64(), lagNoise: 0.05 * rng.Float64(),
		}
		if p := 30 * rng.Float64(); p >= 1 {
			m.refresh, m.phase, m.refreshJitter = p, p*rng.Float64(), 0.1*p*rng.Float64()
		}
		start := c * (0.3 + 0.3*rng.Float64())
		lo, hi := searchModel(m, DefaultRule(), rng, start, 0.25*c, 0.05, 60, 1800, &o)
		o.searches++
		if !(lo > 0 && lo <= c && hi >= c && hi-lo <= 0.05*hi) {
			o.missed++
			if res := DefaultRule().MaxGrowth; !(lo > 0 && lo <= c*(1+res) && hi >= c*(1-res) && hi-lo <= 0.05*hi) {
				o.missedBeyond++
			}
			t.Logf("capacity %g, batch %d, refresh %.1f s: interval [%.0f, %.0f]", c, m.batch, m.refresh, lo, hi)
		}
	}
	share := func(k int) string { return strconv.FormatFloat(100*float64(k)/float64(o.steps), 'f', 2, 64) + " %" }
	t.Logf("%d searches, %d steps (mean hold %.0f s): sustainable above capacity %d (%s; ≥ 1.5 %% over: %d), not sustainable at ≤ 98 %% of it %d (%s), not yet known at 30 min %d (%s); interval missing the capacity or wider than 5 %%: %d searches (%d by more than the rule's resolution of 0.5 %%)",
		o.searches, o.steps, o.heldS/float64(o.steps), o.sustainableAbove, share(o.sustainableAbove), o.overloadPassed,
		o.notSustainableBelow, share(o.notSustainableBelow), o.undecided, share(o.undecided), o.missed, o.missedBeyond)
	if o.overloadPassed > 0 {
		t.Errorf("%d steps 1.5 %% or more over capacity judged sustainable", o.overloadPassed)
	}
	if float64(o.undecided) > 0.01*float64(o.steps)+1 {
		t.Errorf("%d of %d steps not yet known at 30 minutes (goal ≤ 1 %%)", o.undecided, o.steps)
	}
}

// Time to the peak on a 20 s refresh sawtooth and a capacity of 10,000
// events/s, from 2,000 in steps of 2,000 (issue 33): the sequential,
// refined search against a search whose every step holds one fixed hold,
// the shortest that decides each of its steps (as the 2023 comparison
// held 45 minutes). Each step also warms up for 10 s. The fixed search
// knows the peak to a step (20 %); the refined one to 5 %.
func TestTimeToPeak(t *testing.T) {
	t.Parallel() // a simulation of its own, from its own seed
	const c, warmup = 10000.0, 10.0
	m := queueModel{
		capacity: c, batch: 100, maxInflight: 16, warmup: warmup, timerJitter: 0.003, wakeJitter: 0.003,
		visDelay: 0.05, poll: 0.2, serviceNoise: 0.2, lagNoise: 0.02, refresh: 20, phase: 7, refreshJitter: 1,
	}
	r := DefaultRule()
	rng := rand.New(rand.NewPCG(33, 3))
	var o studyOutcome
	lo, hi := searchModel(m, r, rng, 2000, 2000, 0.05, 60, 1800, &o)
	refined := o.heldS + warmup*float64(o.steps)
	if !(lo <= c && hi >= c && hi-lo <= 0.05*hi) {
		t.Errorf("refined search: [%.0f, %.0f], want the capacity %g within 5 %%", lo, hi, c)
	}
	// The fixed search: the shortest hold, on a grid of a minute, that
	// decides every step from 2,000 to the first one over the capacity;
	// on the grid of 2,000 (the peak known to 20 %) and on one of
	// 500 (to 5 %, the refined search's precision).
	fixed := func(grid float64) (hold, total float64, steps int) {
		for h := 60.0; h <= 3600; h += 60 {
			decided := true
			steps = 0
			for rate := 2000.0; decided; rate += grid {
				mm := m
				mm.rate, mm.hold = rate, h
				v, _ := mm.judge(r, rng)
				steps++
				if v.Undecided || v.Sustainable == (rate > c) {
					decided = false
				}
				if rate > c {
					break
				}
			}
			if decided {
				return h, float64(steps) * (warmup + h), steps
			}
		}
		t.Fatalf("no fixed hold up to an hour decides every step of %g", grid)
		return 0, 0, 0
	}
	coarseHold, coarse, coarseSteps := fixed(2000)
	fineHold, fine, fineSteps := fixed(500)
	t.Logf("refined: %d steps, %.0f s in all, peak in [%.0f, %.0f] (5 %%); fixed by 2,000: %d steps of %.0f s, %.0f s in all (%.1f× the refined search's time, to 20 %%); fixed by 500: %d steps of %.0f s, %.0f s in all (%.1f×, to 5 %%)",
		o.steps, refined, lo, hi, coarseSteps, coarseHold, coarse, coarse/refined, fineSteps, fineHold, fine, fine/refined)
	if fine < 3*refined {
		t.Errorf("the refined search took %.0f s, the fixed one at equal precision %.0f s: goal ≥ 3× faster", refined, fine)
	}
}
