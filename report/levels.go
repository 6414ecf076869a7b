package report

// A run at throughput levels (results.KindLevels): the console table, the
// line printed as each trial ends, and the HTML section with the latency
// against achieved throughput charts.

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/freshbench/freshbench/report/internal/svg"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// isLevels tells whether r is a run at throughput levels, to be shown by
// its levels.
func isLevels(r *results.Result) bool { return r.Kind == results.KindLevels && r.Levels != nil }

// latencyClass is the chart colour of a latency a level reports.
func latencyClass(name string) string {
	switch name {
	case results.LatencyQuery:
		return "c-query"
	case results.LatencyFreshness:
		return "c-fresh"
	case results.LatencyVisibility:
		return "c-vis"
	}
	return "c-write"
}

// levelRate writes a rate in a levels run's unit.
func levelRate(v float64, unit string) string {
	if unit == results.UnitMB {
		return mbps(v)
	}
	return rate(v)
}

// spreadText is a figure across trials: median [min–max].
func spreadText(s results.Spread, format func(float64) string) string {
	if s.N == 0 {
		return "–"
	}
	return format(s.Median) + " [" + format(s.Min) + "–" + format(s.Max) + "]"
}

// trialName names the k-th trial (from 0) of a level: warm-up trials
// first, then the measured ones.
func trialName(l *results.Level, k int) string {
	if k < len(l.WarmupTrials) {
		return fmt.Sprintf("warm-up trial %d", k+1)
	}
	return fmt.Sprintf("trial %d", k-len(l.WarmupTrials)+1)
}

// levelTrials is every trial of a level, in the order run.
func levelTrials(l *results.Level) []*results.Result {
	return append(slices.Clip(l.WarmupTrials), l.Trials...)
}

// inFigures tells whether the k-th trial of a level counts in its figures.
func inFigures(l *results.Level, k int) bool {
	return k >= len(l.WarmupTrials) && !levelTrials(l)[k].EndedEarly
}

// TrialLine writes one line about the trial of a levels run that ended
// last, as it ends.
func TrialLine(w io.Writer, r *results.Result) {
	if !isLevels(r) {
		return
	}
	ls := r.Levels
	for i := len(ls.Levels) - 1; i >= 0; i-- {
		l := ls.Levels[i]
		all := levelTrials(l)
		if len(all) == 0 {
			continue
		}
		k := len(all) - 1
		t := all[k]
		total := ls.Trials
		if k < len(l.WarmupTrials) {
			total = ls.WarmupTrials
		}
		fmt.Fprintf(w, "level %d (%s), %s of %d: achieved %s %s", i+1, l.Rate, trialName(l, k), total, levelRate(results.TrialAchieved(t, ls.Unit), ls.Unit), ls.Unit)
		for _, name := range results.LatencyNames() {
			if s, ok := results.TrialLatency(t, name); ok {
				fmt.Fprintf(w, "; %s p50 %s, p99 %s ms", name, ms(s.P50Ms), ms(s.P99Ms))
			}
		}
		switch {
		case t.EndedEarly:
			fmt.Fprintf(w, "; ended early: %s (in no figure)", t.EndReason)
		case k < len(l.WarmupTrials):
			fmt.Fprint(w, " (warm-up: in no figure)")
		}
		fmt.Fprintln(w)
		return
	}
}

// latencyNames lists the latencies that some level of ls reports, in
// the order the levels list them.
func latencyNames(ls *results.Levels) []string {
	var names []string
	for _, name := range results.LatencyNames() {
		for _, l := range ls.Levels {
			if _, ok := l.Latency(name); ok {
				names = append(names, name)
				break
			}
		}
	}
	return names
}

// levelsIntro says how the levels were measured.
func levelsIntro(r *results.Result) string {
	ls := r.Levels
	return fmt.Sprintf("%d level(s) × %d trial(s) after %d warm-up trial(s); each trial %s (warm-up %s)",
		len(ls.Levels), ls.Trials, ls.WarmupTrials, seconds(r.Config.DurationS), seconds(r.Config.WarmupS))
}

// consoleLevels writes a levels run: per level, the achieved rate and
// each latency's p50 and p99, as medians over its trials with their range.
func consoleLevels(w io.Writer, r *results.Result) {
	ls := r.Levels
	fmt.Fprintf(w, "freshbench %s: %s (%s)\n", r.Command, targetURL(r), r.Environment.TargetVersion)
	printWorkload(w, r)
	fmt.Fprintln(w, levelsIntro(r))
	if r.EndedEarly {
		fmt.Fprintf(w, "ended early: %s (the trials measured are kept; a trial cut short is in no figure)\n", r.EndReason)
	}
	names := latencyNames(ls)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "level\ttrials\tachieved %s\tlatency\tp50 ms\tp99 ms\n", ls.Unit)
	for _, l := range ls.Levels {
		achieved := spreadText(l.Achieved, func(v float64) string { return levelRate(v, ls.Unit) })
		if len(names) == 0 || l.Achieved.N == 0 {
			fmt.Fprintf(tw, "%s\t%d\t%s\t\t\t\n", l.Rate, l.Achieved.N, achieved)
			continue
		}
		for i, name := range names {
			s, _ := l.Latency(name)
			head := "\t\t"
			if i == 0 {
				head = fmt.Sprintf("%s\t%d\t%s", l.Rate, l.Achieved.N, achieved)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", head, name, spreadText(s.P50, ms), spreadText(s.P99, ms))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "(median over each level's trials [lowest–highest]; warm-up trials and trials cut short are in no figure)")
	for _, n := range levelIssues(ls) {
		fmt.Fprintln(w, n)
	}
	consoleCeiling(w, r.Ceiling)
}

// levelIssues says, per level, what its measured trials lost: failed,
// unsent or missing events, failed or unsent queries.
func levelIssues(ls *results.Levels) []string {
	var out []string
	for _, l := range ls.Levels {
		var failed, unsent, missing, qFailed, qUnsent int64
		for k, t := range levelTrials(l) {
			if !inFigures(l, k) {
				continue
			}
			s := t.Summary
			failed, unsent, missing = failed+s.EventsFailed, unsent+s.EventsUnsent, missing+s.Missing
			if q := t.Target().Queries; q != nil && q.Total != nil {
				qFailed, qUnsent = qFailed+q.Total.Failed, qUnsent+q.Unsent
			}
		}
		var parts []string
		for _, p := range []struct {
			n    int64
			what string
		}{
			{failed, "events failed"}, {unsent, "events unsent"}, {missing, "acknowledged events missing"},
			{qFailed, "queries failed"}, {qUnsent, "queries unsent"},
		} {
			if p.n > 0 {
				parts = append(parts, count(p.n)+" "+p.what)
			}
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("level %s: %s over its trials", l.Rate, strings.Join(parts, ", ")))
		}
	}
	return out
}

// levelsView is the HTML report's section of a levels run.
type levelsView struct {
	Headline string
	Rows     []levelRow
	Charts   []chartView
	Names    []string // the latencies of the trials table
	Trials   []trialRow
}

// levelRow is one latency of one level; the first row of a level carries
// the level's own cells, spanning its rows.
type levelRow struct {
	Level, Trials, Achieved, Latency, P50, P99 string
	First                                      bool
	Span                                       int
}

// trialRow is one trial: its latencies as "p50 / p99", in the order of
// levelsView.Names.
type trialRow struct {
	Level, Trial, Achieved, Note string
	Latencies                    []string
	Out                          bool // in no figure
}

func levelsSection(r *results.Result) *levelsView {
	ls := r.Levels
	v := &levelsView{Headline: capitalize(levelsIntro(r)) + ".", Names: latencyNames(ls)}
	unitRate := func(x float64) string { return levelRate(x, ls.Unit) }
	for _, l := range ls.Levels {
		trials, achieved := strconv.Itoa(l.Achieved.N), spreadText(l.Achieved, unitRate)
		if len(l.Latencies) == 0 {
			v.Rows = append(v.Rows, levelRow{Level: l.Rate, Trials: trials, Achieved: achieved, Latency: "–", P50: "–", P99: "–", First: true, Span: 1})
		}
		for i, s := range l.Latencies {
			row := levelRow{Latency: s.Name, P50: spreadText(s.P50, ms), P99: spreadText(s.P99, ms)}
			if i == 0 {
				row.Level, row.Trials, row.Achieved, row.First, row.Span = l.Rate, trials, achieved, true, len(l.Latencies)
			}
			v.Rows = append(v.Rows, row)
		}
		for k, t := range levelTrials(l) {
			tr := trialRow{Level: l.Rate, Trial: trialName(l, k), Achieved: unitRate(results.TrialAchieved(t, ls.Unit)), Out: !inFigures(l, k)}
			for _, name := range v.Names {
				s, ok := results.TrialLatency(t, name)
				cell := "–"
				if ok {
					cell = ms(s.P50Ms) + " / " + ms(s.P99Ms)
				}
				tr.Latencies = append(tr.Latencies, cell)
			}
			switch {
			case t.EndedEarly:
				tr.Note = "ended early (" + orDash(t.EndReason) + "): in no figure"
			case k < len(l.WarmupTrials):
				tr.Note = "warm-up: in no figure"
			}
			v.Trials = append(v.Trials, tr)
		}
	}
	v.Charts = []chartView{
		levelsChart(ls, "p50", func(s stats.Summary) float64 { return s.P50Ms }, func(s results.LatencySpread) results.Spread { return s.P50 }),
		levelsChart(ls, "p99", func(s stats.Summary) float64 { return s.P99Ms }, func(s results.LatencySpread) results.Spread { return s.P99 }),
	}
	return v
}

// levelsChart draws one percentile of every latency against the achieved
// throughput: a dot per trial in the figures, a line through each
// level's medians, and the target rates as dashed verticals, so that a
// level whose trials fell short of their target shows left of its line.
func levelsChart(ls *results.Levels, pct string, trialValue func(stats.Summary) float64, median func(results.LatencySpread) results.Spread) chartView {
	names := latencyNames(ls)
	cv := chartView{
		Title: "Latency " + pct + " against achieved throughput",
		Note:  "One dot per trial (warm-up trials and trials cut short are in no figure); the line joins each level's medians; dashed: the target rates. Log scale.",
	}
	for _, name := range names {
		cv.Legend = append(cv.Legend, legendItem{latencyClass(name), name})
	}
	cv.Legend = append(cv.Legend, legendItem{"c-target", "target"})
	c := svg.New(halfW, halfH)
	cv.SVG = c
	hiX, lo, hi := 0.0, math.Inf(1), 0.0
	for _, l := range ls.Levels {
		hiX = math.Max(hiX, math.Max(l.Target, l.Achieved.Max))
		for k, t := range levelTrials(l) {
			for _, name := range names {
				if s, ok := results.TrialLatency(t, name); ok && inFigures(l, k) && trialValue(s) > 0 {
					lo, hi = math.Min(lo, trialValue(s)), math.Max(hi, trialValue(s))
				}
			}
		}
	}
	if hi == 0 {
		c.Empty = "no trial measured"
		return cv
	}
	x := c.XValueAxis(hiX*1.05, "achieved "+ls.Unit, svg.Compact)
	y := c.LogMsAxis(lo, hi)
	for _, l := range ls.Levels {
		tx := x.At(l.Target)
		c.Lines = append(c.Lines, svg.Shape{Class: "c-target line dashed thin", D: svg.Path([]float64{tx, tx}, []float64{c.Plot.Y, c.PlotBottom})})
	}
	for _, name := range names {
		class := latencyClass(name)
		// The medians are joined in the order of their achieved rate.
		type pt struct{ x, y float64 }
		var meds []pt
		for _, l := range ls.Levels {
			if s, ok := l.Latency(name); ok && median(s).N > 0 && median(s).Median > 0 {
				meds = append(meds, pt{x.At(l.Achieved.Median), y.At(median(s).Median)})
			}
			for k, t := range levelTrials(l) {
				s, ok := results.TrialLatency(t, name)
				if !ok || !inFigures(l, k) || trialValue(s) <= 0 {
					continue
				}
				a := results.TrialAchieved(t, ls.Unit)
				c.Marks = append(c.Marks, svg.Shape{Class: "dot " + class, D: svg.Dot(x.At(a), y.At(trialValue(s)), 3.5),
					Title: fmt.Sprintf("level %s, %s: achieved %s %s, %s %s %s", l.Rate, trialName(l, k), levelRate(a, ls.Unit), ls.Unit, name, pct, msUnit(trialValue(s)))})
			}
		}
		slices.SortStableFunc(meds, func(a, b pt) int { return cmp.Compare(a.x, b.x) })
		xs, ys := make([]float64, len(meds)), make([]float64, len(meds))
		for i, m := range meds {
			xs[i], ys[i] = m.x, m.y
		}
		c.Lines = append(c.Lines, svg.Shape{Class: class + " line thin", D: svg.Path(xs, ys)})
	}
	return cv
}

// levelsFacts are the header facts of a levels run: the levels and
// trials, then what every trial shares.
func levelsFacts(r *results.Result) []fact {
	ls := r.Levels
	facts := []fact{
		{"levels", levelRates(ls)},
		{"trials", fmt.Sprintf("%d per level after %d warm-up", ls.Trials, ls.WarmupTrials)},
		{"per trial", seconds(r.Config.DurationS) + " (warm-up " + seconds(r.Config.WarmupS) + ")"},
	}
	if t := firstTrial(ls); t != nil {
		facts = append(facts, without(headerFacts(t), "rate", "load", "duration")...)
	}
	return append(facts, targetSettingFacts(r.Config, "")...)
}

// levelsConfigFacts is the configuration of a levels run: that of its
// trials, which differ only in their rate.
func levelsConfigFacts(r *results.Result) []fact {
	ls := r.Levels
	facts := []fact{
		{"levels", levelRates(ls)},
		{"trials per level", strconv.Itoa(ls.Trials)},
		{"warm-up trials per level", strconv.Itoa(ls.WarmupTrials)},
	}
	if t := firstTrial(ls); t != nil {
		facts = append(facts, without(configFacts(t), "rate", "query load", "seed")...)
	}
	return append(facts, targetSettingFacts(r.Config, "target setting ")...)
}

// without drops the facts of those labels: a trial's rate, which is its
// level's, and what the levels' facts say already.
func without(facts []fact, labels ...string) []fact {
	return slices.DeleteFunc(facts, func(f fact) bool { return slices.Contains(labels, f.Label) })
}

func levelRates(ls *results.Levels) string {
	rates := make([]string, len(ls.Levels))
	for i, l := range ls.Levels {
		rates[i] = l.Rate
	}
	return strings.Join(rates, ", ")
}

func firstTrial(ls *results.Levels) *results.Result {
	for _, l := range ls.Levels {
		if all := levelTrials(l); len(all) > 0 {
			return all[0]
		}
	}
	return nil
}

func levelsNotices(r *results.Result) []notice {
	var out []notice
	if r.EndedEarly {
		out = append(out, notice{"bad", "The run ended early (" + orDash(r.EndReason) + "): the trials measured are kept; a trial cut short is in no figure."})
	}
	for _, s := range levelIssues(r.Levels) {
		out = append(out, notice{"warn", capitalize(s) + "."})
	}
	if c := r.Ceiling; c != nil && c.Warning != "" {
		out = append(out, notice{"warn", capitalize(c.Warning) + " (its highest trial)."})
	}
	return out
}

// levelMetrics are the compared figures of the levels runs among rs: per
// level, matched by its rate, the achieved rate and each latency's p50
// and p99, as medians over the level's trials.
func levelMetrics(rs []*results.Result) []metric {
	var rates []string
	units := map[string]string{}
	measured := map[string]map[string]bool{} // latencies by level
	for _, r := range rs {
		if !isLevels(r) {
			continue
		}
		for _, l := range r.Levels.Levels {
			if _, ok := units[l.Rate]; !ok {
				rates = append(rates, l.Rate)
				units[l.Rate], measured[l.Rate] = r.Levels.Unit, map[string]bool{}
			}
			for _, s := range l.Latencies {
				measured[l.Rate][s.Name] = true
			}
		}
	}
	find := func(r *results.Result, rate string) *results.Level {
		if !isLevels(r) {
			return nil
		}
		for _, l := range r.Levels.Levels {
			if l.Rate == rate {
				return l
			}
		}
		return nil
	}
	var out []metric
	for _, rate := range rates {
		unit := units[rate]
		out = append(out, metric{"at " + rate + ": achieved " + unit, func(r *results.Result) (float64, bool) {
			l := find(r, rate)
			return levelSpread(l, func(l *results.Level) results.Spread { return l.Achieved })
		}, func(v float64) string { return levelRate(v, unit) }, nil})
		for _, name := range results.LatencyNames() {
			if !measured[rate][name] {
				continue
			}
			for _, p := range []struct {
				pct string
				get func(results.LatencySpread) results.Spread
			}{
				{"p50", func(s results.LatencySpread) results.Spread { return s.P50 }},
				{"p99", func(s results.LatencySpread) results.Spread { return s.P99 }},
			} {
				out = append(out, metric{"at " + rate + ": " + name + " " + p.pct + " ms", func(r *results.Result) (float64, bool) {
					return levelSpread(find(r, rate), func(l *results.Level) results.Spread {
						s, _ := l.Latency(name)
						return p.get(s)
					})
				}, ms, nil})
			}
		}
	}
	return out
}

// levelSpread is the median of a level's figure, if the level was
// measured.
func levelSpread(l *results.Level, get func(*results.Level) results.Spread) (float64, bool) {
	if l == nil {
		return 0, false
	}
	s := get(l)
	return s.Median, s.N > 0
}
