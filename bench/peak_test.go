package bench

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target/sim"
)

// peakConfig is a short search against the simulated target: each step
// warms up for warmup and holds its rate for hold.
func peakConfig(start float64, step RateStep, warmup, hold time.Duration) PeakConfig {
	return PeakConfig{
		Run: Config{
			Ingest: ingest.Config{
				Rate: pace.Rate{PerSecond: start, Unit: pace.Events}, BatchSize: 50, Duration: warmup + hold, Warmup: warmup,
				Generators: 1, MaxInflight: 16, DocSize: 500, WriteTimeout: 5 * time.Second, ProbeRate: 20,
			},
			PollInterval: 50 * time.Millisecond, Drain: 2 * time.Second,
		},
		Increase: step, MaxSteps: 10, Rule: stats.DefaultRule(),
	}
}

// searchOnly is for tests of the search rather than of the rule: late
// batches are not judged, since on a loaded test machine the pacer's own
// timer may fire late, and neither are trends, which steps of a second or
// two are too short for.
func searchOnly(cfg PeakConfig) PeakConfig {
	cfg.Rule.MaxLateShare = 1
	cfg.Rule.MaxGrowth = 0
	return cfg
}

func add(events float64) RateStep {
	return RateStep{Add: pace.Rate{PerSecond: events, Unit: pace.Events}}
}

// A target that accepts at most X events/s must come out with a peak
// within one step below X: in (X - step, X] for a fixed increment, in
// (X / factor, X] for a factor. The steps here are 3 s long, too short
// for the trend rule (TestStepVerdictAtCapacity judges 20 s steps, and
// stats.TestVerdictFindsCapacityAtAnyHold longer ones on a model of this
// queue): with increments of 30 % and more, the achieved rate finds the
// capacity.
func TestPeakFindsCapacity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name            string
		capacity, start float64
		step            RateStep
		lowest          float64 // the peak must be above this
	}{
		{"increment", 4200, 2500, add(1000), 4200 - 1000},
		{"factor", 3000, 1500, RateStep{Factor: 1.5}, 3000 / 1.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				cfg := peakConfig(c.start, c.step, 500*time.Millisecond, 3*time.Second)
				cfg.Rule.MaxGrowth = 0
				// Batches at least 28 ms apart, so that timer jitter of a busy
				// machine does not count as late; still over 100 per step, so
				// that one batch acknowledged after the end costs under 1 %.
				cfg.Run.Ingest.BatchSize = 100
				res, err := SearchPeak(context.Background(), sim.New(sim.Config{Capacity: c.capacity}), cfg)
				if err != nil {
					t.Fatal(err)
				}
				logSteps(t, res)
				p := res.Peak
				if p == nil || !p.Found {
					t.Fatalf("no peak found: %+v", p)
				}
				peak := res.Steps[p.Step]
				if r := peak.Config.RatePerSecond; r <= c.lowest || r > c.capacity {
					t.Errorf("peak at target %v events/s, want in (%v, %v]", r, c.lowest, c.capacity)
				}
				if a := p.AchievedEventsPerSec; a < 0.98*peak.Config.RatePerSecond || a > c.capacity*1.01 {
					t.Errorf("peak achieved %v events/s at target %v, capacity %v", a, peak.Config.RatePerSecond, c.capacity)
				}
				// Every step below the peak held, the one above did not, and
				// the search stopped there.
				last := res.Steps[len(res.Steps)-1]
				if p.Step != len(res.Steps)-2 || last.Verdict == nil || last.Verdict.Sustainable {
					t.Fatalf("peak is step %d of %d; the last step should be the first unsustainable one", p.Step+1, len(res.Steps))
				}
				if !strings.Contains(last.Verdict.Reason(), "of the target rate") {
					t.Errorf("overload step judged %q, want the achieved rate to fail", last.Verdict.Reason())
				}
				if !strings.Contains(p.Reason, "was not sustainable") || res.EndedEarly {
					t.Errorf("search ended with %q (early %v)", p.Reason, res.EndedEarly)
				}
				for i, s := range res.Steps[:len(res.Steps)-1] {
					if s.Verdict == nil || !s.Verdict.Sustainable {
						t.Errorf("step %d (%s) below the capacity was not sustainable", i+1, s.Config.Rate)
					}
				}
			})
		})
	}
}

func logSteps(t *testing.T, res *results.Result) {
	t.Helper()
	for i, s := range res.Steps {
		reason := "no verdict"
		if s.Verdict != nil {
			reason = s.Verdict.Reason()
		}
		t.Logf("step %d: target %s, achieved %.0f events/s, late %d: %s", i+1, s.Config.Rate, s.Summary.AchievedEventsPerSec, s.Summary.LateBatches, reason)
	}
	if res.Peak != nil {
		t.Logf("peak: %+v", *res.Peak)
	}
}

// With Confirm, an unsustainable step is run once more before the search
// stops, and both runs are reported.
func TestPeakConfirm(t *testing.T) { synctest.Test(t, testPeakConfirm) }

func testPeakConfirm(t *testing.T) {
	cfg := searchOnly(peakConfig(1500, add(1000), 500*time.Millisecond, 1500*time.Millisecond))
	cfg.Confirm = true
	var seen []int
	cfg.OnStep = func(r *results.Result) { seen = append(seen, len(r.Steps)) }
	res, err := SearchPeak(context.Background(), sim.New(sim.Config{Capacity: 2000}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, res)
	if len(res.Steps) != 3 || res.Steps[1].Config.Rate != res.Steps[2].Config.Rate {
		t.Fatalf("%d steps, want 1500, 2500 and 2500 again", len(res.Steps))
	}
	if !strings.Contains(res.Peak.Reason, "step 2 (2500 events/s) was not sustainable, confirmed by step 3") {
		t.Errorf("reason %q", res.Peak.Reason)
	}
	if !res.Peak.Found || res.Peak.Step != 0 {
		t.Errorf("peak %+v, want step 1", *res.Peak)
	}
	if len(seen) != 3 || seen[0] != 1 || seen[2] != 3 {
		t.Errorf("OnStep saw %v steps, want 1, 2, 3", seen)
	}
	if res.Kind != results.KindPeak {
		t.Errorf("kind %q, want %q", res.Kind, results.KindPeak)
	}
	for i, st := range res.Steps {
		if st.Kind != results.KindStep {
			t.Errorf("step %d: kind %q, want %q", i+1, st.Kind, results.KindStep)
		}
	}
}

func TestPeakLimits(t *testing.T) { synctest.Test(t, testPeakLimits) }

func testPeakLimits(t *testing.T) {
	unbounded := sim.New(sim.Config{})
	cfg := searchOnly(peakConfig(500, add(500), 300*time.Millisecond, 700*time.Millisecond))
	cfg.MaxSteps = 2
	cfg.Run.Ingest.Seed = 7
	res, err := SearchPeak(context.Background(), unbounded, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || res.Peak.Reason != "reached the limit of 2 steps" || res.Peak.Step != 1 {
		t.Fatalf("%d steps, peak %+v", len(res.Steps), *res.Peak)
	}
	// A fixed seed moves on per step: no step rewrites another's events.
	if a, b := res.Steps[0], res.Steps[1]; a.Config.Seed == b.Config.Seed || a.Generators[0] == b.Generators[0] {
		t.Errorf("steps share seed %d / generator %s", a.Config.Seed, a.Generators[0])
	}
	if len(res.Generators) != 2 || res.Steps[1].Summary.Duplicates != 0 || res.Steps[1].Summary.Unexpected != 0 {
		t.Errorf("generators %v, step 2 completeness %+v", res.Generators, res.Steps[1].Target().Completeness)
	}

	cfg.MaxSteps, cfg.MaxRate = 0, 1200
	res, err = SearchPeak(context.Background(), unbounded, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || !strings.Contains(res.Peak.Reason, "the next step (1500 events/s) would exceed the rate limit 1200 events/s") {
		t.Fatalf("%d steps, peak %+v", len(res.Steps), *res.Peak)
	}
}

// An interrupted search keeps the steps measured so far; the step under
// way is kept without a verdict.
func TestPeakInterrupted(t *testing.T) { synctest.Test(t, testPeakInterrupted) }

func testPeakInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := searchOnly(peakConfig(500, add(500), 300*time.Millisecond, 2*time.Second))
	cfg.OnStep = func(r *results.Result) {
		if len(r.Steps) == 1 {
			time.AfterFunc(time.Second, cancel)
		}
	}
	res, err := SearchPeak(ctx, sim.New(sim.Config{}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || !res.EndedEarly || res.Steps[1].Verdict != nil || !res.Steps[1].EndedEarly {
		t.Fatalf("%d steps, ended early %v", len(res.Steps), res.EndedEarly)
	}
	if res.Peak.Step != 0 || res.Peak.Reason != "interrupted during step 2 (1000 events/s)" {
		t.Errorf("peak %+v", *res.Peak)
	}
	if res.Steps[1].Summary.EventsAcked == 0 {
		t.Error("the interrupted step lost what it measured")
	}
}

// A freshness bound fails a step that keeps up but shows events too late;
// when the first step fails, there is no peak.
func TestPeakSLO(t *testing.T) { synctest.Test(t, testPeakSLO) }

func testPeakSLO(t *testing.T) {
	cfg := searchOnly(peakConfig(500, add(500), 300*time.Millisecond, 1500*time.Millisecond))
	slo, err := stats.ParseSLO("p95<200ms")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Rule.SLO = slo
	res, err := SearchPeak(context.Background(), sim.New(sim.Config{VisibilityDelay: 300 * time.Millisecond}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, res)
	if len(res.Steps) != 1 || res.Peak.Found || res.Peak.Step != -1 {
		t.Fatalf("%d steps, peak %+v; want no peak after one step", len(res.Steps), *res.Peak)
	}
	v := res.Steps[0].Verdict
	if v == nil || len(v.Reasons) != 1 || !strings.Contains(v.Reasons[0], "exceeds the SLO p95<200ms") {
		t.Errorf("verdict %+v, want only the SLO to fail", v)
	}
}

func TestParseRateStep(t *testing.T) {
	start := pace.Rate{PerSecond: 1000, Unit: pace.Events}
	for in, want := range map[string]float64{"2000": 3000, "x1.5": 1500, "X2": 2000, " 500/s ": 1500} {
		s, err := ParseRateStep(in)
		if err != nil {
			t.Errorf("ParseRateStep(%q): %v", in, err)
			continue
		}
		if got := s.Next(start); got != (pace.Rate{PerSecond: want, Unit: pace.Events}) {
			t.Errorf("%q after 1000 events/s: %v, want %v", in, got, want)
		}
	}
	s, err := ParseRateStep("10MB/s")
	if err != nil || s.Next(pace.Rate{PerSecond: 20e6, Unit: pace.Bytes}) != (pace.Rate{PerSecond: 30e6, Unit: pace.Bytes}) {
		t.Errorf("10MB/s: %+v, %v", s, err)
	}
	for _, in := range []string{"", "x1", "x0.5", "xfast", "-5", "fast"} {
		if _, err := ParseRateStep(in); err == nil {
			t.Errorf("ParseRateStep(%q) accepted", in)
		}
	}
}

func TestPeakConfigValidate(t *testing.T) {
	base := func() PeakConfig { return peakConfig(1000, add(1000), time.Second, 2*time.Second) }
	for _, c := range []struct {
		name string
		edit func(*PeakConfig)
		want string
	}{
		{"unit mismatch", func(c *PeakConfig) { c.Increase = RateStep{Add: pace.Rate{PerSecond: 1e6, Unit: pace.Bytes}} }, "want the unit of the start rate"},
		{"no limit", func(c *PeakConfig) { c.MaxSteps = 0 }, "want a limit"},
		{"max below start", func(c *PeakConfig) { c.MaxRate = 500 }, "maximum rate 500 events/s: want at least the start rate 1000 events/s"},
		{"no step", func(c *PeakConfig) { c.Increase = RateStep{} }, "step +0 events/s: want a positive increment"},
		{"bad run", func(c *PeakConfig) { c.Run.Ingest.BatchSize = 0 }, "batch size"},
	} {
		cfg := base()
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := base().Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

// A step that loses acknowledged writes is not sustainable, however well
// it kept up: the sim with drop_every=10 loses a tenth of what it
// acknowledges, and the verdict must say so with the figures.
func TestPeakLostWritesFailStep(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testPeakLostWritesFailStep)
}

func testPeakLostWritesFailStep(t *testing.T) {
	cfg := searchOnly(peakConfig(1000, add(1000), 300*time.Millisecond, 1500*time.Millisecond))
	cfg.MaxSteps = 1
	res, err := SearchPeak(context.Background(), sim.New(sim.Config{DropEvery: 10}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, res)
	s := res.Steps[0]
	if !s.Summary.Audited || s.Summary.Missing == 0 {
		t.Fatalf("audited %v, missing %d: the sim should have lost writes", s.Summary.Audited, s.Summary.Missing)
	}
	v := s.Verdict
	if v == nil || v.Sustainable || res.Peak.Found {
		t.Fatalf("a step that lost %d acknowledged events was judged %+v, peak %+v", s.Summary.Missing, v, *res.Peak)
	}
	if !strings.Contains(v.Reason(), "acknowledged events missing after the drain") {
		t.Errorf("reason %q does not name the lost writes", v.Reason())
	}
}

// The verdict on 20 s steps against the sim at 1000 events/s (the
// shortest hold it is designed for): 1.5 % over the capacity (the issue's
// 1015 events/s, which the 98 % rule and its fixed 500 ms lag allowance
// passed) is a backlog, 1 % under it is sustainable. Both steps run at
// once, against their own sims, in a synctest bubble: on the bubble's
// clock a busy machine's timer jitter cannot pass for noise (seen on the
// wall clock under load: 990 events/s "too short to tell", its lag trend
// bounded at 5.8 ms/s).
func TestStepVerdictAtCapacity(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testStepVerdictAtCapacity)
}

func testStepVerdictAtCapacity(t *testing.T) {
	const capacity = 1000.0
	cases := []struct {
		rate        float64
		sustainable bool
	}{{1015, false}, {990, true}}
	type outcome struct {
		step *results.Result
		v    stats.Verdict
		err  error
	}
	out := make([]outcome, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := peakConfig(c.rate, add(100), 2*time.Second, 20*time.Second)
			cfg.Run.PollInterval = 200 * time.Millisecond
			step, err := Run(context.Background(), sim.New(sim.Config{Capacity: capacity, VisibilityDelay: 50 * time.Millisecond}), cfg.Run)
			out[i] = outcome{step: step, err: err}
			if err == nil {
				out[i].v = judge(step, cfg.Run, cfg.Rule, 0, 0)
			}
		}()
	}
	wg.Wait()
	for i, c := range cases {
		o := out[i]
		if o.err != nil {
			t.Fatal(o.err)
		}
		s, v := o.step.Summary, o.v
		t.Logf("%g events/s against %g: achieved %.0f, write p99 %.0f ms, late %d: write trend %.2f ms/s (≤ %.2f), lag trend %.2f ms/s (≤ %.2f): %s",
			c.rate, capacity, s.AchievedEventsPerSec, s.WriteLatency.P99Ms, s.LateBatches, v.WriteSlopeMs, v.WriteUpperMs, v.LagSlopeMs, v.LagUpperMs, v.Reason())
		if v.Sustainable != c.sustainable {
			t.Errorf("%g events/s against a capacity of %g judged sustainable = %v: %s", c.rate, capacity, v.Sustainable, v.Reason())
		}
		if !c.sustainable && !strings.Contains(v.Reason(), "write latency grows") {
			t.Errorf("overload judged %q, want the write latency's growth named", v.Reason())
		}
	}
}

// flakyFreshness is the sim whose freshness query fails every third
// time, as a database answers under a stall: the lag is unknown then.
type flakyFreshness struct {
	*sim.Target
	mu sync.Mutex
	n  int
}

func (f *flakyFreshness) Freshness(ctx context.Context, gen string) (int64, bool, error) {
	f.mu.Lock()
	f.n++
	fail := f.n%3 == 0
	f.mu.Unlock()
	if fail {
		return 0, false, errors.New("freshness query failed (test)")
	}
	return f.Target.Freshness(ctx, gen)
}

// A step whose freshness polls fail must not pass on the polls that
// succeeded alone: a third of them failing fails the step, and a
// freshness SLO counts them as over its bound.
func TestPeakFailedFreshnessPolls(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testPeakFailedFreshnessPolls)
}

func testPeakFailedFreshnessPolls(t *testing.T) {
	cfg := searchOnly(peakConfig(500, add(500), 300*time.Millisecond, 1500*time.Millisecond))
	cfg.MaxSteps = 1
	slo, err := stats.ParseSLO("p50<1s")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Rule.SLO = slo
	res, err := SearchPeak(context.Background(), &flakyFreshness{Target: sim.New(sim.Config{VisibilityDelay: 20 * time.Millisecond})}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, res)
	v := res.Steps[0].Verdict
	if v == nil || v.Sustainable {
		t.Fatalf("a step with a third of its freshness polls failing was judged %+v", v)
	}
	if !strings.Contains(v.Reason(), "freshness polls failed") {
		t.Errorf("reason %q does not name the failed polls", v.Reason())
	}
}

// A standby that replays 30 % slower than the primary takes writes falls
// 300 ms further behind every second while the target keeps up: the step
// is not sustainable, for a reason that names the endpoint. A standby
// whose lag is larger but steady raises no reason of its own.
func TestPeakReadEndpointFallingBehind(t *testing.T) {
	for _, c := range []struct {
		name   string
		behind float64
		want   bool // a reason names read1's trend
	}{{"steady", 0, false}, {"falling behind", 0.3, true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				cfg := peakConfig(500, add(500), time.Second, 8*time.Second)
				cfg.MaxSteps = 1
				cfg.Run.Drain = 15 * time.Second
				tgt := sim.New(sim.Config{VisibilityDelay: 100 * time.Millisecond})
				cfg.Run.ReadEndpoints = []ReadEndpoint{{Name: "read1", URL: "sim://", Reader: tgt.FallingBehind(300*time.Millisecond, c.behind)}}
				res, err := SearchPeak(context.Background(), tgt, cfg)
				if err != nil {
					t.Fatal(err)
				}
				logSteps(t, res)
				v := res.Steps[0].Verdict
				if v == nil || len(v.ReadEndpointTrends) != 1 {
					t.Fatalf("verdict %+v, want read1's trend", v)
				}
				trend := v.ReadEndpointTrends[0]
				t.Logf("read1: lag trend %.1f ms/s (up to %.1f)", trend.LagSlopeMs, trend.LagUpperMs)
				named := strings.Contains(v.Reason(), "on read endpoint read1: freshness lag grows")
				if named != c.want {
					t.Errorf("a reason names read1's growing lag: %v, want %v (%s)", named, c.want, v.Reason())
				}
				if c.want && (trend.LagSlopeMs < 200 || trend.LagSlopeMs > 400) {
					t.Errorf("read1's lag grows %.0f ms/s, want about 300", trend.LagSlopeMs)
				}
				if s := res.Steps[0].Summary.ReadEndpoints[0]; !s.Audited || s.Missing != 0 {
					t.Errorf("read1: audited %v, %d missing: the drain is long enough to catch up", s.Audited, s.Missing)
				}
			})
		})
	}
}

// refreshing is a read endpoint whose freshness query sees what the sim
// held at its last refresh, one every period: its lag is a sawtooth of
// that period, as a replica that refreshes seldom shows.
type refreshing struct {
	*sim.Target
	period time.Duration
	mu     sync.Mutex
	at     time.Time
	newest int64
	seen   bool
}

func (r *refreshing) Freshness(ctx context.Context, gen string) (int64, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.at) >= r.period {
		v, ok, err := r.Target.Freshness(ctx, gen)
		if err != nil {
			return 0, false, err
		}
		r.at, r.newest, r.seen = now, v, ok
	}
	return r.newest, r.seen, nil
}

// A step held until its verdict is known must not end at a look that
// has not judged what its final verdict judges: a read endpoint whose
// lag is a 15 s sawtooth cannot be judged after 10 s, so the step holds
// on. Seen failing before (the look judged the target alone and ended
// the step, whose final verdict then asked for a longer hold than the
// search had allowed): "step ended after 11 s of the 180 s it could
// hold, not yet known: on read endpoint read1: freshness lag grows …
// a hold of at least 40 s is needed".
func TestPeakLookJudgesReadEndpoints(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := peakConfig(500, add(500), time.Second, 10*time.Second)
		cfg.MaxSteps, cfg.MaxHold = 1, 3*time.Minute
		cfg.Run.PollInterval = 200 * time.Millisecond
		tgt := sim.New(sim.Config{VisibilityDelay: 100 * time.Millisecond})
		cfg.Run.ReadEndpoints = []ReadEndpoint{{Name: "read1", URL: "sim://", Reader: &refreshing{Target: tgt, period: 15 * time.Second}}}
		res, err := SearchPeak(context.Background(), tgt, cfg)
		if err != nil {
			t.Fatal(err)
		}
		logSteps(t, res)
		v := res.Steps[0].Verdict
		if v == nil {
			t.Fatal("no verdict")
		}
		held := v.DecidedAtS
		if v.Undecided && held < cfg.MaxHold.Seconds()-1 && !strings.Contains(v.Reason(), "the step ended at look") {
			t.Errorf("step ended after %.0f s of the %.0f s it could hold, %s", held, cfg.MaxHold.Seconds(), v)
		}
		if !v.Sustainable {
			t.Errorf("a steady target with a read endpoint refreshing every 15 s judged %s", v)
		}
	})
}

// A step a look ended as sustainable, whose audit then finds acknowledged
// events missing, is not sustainable: the look could not see the audit,
// and its decision does not overrule it.
func TestPeakLookThenLostWrites(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := peakConfig(1000, add(1000), time.Second, 10*time.Second)
		cfg.MaxSteps, cfg.MaxHold = 1, 3*time.Minute
		cfg.Run.PollInterval = 200 * time.Millisecond
		res, err := SearchPeak(context.Background(), sim.New(sim.Config{VisibilityDelay: 100 * time.Millisecond, DropEvery: 10}), cfg)
		if err != nil {
			t.Fatal(err)
		}
		logSteps(t, res)
		s := res.Steps[0]
		v := s.Verdict
		if v == nil || v.Sustainable || v.Undecided || !strings.Contains(v.Reason(), "acknowledged events missing after the drain") {
			t.Fatalf("a step that lost %d acknowledged events was judged %+v", s.Summary.Missing, v)
		}
		if v.DecidedAtS >= cfg.MaxHold.Seconds()-1 {
			t.Errorf("the step held %.0f s: no look ended it, so the test says nothing of one", v.DecidedAtS)
		}
	})
}
