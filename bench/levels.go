package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

// LevelTrials is how each throughput level is measured, after Elastic's
// client benchmarks: Warmup trials first, measured but left out of the
// level's figures (they absorb what a first run pays for: caches, JIT,
// connection pools, segment merges of the previous level), then Trials
// trials whose spread says how far one trial can be trusted.
type LevelTrials struct {
	Trials int // measured trials per level
	Warmup int // warm-up trials before them
}

// Validate names the first bad setting.
func (t LevelTrials) Validate() error {
	if t.Trials < 1 {
		return invalid.New(invalid.Trials, t.Trials, "1 or more trials per level")
	}
	if t.Warmup < 0 {
		return invalid.New(invalid.WarmupTrials, t.Warmup, "0 or more")
	}
	return nil
}

// LevelsConfig runs an ingest at several target rates in turn, each
// measured by trials: every trial a full Run of the same configuration
// but for its rate, with its own warm-up, drain and audit.
type LevelsConfig struct {
	Run   Config      // every trial's run; its rate is replaced by the level's
	Rates []pace.Rate // the levels, in the order run; all in one unit
	LevelTrials
	// OnTrial, when set, is given the levels so far after every trial,
	// so that a caller can keep them (a killed process then loses only
	// the trial under way).
	OnTrial func(*results.Result)
}

// Validate names the first bad setting.
func (c LevelsConfig) Validate() error {
	if len(c.Rates) == 0 {
		return invalid.New(invalid.Levels, "(none)", "one or more target rates, e.g. 1000,2000,4000")
	}
	if c.Run.Experiment != nil {
		return invalid.New(invalid.ExperimentName, c.Run.Experiment.Name, "no experiment: the instances of an experiment run one rate each, not levels")
	}
	if len(c.Run.ReadEndpoints) > 0 {
		return errNoEndpointsWith("levels", c.Run.ReadEndpoints)
	}
	for _, r := range c.Rates {
		if r.Unit != c.Rates[0].Unit {
			return invalid.New(invalid.Levels, ratesText(c.Rates), "rates in one unit: all in events/s or all in bytes/s")
		}
		if err := stepConfig(c.Run, r, 0, "").Validate(); err != nil {
			return fmt.Errorf("at the level %s: %w", r, err)
		}
	}
	return c.LevelTrials.Validate()
}

func ratesText(rs []pace.Rate) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	return strings.Join(s, ", ")
}

// RunLevels measures tgt, set up already, at every level of cfg in
// order: the warm-up trials, then the measured trials. Every trial is kept
// in the result; each level's figures are the median and range over its
// measured trials. Like Run, it returns what was measured also when ctx is
// cancelled (the trial under way is kept, marked ended early, and left out
// of the figures), and the trials measured before one that failed, with
// its error.
func RunLevels(ctx context.Context, tgt target.Target, cfg LevelsConfig) (*results.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	conf := recordConfig(cfg.Run)
	conf.Rate, conf.RatePerSecond = ratesText(cfg.Rates), 0 // one rate per level
	ls := &results.Levels{Unit: results.UnitEvents, Trials: cfg.Trials, WarmupTrials: cfg.Warmup}
	for _, r := range cfg.Rates {
		l := &results.Level{Rate: r.String(), Target: r.PerSecond}
		if r.Unit == pace.Bytes {
			ls.Unit, l.Target = results.UnitMB, r.PerSecond/1e6
		}
		ls.Levels = append(ls.Levels, l)
	}
	return measureLevels(ctx, conf, ls, cfg.LevelTrials, cfg.OnTrial,
		func(ctx context.Context, level, n int, name string) (*results.Result, error) {
			return Run(ctx, tgt, stepConfig(cfg.Run, cfg.Rates[level], n, name))
		})
}

// QueryLevels runs a query workload at several open-loop QPS in turn, each
// measured by trials of the same workload but for its QPS.
type QueryLevels struct {
	QPS []float64 // the levels, in the order run
	LevelTrials
}

// Validate names the first bad setting.
func (l QueryLevels) Validate() error {
	if len(l.QPS) == 0 {
		return invalid.New(invalid.Levels, "(none)", "one or more QPS, e.g. 50,100,200")
	}
	for _, q := range l.QPS {
		if q <= 0 {
			return invalid.New(invalid.Levels, strconv.FormatFloat(q, 'f', -1, 64), "a positive number of queries per second")
		}
	}
	return l.LevelTrials.Validate()
}

// trialFunc measures the n-th trial (from 0, over all levels) at the
// level-th level; name labels its phases.
type trialFunc func(ctx context.Context, level, n int, name string) (*results.Result, error)

// measureLevels runs every trial of ls in order and returns the result of
// kind levels that holds them, with conf as its configuration. It stops
// at a trial that ended early (interrupted) or failed; the result is nil
// only when no trial was measured.
func measureLevels(ctx context.Context, conf results.Config, ls *results.Levels, t LevelTrials, onTrial func(*results.Result), trial trialFunc) (*results.Result, error) {
	res := &results.Result{
		SchemaVersion: results.SchemaVersion, Kind: results.KindLevels, StartedAt: time.Now().UTC(),
		Config: conf, Levels: ls,
	}
	n := 0
	for i, l := range ls.Levels {
		for k := range t.Warmup + t.Trials {
			warmup := k < t.Warmup
			name := fmt.Sprintf("level%d-trial%d", i+1, k-t.Warmup+1)
			if warmup {
				name = fmt.Sprintf("level%d-warmup%d", i+1, k+1)
			}
			if ctx.Err() != nil {
				res.EndedEarly, res.EndReason = true, ErrInterrupted.Error()
				res.EndedAt = time.Now().UTC()
				return res, nil
			}
			tr, err := trial(ctx, i, n, name)
			n++
			if err != nil {
				err = fmt.Errorf("level %d (%s), %s: %w", i+1, l.Rate, trialText(k, t.Warmup), err)
				if n == 1 {
					return nil, err
				}
				res.EndedEarly, res.EndReason = true, err.Error()
				res.EndedAt = time.Now().UTC()
				return res, err
			}
			if warmup {
				l.WarmupTrials = append(l.WarmupTrials, tr)
			} else {
				l.Trials = append(l.Trials, tr)
			}
			ls.Summarize()
			res.Generators = append(res.Generators, tr.Generators...)
			res.EndedAt = tr.EndedAt
			if tr.EndedEarly {
				res.EndedEarly, res.EndReason = true, tr.EndReason
			}
			if onTrial != nil {
				onTrial(res)
			}
			if tr.EndedEarly {
				return res, nil
			}
		}
	}
	return res, nil
}

// trialText names the k-th trial (from 0) of a level in words.
func trialText(k, warmup int) string {
	if k < warmup {
		return fmt.Sprintf("warm-up trial %d", k+1)
	}
	return fmt.Sprintf("trial %d", k-warmup+1)
}
