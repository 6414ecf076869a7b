package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// sawtoothSeries is the measured part of a step on a store that makes
// writes visible at refreshes every periodS seconds: one point a second,
// each with the newest and oldest lag of its five polls. A refresh lands
// floorAt(k) ms after the events it makes visible (the k-th refresh's
// floor), and the lag ages by a second per second until the next one.
func sawtoothSeries(n int, periodS float64, floorAt func(k int) float64) []Point {
	pts := stepSeries(n, func(int) float64 { return 0 })
	for i := range pts {
		k := int(float64(i) / periodS)
		age := 1000 * (float64(i) - float64(k)*periodS)
		floor := floorAt(k)
		pts[i].FreshnessLagMinMs = floor + age
		pts[i].FreshnessLagMs = floor + age + 800
	}
	return pts
}

// The Elasticsearch case of issue 33: refresh_interval 20 s, 60 s held,
// three flat floors with a refresh that takes a few hundred ms more some
// times than others. The trend's upper bound is far above the tolerance
// only because three floors say little: that is no evidence of a backlog,
// and the step must not be judged not sustainable.
func TestJudgeFlatFloorsShortHoldIsNotBacklog(t *testing.T) {
	for _, n := range []int{60, 70} { // two refreshes, three
		rng := rand.New(rand.NewPCG(33, 1))
		pts := sawtoothSeries(n, 20, func(int) float64 { return 900 + 600*rng.Float64() })
		v := DefaultRule().Judge(figures(pts))
		if len(v.Reasons) > 0 {
			t.Errorf("%d s: flat floors judged not sustainable: %s", n, v.Reason())
		}
		if v.Sustainable || v.NeedHoldS <= float64(n) {
			t.Errorf("%d s: a few refreshes cannot bound the trend, want not yet known with a longer hold named: sustainable %v, hold needed %gs", n, v.Sustainable, v.NeedHoldS)
		}
	}
}

// The quantiles the bounds use are those of the tables.
func TestQuantiles(t *testing.T) {
	for _, c := range []struct{ alpha, df, want float64 }{
		{0.005, 1, 63.657}, {0.005, 3, 5.841}, {0.005, 10, 3.169}, {0.005, 120, 2.617},
		{0.025, 5, 2.571}, {0.0005, 20, 3.850}, {0.05, 2, 2.920},
	} {
		if got := tQuantile(c.alpha, c.df); math.Abs(got-c.want) > 2e-3*c.want {
			t.Errorf("t quantile α=%g, df=%g: %.4f, want %.3f", c.alpha, c.df, got, c.want)
		}
	}
	if got := normalQuantile(0.005); math.Abs(got-2.5758) > 1e-3 {
		t.Errorf("z at 0.5%%: %.4f", got)
	}
	var sum float64
	for k := 1; k <= 100000; k++ {
		sum += lookAlpha(k)
	}
	if sum > confidenceAlpha || sum < 0.999*confidenceAlpha {
		t.Errorf("the looks spend %g of α = %g", sum, confidenceAlpha)
	}
}

// Each kind of evidence decides a step not sustainable, and only
// evidence does: what a step cannot rule out leaves it not yet known.
func TestJudgeThreeDecisions(t *testing.T) {
	flat := func() StepFigures { return figures(stepSeries(60, func(int) float64 { return 500 })) }
	cases := []struct {
		name string
		edit func(f *StepFigures)
		want string
		says string
	}{
		{"clean", func(*StepFigures) {}, DecisionSustainable, "sustainable"},
		{"1 in 10,000 acknowledged events lost", func(f *StepFigures) { f.Missing = f.Attempted / 10000 }, DecisionNotSustainable, "lost writes"},
		{"a backlog", func(f *StepFigures) {
			f.Series = stepSeries(60, func(i int) float64 { return 500 + 30*float64(i) })
		}, DecisionNotSustainable, "a backlog builds"},
		{"a shortfall", func(f *StepFigures) { f.AchievedPerSec = 0.9 * f.TargetPerSec }, DecisionNotSustainable, "achieved 90.0%"},
		{"not audited", func(f *StepFigures) { f.Audited = false }, DecisionNotYetKnown, "not audited"},
		{"audit pending", func(f *StepFigures) { f.Audited, f.AuditPending = false, true }, DecisionSustainable, "sustainable"},
		{"too short", func(f *StepFigures) { f.Series = f.Series[:2] }, DecisionNotYetKnown, "too short to judge"},
		{"lag not measured", func(f *StepFigures) {
			f.Series = stepSeries(30, func(int) float64 { return -1 })
		}, DecisionNotYetKnown, "freshness lag sampled in only 0"},
		{"not audited and lost", func(f *StepFigures) { f.Audited = false; f.Missing = 3 }, DecisionNotYetKnown, "not audited"},
		{"too short, and a backlog", func(f *StepFigures) {
			f.Series = stepSeries(6, func(i int) float64 { return 3000 + 550*float64(i) })
			f.Audited = false
		}, DecisionNotSustainable, "a backlog builds"},
	}
	for _, c := range cases {
		f := flat()
		c.edit(&f)
		v := DefaultRule().Judge(f)
		if v.Decision() != c.want || !strings.Contains(v.String(), c.says) {
			t.Errorf("%s: %s; want %s, saying %q", c.name, v, c.want, c.says)
		}
		if v.Sustainable && v.Undecided {
			t.Errorf("%s: both sustainable and undecided", c.name)
		}
	}
}

// A shortfall behind which the target answered promptly (in-flight slots
// free, service times flat) or the driver's CPU was at its share is the
// driver's: the step is not yet known for the target, never not
// sustainable. A target that fills the slots or slows its answers is not
// sustainable. (The case: a starved driver short of 2,000
// events/s against a capacity of 2,500, write p99 80 ms, no late batch.)
func TestJudgeDriverFellBehind(t *testing.T) {
	step := func(inflight int64, serviceAt func(i int) float64, cpu float64) StepFigures {
		pts := stepSeries(60, func(int) float64 { return 500 })
		for i := range pts {
			pts[i].AckedEvents = 967
			pts[i].Inflight = inflight
			pts[i].ServiceMeanMs = serviceAt(i)
		}
		f := figures(pts)
		f.TargetPerSec, f.MaxInflight, f.InflightEvents = 1000, 16, 16*50
		f.Driver = DriverFigures{CPUShare: cpu, Cores: 2, CeilingPerSec: 2400}
		return f
	}
	flat := func(i int) float64 { return 3 + 0.2*float64(i%3) }
	// On schedule, but a fifth of the batches sent late.
	late := func(inflight int64, cpu float64) StepFigures {
		f := step(inflight, flat, cpu)
		for i := range f.Series {
			f.Series[i].AckedEvents, f.Series[i].LateBatches = 1000, 4
		}
		f.AchievedPerSec = 1000
		return f
	}
	rising := func(i int) float64 { return 3 + 50*float64(i) }
	// Slots full, service times growing, the driver's threads waiting
	// for a CPU that other processes held back: the wait is told, but alone it
	// does not make the driver the limit (a driver that needs little CPU
	// waits at each wake-up on a busy machine).
	starved := func(cpu, wait float64) StepFigures {
		f := step(16, rising, cpu)
		f.Driver.WaitCores = wait
		return f
	}
	// A driver held to a tenth of a core by its cgroup's quota: its
	// threads' wait is told against one core, not as a share of the
	// quota (22 times it, which read as "waited 2220%").
	quota := starved(0.95, 2.22)
	quota.Driver.Cores, quota.Driver.Quota = 0.1, true
	// A driver that sent nothing in the second half has no late share
	// there to tell (it read "0% of batches late").
	stalled := step(3, flat, 0.97)
	for i := len(stalled.Series) / 2; i < len(stalled.Series); i++ {
		stalled.Series[i].Batches, stalled.Series[i].AckedEvents = 0, 0
	}
	for _, c := range []struct {
		name   string
		f      StepFigures
		driver bool
		says   string
	}{
		{"slots free, service flat", step(3, flat, 0.4), true, "the target answered promptly"},
		{"driver CPU at its share", step(16, rising, 0.97), true, "the driver used 97% of its 2 core(s) (its calibrated ceiling at this batch size: 2400 events/s)"},
		{"slots full", step(16, flat, 0.4), false, "achieved 96.7%"},
		{"service times grow", step(3, rising, 0.4), false, "achieved 96.7%"},
		{"nothing known of the service", step(3, func(int) float64 { return 0 }, 0), false, "achieved 96.7%"},
		{"late with the slots free, the driver's CPU at its share", late(3, 0.95), true, "20% of batches late in the second half, while the driver used 95%"},
		{"late with the slots full", late(16, 0.4), false, "20% of batches late in the second half (> 5%)"},
		{"driver waiting for a CPU", starved(0.45, 1), false, "achieved 96.7%"},
		{"driver at its share, waiting too", starved(0.92, 0.6), true, "the driver used 92% of its 2 core(s) (its calibrated ceiling at this batch size: 2400 events/s); its threads waited for a CPU as long as 60% of one core's time"},
		{"driver at its quota, waiting", quota, true, "; its threads waited for a CPU as long as 222% of one core's time"},
		{"driver sent nothing in the second half", stalled, true, "the driver fell behind: achieved 96.7% of the target rate, no batch sent in the second half, while"},
	} {
		v := DefaultRule().Judge(c.f)
		if v.DriverLimited != c.driver || !strings.Contains(v.String(), c.says) {
			t.Errorf("%s: %s; want driver limited %v, saying %q", c.name, v, c.driver, c.says)
		}
		if c.driver && (v.Decision() != DecisionNotYetKnown || !strings.HasPrefix(v.Reason(), "the driver fell behind")) {
			t.Errorf("%s: %s; want not yet known: the driver fell behind", c.name, v)
		}
		if !c.driver && v.Decision() != DecisionNotSustainable {
			t.Errorf("%s: %s; want not sustainable", c.name, v)
		}
	}
	// Late batches while the rate was kept, the slots were free and the
	// driver had CPU to spare: its timers fired late (a busy machine: a
	// CPU hog per core made 10 % of a 500 events/s step late, and the old
	// rule stopped the search at it). That is neither evidence against the
	// target nor a limit of the driver's: the rest judges the step.
	if v := DefaultRule().Judge(late(3, 0.01)); v.DriverLimited || v.Decision() != DecisionSustainable {
		t.Errorf("late with the slots free and the CPU idle: %s; want sustainable, the driver not the limit", v)
	}
	// Errors count against the target even behind a driver that fell
	// behind: the step is not sustainable, and the driver is not named
	// the limit (a busy round: a peak search stopped at "the driver is
	// the limit, not the target: … error rate 17.95%").
	failing := step(3, flat, 0.97)
	failing.Attempted, failing.Failed = 1000, 180
	if v := DefaultRule().Judge(failing); v.DriverLimited || v.Decision() != DecisionNotSustainable || !strings.Contains(v.String(), "error rate 18.00%") {
		t.Errorf("errors behind a driver at its share: %s (driver limited %v); want not sustainable on the error rate, the driver not the limit", v, v.DriverLimited)
	}
}
