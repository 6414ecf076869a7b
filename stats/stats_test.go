package stats

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*want }

func TestHistogramPercentiles(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 10000; i++ {
		h.Record(time.Duration(i) * time.Millisecond / 10) // 0.1 ms … 1000 ms, uniform
	}
	s := h.Summarize()
	if s.Count != 10000 {
		t.Fatalf("count %d", s.Count)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", s.P50Ms, 500}, {"p95", s.P95Ms, 950}, {"p99", s.P99Ms, 990}, {"max", s.MaxMs, 1000}, {"mean", s.MeanMs, 500.05}} {
		if !within(c.got, c.want, 0.002) {
			t.Errorf("%s = %v ms, want %v ± 0.2 %%", c.name, c.got, c.want)
		}
	}
}

func TestHistogramMergeIsExact(t *testing.T) {
	a, b, all := NewHistogram(), NewHistogram(), NewHistogram()
	for i := 0; i < 5000; i++ {
		d := time.Duration(i*i) * time.Microsecond
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
		all.Record(d)
	}
	a.Merge(b)
	if a.Summarize() != all.Summarize() {
		t.Fatalf("merged %+v\nwant   %+v", a.Summarize(), all.Summarize())
	}
}

func TestHistogramJSONRoundTrip(t *testing.T) {
	h := NewHistogram()
	for i := 1; i < 1000; i++ {
		h.Record(time.Duration(i) * 137 * time.Microsecond)
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back Histogram
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Summarize() != h.Summarize() {
		t.Fatalf("round trip changed the histogram: %+v vs %+v", back.Summarize(), h.Summarize())
	}
}

func TestHistogramClampsHugeValues(t *testing.T) {
	h := NewHistogram()
	h.Record(3 * time.Hour)
	if s := h.Summarize(); s.Count != 1 || s.Clamped != 1 {
		t.Fatalf("summary %+v, want one clamped value", s)
	}
}

func TestSeriesCoarsensAndKeepsTotals(t *testing.T) {
	start := time.Unix(0, 0)
	s := NewSeries(start, 8)
	for i := 0; i < 100; i++ {
		s.Written(start.Add(time.Duration(i)*time.Second), 10, 1000, 1, time.Millisecond)
	}
	pts := s.Points()
	if len(pts) > 8 {
		t.Fatalf("%d points, want at most 8", len(pts))
	}
	var acked, failed int64
	for _, p := range pts {
		acked += p.AckedEvents
		failed += p.FailedEvents
	}
	if acked != 1000 || failed != 100 {
		t.Fatalf("totals acked=%d failed=%d, want 1000 and 100", acked, failed)
	}
	if pts[0].WidthS != 16 {
		t.Fatalf("width %v s, want 16 s after coarsening 100 s into 8 points", pts[0].WidthS)
	}
}
