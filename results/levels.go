package results

import (
	"slices"

	"github.com/freshbench/freshbench/stats"
)

// KindLevels is a run at several throughput levels (Levels): at each
// level, warm-up trials then measured trials, every trial a full run (or
// query measurement) kept in the file.
const KindLevels = "levels"

// Units of a level's target and achieved rates.
const (
	UnitEvents = "events/s"
	UnitMB     = "MB/s" // MB = 10^6 bytes
	UnitQPS    = "QPS"
)

// Names of the latencies a level summarizes.
const (
	LatencyQuery      = "query latency"
	LatencyWrite      = "write latency"
	LatencyFreshness  = "freshness lag"
	LatencyVisibility = "visibility latency"
)

// LatencyNames lists the latencies a level may summarize, in the order
// it lists them.
func LatencyNames() []string {
	return []string{LatencyQuery, LatencyWrite, LatencyFreshness, LatencyVisibility}
}

// Levels is a run at several target rates in turn, each measured by
// several trials of the same configuration: an ingest at events/s or
// MB/s, or a query workload at QPS (alone or beside an ingest).
type Levels struct {
	Unit         string   `json:"unit"`          // of every level: UnitEvents, UnitMB or UnitQPS
	Trials       int      `json:"trials"`        // measured trials per level
	WarmupTrials int      `json:"warmup_trials"` // trials before them, left out of the figures
	Levels       []*Level `json:"levels"`        // in the order run
}

// Level is one target rate: its trials and their figures. The figures
// are of the measured trials that ran to their end; a warm-up trial, or a
// trial cut short, is kept but left out.
type Level struct {
	Rate         string    `json:"rate"`   // as given, e.g. "2000 events/s", "10.00 MB/s", "200 QPS"
	Target       float64   `json:"target"` // in Levels.Unit
	WarmupTrials []*Result `json:"warmup_trials"`
	Trials       []*Result `json:"trials"`
	Achieved     Spread    `json:"achieved"` // in Levels.Unit
	// Latencies lists, in a fixed order (query, write, freshness,
	// visibility), each latency that some trial of the level measured.
	Latencies []LatencySpread `json:"latencies"`
}

// LatencySpread is one latency of a level across its trials: of each
// trial's p50 and p99, the median and the range.
type LatencySpread struct {
	Name string `json:"name"` // LatencyWrite, …
	P50  Spread `json:"p50_ms"`
	P99  Spread `json:"p99_ms"`
}

// Spread is a figure across trials: how many trials gave it, their
// median, and the lowest and highest.
type Spread struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// SpreadOf is the spread of vals (one per trial). The median of an even
// count is the mean of the two middle values.
func SpreadOf(vals []float64) Spread {
	if len(vals) == 0 {
		return Spread{}
	}
	v := slices.Sorted(slices.Values(vals))
	n := len(v)
	median := v[n/2]
	if n%2 == 0 {
		median = (v[n/2-1] + v[n/2]) / 2
	}
	return Spread{N: n, Median: median, Min: v[0], Max: v[n-1]}
}

// Summarize sets every level's figures from its measured trials that ran
// to their end.
func (ls *Levels) Summarize() {
	for _, l := range ls.Levels {
		l.summarize(ls.Unit)
	}
}

func (l *Level) summarize(unit string) {
	var achieved []float64
	p50, p99 := map[string][]float64{}, map[string][]float64{}
	for _, t := range l.Trials {
		if t == nil || t.EndedEarly {
			continue
		}
		achieved = append(achieved, TrialAchieved(t, unit))
		for _, name := range LatencyNames() {
			if s, ok := TrialLatency(t, name); ok {
				p50[name] = append(p50[name], s.P50Ms)
				p99[name] = append(p99[name], s.P99Ms)
			}
		}
	}
	l.Achieved = SpreadOf(achieved)
	l.Latencies = nil
	for _, name := range LatencyNames() {
		if len(p50[name]) > 0 {
			l.Latencies = append(l.Latencies, LatencySpread{Name: name, P50: SpreadOf(p50[name]), P99: SpreadOf(p99[name])})
		}
	}
}

// Latency returns the level's spread of the named latency, if it has one.
func (l *Level) Latency(name string) (LatencySpread, bool) {
	for _, s := range l.Latencies {
		if s.Name == name {
			return s, true
		}
	}
	return LatencySpread{}, false
}

// TrialAchieved is the rate a trial achieved, in unit.
func TrialAchieved(t *Result, unit string) float64 {
	switch unit {
	case UnitQPS:
		if t.Target().Queries != nil {
			return t.Target().Queries.AchievedQPS
		}
		return 0
	case UnitMB:
		return t.Summary.AchievedMBPerSec
	}
	return t.Summary.AchievedEventsPerSec
}

// TrialLatency is the named latency of a trial; false when the trial has
// no sample of it (a query load alone writes nothing).
func TrialLatency(t *Result, name string) (stats.Summary, bool) {
	var s stats.Summary
	switch name {
	case LatencyQuery:
		if t.Target().Queries != nil && t.Target().Queries.Total != nil {
			s = t.Target().Queries.Total.Latency
		}
	case LatencyWrite:
		s = t.Summary.WriteLatency
	case LatencyFreshness:
		s = t.Summary.FreshnessLag
	case LatencyVisibility:
		s = t.Summary.VisibilityLatency
	}
	return s, s.Count > 0
}
