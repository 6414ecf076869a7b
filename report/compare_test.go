package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// twoResults are the same run against two databases that differ in
// version, batch size and one target setting.
func twoResults() (*results.Result, *results.Result) {
	a := runResult(2000, 1)
	b := runResult(2000, 1)
	b.Environment.TargetVersion = "OpenSearch 2.17.1"
	b.Environment.Target = "opensearch"
	b.Config.BatchSize = 100
	b.Config.TargetSettings = map[string]string{"refresh_interval": "200ms", "shards": "3", "replicas": "1"}
	b.Summary.AchievedEventsPerSec = 2 * a.Summary.AchievedEventsPerSec
	b.Summary.AchievedMBPerSec = 2 * a.Summary.AchievedMBPerSec
	b.Summary.FreshnessLag.P95Ms = a.Summary.FreshnessLag.P95Ms / 2
	b.Summary.EventsFailed = 0
	return a, b
}

func compareText(names []string, rs ...*results.Result) string {
	var buf bytes.Buffer
	Compare(&buf, names, rs)
	return buf.String()
}

// row returns the fields of the line that starts with name.
func row(t *testing.T, out, name string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, name+" ") {
			return strings.Fields(strings.TrimPrefix(l, name))
		}
	}
	t.Fatalf("no row %q in\n%s", name, out)
	return nil
}

func TestCompareFigures(t *testing.T) {
	a, b := twoResults()
	out := compareText([]string{"es", "os"}, a, b)
	t.Log("\n" + out)
	if !strings.Contains(out, "baseline es") {
		t.Error("the baseline is not named")
	}
	if got := row(t, out, "achieved events/s"); strings.Join(got, " ") != "1,840 3,680 2.00x" {
		t.Errorf("achieved events/s row = %q", got)
	}
	if got := row(t, out, "freshness lag p95 ms"); got[2] != "0.50x" {
		t.Errorf("freshness lag p95 ratio = %q, want 0.50x", got[2])
	}
	if got := row(t, out, "write latency p99 ms"); got[2] != "1.00x" {
		t.Errorf("same write latency gives ratio %q, want 1.00x", got[2])
	}
	if got := row(t, out, "failed events"); strings.Join(got, " ") != "2,000 0 0x" {
		t.Errorf("failed events row = %q", got)
	}
	if got := row(t, out, "late batches"); got[2] != "1.00x" {
		t.Errorf("late batches ratio = %q", got[2])
	}
	for _, name := range []string{"achieved MB/s", "write latency p50 ms", "service time p99 ms", "freshness lag p50 ms",
		"freshness lag p99 ms", "visibility latency p50 ms", "visibility latency p95 ms", "missing events"} {
		if got := row(t, out, name); len(got) != 3 {
			t.Errorf("row %q has %d fields, want 3: %q", name, len(got), got)
		}
	}
	if strings.Contains(out, "peak") {
		t.Error("a peak row without a peak search")
	}
}

func TestCompareDifferences(t *testing.T) {
	a, b := twoResults()
	out := compareText([]string{"es", "os"}, a, b)
	cfg := section(t, out, "configuration that differs:")
	for _, want := range []string{"batch_size", "50", "100", "target setting refresh_interval", "1s", "200ms", "target setting replicas", unset} {
		if !strings.Contains(cfg, want) {
			t.Errorf("configuration differences lack %q:\n%s", want, cfg)
		}
	}
	for _, same := range []string{"rate ", "doc_size", "target setting shards", "generators"} {
		if strings.Contains(cfg, same) {
			t.Errorf("configuration differences list %q, which is the same in both", same)
		}
	}
	env := section(t, out, "environment that differs:")
	for _, want := range []string{"target_version", "Elasticsearch 8.19.0", "OpenSearch 2.17.1", "target ", "opensearch"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment differences lack %q:\n%s", want, env)
		}
	}
	for _, same := range []string{"host", "cores", "go_version", "tool"} {
		if strings.Contains(env, same) {
			t.Errorf("environment differences list %q, which is the same in both", same)
		}
	}
}

// section returns the lines after the heading, up to a blank line.
func section(t *testing.T, out, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, heading+"\n")
	if !ok {
		t.Fatalf("no %q in\n%s", heading, out)
	}
	s, _, _ := strings.Cut(rest, "\n\n")
	return s
}

func TestCompareIdentical(t *testing.T) {
	a, _ := twoResults()
	out := compareText(nil, a, a)
	if !strings.Contains(out, "configuration: identical") || !strings.Contains(out, "environment: identical") {
		t.Errorf("identical results are said to differ:\n%s", out)
	}
	if !strings.Contains(out, "baseline #1") {
		t.Error("an unnamed baseline is not labelled by position")
	}
}

func TestComparePeakAndMissingFigures(t *testing.T) {
	a, _ := twoResults()
	p := peakResult()
	empty := &results.Result{}
	out := compareText([]string{"run", "peak", "empty"}, a, p, empty)
	t.Log("\n" + out)
	got := row(t, out, "peak sustainable events/s")
	if strings.Join(got, " ") != "- 2,760 - - -" {
		t.Errorf("peak row = %q", got)
	}
	// A result without samples shows a dash, never a zero latency.
	if got := row(t, out, "visibility latency p95 ms"); got[3] != "-" || got[4] != "-" {
		t.Errorf("empty result's visibility latency = %q", got)
	}
	if regexp.MustCompile(`NaN|Inf|%!`).MatchString(out) {
		t.Errorf("formatting error in\n%s", out)
	}
}

func TestCompareNothing(t *testing.T) {
	if out := compareText(nil); !strings.Contains(out, "no results") {
		t.Errorf("Compare of nothing = %q", out)
	}
}

// Runs with an update stream show its figures side by side; one without
// shows none of them ("-").
func TestCompareUpdates(t *testing.T) {
	a, b := twoResults()
	if out := compareText([]string{"es", "os"}, a, b); strings.Contains(out, "update visibility p50 ms") {
		t.Fatalf("update rows without any update stream:\n%s", out)
	}
	b.Summary.Updates = &results.UpdateSummary{Audited: true, Lost: 7,
		VisibilityLatency: stats.Summary{Count: 10, P50Ms: 400, P95Ms: 900}, FreshnessLag: stats.Summary{Count: 5, P95Ms: 300}}
	out := compareText([]string{"es", "os"}, a, b)
	if got := row(t, out, "lost updates"); strings.Join(got, " ") != "- 7 -" {
		t.Errorf("lost updates row = %q", got)
	}
	if got := row(t, out, "update visibility p50 ms"); got[1] != "400" {
		t.Errorf("update visibility p50 row = %q", got)
	}
}
