package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// peakWithOpenSteps is peakResult with a fifth step, between the peak and
// the step that failed, not yet known after its maximum hold, and the
// peak as an interval; its second step was decided at its fourth look.
func peakWithOpenSteps() *results.Result {
	res := peakResult()
	res.Steps[1].Verdict.Looks, res.Steps[1].Verdict.DecidedAtS = 4, 120
	st := runResult(3500, 50)
	st.Kind, st.Command = results.KindStep, "peak step"
	st.Verdict = &stats.Verdict{Undecided: true, Open: []string{"freshness lag trend 1.0 ms/s could be as high as 7.0 ms/s (5.0 ms/s tolerated): the step is too short to tell at this noise; a hold of at least 40m0s is needed"}, Looks: 60, DecidedAtS: 1800}
	res.Steps = append(res.Steps, st)
	res.Peak.Sustainable, res.Peak.NotSustainable, res.Peak.NotYetKnown, res.Peak.Interval = 3000, 4000, 1, "[3000 events/s, 4000 events/s]"
	res.Peak.Search = &results.PeakSearch{HoldS: 25, MaxHoldS: 1800}
	return res
}

// A step not yet known is shown as such, with what is open, and counted
// as neither sustainable nor not: in the console and in the HTML report.
func TestNotYetKnownShownApart(t *testing.T) {
	res := peakWithOpenSteps()
	var b bytes.Buffer
	Console(&b, res)
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{
		"after 30m0s (look 60): not yet known: freshness lag trend 1.0 ms/s could be as high as 7.0 ms/s",
		"after 2m0s (look 4): sustainable",
		"step(s) of 25s to 30m0s (until decided) after",
		"peak interval (sustainable, not sustainable): [3000 events/s, 4000 events/s]",
		"not yet known: 1 step(s), counted as neither",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q", want)
		}
	}
	if strings.Contains(out, "not sustainable: freshness lag trend 1.0") {
		t.Error("the step not yet known is printed as not sustainable")
	}
	page := render(t, res)
	for _, want := range []string{`badge unknown">not yet known`, "bar-unknown", "The peak lies in [3000 events/s, 4000 events/s]", "1 step(s) not yet known, counted as neither"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	if n := strings.Count(page, `badge bad">not sustainable`); n != 1 {
		t.Errorf("%d steps badged not sustainable, want the one that failed", n)
	}
	checkPage(t, page)
}
