package bench

import (
	"testing"
	"time"

	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/stats"
)

// QueryRun.Validate is the one place a frontier's needs are checked: a
// sweep, an ingest, no levels, rates of one unit. The command only reads
// the flags.
func TestQueryRunValidateFrontier(t *testing.T) {
	qc := query.Config{Mix: query.DefaultMix(), QPS: 10, MaxInflight: 8, Limit: 10, Timeout: time.Second}
	sweep := &query.SweepConfig{Start: 10, Step: 10, Max: 20, SLO: &stats.SLO{Quantile: 0.5, Bound: time.Second}}
	ingest := simConfig(2 * time.Second)
	rates := []pace.Rate{{PerSecond: 1000, Unit: pace.Events}, {PerSecond: 2000, Unit: pace.Events}}
	ok := QueryRun{Queries: qc, Duration: time.Second, Sweep: sweep, Ingest: &ingest, Frontier: rates}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a frontier with a sweep and an ingest: %v", err)
	}
	for name, mod := range map[string]func(r *QueryRun){
		"no sweep":   func(r *QueryRun) { r.Sweep = nil },
		"no ingest":  func(r *QueryRun) { r.Ingest = nil },
		"levels":     func(r *QueryRun) { r.Levels = &QueryLevels{QPS: []float64{10}, LevelTrials: LevelTrials{Trials: 1}} },
		"mixed unit": func(r *QueryRun) { r.Frontier = []pace.Rate{rates[0], {PerSecond: 1e6, Unit: pace.Bytes}} },
		"zero rate":  func(r *QueryRun) { r.Frontier = []pace.Rate{rates[0], {Unit: pace.Events}} },
	} {
		r := ok
		mod(&r)
		if e, isInvalid := invalid.As(r.Validate()); !isInvalid || e.Field != invalid.Frontier {
			t.Errorf("%s: %v, want an error about the frontier", name, r.Validate())
		}
	}
}
