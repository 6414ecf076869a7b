package stats

import (
	"encoding/json"
	"math"
	"strings"
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

// The clamped count travels with the histogram: through the results file
// (JSON) and through a merge of histograms read back from files, as a merge
// of many instances' results does.
func TestHistogramClampedSurvivesJSONAndMerge(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	a.Record(2 * time.Hour)
	a.Record(time.Millisecond)
	b.RecordN(90*time.Minute, 3)
	decode := func(h *Histogram) *Histogram {
		t.Helper()
		enc, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		back := NewHistogram()
		if err := json.Unmarshal(enc, back); err != nil {
			t.Fatalf("decode %s: %v", enc, err)
		}
		return back
	}
	ra := decode(a)
	if got := ra.Summarize(); got != a.Summarize() {
		t.Fatalf("after JSON: %+v, want %+v", got, a.Summarize())
	}
	merged := NewHistogram()
	merged.Merge(ra)
	merged.Merge(decode(b))
	if s := merged.Summarize(); s.Count != 5 || s.Clamped != 4 {
		t.Fatalf("merged from files: count %d clamped %d, want 5 and 4", s.Count, s.Clamped)
	}
	// A merged histogram written again keeps the sum.
	if s := decode(merged).Summarize(); s.Clamped != 4 {
		t.Fatalf("merged, written and read: clamped %d, want 4", s.Clamped)
	}
}

// A histogram with nothing clamped is written as before (a bare base64
// string), so files without clamped values read in older versions too.
func TestHistogramJSONWithoutClampedIsAString(t *testing.T) {
	h := NewHistogram()
	h.Record(time.Second)
	enc, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(enc, &s); err != nil {
		t.Fatalf("encoded %s, want a JSON string: %v", enc, err)
	}
}

func TestHistogramJSONRejectsBadInput(t *testing.T) {
	for _, in := range []string{`42`, `"not base64!"`, `{"hdr":"not base64!"}`, `{"hdr":""}`, `{"clamped_over_1h":-1,"hdr":"x"}`} {
		if err := json.Unmarshal([]byte(in), NewHistogram()); err == nil {
			t.Errorf("decoding %s: no error", in)
		}
	}
	one := NewHistogram()
	one.Record(2 * time.Hour)
	enc, err := json.Marshal(one)
	if err != nil {
		t.Fatal(err)
	}
	tooMany := strings.Replace(string(enc), `"clamped_over_1h":1`, `"clamped_over_1h":2`, 1)
	if tooMany == string(enc) {
		t.Fatalf("encoded %s, want clamped_over_1h 1", enc)
	}
	if err := json.Unmarshal([]byte(tooMany), NewHistogram()); err == nil {
		t.Errorf("decoding %s: no error for more clamped values than values", tooMany)
	}
}

// A summary's figures that its censored values reach are lower bounds,
// named as such in the results file; those below the least censored
// value are values (issue 27).
func TestSummaryLowerBounds(t *testing.T) {
	h, censored := NewHistogram(), NewHistogram()
	for i := 1; i <= 90; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	for range 10 {
		h.Record(5 * time.Second)
		censored.Record(5 * time.Second)
	}
	s := h.Summarize().WithLowerBounds(censored)
	if s.LowerBound(s.P50Ms) || s.LowerBound(s.P90Ms) || !s.LowerBound(s.P95Ms) || !s.LowerBound(s.MaxMs) {
		t.Errorf("%+v: want p50 and p90 values, p95 and max lower bounds", s)
	}
	if want := "mean_ms p95_ms p99_ms p99_9_ms max_ms"; s.LowerBounds != want {
		t.Errorf("lower bounds %v, want %v", s.LowerBounds, want)
	}
	if s := h.Summarize().WithLowerBounds(NewHistogram()); s.LowerFromMs != 0 || len(s.LowerBounds) != 0 {
		t.Errorf("no censored values: %+v, want no bounds", s)
	}
}
