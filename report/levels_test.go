package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/results"
)

// levelsResult is a levels run at 1000 and 2000 events/s, each level a
// warm-up trial far off the others (write p99 900 ms, 10 events/s) and
// three trials whose write latency p99 is 10, 30 and 20 ms at the first
// level and twice that at the second.
func levelsResult() *results.Result {
	res := runResult(1000, 1)
	res.Kind, res.Phases, res.Series, res.Target().Completeness = results.KindLevels, nil, nil, nil
	res.Summary, res.Target().Freshness, res.Target().Visibility = results.Summary{}, results.Freshness{}, results.Visibility{}
	res.Config.Rate, res.Config.RatePerSecond = "1000 events/s, 2000 events/s", 0
	ls := &results.Levels{Unit: results.UnitEvents, Trials: 3, WarmupTrials: 1}
	for i, rate := range []float64{1000, 2000} {
		l := &results.Level{Rate: []string{"1000 events/s", "2000 events/s"}[i], Target: rate}
		warm := runResult(rate, 50)
		warm.Summary.AchievedEventsPerSec, warm.Summary.WriteLatency.P99Ms = 10, 900
		l.WarmupTrials = []*results.Result{warm}
		for k, p99 := range []float64{10, 30, 20} {
			t := runResult(rate, uint64(10*i+k))
			t.Summary.AchievedEventsPerSec = rate - float64(k)
			t.Summary.WriteLatency.P50Ms, t.Summary.WriteLatency.P99Ms = float64(i+1), float64(i+1)*p99
			t.Summary.EventsFailed, t.Summary.EventsUnsent, t.Summary.Missing = 0, 0, 0
			l.Trials = append(l.Trials, t)
		}
		ls.Levels = append(ls.Levels, l)
	}
	ls.Levels[1].Trials[2].Summary.EventsFailed = 7
	ls.Summarize()
	res.Levels = ls
	return res
}

func TestConsoleLevels(t *testing.T) {
	var out bytes.Buffer
	Console(&out, levelsResult())
	text := out.String()
	t.Log("\n" + text)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^2 level\(s\) × 3 trial\(s\) after 1 warm-up trial\(s\); each trial 30s \(warm-up 5s\)$`),
		// The warm-up trial's 10 events/s and 900 ms are in no figure.
		regexp.MustCompile(`(?m)^1000 events/s\s+3\s+999 \[998–1,000\]\s+write latency\s+1\.00 \[1\.00–1\.00\]\s+20\.0 \[10\.0–30\.0\]$`),
		regexp.MustCompile(`(?m)^\s+freshness lag\s+\d`),
		regexp.MustCompile(`(?m)^2000 events/s\s+3\s+1,999 \[1,998–2,000\]\s+write latency\s+2\.00 \[2\.00–2\.00\]\s+40\.0 \[20\.0–60\.0\]$`),
		regexp.MustCompile(`(?m)^level 2000 events/s: 7 events failed over its trials$`),
	} {
		if !want.MatchString(text) {
			t.Errorf("console does not match %s", want)
		}
	}
	if strings.Contains(text, "level 1000 events/s:") {
		t.Error("a level without a loss has a loss line")
	}
}

func TestTrialLine(t *testing.T) {
	res := levelsResult()
	line := func() string {
		var b bytes.Buffer
		TrialLine(&b, res)
		return b.String()
	}
	if got := line(); !strings.HasPrefix(got, "level 2 (2000 events/s), trial 3 of 3: achieved 1,998 events/s; write latency p50 2.00, p99 40.0 ms; freshness lag p50 ") || strings.Contains(got, "in no figure") {
		t.Errorf("last trial: %q", got)
	}
	l := res.Levels.Levels[1]
	l.Trials = nil
	if got := line(); !strings.HasPrefix(got, "level 2 (2000 events/s), warm-up trial 1 of 1: achieved 10 events/s; write latency p50 ") || !strings.HasSuffix(got, "ms (warm-up: in no figure)\n") {
		t.Errorf("a warm-up trial: %q", got)
	}
	cut := runResult(2000, 3)
	cut.EndedEarly, cut.EndReason = true, "interrupted"
	l.Trials = []*results.Result{cut}
	if got := line(); !strings.HasSuffix(got, "; ended early: interrupted (in no figure)\n") {
		t.Errorf("a trial cut short: %q", got)
	}
}

func TestHTMLLevels(t *testing.T) {
	res := levelsResult()
	page := render(t, res)
	for _, want := range []string{
		`<section id="levels">`, "Latency p50 against achieved throughput", "Latency p99 against achieved throughput",
		"20.0 [10.0–30.0]", "40.0 [20.0–60.0]", "warm-up: in no figure", "1000 events/s, 2000 events/s",
		"7 events failed over its trials", "achieved events/s",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Its figures are the levels': no section of a single run.
	for _, absent := range []string{"Throughput over time", `id="completeness"`, `id="phases"`, "NaN", "%!"} {
		if strings.Contains(page, absent) {
			t.Errorf("the page shows %q", absent)
		}
	}
	// One dot per trial in the figures and per latency: 2 levels × 3
	// trials × 3 latencies, in each of the two charts; the warm-up
	// trials have none.
	v := levelsSection(res)
	for _, c := range v.Charts {
		if n := len(c.SVG.Marks); n != 2*3*3 {
			t.Errorf("%s: %d dots, want 18", c.Title, n)
		}
		for _, m := range c.SVG.Marks {
			if strings.Contains(m.Title, "warm-up") {
				t.Errorf("%s: a warm-up trial is drawn: %s", c.Title, m.Title)
			}
		}
	}
	if !strings.Contains(v.Charts[1].SVG.Marks[0].Title, "level 1000 events/s, trial 1: achieved 1,000 events/s, write latency p99 10.0 ms") {
		t.Errorf("first dot: %q", v.Charts[1].SVG.Marks[0].Title)
	}
	if len(v.Trials) != 8 || !v.Trials[0].Out || v.Trials[1].Out {
		t.Errorf("trials table: %d rows, first out %v, second out %v; want 8, the warm-up trial first and out", len(v.Trials), v.Trials[0].Out, v.Trials[1].Out)
	}

	// Stopped before any trial: the page says so and draws nothing.
	empty := &results.Result{SchemaVersion: results.SchemaVersion, Kind: results.KindLevels, EndedEarly: true, EndReason: "interrupted",
		Levels: &results.Levels{Unit: results.UnitQPS, Trials: 5, WarmupTrials: 1, Levels: []*results.Level{{Rate: "50 QPS", Target: 50}}}}
	page = render(t, empty)
	if !strings.Contains(page, "The run ended early (interrupted)") || !strings.Contains(page, "no trial measured") {
		t.Error("a levels run stopped before its first trial does not say so")
	}
}

func TestCompareLevels(t *testing.T) {
	a, b := levelsResult(), levelsResult()
	for _, l := range b.Levels.Levels {
		for _, tr := range l.Trials {
			tr.Summary.WriteLatency.P99Ms *= 2
		}
	}
	b.Levels.Levels = b.Levels.Levels[:1] // b never reached 2000 events/s
	b.Levels.Summarize()
	out := compareText([]string{"a", "b"}, a, b)
	t.Log("\n" + out)
	if got := strings.Join(row(t, out, "at 1000 events/s: write latency p99 ms"), " "); got != "20.0 40.0 2.00x" {
		t.Errorf("write p99 row = %q", got)
	}
	if got := strings.Join(row(t, out, "at 2000 events/s: achieved events/s"), " "); got != "1,999 - -" {
		t.Errorf("a level only one file has = %q", got)
	}
	if strings.Contains(out, "target events/s") || !strings.Contains(out, "at a level: the median over the level's trials") {
		t.Error("levels compared with the rows of a single run, or without saying what a level's figure is")
	}

	// Beside a single run, the levels run has none of its figures, not
	// even a count of zero.
	out = compareText([]string{"run", "levels"}, runResult(1000, 1), a)
	if got := strings.Join(row(t, out, "failed events"), " "); got != "2,000 - -" {
		t.Errorf("failed events row = %q", got)
	}
	if got := row(t, out, "at 1000 events/s: write latency p50 ms"); got[0] != "-" || got[1] != "1.00" {
		t.Errorf("level row beside a run = %q", got)
	}
}
