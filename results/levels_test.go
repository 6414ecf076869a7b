package results

import (
	"testing"

	"github.com/freshbench/freshbench/stats"
)

func TestSpreadOf(t *testing.T) {
	for _, c := range []struct {
		name string
		vals []float64
		want Spread
	}{
		{"none", nil, Spread{}},
		{"one", []float64{7}, Spread{N: 1, Median: 7, Min: 7, Max: 7}},
		{"odd, unsorted", []float64{30, 10, 50, 20, 40}, Spread{N: 5, Median: 30, Min: 10, Max: 50}},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, Spread{N: 4, Median: 2.5, Min: 1, Max: 4}},
		{"an outlier moves the range, not the median", []float64{10, 11, 12, 13, 900}, Spread{N: 5, Median: 12, Min: 10, Max: 900}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := append([]float64(nil), c.vals...)
			if got := SpreadOf(c.vals); got != c.want {
				t.Errorf("SpreadOf(%v) = %+v, want %+v", c.vals, got, c.want)
			}
			for i := range in {
				if in[i] != c.vals[i] {
					t.Fatalf("SpreadOf reordered its input: %v", c.vals)
				}
			}
		})
	}
}

// trial is an ingest trial with the given achieved rate and write latency
// p50/p99; a query trial when qps > 0.
func trial(achieved, p50, p99 float64, qps float64) *Result {
	r := &Result{Summary: Summary{
		AchievedEventsPerSec: achieved, AchievedMBPerSec: achieved / 1000,
		WriteLatency: stats.Summary{Count: 100, P50Ms: p50, P99Ms: p99},
		FreshnessLag: stats.Summary{Count: 10, P50Ms: 10 * p50, P99Ms: 10 * p99},
	}}
	if qps > 0 {
		r.Summary = Summary{}
		r.Target().Queries = &Queries{AchievedQPS: qps, Total: &QueryKind{Latency: stats.Summary{Count: 50, P50Ms: p50, P99Ms: p99}}}
	}
	return r
}

// A level's figures are of its measured trials that ran to their end: the
// warm-up trial and a trial cut short are kept but not counted, whatever
// their figures.
func TestLevelsSummarize(t *testing.T) {
	cut := trial(10, 1000, 1000, 0)
	cut.EndedEarly = true
	ls := &Levels{Unit: UnitEvents, Levels: []*Level{{
		WarmupTrials: []*Result{trial(1, 999, 999, 0)},
		Trials:       []*Result{trial(1990, 2, 9, 0), trial(2000, 1, 8, 0), trial(1980, 3, 30, 0), cut},
	}}}
	ls.Summarize()
	l := ls.Levels[0]
	if want := (Spread{N: 3, Median: 1990, Min: 1980, Max: 2000}); l.Achieved != want {
		t.Errorf("achieved %+v, want %+v", l.Achieved, want)
	}
	w, ok := l.Latency(LatencyWrite)
	if !ok {
		t.Fatal("no write latency")
	}
	if want := (Spread{N: 3, Median: 2, Min: 1, Max: 3}); w.P50 != want {
		t.Errorf("write p50 %+v, want %+v", w.P50, want)
	}
	if want := (Spread{N: 3, Median: 9, Min: 8, Max: 30}); w.P99 != want {
		t.Errorf("write p99 %+v, want %+v", w.P99, want)
	}
	if f, ok := l.Latency(LatencyFreshness); !ok || f.P99.Median != 90 {
		t.Errorf("freshness lag %+v (%v), want p99 median 90", f, ok)
	}
	// Latencies without a sample in any trial are not listed.
	if _, ok := l.Latency(LatencyVisibility); ok {
		t.Error("a visibility latency without samples is listed")
	}
	if _, ok := l.Latency(LatencyQuery); ok {
		t.Error("an ingest lists a query latency")
	}
	if len(l.Latencies) != 2 || l.Latencies[0].Name != LatencyWrite {
		t.Errorf("latencies %+v, want write then freshness", l.Latencies)
	}

	// In MB/s, the achieved rate is the trials' MB/s.
	ls.Unit = UnitMB
	ls.Summarize()
	if l.Achieved.Median != 1.99 {
		t.Errorf("achieved median %v MB/s, want 1.99", l.Achieved.Median)
	}
}

func TestLevelsSummarizeQueries(t *testing.T) {
	ls := &Levels{Unit: UnitQPS, Levels: []*Level{
		{Trials: []*Result{trial(0, 5, 50, 99), trial(0, 7, 70, 101)}},
		{}, // no trial yet
	}}
	ls.Summarize()
	l := ls.Levels[0]
	if want := (Spread{N: 2, Median: 100, Min: 99, Max: 101}); l.Achieved != want {
		t.Errorf("achieved %+v, want %+v", l.Achieved, want)
	}
	q, ok := l.Latency(LatencyQuery)
	if !ok || q.P50 != (Spread{N: 2, Median: 6, Min: 5, Max: 7}) || q.P99.Median != 60 {
		t.Errorf("query latency %+v (%v)", q, ok)
	}
	if len(l.Latencies) != 1 {
		t.Errorf("a query load alone lists %+v, want the query latency alone", l.Latencies)
	}
	if e := ls.Levels[1]; e.Achieved.N != 0 || len(e.Latencies) != 0 {
		t.Errorf("a level without trials has figures: %+v", e)
	}
}
