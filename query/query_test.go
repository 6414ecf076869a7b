package query_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
	"github.com/freshbench/freshbench/timeline"
)

// slackMs is the resolution of the figures read back: the tests run on
// virtual time (testing/synctest), where no timer wakes late and a query
// takes the sim's delay exactly; the histograms keep 3 significant digits.
const slackMs = 0.1

func baseConfig() query.Config {
	return query.Config{
		Mix: query.DefaultMix(), MaxInflight: 64, Limit: 10,
		Timeout: 5 * time.Second, SampleSize: 100, Seed: 42,
	}
}

// simLoad returns a workload against a simulated target into which 20
// generated events were written through the workload's tap, so that
// there are parameters to draw.
func simLoad(t *testing.T, tgt *sim.Target, cfg query.Config) *query.Load {
	t.Helper()
	l, err := query.New(cfg, "target", tgt, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := l.Tap(tgt)
	g, err := docgen.New(docgen.Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b := target.Batch{Generator: g.ID()}
	var buf []byte
	for range 20 {
		var d target.Document
		d, buf = g.Next(buf, time.Now().UnixMicro())
		b.Docs = append(b.Docs, d)
	}
	if res, err := w.Write(context.Background(), b); err != nil || res.Acknowledged != 20 {
		t.Fatalf("write through the tap: %+v %v", res, err)
	}
	if err := l.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	return l
}

func window(warmup, measured time.Duration) *timeline.Timeline {
	start := time.Now()
	return timeline.New(start, warmup, warmup+measured)
}

func within(t *testing.T, what string, got, lo, hi float64) {
	t.Helper()
	if got < lo || got > hi {
		t.Errorf("%s = %.2f, want within [%.2f, %.2f]", what, got, lo, hi)
	}
}

// A target that answers every query in D must read back as D: service
// time, and latency too when the schedule is well within its capacity.
func TestQueryDelayReadsBack(t *testing.T) {
	t.Parallel()
	const delayMs = 25
	tgt := sim.New(sim.Config{QueryDelay: delayMs * time.Millisecond})

	t.Run("open loop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := baseConfig()
			cfg.QPS = 40
			r := simLoad(t, tgt, cfg).Run(context.Background(), window(200*time.Millisecond, 1500*time.Millisecond), nil)
			s := r.Total
			if s.Queries < 50 || s.Failed != 0 || r.Unsent != 0 {
				t.Fatalf("queries %d, failed %d, unsent %d; want about 60, none failed or unsent", s.Queries, s.Failed, r.Unsent)
			}
			within(t, "service time p50 ms", s.ServiceTime.P50Ms, delayMs, delayMs+slackMs)
			within(t, "latency p50 ms", s.Latency.P50Ms, delayMs, delayMs+slackMs)
			within(t, "achieved QPS", r.AchievedQPS, 40*0.85, 40*1.1)
			// The simulated database answers newest-N from the 20 events it
			// holds, and keeps no payload for the other kinds.
			for _, k := range r.Kinds {
				want, text := 0.0, "none $1\n"
				if k.Kind == string(target.QueryNewest) {
					want, text = 10, "newest $1 10\n"
				}
				if k.Queries > 0 && k.RowsPerQuery() != want {
					t.Errorf("%s: %.1f rows per query, want %v", k.Kind, k.RowsPerQuery(), want)
				}
				if !strings.HasPrefix(k.Text, text) || !strings.Contains(k.Text, "-- parameters 1: ") {
					t.Errorf("%s: query text %q; want the kind's sim text, %q, and its parameter", k.Kind, k.Text, text)
				}
			}
		})
	})

	t.Run("closed loop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := baseConfig()
			cfg.Concurrency = 2
			r := simLoad(t, tgt, cfg).Run(context.Background(), window(100*time.Millisecond, time.Second), nil)
			within(t, "service time p50 ms", r.Total.ServiceTime.P50Ms, delayMs, delayMs+slackMs)
			// Two workers, each answered every D: 2/D queries per second.
			within(t, "achieved QPS", r.AchievedQPS, 2000.0/(delayMs+slackMs), 2000.0/delayMs*1.05)
			if r.Mode != "closed" || r.Total.Late != 0 || r.Unsent != 0 {
				t.Errorf("mode %s, late %d, unsent %d; want closed, 0, 0", r.Mode, r.Total.Late, r.Unsent)
			}
		})
	})
}

// When the target answers slower than the schedule asks, the open loop's
// latency (from intended time) must grow with the queue while the service
// time stays the target's: the backlog is not hidden. A closed loop on
// the same target shows only the service time, which is why the open loop
// is the one to read.
func TestOpenLoopLatencyShowsBacklog(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testOpenLoopLatencyShowsBacklog)
}

func testOpenLoopLatencyShowsBacklog(t *testing.T) {
	const delayMs = 20 // one query in flight: 50 QPS at most
	tgt := sim.New(sim.Config{QueryDelay: delayMs * time.Millisecond})
	cfg := baseConfig()
	cfg.QPS, cfg.MaxInflight = 100, 1
	r := simLoad(t, tgt, cfg).Run(context.Background(), window(0, 2*time.Second), nil)
	s := r.Total
	within(t, "service time p50 ms", s.ServiceTime.P50Ms, delayMs, delayMs+slackMs)
	// Query k is due at k×10 ms and answered at about (k+1)×20 ms, so its
	// latency grows by 10 ms per query: about 500 ms at the median of a
	// 2 s run, about 1 s at the end.
	if s.Latency.P50Ms < 250 || s.Latency.MaxMs < 1.5*s.Latency.P50Ms {
		t.Errorf("latency p50 %.0f ms, max %.0f ms; want a latency growing far past the %d ms service time", s.Latency.P50Ms, s.Latency.MaxMs, delayMs)
	}
	if s.Late < s.Queries*9/10 {
		t.Errorf("%d of %d queries late, want nearly all", s.Late, s.Queries)
	}
	within(t, "achieved QPS", r.AchievedQPS, 50*0.8, 50*1.05)
	// Half of the 200 queries due were never sent.
	if r.Unsent < 60 || r.Unsent+s.Queries < 180 || r.Unsent+s.Queries > 202 {
		t.Errorf("unsent %d, sent %d; want about 100 each of the 200 due", r.Unsent, s.Queries)
	}

	cfg.QPS, cfg.Concurrency = 0, 1
	c := simLoad(t, tgt, cfg).Run(context.Background(), window(0, time.Second), nil)
	within(t, "closed loop latency p50 ms", c.Total.Latency.P50Ms, delayMs, delayMs+slackMs)
}

// Values written become parameters only once they have settled.
func TestSettleDelaysTheFirstQuery(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testSettleDelaysTheFirstQuery)
}

func testSettleDelaysTheFirstQuery(t *testing.T) {
	cfg := baseConfig()
	cfg.QPS, cfg.Settle = 50, 300*time.Millisecond
	r := simLoad(t, sim.New(sim.Config{}), cfg).Run(context.Background(), window(0, time.Second), nil)
	within(t, "waited s", r.WaitedS, cfg.Settle.Seconds(), cfg.Settle.Seconds()+slackMs/1000)
	within(t, "measured s", r.MeasuredS, 1-r.WaitedS-0.01, 1-r.WaitedS+0.01)
	if r.Total.Queries < 25 {
		t.Errorf("%d queries after the wait, want about 35", r.Total.Queries)
	}
}

func TestNoParameters(t *testing.T) {
	cfg := baseConfig()
	cfg.QPS = 10
	l, err := query.New(cfg, "target", sim.New(sim.Config{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Prepare(context.Background()); !errors.Is(err, query.ErrNoParameters) {
		t.Fatalf("prepare on an empty target: %v, want ErrNoParameters", err)
	}
}

func TestMissShare(t *testing.T) { t.Parallel(); synctest.Test(t, testMissShare) }

func testMissShare(t *testing.T) {
	cfg := baseConfig()
	cfg.QPS, cfg.MissShare = 200, 0.5
	r := simLoad(t, sim.New(sim.Config{}), cfg).Run(context.Background(), window(0, time.Second), nil)
	s := r.Total
	if s.Queries < 150 {
		t.Fatalf("only %d queries", s.Queries)
	}
	within(t, "miss share", float64(s.Misses)/float64(s.Queries), 0.4, 0.6)
	// A newest-N for a generator that never wrote returns no row; the
	// others do.
	for _, k := range r.Kinds {
		if k.Kind == string(target.QueryNewest) && k.Empty != k.Misses {
			t.Errorf("newest: %d empty results, %d misses; want equal", k.Empty, k.Misses)
		}
	}
}

func TestInterruptedRunKeepsWhatItMeasured(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testInterruptedRunKeepsWhatItMeasured)
}

func testInterruptedRunKeepsWhatItMeasured(t *testing.T) {
	cfg := baseConfig()
	cfg.QPS = 100
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	r := simLoad(t, sim.New(sim.Config{QueryDelay: time.Millisecond}), cfg).Run(ctx, window(100*time.Millisecond, 10*time.Second), nil)
	within(t, "measured s", r.MeasuredS, 0.5-slackMs/1000, 0.5+slackMs/1000)
	if r.Total.Queries < 35 || r.Unsent > 1 {
		t.Errorf("%d queries, %d unsent; want about 50 and none unsent", r.Total.Queries, r.Unsent)
	}
}

// A run whose context is already done measures nothing. Its window is
// closed by a callback on the context; the result must wait for it, or a
// busy machine reads the whole planned window as measured (seen: 10 s
// measured of a run interrupted at 0.6 s).
func TestCancelledRunMeasuresNothing(t *testing.T) { synctest.Test(t, testCancelledRunMeasuresNothing) }

func testCancelledRunMeasuresNothing(t *testing.T) {
	cfg := baseConfig()
	cfg.QPS = 100
	l := simLoad(t, sim.New(sim.Config{}), cfg)
	for i := range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := l.Run(ctx, window(0, 10*time.Second), nil)
		if r.MeasuredS > 0.5 {
			t.Fatalf("run %d: %.2f s measured of a run cancelled before it began, want none", i, r.MeasuredS)
		}
	}
}

// The sweep must find the highest step under the SLO and stop at the
// first that misses it: one query in flight at 10 ms each is 100 QPS.
func TestSweepFindsTheKnee(t *testing.T) { t.Parallel(); synctest.Test(t, testSweepFindsTheKnee) }

func testSweepFindsTheKnee(t *testing.T) {
	tgt := sim.New(sim.Config{QueryDelay: 10 * time.Millisecond})
	// The bound is far above the 10 ms service time, so that scheduling
	// noise of a busy machine cannot fail the 75 QPS step; at 125 QPS the
	// queue grows by 25 queries a second and passes it within the step.
	slo, err := stats.ParseSLO("p95<100ms")
	if err != nil {
		t.Fatal(err)
	}
	sc := query.SweepConfig{Start: 25, Step: 50, Max: 175, SLO: slo, MaxErrorShare: query.DefaultMaxErrorShare, MinAchievedShare: query.DefaultMinAchievedShare}
	// OnStep sees the sweep as it stands after each step.
	var seen []string
	sc.OnStep = func(sw *results.QuerySweep) {
		seen = append(seen, fmt.Sprintf("%d steps, best %g QPS, %s", len(sw.Steps), sw.QPS, sw.Reason))
	}
	sw, err := query.RunSweep(context.Background(), sc, func(ctx context.Context, qps float64) (*results.Queries, error) {
		cfg := baseConfig()
		cfg.QPS, cfg.MaxInflight = qps, 1
		return simLoad(t, tgt, cfg).Run(ctx, window(100*time.Millisecond, 800*time.Millisecond), nil), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sw.Found || sw.QPS != 75 || len(sw.Steps) != 3 {
		t.Fatalf("sweep found=%v qps=%g after %d steps (%s), want 75 QPS and a stop at the third step", sw.Found, sw.QPS, len(sw.Steps), sw.Reason)
	}
	last := sw.Steps[2].Verdict
	if last.Met || !strings.Contains(sw.Reason, "125 QPS") || last.LatencyMs < 100 {
		t.Errorf("last step %+v, reason %q; want a missed p95 at 125 QPS", last, sw.Reason)
	}
	want := []string{"1 steps, best 25 QPS, under way", "2 steps, best 75 QPS, under way", "3 steps, best 75 QPS, " + sw.Reason}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("OnStep saw\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseMix(t *testing.T) {
	m, err := query.ParseMix(" point=4, array=3,aggregate=0,newest ")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.String(); got != "point=4,array=3,newest=1" {
		t.Errorf("mix %q", got)
	}
	if m, err := query.ParseMix("bucket=2,newest"); err != nil || m.String() != "bucket=2,newest=1" {
		t.Errorf("ParseMix(bucket=2,newest) = %v, %v", m, err)
	}
	// The default stays what earlier runs measured.
	if got := query.DefaultMix().String(); got != "point=4,array=3,aggregate=2,newest=1" {
		t.Errorf("default mix %q", got)
	}
	for _, bad := range []string{"", "point=0", "lookup=1", "point=x", "point=-1", "point=1,point=2"} {
		if _, err := query.ParseMix(bad); err == nil || !strings.Contains(err.Error(), "kind=weight") {
			t.Errorf("ParseMix(%q) = %v, want an error that says what is accepted", bad, err)
		}
	}
}

func TestSweepRates(t *testing.T) {
	got := query.SweepConfig{Start: 0.1, Step: 0.1, Max: 0.3}.Rates()
	if len(got) != 3 {
		t.Errorf("rates %v, want 3 steps", got)
	}
}

// Validate names the field in the library's words; the command maps it to
// its flag.
func TestValidateNamesTheField(t *testing.T) {
	for field, mod := range map[invalid.Field]func(*query.Config){
		invalid.QPSAndConcurrency: func(c *query.Config) {},
		invalid.MissShare:         func(c *query.Config) { c.QPS, c.MissShare = 1, 2 },
		invalid.Limit:             func(c *query.Config) { c.QPS, c.Limit = 1, 0 },
		invalid.QueryTimeout:      func(c *query.Config) { c.QPS, c.Timeout = 1, 0 },
		invalid.QueryInflight:     func(c *query.Config) { c.QPS, c.MaxInflight = 1, 0 },
	} {
		c := baseConfig()
		mod(&c)
		e, ok := invalid.As(c.Validate())
		if !ok || e.Field != field || strings.Contains(e.Error(), "--") {
			t.Errorf("%s: %v, want an invalid.Error of that field, in no flag's words", field, e)
		}
	}
}

// A sweep's settings are named in the library's words too, and so is the
// reason a sweep that met its bound at every step records.
func TestSweepValidateNamesTheField(t *testing.T) {
	slo, err := stats.ParseSLO("p95<1s")
	if err != nil {
		t.Fatal(err)
	}
	for field, mod := range map[invalid.Field]func(*query.SweepConfig){
		invalid.SweepStart: func(c *query.SweepConfig) { c.Start = 0 },
		invalid.SweepStep:  func(c *query.SweepConfig) { c.Step = -1 },
		invalid.SweepMax:   func(c *query.SweepConfig) { c.Max = c.Start / 2 },
		invalid.SLO:        func(c *query.SweepConfig) { c.SLO = nil },
	} {
		c := query.SweepConfig{Start: 10, Step: 10, Max: 30, SLO: slo}
		mod(&c)
		e, ok := invalid.As(c.Validate())
		if !ok || e.Field != field || strings.Contains(e.Error(), "--") {
			t.Errorf("%s: %v, want an invalid.Error of that field, in no flag's words", field, c.Validate())
		}
	}
}

// A sweep that meets its bound at every step says so in its own words:
// the reason is stored in the results file, which no flag reaches.
func TestSweepReasonInItsOwnWords(t *testing.T) { synctest.Test(t, testSweepReasonInItsOwnWords) }

func testSweepReasonInItsOwnWords(t *testing.T) {
	tgt := sim.New(sim.Config{QueryDelay: time.Millisecond})
	slo, err := stats.ParseSLO("p95<1s")
	if err != nil {
		t.Fatal(err)
	}
	sc := query.SweepConfig{Start: 25, Step: 25, Max: 25, SLO: slo, MaxErrorShare: query.DefaultMaxErrorShare, MinAchievedShare: query.DefaultMinAchievedShare}
	sw, err := query.RunSweep(context.Background(), sc, func(ctx context.Context, qps float64) (*results.Queries, error) {
		cfg := baseConfig()
		cfg.QPS = qps
		return simLoad(t, tgt, cfg).Run(ctx, window(100*time.Millisecond, 800*time.Millisecond), nil), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sw.Found || !strings.Contains(sw.Reason, "25 QPS") || strings.Contains(sw.Reason, "--") {
		t.Errorf("sweep found=%v, reason %q; want every step met, said without a flag", sw.Found, sw.Reason)
	}
}
