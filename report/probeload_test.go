package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/results"
)

// The probe load is shown beside the figures: its rate over the measured
// window (25 s here) and its service time.
func TestProbeLoad(t *testing.T) {
	res := runResult(2000, 1)
	var console bytes.Buffer
	Console(&console, res)
	if !strings.Contains(console.String(), "probe load on the target: freshness polls 5.0/s (service p50 ") ||
		!strings.Contains(console.String(), "probe queries 20.0/s (service p50 ") {
		t.Errorf("console lacks the probe load:\n%s", console.String())
	}
	page := render(t, res)
	for _, want := range []string{"<dt>freshness polls</dt><dd>5.0/s, service p50 ", "<dt>probe queries</dt><dd>20.0/s, service p50 "} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	off := runResult(2000, 2)
	off.Target().Freshness.Samples, off.Target().Visibility.QueryService = 5, nil
	var cmp bytes.Buffer
	Compare(&cmp, []string{"default", "off"}, []*results.Result{res, off})
	rows := map[string]string{}
	for _, line := range strings.Split(cmp.String(), "\n") {
		if name, rest, ok := strings.Cut(strings.TrimSpace(line), "  "); ok {
			rows[name] = strings.Join(strings.Fields(rest), " ")
		}
	}
	for name, want := range map[string]string{"freshness polls/s": "5.0 0.2 0.04x", "probe queries/s": "20.0 0.0 0x", "probe query service p99 ms": "7.62 - -"} {
		if rows[name] != want {
			t.Errorf("compare row %q: %q, want %q:\n%s", name, rows[name], want, cmp.String())
		}
	}
}

func TestCeilingShown(t *testing.T) {
	res := runResult(2000, 1)
	res.Ceiling = &results.Ceiling{File: "cal.json", EventsPerSec: 3000, TargetShare: 0.67, AchievedShare: 0.61, Method: "calibrated at this batch size",
		Warning: "the run used 67% of this machine's driver ceiling at batch size 50 (3000 events/s, calibrated at this batch size): the driver, not the database, may be the limit"}
	var console bytes.Buffer
	Console(&console, res)
	if !strings.Contains(console.String(), "\nwarning: the run used 67% of this machine's driver ceiling") {
		t.Errorf("console lacks the warning:\n%s", console.String())
	}
	page := render(t, res)
	if !strings.Contains(page, `<div class="notice warn">The run used 67% of this machine`) || !strings.Contains(page, "67% of it targeted, 61% achieved") {
		t.Errorf("HTML lacks the ceiling's notice or fact")
	}

	res.Ceiling = &results.Ceiling{File: "cal.json", NotUsed: `the calibration is of host "a", this run's is "b"`}
	console.Reset()
	Console(&console, res)
	if !strings.Contains(console.String(), `driver ceiling unknown (the calibration is of host "a", this run's is "b"): run freshbench calibrate`) || strings.Contains(console.String(), "warning") {
		t.Errorf("console lacks the hint, or warns:\n%s", console.String())
	}
}
