package report

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/stats"
)

// The page and its style are embedded so that a report is one file that
// opens offline: no CDN, no fonts, no scripts fetched from anywhere.
//
//go:embed assets/report.html.tmpl
var htmlTemplate string

//go:embed assets/report.css
var htmlCSS string

// HTML writes a self-contained HTML report of res. The charts are inline
// SVG drawn here, so the page needs neither JavaScript nor network access,
// and every string from the results file is escaped by html/template.
func HTML(w io.Writer, res *bench.Result) error {
	if res == nil {
		return errors.New("html report: no result")
	}
	t, err := template.New("report").Funcs(template.FuncMap{"f": svgNum}).Parse(htmlTemplate)
	if err != nil {
		return fmt.Errorf("html report template: %w", err)
	}
	// Render into memory first so that a template error never leaves half
	// a page behind.
	var buf bytes.Buffer
	if err := t.Execute(&buf, buildView(res)); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	_, err = buf.WriteTo(w)
	return err
}

// htmlView is everything the template shows, already formatted.
type htmlView struct {
	CSS template.CSS
	// Ingest is false for a query load that ran alone: the page then has
	// no write, freshness or completeness sections, as nothing was written.
	Ingest       bool
	Title        string
	Subtitle     string
	Facts        []fact
	Notices      []notice
	Cards        []card
	Peak         *peakView
	DetailNote   string
	Throughput   chartView
	WriteLatency chartView
	Freshness    chartView
	Percentiles  []chartView
	Latencies    []latencyRow
	Queries      *queriesView
	Phases       []phaseRow
	Errors       []errorRow
	Completeness completenessView
	Config       []fact
	Environment  []fact
	Footer       string
}

type fact struct{ Label, Value string }

type notice struct{ Class, Text string }

// card is one headline figure. Status (ok, warn, bad or empty) colours it.
type card struct {
	Label, Value, Unit, Sub, Status string
}

type legendItem struct{ Class, Name string }

type chartView struct {
	Title, Note string
	Legend      []legendItem
	SVG         *svgChart
}

type latencyRow struct {
	Name, Count                                 string
	Min, P50, P90, P95, P99, P999, Max, Clamped string
	Empty                                       bool
}

type phaseRow struct {
	Name                                                           string
	Batches, Late, Dispatched, Acked, Failed, Unsent, Retries, P99 string
}

type errorRow struct{ Source, Kind, Count, Sample string }

type completenessView struct {
	Status  string // a sentence on whether the audit ran
	Rows    []completenessRow
	Total   *completenessRow
	Probes  []fact
	Missing bool
}

type completenessRow struct {
	Generator, Acknowledged, Visible, Missing, Unexpected, Duplicates, Sample string
	Bad                                                                       bool
}

type peakView struct {
	Headline string
	Reason   string
	Found    bool
	Rows     []stepRow
	Rates    chartView
	Latency  chartView
}

type stepRow struct {
	Index, Target, Achieved, Share, WriteP99, FreshP50, FreshP95, FreshP99, VisP95, Errors, Late string
	Verdict, Reason                                                                              string
	Sustainable, Peak                                                                            bool
}

func buildView(res *bench.Result) *htmlView {
	detail := detailResult(res)
	s := detail.Summary
	v := &htmlView{
		CSS:   template.CSS(htmlCSS),
		Title: orDash(res.Environment.TargetURL),
	}
	if v.Title == "-" {
		v.Title = orDash(res.Environment.Target)
	}
	v.Ingest = !queriesAlone(res)
	v.Subtitle = subtitle(res)
	v.Facts = headerFacts(res)
	v.Notices = notices(res, detail)
	v.Queries = queryLoad(detail)
	v.Config = configFacts(res)
	v.Environment = environmentFacts(res)
	v.Footer = fmt.Sprintf("%s %s · results schema %d · rendered from the results file", orDefault(res.Tool.Name, "freshbench"), orDash(res.Tool.Version), res.SchemaVersion)
	if !v.Ingest {
		v.Cards = queryCards(res.Queries)
		return v
	}
	if len(res.Steps) > 0 {
		v.Peak = peakSection(res)
		if detail != res {
			v.DetailNote = fmt.Sprintf("The charts and tables below show step %d (target %s).", stepIndex(res, detail)+1, detail.Config.Rate)
		} else if res.Peak != nil && res.Peak.Found {
			v.DetailNote = fmt.Sprintf("The charts and tables below show the peak step (step %d, target %s).", res.Peak.Step+1, res.Peak.Rate)
		}
	}
	v.Cards = headlineCards(res, detail)
	v.Throughput = throughputChart(detail)
	v.WriteLatency = writeLatencyChart(detail)
	v.Freshness = freshnessChart(detail)
	measured := phase(detail, ingest.PhaseMeasured)
	var writeH, serviceH, latenessH *stats.Histogram
	if measured != nil {
		writeH, serviceH, latenessH = measured.WriteLatency, measured.ServiceTime, measured.Lateness
	}
	v.Percentiles = []chartView{
		percentileChart("Write latency", "intended time → acknowledged", "c-write", writeH),
		percentileChart("Write service time", "request sent → acknowledged", "c-service", serviceH),
		percentileChart("Freshness lag", "query return − newest visible event", "c-fresh", detail.Freshness.Lag),
		percentileChart("Visibility latency", visibilityNote(s), "c-vis", detail.Visibility.Latency),
	}
	v.Latencies = []latencyRow{
		latency("Write latency", s.WriteLatency),
		latency("Write service time", s.ServiceTime),
		latency("Batch lateness", summarize(latenessH)),
		latency("Freshness lag", s.FreshnessLag),
		latency("Freshness query service", summarize(detail.Freshness.QueryService)),
		latency("Visibility latency", s.VisibilityLatency),
		latency("Probe query service", s.ProbeQueryService),
	}
	v.Phases = phaseRows(detail)
	v.Errors = errorRows(detail)
	v.Completeness = completeness(detail)
	return v
}

// detailResult is the run whose series and histograms the page shows. A
// peak search may keep them only in its steps; then the peak step (or the
// last step when none was sustainable) stands in.
func detailResult(res *bench.Result) *bench.Result {
	if len(res.Series) > 0 || len(res.Steps) == 0 {
		return res
	}
	if res.Peak != nil && res.Peak.Found && res.Peak.Step >= 0 && res.Peak.Step < len(res.Steps) {
		return res.Steps[res.Peak.Step]
	}
	return res.Steps[len(res.Steps)-1]
}

func stepIndex(res, step *bench.Result) int {
	for i, s := range res.Steps {
		if s == step {
			return i
		}
	}
	return -1
}

func phase(res *bench.Result, name string) *ingest.Phase {
	for _, p := range res.Phases {
		if p != nil && p.Name == name {
			return p
		}
	}
	return nil
}

func summarize(h *stats.Histogram) stats.Summary {
	if h == nil {
		return stats.Summary{}
	}
	return h.Summarize()
}

func subtitle(res *bench.Result) string {
	parts := []string{}
	if res.Command != "" {
		parts = append(parts, "freshbench "+res.Command)
	}
	if v := res.Environment.TargetVersion; v != "" {
		parts = append(parts, v)
	}
	if !res.StartedAt.IsZero() {
		parts = append(parts, res.StartedAt.UTC().Format("2006-01-02 15:04:05 MST"))
	}
	if !res.StartedAt.IsZero() && res.EndedAt.After(res.StartedAt) {
		parts = append(parts, "took "+res.EndedAt.Sub(res.StartedAt).Round(time.Second).String())
	}
	return strings.Join(parts, " · ")
}

func headerFacts(res *bench.Result) []fact {
	c := res.Config
	if queriesAlone(res) {
		q := res.Queries
		facts := []fact{
			{"load", loopText(q)},
			{"duration", seconds(c.DurationS) + " (warm-up " + seconds(c.WarmupS) + ")"},
			{"mix", q.Mix},
			{"limit", strconv.Itoa(q.Limit) + " rows"},
		}
		return append(facts, targetSettingFacts(c, "")...)
	}
	facts := []fact{
		{"rate", orDash(c.Rate)},
		{"duration", seconds(c.DurationS) + " (warm-up " + seconds(c.WarmupS) + ")"},
	}
	if n := len(res.Steps); n > 0 {
		// A peak search has one rate per step; its own configuration is
		// the first step's.
		first, last := res.Steps[0], res.Steps[n-1]
		facts = []fact{
			{"steps", fmt.Sprintf("%d, %s → %s", n, orDash(first.Config.Rate), orDash(last.Config.Rate))},
			{"per step", seconds(c.DurationS) + " (warm-up " + seconds(c.WarmupS) + ")"},
		}
	}
	facts = append(facts, []fact{
		{"batch", strconv.Itoa(c.BatchSize) + " events"},
		{"doc size", bytesText(c.DocSize)},
		{"generators", strconv.Itoa(c.Generators)},
		{"in-flight", strconv.Itoa(c.MaxInflight)},
		{"poll", ms(c.PollIntervalS*1000) + " ms"},
	}...)
	return append(facts, targetSettingFacts(c, "")...)
}

// targetSettingFacts lists the target's own settings, each label prefixed.
func targetSettingFacts(c bench.ConfigRecord, prefix string) []fact {
	var facts []fact
	for _, k := range sortedKeys(c.TargetSettings) {
		facts = append(facts, fact{prefix + k, c.TargetSettings[k]})
	}
	return facts
}

func notices(res, detail *bench.Result) []notice {
	var out []notice
	switch {
	case res.EndedEarly && queriesAlone(res):
		out = append(out, notice{"bad", "The run ended early (" + orDash(res.EndReason) + "): figures cover the time measured."})
	case res.EndedEarly:
		out = append(out, notice{"bad", "The run ended early (" + orDash(res.EndReason) + "): figures cover the time measured, and completeness was not audited."})
	}
	if detail.AuditError != "" {
		out = append(out, notice{"bad", "Completeness audit failed: " + detail.AuditError})
	}
	if s := detail.Summary; s.EventsFailed > 0 || s.Missing > 0 {
		var parts []string
		if s.EventsFailed > 0 {
			parts = append(parts, count(s.EventsFailed)+" events failed to write")
		}
		if s.Missing > 0 {
			parts = append(parts, count(s.Missing)+" acknowledged events never became visible (lost writes)")
		}
		out = append(out, notice{"warn", strings.Join(parts, "; ") + "."})
	}
	if v := detail.Verdict; v != nil && len(res.Steps) == 0 {
		if v.Sustainable {
			out = append(out, notice{"ok", "This step was sustainable."})
		} else {
			out = append(out, notice{"warn", "This step was not sustainable: " + v.Reason()})
		}
	}
	return out
}

func headlineCards(res, detail *bench.Result) []card {
	s := detail.Summary
	var cards []card
	if p := res.Peak; p != nil {
		c := card{Label: "Peak sustainable", Status: "ok"}
		if p.Found {
			c.Value, c.Unit = rate(p.AchievedEventsPerSec), "events/s"
			c.Sub = fmt.Sprintf("%s MB/s · step %d, target %s", mbps(p.AchievedMBPerSec), p.Step+1, p.Rate)
		} else {
			c.Value, c.Status = "none", "bad"
			c.Sub = "no step was sustainable"
		}
		cards = append(cards, c)
	}
	tp := card{Label: "Achieved rate", Value: rate(s.AchievedEventsPerSec), Unit: "events/s"}
	if s.TargetEventsPerSec > 0 {
		share := s.AchievedEventsPerSec / s.TargetEventsPerSec
		tp.Sub = fmt.Sprintf("%.1f%% of target %s · %s MB/s", 100*share, rate(s.TargetEventsPerSec), mbps(s.AchievedMBPerSec))
		tp.Status = shareStatus(share)
	}
	cards = append(cards, tp,
		latencyCard("Write latency p99", s.WriteLatency, s.WriteLatency.P99Ms,
			"p50 "+msUnit(s.WriteLatency.P50Ms)+" · max "+msUnit(s.WriteLatency.MaxMs)),
		latencyCard("Freshness lag p95", s.FreshnessLag, s.FreshnessLag.P95Ms,
			"p50 "+msUnit(s.FreshnessLag.P50Ms)+" · p99 "+msUnit(s.FreshnessLag.P99Ms)),
		latencyCard("Visibility latency p95", s.VisibilityLatency, s.VisibilityLatency.P95Ms,
			"p50 "+msUnit(s.VisibilityLatency.P50Ms)+" · resolution "+msUnit(s.VisibilityResolution)),
		completenessCard(detail))
	return cards
}

// shareStatus colours an achieved rate by its share of the target.
func shareStatus(share float64) string {
	switch {
	case share >= 0.98:
		return "ok"
	case share >= 0.9:
		return "warn"
	}
	return "bad"
}

func latencyCard(label string, h stats.Summary, v float64, sub string) card {
	if h.Count == 0 {
		return card{Label: label, Value: "–", Sub: "no samples"}
	}
	value, unit := durationParts(v)
	return card{Label: label, Value: value, Unit: unit, Sub: sub}
}

func completenessCard(r *bench.Result) card {
	s := r.Summary
	c := card{Label: "Completeness"}
	if !s.Audited {
		c.Value, c.Status, c.Sub = "–", "warn", "not audited"
		return c
	}
	var acked, visible int64
	for _, g := range r.Completeness {
		acked += g.Acknowledged
		visible += g.Visible
	}
	c.Value, c.Unit = "100", "%"
	if acked > 0 {
		c.Value = percent(float64(acked-s.Missing) / float64(acked))
	}
	c.Sub = fmt.Sprintf("%s missing · %s unexpected · %s duplicates", count(s.Missing), count(s.Unexpected), count(s.Duplicates))
	switch {
	case s.Missing > 0:
		c.Status = "bad"
	case s.Unexpected > 0 || s.Duplicates > 0:
		c.Status = "warn"
	default:
		c.Status = "ok"
	}
	return c
}

// percent shows a share with as many decimals as it takes not to round a
// loss away: 99.98 % must not read as 100 %.
func percent(f float64) string {
	if f >= 1 {
		return "100"
	}
	for d := 1; d < 6; d++ {
		s := strconv.FormatFloat(100*f, 'f', d, 64)
		if s != "100."+strings.Repeat("0", d) {
			return s
		}
	}
	return strconv.FormatFloat(100*f, 'f', 6, 64)
}

func visibilityNote(s bench.Summary) string {
	if s.VisibilityResolution > 0 {
		return "event time → first query that saw it (±" + msUnit(s.VisibilityResolution) + ")"
	}
	return "event time → first query that saw it"
}

func latency(name string, s stats.Summary) latencyRow {
	if s.Count == 0 {
		return latencyRow{Name: name, Count: "0", Empty: true}
	}
	r := latencyRow{
		Name: name, Count: count(s.Count),
		Min: ms(s.MinMs), P50: ms(s.P50Ms), P90: ms(s.P90Ms), P95: ms(s.P95Ms),
		P99: ms(s.P99Ms), P999: ms(s.P999Ms), Max: ms(s.MaxMs),
	}
	if s.Clamped > 0 {
		r.Clamped = count(s.Clamped) + " over 1 h"
	}
	return r
}

func phaseRows(r *bench.Result) []phaseRow {
	var rows []phaseRow
	for _, p := range r.Phases {
		if p == nil {
			continue
		}
		p99 := "–"
		if s := summarize(p.WriteLatency); s.Count > 0 {
			p99 = ms(s.P99Ms)
		}
		rows = append(rows, phaseRow{
			Name: p.Name, Batches: count(p.Batches), Late: count(p.LateBatches), Dispatched: count(p.Dispatched),
			Acked: count(p.Acked), Failed: count(p.Failed), Unsent: count(p.Unsent), Retries: count(p.Retries), P99: p99,
		})
	}
	return rows
}

func errorRows(r *bench.Result) []errorRow {
	var rows []errorRow
	add := func(source string, m map[string]*stats.ErrorCount) {
		for _, k := range sortedKeys(m) {
			e := m[k]
			if e == nil {
				continue
			}
			sample := e.Sample
			if len(sample) > 400 {
				sample = sample[:400] + "…"
			}
			rows = append(rows, errorRow{Source: source, Kind: k, Count: count(e.Count), Sample: sample})
		}
	}
	add("write", r.Summary.Errors)
	add("freshness query", r.Freshness.Errors)
	add("probe query", r.Visibility.Errors)
	return rows
}

func completeness(r *bench.Result) completenessView {
	s := r.Summary
	v := completenessView{Missing: s.Missing > 0}
	switch {
	case r.AuditError != "":
		v.Status = "The audit failed: " + r.AuditError
	case s.Audited:
		v.Status = "After the drain every generator's events were read back and compared with what the target acknowledged."
	case r.EndedEarly:
		v.Status = "Not audited: the run ended early."
	default:
		v.Status = "Not audited."
	}
	var total completenessRow
	var acked, visible, missing, unexpected, dups int64
	for _, c := range r.Completeness {
		sample := make([]string, len(c.MissingSample))
		for i, q := range c.MissingSample {
			sample[i] = strconv.FormatInt(q, 10)
		}
		v.Rows = append(v.Rows, completenessRow{
			Generator: c.Generator, Acknowledged: count(c.Acknowledged), Visible: count(c.Visible),
			Missing: count(c.Missing), Unexpected: count(c.Unexpected), Duplicates: count(c.Duplicates),
			Sample: strings.Join(sample, ", "), Bad: c.Missing > 0 || c.Unexpected > 0,
		})
		acked += c.Acknowledged
		visible += c.Visible
		missing += c.Missing
		unexpected += c.Unexpected
		dups += c.Duplicates
	}
	if len(r.Completeness) > 1 {
		total = completenessRow{
			Generator: "all", Acknowledged: count(acked), Visible: count(visible), Missing: count(missing),
			Unexpected: count(unexpected), Duplicates: count(dups), Bad: missing > 0 || unexpected > 0,
		}
		v.Total = &total
	}
	vis := r.Visibility
	v.Probes = []fact{
		{"probes", count(vis.Probes)},
		{"seen", count(vis.Seen)},
		{"never seen", count(vis.NeverSeen)},
		{"dropped (write failed)", count(vis.Dropped)},
		{"resolution", msUnit(vis.ResolutionMs)},
	}
	return v
}

func configFacts(res *bench.Result) []fact {
	c := res.Config
	if queriesAlone(res) {
		facts := []fact{
			{"duration", seconds(c.DurationS)},
			{"warm-up", seconds(c.WarmupS)},
		}
		facts = append(facts, queryConfigFacts(res.Queries)...)
		return append(facts, targetSettingFacts(c, "target setting ")...)
	}
	// The rate as given, and in its unit per second when that reads
	// differently (10MB/s is 10000000 bytes/s; 2000 events/s is itself).
	rateText := strconv.FormatFloat(c.RatePerSecond, 'f', -1, 64) + " " + orDefault(c.RateUnit, "events/s")
	if c.Rate != "" && c.Rate != rateText {
		rateText = c.Rate + " (" + rateText + ")"
	}
	facts := []fact{
		{"rate", rateText},
		{"batch size", strconv.Itoa(c.BatchSize) + " events"},
		{"duration", seconds(c.DurationS)},
		{"warm-up", seconds(c.WarmupS)},
		{"generators", strconv.Itoa(c.Generators)},
		{"max in-flight", strconv.Itoa(c.MaxInflight)},
		{"doc size", bytesText(c.DocSize)},
		{"seed", strconv.FormatUint(c.Seed, 10)},
		{"write timeout", seconds(c.WriteTimeoutS)},
		{"write retries", strconv.Itoa(c.WriteRetries)},
		{"probe rate", strconv.FormatFloat(c.ProbeRate, 'f', -1, 64) + " /s"},
		{"poll interval", msUnit(c.PollIntervalS * 1000)},
		{"drain", seconds(c.DrainS)},
	}
	return append(facts, targetSettingFacts(c, "target setting ")...)
}

func environmentFacts(res *bench.Result) []fact {
	e := res.Environment
	facts := []fact{
		{"target", orDash(e.Target)},
		{"target URL", orDash(e.TargetURL)},
		{"target version", orDash(e.TargetVersion)},
		{"host", orDash(e.Host)},
		{"OS / arch", orDash(e.OS) + " / " + orDash(e.Arch)},
		{"cores", strconv.Itoa(e.Cores)},
		{"Go", orDash(e.GoVersion)},
		{"tool", orDefault(res.Tool.Name, "freshbench") + " " + orDash(res.Tool.Version)},
		{"command", orDash(res.Command)},
	}
	if !res.StartedAt.IsZero() {
		facts = append(facts, fact{"started", res.StartedAt.UTC().Format(time.RFC3339)})
	}
	if !res.EndedAt.IsZero() {
		facts = append(facts, fact{"ended", res.EndedAt.UTC().Format(time.RFC3339)})
	}
	if len(res.Generators) > 0 {
		facts = append(facts, fact{"generator ids", strings.Join(res.Generators, ", ")})
	}
	if c := res.DriverCPU; c != nil {
		facts = append(facts, fact{"driver CPU", fmt.Sprintf("%.1f s over %.1f s (%.0f%% of one core)", c.Seconds, c.WallS, c.CorePercent)})
	}
	return facts
}

func peakSection(res *bench.Result) *peakView {
	pv := &peakView{}
	peakIdx := -1
	if p := res.Peak; p != nil {
		pv.Found = p.Found
		if p.Found {
			peakIdx = p.Step
			pv.Headline = fmt.Sprintf("Peak sustainable throughput: %s events/s (%s MB/s) at target %s, step %d of %d.",
				rate(p.AchievedEventsPerSec), mbps(p.AchievedMBPerSec), p.Rate, p.Step+1, len(res.Steps))
		} else {
			pv.Headline = fmt.Sprintf("No sustainable step among %d.", len(res.Steps))
		}
		pv.Reason = p.Reason
		if p.ElapsedS > 0 {
			pv.Reason = strings.TrimSpace(pv.Reason + " · search took " + seconds(p.ElapsedS))
		}
	}
	for i, st := range res.Steps {
		if st == nil {
			continue
		}
		s := st.Summary
		row := stepRow{
			Index: strconv.Itoa(i + 1), Target: rate(s.TargetEventsPerSec), Achieved: rate(s.AchievedEventsPerSec),
			WriteP99: msOrDash(s.WriteLatency, s.WriteLatency.P99Ms),
			FreshP50: msOrDash(s.FreshnessLag, s.FreshnessLag.P50Ms), FreshP95: msOrDash(s.FreshnessLag, s.FreshnessLag.P95Ms),
			FreshP99: msOrDash(s.FreshnessLag, s.FreshnessLag.P99Ms), VisP95: msOrDash(s.VisibilityLatency, s.VisibilityLatency.P95Ms),
			Errors: count(s.EventsFailed), Late: count(s.LateBatches), Peak: i == peakIdx,
		}
		if s.TargetEventsPerSec > 0 {
			row.Share = fmt.Sprintf("%.1f%%", 100*s.AchievedEventsPerSec/s.TargetEventsPerSec)
		}
		if v := st.Verdict; v != nil {
			row.Sustainable = v.Sustainable
			row.Verdict, row.Reason = "not sustainable", v.Reason()
			if v.Sustainable {
				row.Verdict, row.Reason = "sustainable", ""
			}
		} else {
			row.Verdict = "–"
		}
		pv.Rows = append(pv.Rows, row)
	}
	pv.Rates = stepRateChart(res, peakIdx)
	pv.Latency = stepLatencyChart(res, peakIdx)
	return pv
}

// ---- charts ----------------------------------------------------------------

// svgChart is a chart laid out in SVG user units. Everything is computed
// here; the template only draws.
type svgChart struct {
	W, H          int
	Plot          box
	XTicks        []tick
	YTicks        []tick
	XLabel        string
	YLabel        string
	Bands         []shape // shaded x ranges (warm-up, outage)
	Areas         []shape // filled paths
	Bars          []shape
	Lines         []shape // stroked paths
	Marks         []shape // small markers with a tooltip
	Texts         []text
	Hovers        []shape // invisible rectangles that carry a tooltip
	Empty         string
	YLabelX       float64
	YLabelY       float64
	XLabelX       float64
	XLabelY       float64
	PlotRight     float64
	PlotBottom    float64
	XTickY        float64 // baseline of the x tick labels
	YTickX        float64 // right edge of the y tick labels
	CategoryTicks bool
}

type box struct{ X, Y, W, H float64 }

type tick struct {
	Pos   float64
	Label string
}

type shape struct {
	Class, D, Title string
	X, Y, W, H      float64
}

type text struct {
	X, Y         float64
	Class, Value string
	Anchor       string
}

// Chart sizes in user units: the CSS scales them to the page width, so
// these only set the aspect ratio and the relative size of the text.
const (
	wideW, wideH = 1160, 300
	halfW, halfH = 560, 280
)

func newChart(w, h int) *svgChart {
	// Left margin leaves room for tick labels and the rotated axis label.
	c := &svgChart{W: w, H: h, Plot: box{X: 62, Y: 14, W: float64(w) - 62 - 18, H: float64(h) - 14 - 46}}
	c.YLabelX, c.YLabelY = 14, c.Plot.Y+c.Plot.H/2
	c.XLabelX, c.XLabelY = c.Plot.X+c.Plot.W/2, float64(h)-6
	c.PlotRight, c.PlotBottom = c.Plot.X+c.Plot.W, c.Plot.Y+c.Plot.H
	c.XTickY, c.YTickX = c.PlotBottom+18, c.Plot.X-8
	return c
}

// maxHovers bounds the tooltip rectangles of a timeline: beyond it each
// would be narrower than a pixel and only bloat the file.
const maxHovers = 1000

// hover adds a tooltip area, unless the series has too many points.
func (c *svgChart) hover(points int, s shape) {
	if points <= maxHovers {
		c.Hovers = append(c.Hovers, s)
	}
}

// scale maps data values to user units, linearly or by decades.
type scale struct {
	lo, hi   float64
	from, to float64
	log      bool
}

func (s scale) at(v float64) float64 {
	lo, hi := s.lo, s.hi
	if s.log {
		v, lo, hi = math.Log10(math.Max(v, s.lo)), math.Log10(lo), math.Log10(hi)
	}
	if hi == lo {
		return s.from
	}
	p := s.from + (v-lo)/(hi-lo)*(s.to-s.from)
	// Keep wild values on the canvas instead of producing giant paths.
	return math.Max(math.Min(p, math.Max(s.from, s.to)+2), math.Min(s.from, s.to)-2)
}

func (c *svgChart) xScale(lo, hi float64) scale {
	return scale{lo: lo, hi: hi, from: c.Plot.X, to: c.Plot.X + c.Plot.W}
}

func (c *svgChart) yScale(lo, hi float64, log bool) scale {
	return scale{lo: lo, hi: hi, from: c.Plot.Y + c.Plot.H, to: c.Plot.Y, log: log}
}

// niceTicks returns round tick values covering [0, hi] (about n of them)
// and the top of the axis.
func niceTicks(hi float64, n int) ([]float64, float64) {
	if hi <= 0 || math.IsNaN(hi) || math.IsInf(hi, 0) {
		hi = 1
	}
	step := niceStep(hi / float64(n))
	top := math.Ceil(hi/step-1e-9) * step
	var out []float64
	for v := 0.0; v <= top+step/2; v += step {
		out = append(out, v)
	}
	return out, top
}

func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// timeAxis sets the x axis of a timeline: seconds, or minutes for long runs.
func (c *svgChart) timeAxis(end float64) scale {
	unit, div := "s", 1.0
	if end > 1200 {
		unit, div = "min", 60
	}
	vals, top := niceTicks(end/div, 10)
	for _, v := range vals {
		c.XTicks = append(c.XTicks, tick{Pos: c.Plot.X + v/top*c.Plot.W, Label: compact(v) + unit})
	}
	c.XLabel = "time since start"
	return c.xScale(0, top*div)
}

// valueAxis sets a linear y axis from 0 to about hi.
func (c *svgChart) valueAxis(hi float64, label string, format func(float64) string) scale {
	vals, top := niceTicks(hi, 5)
	y := c.yScale(0, top, false)
	for _, v := range vals {
		c.YTicks = append(c.YTicks, tick{Pos: y.at(v), Label: format(v)})
	}
	c.YLabel = label
	return y
}

// msAxis is a latency axis, in seconds when the values reach seconds.
func (c *svgChart) msAxis(hi float64) scale {
	if hi >= 2000 {
		s := c.valueAxis(hi/1000, "seconds", compact)
		s.lo, s.hi = s.lo*1000, s.hi*1000
		return s
	}
	return c.valueAxis(hi, "milliseconds", compact)
}

// timelineMsAxis is the latency axis of a timeline: linear, unless a few
// intervals (an outage, a stall) are so far above the typical one that a
// linear axis would flatten everything else onto zero; then by decades.
func (c *svgChart) timelineMsAxis(vals []float64) scale {
	var pos []float64
	for _, v := range vals {
		if v > 0 {
			pos = append(pos, v)
		}
	}
	if len(pos) == 0 {
		return c.msAxis(0)
	}
	sort.Float64s(pos)
	median, hi := pos[len(pos)/2], pos[len(pos)-1]
	if hi > 30*median {
		return c.logMsAxis(pos[0], hi)
	}
	return c.msAxis(hi * 1.05)
}

// logMsAxis is a latency axis by decades, for values far apart.
func (c *svgChart) logMsAxis(lo, hi float64) scale {
	lo = math.Pow(10, math.Floor(math.Log10(math.Max(lo, 0.001))))
	hi = math.Pow(10, math.Ceil(math.Log10(math.Max(hi, lo*10))))
	y := c.yScale(lo, hi, true)
	for v := lo; v <= hi*1.001; v *= 10 {
		c.YTicks = append(c.YTicks, tick{Pos: y.at(v), Label: msTick(v)})
	}
	c.YLabel = "latency (log)"
	return y
}

func msTick(v float64) string {
	switch {
	case v >= 60000:
		return compact(v/60000) + "min"
	case v >= 1000:
		return compact(v/1000) + "s"
	case v >= 1:
		return compact(v) + "ms"
	}
	return compact(v*1000) + "µs"
}

// pathOf joins points into an SVG path; a NaN y breaks the line, so that
// an interval without samples shows as a gap rather than a fake slope.
func pathOf(xs, ys []float64) string {
	var b strings.Builder
	pen := false
	for i := range xs {
		if math.IsNaN(ys[i]) {
			pen = false
			continue
		}
		if pen {
			b.WriteString("L")
		} else {
			b.WriteString("M")
		}
		b.WriteString(svgNum(xs[i]))
		b.WriteString(" ")
		b.WriteString(svgNum(ys[i]))
		pen = true
	}
	return b.String()
}

// areaOf is pathOf closed down to the baseline, one polygon per run of
// defined points.
func areaOf(xs, ys []float64, base float64) string {
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		fmt.Fprintf(&b, "M%s %s", svgNum(xs[start]), svgNum(base))
		for j := start; j < end; j++ {
			fmt.Fprintf(&b, "L%s %s", svgNum(xs[j]), svgNum(ys[j]))
		}
		fmt.Fprintf(&b, "L%s %sZ", svgNum(xs[end-1]), svgNum(base))
		start = -1
	}
	for i := range xs {
		if math.IsNaN(ys[i]) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(xs))
	return b.String()
}

// dotPath is a circle of radius r around (x, y).
func dotPath(x, y, r float64) string {
	return fmt.Sprintf("M%s %sa%s %s 0 1 0 %s 0a%s %s 0 1 0 %s 0Z",
		svgNum(x-r), svgNum(y), svgNum(r), svgNum(r), svgNum(2*r), svgNum(r), svgNum(r), svgNum(-2*r))
}

// trianglePath is a downward triangle of width w whose tip is at (x, y):
// a marker pointing at what it marks.
func trianglePath(x, y, w float64) string {
	return fmt.Sprintf("M%s %sL%s %sL%s %sZ", svgNum(x), svgNum(y), svgNum(x-w/2), svgNum(y-w), svgNum(x+w/2), svgNum(y-w))
}

func svgNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// seriesEnd is the end of the last interval, in seconds.
func seriesEnd(pts []stats.Point) float64 {
	end := 0.0
	for _, p := range pts {
		end = math.Max(end, p.StartS+p.WidthS)
	}
	return end
}

// phaseBands shades the warm-up and the time after the schedule, so that
// nobody reads figures from them as measured ones.
func (c *svgChart) phaseBands(r *bench.Result, x scale, end float64) {
	if w := r.Config.WarmupS; w > 0 {
		c.Bands = append(c.Bands, shape{Class: "band-warmup", X: x.at(0), Y: c.Plot.Y, W: x.at(w) - x.at(0), H: c.Plot.H, Title: "warm-up: not measured"})
		c.Texts = append(c.Texts, text{X: x.at(0) + 6, Y: c.Plot.Y + 14, Class: "band-label", Value: "warm-up"})
	}
	if d := r.Config.DurationS; d > 0 && end > d {
		c.Bands = append(c.Bands, shape{Class: "band-tail", X: x.at(d), Y: c.Plot.Y, W: x.at(end) - x.at(d), H: c.Plot.H, Title: "after the schedule: acknowledgements still arriving"})
	}
}

func throughputChart(r *bench.Result) chartView {
	cv := chartView{
		Title:  "Throughput over time",
		Note:   "Events per second, target against acknowledged. Red bands: intervals with failed writes or no acknowledgement at all.",
		Legend: []legendItem{{"c-target", "target"}, {"c-achieved", "acknowledged"}},
	}
	pts := r.Series
	// Failed events and late batches get a legend entry only when there
	// are some: an entry for nothing would send the reader looking.
	var failed, late int64
	for _, p := range pts {
		failed += p.FailedEvents
		late += p.LateBatches
	}
	if failed > 0 {
		cv.Legend = append(cv.Legend, legendItem{"c-failed", "failed"})
	}
	if late > 0 {
		cv.Legend = append(cv.Legend, legendItem{"c-late", "late batches"})
	}
	c := newChart(wideW, wideH)
	cv.SVG = c
	if len(pts) == 0 {
		c.Empty = "no per-interval series in this result"
		return cv
	}
	end := seriesEnd(pts)
	x := c.timeAxis(end)
	hi := 0.0
	for _, p := range pts {
		if p.WidthS > 0 {
			hi = math.Max(hi, math.Max(float64(p.TargetEvents), float64(p.AckedEvents+p.FailedEvents))/p.WidthS)
		}
	}
	y := c.valueAxis(hi*1.08, "events/s", compact)
	c.phaseBands(r, x, end)
	n := len(pts)
	// The target is drawn as steps (it is what the schedule asked for in
	// each interval); the others are per-interval values at the midpoints.
	var tx, ty []float64
	var fx, fy []float64
	xs, acked := make([]float64, n), make([]float64, n)
	for i, p := range pts {
		w := p.WidthS
		if w <= 0 {
			w = 1
		}
		x0, x1 := x.at(p.StartS), x.at(p.StartS+w)
		xs[i] = (x0 + x1) / 2
		acked[i] = y.at(float64(p.AckedEvents) / w)
		if p.AckedEvents == 0 && p.TargetEvents == 0 {
			acked[i] = math.NaN() // nothing asked, nothing due: not a drop
		}
		// Failures are drawn as steps over the intervals that had them,
		// and not at all elsewhere: a red line along zero reads as noise.
		if p.FailedEvents > 0 {
			f := y.at(float64(p.FailedEvents) / w)
			if len(fy) == 0 || math.IsNaN(fy[len(fy)-1]) || fx[len(fx)-1] != x0 {
				fx, fy = append(fx, x0), append(fy, y.at(0))
			} else {
				// Continue the previous interval's step instead of
				// dropping to zero between them.
				fx, fy = fx[:len(fx)-1], fy[:len(fy)-1]
			}
			fx, fy = append(fx, x0, x1, x1), append(fy, f, f, y.at(0))
		} else if len(fy) > 0 && !math.IsNaN(fy[len(fy)-1]) {
			fx, fy = append(fx, x0), append(fy, math.NaN())
		}
		target := float64(p.TargetEvents) / w
		if p.TargetEvents == 0 && p.StartS >= r.Config.DurationS && r.Config.DurationS > 0 {
			target = math.NaN() // the schedule is over: no target to show
		}
		ty = append(ty, y.at(target), y.at(target))
		if math.IsNaN(target) {
			ty[len(ty)-2], ty[len(ty)-1] = math.NaN(), math.NaN()
		}
		tx = append(tx, x0, x1)
		title := fmt.Sprintf("%s–%s s: target %s/s, acknowledged %s/s, failed %s, late batches %s",
			compact(p.StartS), compact(p.StartS+w), rate(float64(p.TargetEvents)/w), rate(float64(p.AckedEvents)/w), count(p.FailedEvents), count(p.LateBatches))
		if p.FailedEvents > 0 || (p.TargetEvents > 0 && p.AckedEvents == 0) {
			c.Bands = append(c.Bands, shape{Class: "band-outage", X: x0, Y: c.Plot.Y, W: x1 - x0, H: c.Plot.H, Title: title})
		}
		if p.LateBatches > 0 {
			c.Marks = append(c.Marks, shape{Class: "mark-late", D: trianglePath(xs[i], c.PlotBottom-7, 6),
				Title: fmt.Sprintf("%s late batches in %s–%s s", count(p.LateBatches), compact(p.StartS), compact(p.StartS+w))})
		}
		c.hover(len(pts), shape{X: x0, Y: c.Plot.Y, W: x1 - x0, H: c.Plot.H, Title: title})
	}
	base := y.at(0)
	c.Areas = append(c.Areas, shape{Class: "area-achieved", D: areaOf(xs, acked, base)})
	c.Lines = append(c.Lines,
		shape{Class: "c-target line dashed", D: pathOf(tx, ty)},
		shape{Class: "c-achieved line", D: pathOf(xs, acked)},
	)
	if failed > 0 {
		c.Areas = append(c.Areas, shape{Class: "area-failed", D: areaOf(fx, fy, base)})
		c.Lines = append(c.Lines, shape{Class: "c-failed line", D: pathOf(fx, fy)})
	}
	return cv
}

func writeLatencyChart(r *bench.Result) chartView {
	cv := chartView{
		Title:  "Write latency over time",
		Note:   "Per interval, from each batch's intended time to its acknowledgement.",
		Legend: []legendItem{{"c-write", "p99"}, {"c-max", "max"}},
	}
	pts := r.Series
	c := newChart(halfW, halfH)
	cv.SVG = c
	if len(pts) == 0 {
		c.Empty = "no per-interval series in this result"
		return cv
	}
	end := seriesEnd(pts)
	x := c.timeAxis(end)
	var vals []float64
	for _, p := range pts {
		if p.WriteMaxMs > 0 {
			vals = append(vals, p.WriteP99Ms, p.WriteMaxMs)
		}
	}
	y := c.timelineMsAxis(vals)
	c.phaseBands(r, x, end)
	xs, p99, mx := make([]float64, len(pts)), make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i] = x.at(p.StartS + p.WidthS/2)
		p99[i], mx[i] = math.NaN(), math.NaN()
		if p.WriteMaxMs > 0 {
			p99[i], mx[i] = y.at(p.WriteP99Ms), y.at(p.WriteMaxMs)
		}
		c.hover(len(pts), shape{X: x.at(p.StartS), Y: c.Plot.Y, W: x.at(p.StartS+p.WidthS) - x.at(p.StartS), H: c.Plot.H,
			Title: fmt.Sprintf("%s–%s s: p99 %s, max %s", compact(p.StartS), compact(p.StartS+p.WidthS), msUnit(p.WriteP99Ms), msUnit(p.WriteMaxMs))})
	}
	c.Lines = append(c.Lines, shape{Class: "c-max line thin", D: pathOf(xs, mx)}, shape{Class: "c-write line", D: pathOf(xs, p99)})
	return cv
}

func freshnessChart(r *bench.Result) chartView {
	cv := chartView{
		Title:  "Freshness lag over time",
		Note:   "Per interval, the largest lag sampled: how stale the newest queryable event was.",
		Legend: []legendItem{{"c-fresh", "freshness lag (max per interval)"}},
	}
	pts := r.Series
	c := newChart(halfW, halfH)
	cv.SVG = c
	if len(pts) == 0 {
		c.Empty = "no per-interval series in this result"
		return cv
	}
	end := seriesEnd(pts)
	x := c.timeAxis(end)
	var vals []float64
	for _, p := range pts {
		if p.FreshnessN > 0 {
			vals = append(vals, p.FreshnessLagMs)
		}
	}
	y := c.timelineMsAxis(vals)
	c.phaseBands(r, x, end)
	xs, lag := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i] = x.at(p.StartS + p.WidthS/2)
		lag[i] = math.NaN()
		if p.FreshnessN > 0 {
			lag[i] = y.at(p.FreshnessLagMs)
			c.hover(len(pts), shape{X: x.at(p.StartS), Y: c.Plot.Y, W: x.at(p.StartS+p.WidthS) - x.at(p.StartS), H: c.Plot.H,
				Title: fmt.Sprintf("%s–%s s: lag up to %s (%d samples)", compact(p.StartS), compact(p.StartS+p.WidthS), msUnit(p.FreshnessLagMs), p.FreshnessN)})
		}
	}
	c.Areas = append(c.Areas, shape{Class: "area-fresh", D: areaOf(xs, lag, y.at(0))})
	c.Lines = append(c.Lines, shape{Class: "c-fresh line", D: pathOf(xs, lag)})
	return cv
}

// percentileChart draws an HdrHistogram-style percentile curve: the x axis
// is 1/(1−q) by decades (0 %, 90 %, 99 %, 99.9 % …), so the tail gets as
// much room as the body.
func percentileChart(title, note, class string, h *stats.Histogram) chartView {
	cv := chartView{Title: title, Note: note}
	c := newChart(halfW, halfH)
	cv.SVG = c
	if h == nil || h.Count() == 0 {
		c.Empty = "no samples"
		return cv
	}
	s := h.Summarize()
	marked := []struct {
		name string
		q, v float64
	}{{"p50", 0.5, s.P50Ms}, {"p99", 0.99, s.P99Ms}, {"p99.9", 0.999, s.P999Ms}}
	// The curve's ticks halve the distance to 100 %, so 99 % is not one of
	// them: add the marked percentiles, or the line would pass beside their
	// dots wherever the distribution jumps.
	curve := h.Curve(5)
	for _, m := range marked {
		curve = append(curve, stats.Percentile{Quantile: m.q, ValueMs: m.v})
	}
	sort.SliceStable(curve, func(i, j int) bool {
		if curve[i].Quantile != curve[j].Quantile {
			return curve[i].Quantile < curve[j].Quantile
		}
		return curve[i].ValueMs < curve[j].ValueMs
	})
	// As many decades as the sample count can resolve, at least two.
	decades := math.Ceil(math.Log10(float64(h.Count())))
	decades = math.Max(2, math.Min(decades, 6))
	x := c.xScale(0, decades)
	for d := 0.0; d <= decades; d++ {
		label := "0%"
		if d > 0 {
			label = strconv.FormatFloat(100*(1-math.Pow(10, -d)), 'f', -1, 64) + "%"
		}
		c.XTicks = append(c.XTicks, tick{Pos: x.at(d), Label: label})
	}
	c.XLabel = "percentile"
	hi := 0.0
	for _, p := range curve {
		hi = math.Max(hi, p.ValueMs)
	}
	y := c.msAxis(hi * 1.05)
	xs, ys := make([]float64, 0, len(curve)), make([]float64, 0, len(curve))
	for _, p := range curve {
		pos := decades
		if p.Quantile < 1 {
			pos = math.Min(decades, math.Log10(1/(1-p.Quantile)))
		}
		xs, ys = append(xs, x.at(pos)), append(ys, y.at(p.ValueMs))
	}
	c.Areas = append(c.Areas, shape{Class: "area-" + strings.TrimPrefix(class, "c-"), D: areaOf(xs, ys, y.at(0))})
	c.Lines = append(c.Lines, shape{Class: class + " line", D: pathOf(xs, ys)})
	for _, m := range marked {
		pos := math.Log10(1 / (1 - m.q))
		if pos > decades {
			continue
		}
		px, py := x.at(pos), y.at(m.v)
		c.Marks = append(c.Marks, shape{Class: "dot " + class, D: dotPath(px, py, 3.5), Title: m.name + " " + msUnit(m.v)})
		// The median's label goes right of its dot, away from the y axis;
		// the tail labels go left, away from the chart's edge.
		lx, anchor := px-7, "end"
		if m.q < 0.9 {
			lx, anchor = px+7, "start"
		}
		c.Texts = append(c.Texts, text{X: lx, Y: py - 8, Class: "point-label", Value: m.name + " " + msUnit(m.v), Anchor: anchor})
	}
	return cv
}

// stepRateChart shows target and achieved rate per peak-search step, the
// bars coloured by verdict and the peak marked.
func stepRateChart(res *bench.Result, peak int) chartView {
	cv := chartView{
		Title:  "Achieved vs target per step",
		Note:   "Outline: target rate; bar: acknowledged rate, green when the step was sustainable.",
		Legend: []legendItem{{"c-target", "target"}, {"c-ok", "sustainable"}, {"c-bad", "not sustainable"}},
	}
	c := newChart(halfW, halfH)
	cv.SVG = c
	hi := 0.0
	for _, s := range res.Steps {
		if s != nil {
			hi = math.Max(hi, math.Max(s.Summary.TargetEventsPerSec, s.Summary.AchievedEventsPerSec))
		}
	}
	y := c.valueAxis(hi*1.15, "events/s", compact)
	n := float64(len(res.Steps))
	slot := c.Plot.W / n
	c.XLabel = "step (target rate)"
	for i, s := range res.Steps {
		if s == nil {
			continue
		}
		cx := c.Plot.X + slot*(float64(i)+0.5)
		bw := math.Min(slot*0.6, 70)
		c.XTicks = append(c.XTicks, tick{Pos: cx, Label: compact(s.Summary.TargetEventsPerSec)})
		ty, ay := y.at(s.Summary.TargetEventsPerSec), y.at(s.Summary.AchievedEventsPerSec)
		class := "bar-bad"
		if s.Verdict != nil && s.Verdict.Sustainable {
			class = "bar-ok"
		}
		reason := "no verdict"
		if s.Verdict != nil {
			reason = s.Verdict.Reason()
		}
		title := fmt.Sprintf("step %d: target %s/s, achieved %s/s — %s", i+1, rate(s.Summary.TargetEventsPerSec), rate(s.Summary.AchievedEventsPerSec), reason)
		c.Bars = append(c.Bars,
			shape{Class: class, X: cx - bw/2, Y: ay, W: bw, H: y.at(0) - ay, Title: title},
			shape{Class: "bar-target", X: cx - bw/2, Y: ty, W: bw, H: y.at(0) - ty, Title: title})
		if i == peak {
			c.Marks = append(c.Marks, shape{Class: "peak-mark", D: trianglePath(cx, math.Min(ty, ay)-9, 8), Title: "peak: " + rate(s.Summary.AchievedEventsPerSec) + " events/s"})
			c.Texts = append(c.Texts, text{X: cx, Y: math.Min(ty, ay) - 20, Class: "peak-label", Value: "peak " + compact(s.Summary.AchievedEventsPerSec) + "/s", Anchor: "middle"})
		}
	}
	c.CategoryTicks = true
	return cv
}

// stepLatencyChart shows how the latencies move from step to step; a
// backlog shows as freshness lag taking off at the last steps.
func stepLatencyChart(res *bench.Result, peak int) chartView {
	cv := chartView{
		Title:  "Latency per step",
		Note:   "Freshness lag p95, visibility latency p95 and write latency p99; log scale.",
		Legend: []legendItem{{"c-fresh", "freshness lag p95"}, {"c-vis", "visibility p95"}, {"c-write", "write p99"}},
	}
	c := newChart(halfW, halfH)
	cv.SVG = c
	lo, hi := math.Inf(1), 0.0
	for _, s := range res.Steps {
		if s == nil {
			continue
		}
		for _, v := range []float64{s.Summary.FreshnessLag.P95Ms, s.Summary.VisibilityLatency.P95Ms, s.Summary.WriteLatency.P99Ms} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == 0 {
		c.Empty = "no latency samples"
		return cv
	}
	y := c.logMsAxis(lo, hi)
	slot := c.Plot.W / float64(len(res.Steps))
	c.XLabel = "step (target rate)"
	c.CategoryTicks = true
	series := []struct {
		class string
		get   func(bench.Summary) float64
	}{
		{"c-fresh", func(s bench.Summary) float64 { return s.FreshnessLag.P95Ms }},
		{"c-vis", func(s bench.Summary) float64 { return s.VisibilityLatency.P95Ms }},
		{"c-write", func(s bench.Summary) float64 { return s.WriteLatency.P99Ms }},
	}
	if peak >= 0 {
		cx := c.Plot.X + slot*(float64(peak)+0.5)
		c.Bands = append(c.Bands, shape{Class: "band-peak", X: cx - slot/2, Y: c.Plot.Y, W: slot, H: c.Plot.H, Title: "peak step"})
	}
	for i, s := range res.Steps {
		if s != nil {
			c.XTicks = append(c.XTicks, tick{Pos: c.Plot.X + slot*(float64(i)+0.5), Label: compact(s.Summary.TargetEventsPerSec)})
		}
	}
	for _, sr := range series {
		xs, ys := make([]float64, len(res.Steps)), make([]float64, len(res.Steps))
		for i, s := range res.Steps {
			xs[i], ys[i] = c.Plot.X+slot*(float64(i)+0.5), math.NaN()
			if s == nil {
				continue
			}
			if v := sr.get(s.Summary); v > 0 {
				ys[i] = y.at(v)
				c.Marks = append(c.Marks, shape{Class: "dot " + sr.class, D: dotPath(xs[i], ys[i], 3.5), Title: fmt.Sprintf("step %d: %s", i+1, msUnit(v))})
			}
		}
		c.Lines = append(c.Lines, shape{Class: sr.class + " line", D: pathOf(xs, ys)})
	}
	return cv
}

// ---- formatting ------------------------------------------------------------

// compact writes an axis value briefly: 2.5k, 1.2M, 0.25.
func compact(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trimFloat(v/1e6) + "M"
	case a >= 1e3:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}

// trimFloat keeps four significant digits, which also hides the float
// noise of tick arithmetic (0.30000000000000004).
func trimFloat(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// count writes an integer with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// rate writes events/s: whole numbers with separators, small ones with a
// decimal.
func rate(v float64) string {
	if v < 100 {
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	}
	return count(int64(math.Round(v)))
}

func mbps(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// durationParts splits a latency in milliseconds into a figure and a unit
// readable at a glance: 4.2 ms, 312 ms, 1.43 s, 2.1 min.
func durationParts(v float64) (string, string) {
	switch {
	case v >= 120000:
		return strconv.FormatFloat(v/60000, 'f', 1, 64), "min"
	case v >= 1000:
		return strconv.FormatFloat(v/1000, 'f', 2, 64), "s"
	}
	return ms(v), "ms"
}

func msUnit(v float64) string {
	n, u := durationParts(v)
	return n + " " + u
}

func msOrDash(s stats.Summary, v float64) string {
	if s.Count == 0 {
		return "–"
	}
	return ms(v)
}

func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

func bytesText(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return strconv.Itoa(n/1000) + " KB"
	}
	return strconv.Itoa(n) + " B"
}

func orDash(s string) string { return orDefault(s, "-") }

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
