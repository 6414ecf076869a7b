package stats

import (
	"testing"
	"time"
)

// counting counts what an observer is told.
type counting struct {
	NopObserver
	scheduled, unsent, written, fresh, visible, queries int
}

func (c *counting) Scheduled(string, int, bool, int) { c.scheduled++ }
func (c *counting) Unsent(_ string, events int)      { c.unsent += events }
func (c *counting) Written(string, int, int, int, map[string]int, time.Duration, time.Duration) {
	c.written++
}
func (c *counting) Freshness(string, string, time.Duration)        { c.fresh++ }
func (c *counting) Visible(string, string, time.Duration)          { c.visible++ }
func (c *counting) Query(string, string, time.Duration, int, bool) { c.queries++ }

func record(r Recorder, start time.Time) {
	r.Scheduled("g", start, 10, true, 1)
	r.Unsent("g", 5, []Due{{start, 3}, {start.Add(time.Second), 2}})
	r.Written("g", start.Add(time.Second), 8, 2, 800, nil, time.Millisecond, time.Millisecond)
	r.Freshness("target", "g", start.Add(time.Second), time.Second)
	r.Visible("target", "g", time.Second)
	r.Query("target", "term", start.Add(time.Second), time.Millisecond, 3, true)
}

// Every measurement reaches both the series and the observer.
func TestRecorderFansOut(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, obs := NewSeries(start, 0), &counting{}
	record(NewRecorder(s, obs), start)
	if *obs != (counting{scheduled: 1, unsent: 5, written: 1, fresh: 1, visible: 1, queries: 1}) {
		t.Errorf("observer told %+v; want each measurement once, the 5 unsent events", *obs)
	}
	var target, unsent, acked, failed, freshN, queries, queryErrors int64
	for _, p := range s.Points() {
		target += p.TargetEvents
		unsent += p.UnsentEvents
		acked += p.AckedEvents
		failed += p.FailedEvents
		freshN += p.FreshnessN
		queries += p.QueryCount
		queryErrors += p.QueryErrors
	}
	if target != 15 || unsent != 5 || acked != 8 || failed != 2 || freshN != 1 || queries != 1 || queryErrors != 1 {
		t.Errorf("series: target %d unsent %d acked %d failed %d freshness samples %d queries %d (errors %d); want 15 5 8 2 1 1 1",
			target, unsent, acked, failed, freshN, queries, queryErrors)
	}
}

// Either sink may be absent, and the zero Recorder records nothing.
func TestRecorderWithoutSinks(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	record(Recorder{}, start)
	obs := &counting{}
	record(NewRecorder(nil, obs), start)
	if obs.scheduled != 1 || obs.queries != 1 {
		t.Errorf("observer without a series told %+v; want every measurement", *obs)
	}
	s := NewSeries(start, 0)
	record(NewRecorder(s, nil), start)
	if len(s.Points()) == 0 {
		t.Error("series without an observer recorded nothing")
	}
}
