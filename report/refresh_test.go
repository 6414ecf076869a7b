package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/results"
)

// Events that only a refresh forced after the drain showed are late, and
// the report says so: not that the target was still catching up (the
// drain judged it caught up), and not lost.
func TestReportSaysLateEventsWereShownByAForcedRefresh(t *testing.T) {
	res := endpointResult(1)
	res.Drain = &results.Drain{CaughtUp: true, WaitedS: 6}
	for _, e := range res.Endpoints {
		cs := []results.Completeness{{Generator: "111", Acknowledged: 29000, Visible: 29000, Late: 43, ShownByRefresh: 43}, {Generator: "222", Acknowledged: 29000, Visible: 29000}}
		e.Completeness = cs
	}
	out := consoleHas(t, res,
		"completeness (target): 58000 acknowledged, 58000 visible, 43 not visible until a refresh forced at the drain's end (stored, not yet searchable: late, not lost), 0 missing (lost)",
		"read1: postgres://bench:xxxxx@standby:5434/db?table=events; completeness 43 late (43 shown only by a refresh forced at the drain's end), 0 missing",
	)
	if strings.Contains(out, "still catching up") {
		t.Errorf("console says the target was still catching up, though the drain judged it caught up:\n%s", out)
	}
	if c := completenessCard(res); !strings.Contains(c.Sub, "43 late (43 shown only by a refresh forced at the drain's end)") {
		t.Errorf("completeness card %q does not say the late events were shown by a forced refresh", c.Sub)
	}
}

// Visible events whose writes were answered as failed are reported as
// stored though failed, on every endpoint, in the console, the card and
// the HTML table: not as unexpected, which is for events the run never
// wrote.
func TestReportTellsStoredFailuresFromUnexpected(t *testing.T) {
	res := endpointResult(1)
	for _, e := range res.Endpoints {
		e.Completeness = []results.Completeness{
			{Generator: "111", Acknowledged: 29000, Visible: 29012, Unacknowledged: 12},
			{Generator: "222", Acknowledged: 29000, Visible: 29003, Unacknowledged: 2, Unexpected: 1},
		}
	}
	consoleHas(t, res,
		"completeness (target): 58000 acknowledged, 58015 visible, 0 missing (lost), 14 stored though their writes failed, 1 unexpected, 0 duplicates",
		"completeness 0 missing, 14 stored though their writes failed, 1 unexpected, 0 duplicates",
	)
	if c := completenessCard(res); !strings.Contains(c.Sub, "1 unexpected · 0 duplicates · 14 stored though their writes failed") {
		t.Errorf("completeness card %q does not tell the stored failures", c.Sub)
	}
	var page bytes.Buffer
	if err := HTML(&page, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<td class="num">12</td><td class="num">0</td>`) {
		t.Errorf("HTML completeness table lacks generator 111's 12 stored, 0 unexpected")
	}
}

// consoleHas summarizes res, writes its console report and wants every
// one of wants in it; it returns the report.
func consoleHas(t *testing.T, res *results.Result, wants ...string) string {
	t.Helper()
	res.Summary = results.Summarize(res, res.Summary.MeasuredS)
	var b bytes.Buffer
	Console(&b, res)
	out := b.String()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	return out
}
