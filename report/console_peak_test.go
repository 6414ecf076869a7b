package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// A peak search prints one row per step, the peak marked, every verdict
// with its reason, and why the search stopped.
func TestConsolePeak(t *testing.T) {
	res := peakResult()
	var b bytes.Buffer
	Console(&b, res)
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^freshbench peak: `),
		regexp.MustCompile(`(?m)^\s+step\s+target\s+achieved events/s\s+MB/s\s+write p99 ms\s+lag p50 ms\s+lag p95 ms\s+lag p99 ms\s+visibility p95 ms\s+failed\s+late\s+verdict$`),
		regexp.MustCompile(`(?m)^\s+1\s+1000\s+920\s.*  sustainable$`),
		regexp.MustCompile(`(?m)^\s+3\*\s+3000\s.*  sustainable$`),
		regexp.MustCompile(`(?m)^\s+4\s+4000\s+3240\s.*\s8200\s.*  not sustainable: achieved 81.0% of the target rate \(< 98%\); freshness lag grows 950 ms/s over the second half$`),
		regexp.MustCompile(`(?m)^peak \(\*\): step 3 at 3000, achieved 2760 events/s \(2.76 MB/s\)$`),
		regexp.MustCompile(`(?m)^stopped: step 4000 was not sustainable \(after 140 s\)$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("output does not match %s", want)
		}
	}
	if strings.Contains(out, "latency (ms)") {
		t.Error("a peak search printed the single-run summary")
	}

	b.Reset()
	StepLine(&b, 3, res.Steps[3])
	if want := "step 4  4000: achieved 3240 events/s"; !strings.HasPrefix(b.String(), want) || !strings.HasSuffix(b.String(), "over the second half\n") {
		t.Errorf("step line %q, want %q… and its reason", b.String(), want)
	}
}
