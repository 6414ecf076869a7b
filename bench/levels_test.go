package bench

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

// stages is a database whose behaviour changes between trials: it is
// the i-th simulated target during the i-th trial (next moves it on), so
// that a test can give each level, or a warm-up trial, a behaviour of its
// own.
type stages struct {
	mu   sync.Mutex
	sims []*sim.Target
	at   int
}

func (s *stages) cur() *sim.Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sims[min(s.at, len(s.sims)-1)]
}

func (s *stages) next() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at++
}

func (s *stages) Name() string                            { return "stages" }
func (s *stages) Setup(context.Context) error             { return nil }
func (s *stages) Teardown(context.Context) error          { return nil }
func (s *stages) Version(context.Context) (string, error) { return "stages", nil }
func (s *stages) Close() error                            { return nil }
func (s *stages) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	return s.cur().Write(ctx, b)
}
func (s *stages) Freshness(ctx context.Context, g string) (int64, bool, error) {
	return s.cur().Freshness(ctx, g)
}
func (s *stages) Visible(ctx context.Context, g string, ids []string) (map[string]bool, error) {
	return s.cur().Visible(ctx, g, ids)
}
func (s *stages) Count(ctx context.Context, g string) (int64, error) { return s.cur().Count(ctx, g) }
func (s *stages) Seqs(ctx context.Context, g string, fn func(int64)) error {
	return s.cur().Seqs(ctx, g, fn)
}

func events(r float64) pace.Rate { return pace.Rate{PerSecond: r, Unit: pace.Events} }

// levelsConfig is a short levels run against the simulated target: each
// trial warms up for 500 ms and measures for 1 s.
func levelsConfig(trials, warmup int, rates ...float64) LevelsConfig {
	c := LevelsConfig{
		Run: Config{
			Ingest: ingest.Config{
				BatchSize: 10, Duration: 1500 * time.Millisecond, Warmup: 500 * time.Millisecond,
				Generators: 1, MaxInflight: 16, DocSize: 500, WriteTimeout: 5 * time.Second, ProbeRate: 50,
			},
			PollInterval: 50 * time.Millisecond, Drain: 3 * time.Second,
		},
		LevelTrials: LevelTrials{Trials: trials, Warmup: warmup},
	}
	for _, r := range rates {
		c.Rates = append(c.Rates, events(r))
	}
	return c
}

// Each level's figures follow what the target did during its trials:
// events visible 100 ms after they are written at the first level, 300
// ms at the second, where the target also accepts at most 2000 events/s
// of the 3000 asked. The warm-up trial of each level meets a target that
// accepts only 300 events/s: it is kept, and left out of the figures.
func TestRunLevelsFollowsTheTarget(t *testing.T) { synctest.Test(t, testRunLevelsFollowsTheTarget) }

func testRunLevelsFollowsTheTarget(t *testing.T) {
	slow := sim.Config{Capacity: 300}
	l1 := sim.Config{VisibilityDelay: 100 * time.Millisecond}
	l2 := sim.Config{VisibilityDelay: 300 * time.Millisecond, Capacity: 2000}
	tgt := &stages{}
	for _, c := range []sim.Config{slow, l1, l1, slow, l2, l2} {
		tgt.sims = append(tgt.sims, sim.New(c))
	}
	cfg := levelsConfig(2, 1, 1000, 3000)
	var seen []int
	cfg.OnTrial = func(r *results.Result) {
		n := 0
		for _, l := range r.Levels.Levels {
			n += len(l.WarmupTrials) + len(l.Trials)
		}
		seen = append(seen, n)
		tgt.next()
	}
	res, err := RunLevels(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	logLevels(t, res)
	if res.Kind != results.KindLevels || res.EndedEarly || res.Config.Rate != "1000 events/s, 3000 events/s" {
		t.Fatalf("kind %q, ended early %v (%s), rate %q", res.Kind, res.EndedEarly, res.EndReason, res.Config.Rate)
	}
	if !slices.Equal(seen, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("OnTrial saw %v trials, want 1 to 6 in turn", seen)
	}
	ls := res.Levels
	if ls.Unit != results.UnitEvents || ls.Trials != 2 || ls.WarmupTrials != 1 || len(ls.Levels) != 2 {
		t.Fatalf("levels %+v", ls)
	}
	ids := map[string]bool{}
	for _, g := range res.Generators {
		ids[g] = true
	}
	if len(res.Generators) != 6 || len(ids) != 6 {
		t.Errorf("generators %v, want one of each of the 6 trials, all distinct", res.Generators)
	}
	const poll = 50.0
	for i, c := range []struct {
		target, visMs, achieved float64
	}{{1000, 100, 1000}, {3000, 300, 2000}} {
		l := ls.Levels[i]
		if len(l.WarmupTrials) != 1 || len(l.Trials) != 2 || l.Achieved.N != 2 || l.Target != c.target {
			t.Fatalf("level %d: %d warm-up trials, %d trials, %d in the figures, target %v", i+1, len(l.WarmupTrials), len(l.Trials), l.Achieved.N, l.Target)
		}
		if a := l.WarmupTrials[0].Summary.AchievedEventsPerSec; a > 1.05*300 {
			t.Errorf("level %d: the warm-up trial achieved %v events/s, want at most the slow target's 300", i+1, a)
		}
		// The warm-up trial's 300 events/s is in no figure, not even
		// the lowest: on virtual time every trial achieves what the
		// target and the capacity allow, within a batch.
		if a := l.Achieved; a.Min < 0.98*c.achieved || a.Max > 1.02*c.achieved {
			t.Errorf("level %d: achieved %+v events/s, want about %v", i+1, a, c.achieved)
		}
		vis, ok := l.Latency(results.LatencyVisibility)
		if !ok || vis.P50.N != 2 || vis.P50.Min < c.visMs*0.999 {
			t.Errorf("level %d: visibility latency %+v, want p50 of 2 trials from %v ms", i+1, vis, c.visMs)
		}
	}
	// Nothing else delays the probes of the first level: visibility as set.
	if vis, _ := ls.Levels[0].Latency(results.LatencyVisibility); vis.P50.Median > 100+poll {
		t.Errorf("level 1: visibility p50 median %v ms, want at most %v", vis.P50.Median, 100+poll)
	}
}

func logLevels(t *testing.T, res *results.Result) {
	t.Helper()
	for _, l := range res.Levels.Levels {
		for _, tr := range append(append([]*results.Result{}, l.WarmupTrials...), l.Trials...) {
			s := tr.Summary
			t.Logf("%s: achieved %.0f events/s, write p50 %.1f ms, visibility p50 %.1f ms, ended early %v",
				l.Rate, s.AchievedEventsPerSec, s.WriteLatency.P50Ms, s.VisibilityLatency.P50Ms, tr.EndedEarly)
		}
		t.Logf("%s: achieved %+v, latencies %+v", l.Rate, l.Achieved, l.Latencies)
	}
}

// A levels run cancelled during a trial keeps the trials measured before
// it and the one cut short, marked ended early and left out of the
// figures; the levels not reached have no trial.
func TestRunLevelsInterrupted(t *testing.T) { synctest.Test(t, testRunLevelsInterrupted) }

func testRunLevelsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := levelsConfig(2, 0, 1000, 2000)
	var kept *results.Result
	cfg.OnTrial = func(r *results.Result) {
		if kept == nil {
			// Half a second into the second trial.
			time.AfterFunc(500*time.Millisecond, cancel)
		}
		kept = r
	}
	res, err := RunLevels(ctx, sim.New(sim.Config{}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.EndedEarly || res.EndReason != ErrInterrupted.Error() {
		t.Fatalf("ended early %v (%q), want interrupted", res.EndedEarly, res.EndReason)
	}
	l := res.Levels.Levels[0]
	if len(l.Trials) != 2 || l.Trials[0].EndedEarly || !l.Trials[1].EndedEarly {
		t.Fatalf("level 1 has %d trials; want the first whole and the second cut short", len(l.Trials))
	}
	if l.Achieved.N != 1 {
		t.Errorf("level 1 figures count %d trials, want the one that ran to its end", l.Achieved.N)
	}
	if n := len(res.Levels.Levels[1].Trials); n != 0 {
		t.Errorf("level 2 has %d trials, want none", n)
	}
	// The caller was given the trial cut short too, to keep.
	if kept != res {
		t.Error("OnTrial was not given the levels with the trial cut short")
	}
}

// A trial that fails leaves the trials before it, returned with the
// error; a first trial that fails returns no result. Here the target
// already holds the ids of the second trial (seed 7 + 1) when ids repeat.
func TestRunLevelsKeepsTrialsBeforeAFailure(t *testing.T) {
	synctest.Test(t, testRunLevelsKeepsTrialsBeforeAFailure)
}

func testRunLevelsKeepsTrialsBeforeAFailure(t *testing.T) {
	tgt := sim.New(sim.Config{})
	earlier := levelsConfig(1, 0, 1000).Run
	earlier.Ingest.Rate = events(1000)
	earlier.Ingest.Seed, earlier.RepeatIDs, earlier.Ingest.Duration = 8, true, time.Second
	if _, err := Run(context.Background(), tgt, earlier); err != nil {
		t.Fatal(err)
	}
	cfg := levelsConfig(2, 0, 1000)
	cfg.Run.Ingest.Seed, cfg.Run.RepeatIDs = 7, true
	res, err := RunLevels(context.Background(), tgt, cfg)
	if !errors.Is(err, ErrGeneratorInUse) || !strings.Contains(err.Error(), "level 1 (1000 events/s), trial 2: ") {
		t.Fatalf("error %v, want the second trial's generator in use", err)
	}
	if res == nil || len(res.Levels.Levels[0].Trials) != 1 || !res.EndedEarly || res.Levels.Levels[0].Achieved.N != 1 {
		t.Fatalf("result %+v; want the first trial kept", res)
	}

	cfg.Run.Ingest.Seed = 8
	if res, err := RunLevels(context.Background(), tgt, cfg); res != nil || !errors.Is(err, ErrGeneratorInUse) {
		t.Errorf("first trial failing: result %v, error %v; want no result and the error", res, err)
	}
}

func TestLevelsConfigValidate(t *testing.T) { synctest.Test(t, testLevelsConfigValidate) }

func testLevelsConfigValidate(t *testing.T) {
	for field, mod := range map[invalid.Field]func(*LevelsConfig){
		"levels":          func(c *LevelsConfig) { c.Rates = nil },
		"trials":          func(c *LevelsConfig) { c.Trials = 0 },
		"warm-up trials":  func(c *LevelsConfig) { c.Warmup = -1 },
		"experiment name": func(c *LevelsConfig) { c.Run.Experiment = &results.Experiment{Name: "x", Instances: 1} },
		"batch size":      func(c *LevelsConfig) { c.Run.Ingest.BatchSize = 0 },
	} {
		cfg := levelsConfig(2, 1, 1000, 2000)
		mod(&cfg)
		err := cfg.Validate()
		if e, ok := invalid.As(err); !ok || e.Field != field {
			t.Errorf("%s: error %v, want one about the %s", field, err, field)
		}
	}
	mixed := levelsConfig(2, 1, 1000)
	mixed.Rates = append(mixed.Rates, pace.Rate{PerSecond: 1e6, Unit: pace.Bytes})
	if err := mixed.Validate(); err == nil || !strings.Contains(err.Error(), "levels 1000 events/s, 1.00 MB/s: want rates in one unit") {
		t.Errorf("levels in two units: %v", err)
	}
	if _, err := RunLevels(context.Background(), sim.New(sim.Config{}), mixed); err == nil {
		t.Error("RunLevels ran an invalid configuration")
	}
}

// Query levels vary the open-loop QPS of the workload; beside an ingest,
// each level reports the query latency and the ingest's latencies.
func TestQueryLevels(t *testing.T) { synctest.Test(t, testQueryLevels) }

func testQueryLevels(t *testing.T) {
	tgt := sim.New(sim.Config{QueryDelay: 20 * time.Millisecond, VisibilityDelay: 50 * time.Millisecond})
	ingestCfg := levelsConfig(1, 0, 1000).Run
	ingestCfg.Ingest.Rate = events(1000)
	qc := query.Config{Mix: query.DefaultMix(), MaxInflight: 64, Limit: 10, Timeout: 5 * time.Second, Settle: 100 * time.Millisecond, Seed: 3}
	var trials int
	qr := QueryRun{
		Queries: qc, Ingest: &ingestCfg,
		Levels: &QueryLevels{QPS: []float64{20, 40}, LevelTrials: LevelTrials{Trials: 1, Warmup: 1}},
		OnStep: func(*results.Result) { trials++ },
	}
	res, err := MeasureQueries(context.Background(), tgt, qr)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != results.KindLevels || res.Levels.Unit != results.UnitQPS || trials != 4 {
		t.Fatalf("kind %q, unit %q, %d trials seen", res.Kind, res.Levels.Unit, trials)
	}
	for i, want := range []float64{20, 40} {
		l := res.Levels.Levels[i]
		if l.Rate != strings.TrimSuffix(l.Rate, " QPS")+" QPS" || l.Target != want || len(l.Trials) != 1 || len(l.WarmupTrials) != 1 {
			t.Fatalf("level %d: %q, target %v, %d trials, %d warm-up", i+1, l.Rate, l.Target, len(l.Trials), len(l.WarmupTrials))
		}
		if q := l.Trials[0].Target().Queries; q == nil || q.TargetQPS != want {
			t.Errorf("level %d: the trial ran %+v, want %v QPS", i+1, q, want)
		}
		var names []string
		for _, s := range l.Latencies {
			names = append(names, s.Name)
		}
		if strings.Join(names, ", ") != "query latency, write latency, freshness lag, visibility latency" {
			t.Errorf("level %d lists %v", i+1, names)
		}
		if q, _ := l.Latency(results.LatencyQuery); q.P50.Min < 20*0.999 {
			t.Errorf("level %d: query latency p50 %v ms, below the target's 20 ms", i+1, q.P50.Min)
		}
	}

	bad := qr
	bad.Sweep = &query.SweepConfig{}
	if _, err := MeasureQueries(context.Background(), tgt, bad); err == nil {
		t.Error("levels and a sweep together were accepted")
	}
	bad = qr
	bad.Levels = &QueryLevels{QPS: []float64{10, 0}, LevelTrials: LevelTrials{Trials: 1}}
	if e, ok := invalid.As(bad.Validate()); !ok || e.Field != "levels" || e.Value != "0" {
		t.Errorf("a level of 0 QPS: %v", bad.Validate())
	}
}
