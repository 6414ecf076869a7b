package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/merge"
	"github.com/freshbench/freshbench/results"
)

// mergedResult is instances 0 and 2 of an experiment of three, instance
// 2 stopped early: instance 1 is missing.
func mergedResult(t *testing.T) *results.Result {
	t.Helper()
	var ins []merge.Input
	for _, i := range []int{0, 2} {
		r := runResult(1000, uint64(i))
		r.Experiment = &results.Experiment{Name: "pg-3x", Instance: i, Instances: 3}
		r.Environment.Host = []string{"h0", "h1", "h2"}[i]
		if i == 2 {
			r.EndedEarly, r.EndReason = true, "interrupted"
		}
		ins = append(ins, merge.Input{Name: []string{"a.json", "b.json", "c.json"}[i], Result: r})
	}
	res, err := merge.Merge(ins)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A merged result shows its instances, one row each, the missing and the
// partial named in words, on the console and in the HTML report.
func TestMergedInReports(t *testing.T) {
	res := mergedResult(t)
	var b bytes.Buffer
	Console(&b, res)
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^freshbench merge: `),
		regexp.MustCompile(`(?m)^incomplete: 2 of 3 instances merged; no results file for instance 1; instance 2 \(c.json\) ended early: interrupted \(figures are of the instances merged\)$`),
		regexp.MustCompile(`(?m)^experiment pg-3x: 2 of 3 instances merged$`),
		regexp.MustCompile(`(?m)^\s+0\s+a.json\s+h0\s+1000\s+2\s+920\s+-\s+complete$`),
		regexp.MustCompile(`(?m)^\s+1\s+-\s+-\s+-\s+-\s+-\s+-\s+missing: no results file$`),
		regexp.MustCompile(`(?m)^\s+2\s+c.json\s+h2\s+1000\s+2\s+920\s+-\s+partial: ended early \(interrupted\)$`),
		regexp.MustCompile(`(?m)^instances differ in: host \(values in the results file\)$`),
		regexp.MustCompile(`(?m)^\s+events/s\s+2000\s+1840\s*$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("console does not match %s", want)
		}
	}

	page := render(t, res)
	for _, want := range []string{
		`<section id="instances">`, "experiment pg-3x: 2 of 3 instances merged",
		"missing: no results file", "partial: ended early (interrupted)", "Not every instance is in these figures: 2 of 3 instances merged",
		"host: h0 (a.json), h2 (c.json)", "an upper bound", "<dt>instances</dt><dd>2 of 3 (pg-3x)</dd>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	checkPage(t, page)
	if page := render(t, runResult(1000, 1)); strings.Contains(page, `id="instances"`) {
		t.Error("a single run shows an instances section")
	}
}

// compare reads a merged result like any other: its figures are the
// experiment's.
func TestCompareMerged(t *testing.T) {
	res := mergedResult(t)
	out := compareText([]string{"one", "merged"}, runResult(1000, 0), res)
	t.Log("\n" + out)
	if got := row(t, out, "achieved events/s"); strings.Join(got, " ") != "920 1,840 2.00x" {
		t.Errorf("achieved events/s row = %q", got)
	}
	if got := row(t, out, "target events/s"); strings.Join(got, " ") != "1,000 2,000 2.00x" {
		t.Errorf("target events/s row = %q", got)
	}
	if got := row(t, out, "generators"); strings.Join(got, " ") != "2 4" {
		t.Errorf("generators row = %q", got)
	}
}
