package results

import (
	"fmt"
	"testing"
	"time"

	"github.com/freshbench/freshbench/stats"
)

// summarizable is a result with 2000 events acknowledged in its measured
// phase and one generator audited clean.
func summarizable(rate float64, unit string) *Result {
	m := NewPhase(PhaseMeasured)
	m.Due, m.Dispatched, m.Acked, m.Throughput, m.ThroughputBytes = 2000, 2000, 2000, 2000, 2_000_000
	m.WriteLatency.Record(10 * time.Millisecond)
	r := &Result{
		Config:     Config{RatePerSecond: rate, RateUnit: unit, DocSize: 1000},
		Generators: []string{"g"}, Phases: []*Phase{NewPhase(PhaseWarmup), m},
		Endpoints: []*Endpoint{{
			Name:         TargetEndpoint,
			Freshness:    Freshness{Lag: stats.NewHistogram(), QueryService: stats.NewHistogram()},
			Visibility:   Visibility{Latency: stats.NewHistogram(), QueryService: stats.NewHistogram(), Gap: stats.NewHistogram()},
			Completeness: []Completeness{{Generator: "g", Acknowledged: 2000, Visible: 2000}},
		}},
	}
	return r
}

// A target rate in bytes/s reads as events/s by the document size, and
// the other way round; the achieved rate is the throughput over the
// measured window.
func TestSummarizeRates(t *testing.T) {
	for _, c := range []struct {
		rate             float64
		unit             string
		events, mbPerSec float64
	}{
		{1000, "events/s", 1000, 1},
		{2e6, "bytes/s", 2000, 2},
	} {
		s := Summarize(summarizable(c.rate, c.unit), 2)
		if s.TargetEventsPerSec != c.events || s.TargetMBPerSec != c.mbPerSec || s.AchievedEventsPerSec != 1000 || s.AchievedMBPerSec != 1 {
			t.Errorf("%g %s: target %g events/s %g MB/s, achieved %g, %g; want %g, %g, 1000, 1",
				c.rate, c.unit, s.TargetEventsPerSec, s.TargetMBPerSec, s.AchievedEventsPerSec, s.AchievedMBPerSec, c.events, c.mbPerSec)
		}
		if !s.Audited || s.EventsDue != 2000 || s.WriteLatency.Count != 1 {
			t.Errorf("%s: audited %v, due %d, %d write latencies; want the measured phase's", c.unit, s.Audited, s.EventsDue, s.WriteLatency.Count)
		}
	}
	if s := Summarize(summarizable(1000, "events/s"), 0); s.AchievedEventsPerSec != 0 || s.TargetEventsPerSec != 0 {
		t.Errorf("no measured window: target %g, achieved %g; want no rates", s.TargetEventsPerSec, s.AchievedEventsPerSec)
	}
	r := summarizable(1000, "events/s")
	r.Target().AuditError = "count: connection refused"
	if Summarize(r, 2).Audited {
		t.Error("a result whose audit failed is summarized as audited")
	}
}

// The resolution is the gap's p99 and max, and nothing without a gap.
func TestSetResolution(t *testing.T) {
	v := Visibility{Gap: stats.NewHistogram(), ResolutionMs: 7}
	v.SetResolution()
	if v.ResolutionMs != 0 || v.ResolutionMaxMs != 0 {
		t.Errorf("no probe seen: resolution %g, max %g; want 0", v.ResolutionMs, v.ResolutionMaxMs)
	}
	for i := 1; i <= 100; i++ {
		v.Gap.Record(time.Duration(i) * time.Millisecond)
	}
	v.SetResolution()
	// Within the histogram's 0.1 %: 99 and 100 ms.
	if v.ResolutionMs < 99 || v.ResolutionMs > 99.1 || v.ResolutionMaxMs < 100 || v.ResolutionMaxMs > 100.1 {
		t.Errorf("resolution %g, max %g; want 99 and 100", v.ResolutionMs, v.ResolutionMaxMs)
	}
}

// A drain prints as what it found, its lag a number: as a pointer inside
// a result printed with %+v, it read as an address (seen in test logs).
func TestDrainPrintsWhatItFound(t *testing.T) {
	behind := 12.0
	for _, c := range []struct {
		d    *Drain
		want string
	}{
		{&Drain{WaitedS: 3.25, MaxS: 10, CaughtUp: true, BehindMs: &behind}, "waited 3.2 s of at most 10.0 s, caught up, 12 ms behind the schedule's end"},
		{&Drain{WaitedS: 10, MaxS: 10}, "waited 10.0 s of at most 10.0 s, not caught up"},
	} {
		if got := fmt.Sprintf("%+v", c.d); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
