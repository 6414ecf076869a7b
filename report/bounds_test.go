package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/results"
)

// censoredResult is a run most of whose probes were never seen: their
// ages, lower bounds, reach every percentile from the median on.
func censoredResult(seed uint64) *results.Result {
	r := runResult(2000, seed)
	v := results.NewVisibility()
	start := time.Now()
	for i := range 40 {
		v.Record(start, start.Add(time.Duration(i)*time.Millisecond), start.Add(time.Duration(i+1)*time.Millisecond))
	}
	for range 60 {
		v.RecordUnseen(start, start.Add(5*time.Second))
	}
	v.SetResolution()
	r.Target().Visibility = v
	r.Summary.VisibilityLatency, r.Summary.VisibilityMidpoint = v.LatencySummary(), v.MidpointSummary()
	return r
}

// A percentile among lower bounds reads "> X" wherever it is shown, and
// a ratio of one to a value is a bound too (issue 27).
func TestLowerBoundsShownAsSuch(t *testing.T) {
	r := censoredResult(1)
	s := r.Summary.VisibilityLatency
	if !s.LowerBound(s.P50Ms) || s.LowerBound(s.MinMs) {
		t.Fatalf("summary %+v: want the p50 a lower bound, the min (a probe seen) a value", s)
	}
	var b bytes.Buffer
	Console(&b, r)
	if !strings.Contains(b.String(), "> 50") {
		t.Errorf("console shows no \"> 5…\":\n%s", b.String())
	}
	b.Reset()
	Compare(&b, []string{"censored", "whole"}, []*results.Result{r, runResult(2000, 2)})
	var row string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "visibility latency p50 ms") {
			row = l
		}
	}
	if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(row), "visibility latency p50 ms")); len(f) != 5 || f[0] != ">" || f[3] != "<" {
		t.Errorf("compare row %q: want the baseline \"> X\" and the ratio to it \"< r\"", row)
	}
	if out := render(t, r); !strings.Contains(out, "&gt; 5") {
		t.Error("the HTML report shows no lower bound")
	}
}
