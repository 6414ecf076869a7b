package report

// The view model of the HTML report: everything the template shows, already
// formatted, built from a results file.

import (
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

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
	Instances    *instancesView
	Peak         *peakView
	Levels       *levelsView
	DetailNote   string
	Throughput   chartView
	WriteLatency chartView
	Freshness    chartView
	Backlog      *chartView // runs --via only
	Percentiles  []chartView
	Latencies    []latencyRow
	Endpoints    []endpointCells
	Queries      *queriesView
	Isolation    *isolationView // freshbench isolation only
	Phases       []phaseRow
	Errors       []errorRow
	Completeness completenessView
	Account      *accountView // when the target gave its server's account
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
	// Unacknowledged says whether any event is visible though its write
	// failed: the table has a column for them only then.
	Unacknowledged bool
}

type completenessRow struct {
	Generator, Acknowledged, Visible, Missing, Unacknowledged, Unexpected, Duplicates, Sample string
	Bad                                                                                       bool
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
	Sustainable, Undecided, Peak                                                                 bool
}

func buildView(res *results.Result) *htmlView {
	detail := detailResult(res)
	v := &htmlView{
		CSS:   template.CSS(htmlCSS),
		Title: orDash(targetURL(res)),
	}
	if v.Title == "-" {
		v.Title = orDash(res.Environment.Target)
	}
	v.Subtitle = subtitle(res)
	v.Environment = environmentFacts(res)
	v.Footer = fmt.Sprintf("%s %s · results schema %d · rendered from the results file", orDefault(res.Tool.Name, "freshbench"), orDash(res.Tool.Version), res.SchemaVersion)
	if isLevels(res) {
		// Its figures are the levels'; each trial's own are in the file.
		v.Facts, v.Notices, v.Config, v.Levels = levelsFacts(res), levelsNotices(res), levelsConfigFacts(res), levelsSection(res)
		return v
	}
	v.Ingest = !queriesAlone(res)
	v.Facts = headerFacts(res)
	v.Notices = notices(res, detail)
	v.Instances = instancesSection(res.Merged)
	v.Queries = queryLoad(detail)
	v.Isolation = isolationSection(res)
	v.Config = configFacts(res)
	if !v.Ingest {
		v.Cards = queryCards(res.Target().Queries)
		return v
	}
	if res.Kind == results.KindPeak {
		v.Peak = peakSection(res)
		v.DetailNote = peakDetailNote(res, detail)
	}
	v.Cards = headlineCards(res, detail)
	v.Throughput = throughputChart(detail)
	v.WriteLatency = writeLatencyChart(detail)
	v.Freshness = freshnessChart(detail)
	v.Backlog = backlogChart(detail)
	v.Account = accountSection(detail)
	v.Percentiles = percentileCharts(detail)
	v.Endpoints = endpointSection(detail)
	v.Latencies = latencyRows(detail)
	v.Phases = phaseRows(detail)
	v.Errors = errorRows(detail)
	v.Completeness = completeness(detail)
	return v
}

// peakDetailNote says which step of a peak search the charts show.
func peakDetailNote(res, detail *results.Result) string {
	if detail != res {
		return fmt.Sprintf("The charts and tables below show step %d (target %s).", stepIndex(res, detail)+1, detail.Config.Rate)
	}
	if res.Peak != nil && res.Peak.Found {
		return fmt.Sprintf("The charts and tables below show the peak step (step %d, target %s).", res.Peak.Step+1, res.Peak.Rate)
	}
	return ""
}

// measuredHistograms are the measured phase's write latency, service time
// and lateness, nil when the result has no measured phase.
func measuredHistograms(detail *results.Result) (write, service, lateness *stats.Histogram) {
	if measured := detail.Phase(results.PhaseMeasured); measured != nil {
		return measured.WriteLatency, measured.ServiceTime, measured.Lateness
	}
	return nil, nil, nil
}

// percentileCharts are the percentile curves of the writes, of the
// target's freshness and visibility, and of every other endpoint's.
func percentileCharts(detail *results.Result) []chartView {
	writeH, serviceH, _ := measuredHistograms(detail)
	charts := []chartView{
		percentileChart("Write latency", "intended time → acknowledged", "c-write", writeH),
		percentileChart("Write service time", "request sent → acknowledged", "c-service", serviceH),
		percentileChart("Freshness lag", "query return − newest visible event", "c-fresh", detail.Target().Freshness.Lag),
		percentileChart("Visibility latency", visibilityNote(detail.Summary), "c-vis", detail.Target().Visibility.Latency),
	}
	for _, e := range detail.Reads() {
		charts = append(charts, percentileChart("Visibility latency on "+e.Name, "event time → first query of "+e.Name+" that saw it", "c-vis", e.Visibility.Latency))
	}
	if e := detail.VisibleEverywhere; e != nil && e.NotMeasured == "" {
		charts = append(charts, percentileChart("Visible everywhere", "event time → seen on every endpoint (the latest)", "c-vis", e.Latency))
	}
	if u := detail.Target().Updates; u != nil && u.Visibility.NotMeasured == "" {
		charts = append(charts, percentileChart("Update visibility", "update time → first query that saw that revision or a later one", "c-vis", u.Visibility.Latency))
	}
	return charts
}

// latencyRows tabulate the measured phase's latency distributions.
func latencyRows(detail *results.Result) []latencyRow {
	s := detail.Summary
	_, _, latenessH := measuredHistograms(detail)
	rows := []latencyRow{
		latency("Write latency", s.WriteLatency),
		latency("Write service time", s.ServiceTime),
		latency("Batch lateness", summarize(latenessH)),
		latency("Freshness lag", s.FreshnessLag),
		latency("Freshness query service", summarize(detail.Target().Freshness.QueryService)),
		latency("Visibility latency (upper bound, the headline)", s.VisibilityLatency),
	}
	if s.VisibilityMidpoint.Count > 0 {
		rows = append(rows, latency("Visibility, interval midpoint (± half the gap)", s.VisibilityMidpoint))
	}
	rows = append(rows, latency("Probe query service", s.ProbeQueryService))
	if u := s.Updates; u != nil {
		rows = append(rows,
			latency("Update freshness lag", u.FreshnessLag),
			latency("Update visibility", u.VisibilityLatency))
	}
	return rows
}

// detailResult is the run whose series and histograms the page shows. A
// peak search may keep them only in its steps; then the peak step (or the
// last step when none was sustainable) stands in.
func detailResult(res *results.Result) *results.Result {
	if len(res.Series) > 0 || len(res.Steps) == 0 {
		return res
	}
	if res.Peak != nil && res.Peak.Found && res.Peak.Step >= 0 && res.Peak.Step < len(res.Steps) {
		return res.Steps[res.Peak.Step]
	}
	return res.Steps[len(res.Steps)-1]
}

func stepIndex(res, step *results.Result) int {
	for i, s := range res.Steps {
		if s == step {
			return i
		}
	}
	return -1
}

func summarize(h *stats.Histogram) stats.Summary {
	if h == nil {
		return stats.Summary{}
	}
	return h.Summarize()
}

func subtitle(res *results.Result) string {
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

// headerFacts are the facts of the report's header: the workload file or
// preset first, when the result ran one.
func headerFacts(res *results.Result) []fact {
	facts := setupFacts(res)
	if s := workloadText(res); s != "" {
		facts = append([]fact{{"workload", s}}, facts...)
	}
	return facts
}

func setupFacts(res *results.Result) []fact {
	c := res.Config
	if queriesAlone(res) {
		q := res.Target().Queries
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
	if n := len(res.Steps); res.Kind == results.KindPeak && n > 0 {
		// A peak search has one rate per step; its own configuration is
		// the first step's.
		first, last := res.Steps[0], res.Steps[n-1]
		facts = []fact{
			{"steps", fmt.Sprintf("%d, %s → %s", n, orDash(first.Config.Rate), orDash(last.Config.Rate))},
			{"per step", seconds(c.DurationS) + " (warm-up " + seconds(c.WarmupS) + ")"},
		}
	}
	if m := res.Merged; m != nil {
		facts = append(facts, fact{"instances", fmt.Sprintf("%d of %d (%s)", len(m.Rows), m.Instances, m.Experiment)})
	}
	facts = append(facts, []fact{
		{"batch", strconv.Itoa(c.BatchSize) + " events"},
		{"doc size", bytesText(c.DocSize)},
		{"generators", strconv.Itoa(c.Generators)},
		{"in-flight", strconv.Itoa(c.MaxInflight)},
		{"poll", c.Polling()},
	}...)
	if c.Via != "" {
		facts = append(facts, fact{"via", redact.URL(c.Via)})
		for _, k := range slices.Sorted(maps.Keys(c.ViaSettings)) {
			facts = append(facts, fact{"via " + k, c.ViaSettings[k]})
		}
	}
	return append(facts, targetSettingFacts(c, "")...)
}

// targetSettingFacts lists the target's own settings, each label prefixed.
func targetSettingFacts(c results.Config, prefix string) []fact {
	var facts []fact
	for _, k := range slices.Sorted(maps.Keys(c.TargetSettings)) {
		facts = append(facts, fact{prefix + k, c.TargetSettings[k]})
	}
	return facts
}

func notices(res, detail *results.Result) []notice {
	var out []notice
	switch {
	case res.EndedEarly && queriesAlone(res):
		out = append(out, notice{"bad", "The run ended early (" + orDash(res.EndReason) + "): figures cover the time measured."})
	case res.EndedEarly && res.Merged != nil:
		out = append(out, notice{"bad", "Not every instance is in these figures: " + orDash(res.EndReason) + "."})
	case res.EndedEarly:
		out = append(out, notice{"bad", "The run ended early (" + orDash(res.EndReason) + "): figures cover the time measured, and completeness was not audited."})
	}
	if detail.Target().AuditError != "" {
		out = append(out, notice{"bad", "Completeness audit failed: " + detail.Target().AuditError})
	}
	for _, m := range []struct{ what, why string }{
		{"Freshness lag", detail.Target().Freshness.NotMeasured},
		{"Visibility latency", detail.Target().Visibility.NotMeasured},
		{"Completeness", notAudited(detail)},
	} {
		if m.why != "" {
			out = append(out, notice{"warn", m.what + " not measured: " + m.why + "."})
		}
	}
	if f := detail.Target().Freshness; f.Censored > 0 {
		out = append(out, notice{"warn", count(f.Censored) + " freshness lag values are lower bounds, from polls that failed or timed out."})
	}
	for _, e := range detail.Endpoints {
		if s := stepsBackText(e); s != "" {
			out = append(out, notice{"warn", "Freshness: " + s + "."})
		}
	}
	if v := detail.Target().Visibility; v.Censored > 0 {
		out = append(out, notice{"warn", count(v.Censored) + " visibility latency values are lower bounds: probes never seen, counted at their age when the measurement ended."})
	}
	if s := detail.Summary; s.EventsUnsent > 0 {
		out = append(out, notice{"warn", count(s.EventsUnsent) + " events were due but never sent (the target fell behind); their write latency is at least " + msUnit(s.UnsentWait.P50Ms) + " (p50), outside the write latency figures."})
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
	if u := detail.Summary.Updates; u != nil {
		level, lost := "ok", "none lost"
		if u.Lost > 0 || u.Failed > 0 {
			level, lost = "warn", count(u.Lost)+" lost updates (an older revision shows than the one acknowledged last)"
		}
		if !u.Audited {
			level, lost = "warn", "not audited"
		}
		out = append(out, notice{level, fmt.Sprintf("Updates: %s of the measured events (share %.2g, keys %s), %s acknowledged, %s failed; %s events updated, %s.",
			count(u.Dispatched), detail.Config.UpdateShare, detail.Config.UpdateKeys, count(u.Acked), count(u.Failed), count(u.Events), lost)})
	}
	if c := res.Ceiling; c != nil && c.Warning != "" {
		out = append(out, notice{"warn", capitalize(c.Warning) + "."})
	}
	if v := detail.Verdict; v != nil && res.Kind != results.KindPeak {
		if v.Sustainable {
			out = append(out, notice{"ok", "This step was sustainable."})
		} else {
			out = append(out, notice{"warn", "This step was not sustainable: " + v.Reason()})
		}
	}
	return out
}

func headlineCards(res, detail *results.Result) []card {
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
			"p50 "+durationOf(s.VisibilityLatency, s.VisibilityLatency.P50Ms)+" · resolution "+msUnit(s.VisibilityResolution)+" · upper bounds: the first query that saw each probe"),
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
	if h.LowerBound(v) {
		value = "> " + value
	}
	return card{Label: label, Value: value, Unit: unit, Sub: sub}
}

func completenessCard(r *results.Result) card {
	s := r.Summary
	c := card{Label: "Completeness"}
	if !s.Audited {
		c.Value, c.Status, c.Sub = "–", "warn", "not audited"
		return c
	}
	var acked, visible int64
	for _, g := range r.Target().Completeness {
		acked += g.Acknowledged
		visible += g.Visible
	}
	c.Value, c.Unit = "100", "%"
	if acked > 0 {
		c.Value = percent(float64(acked-s.Missing) / float64(acked))
	}
	c.Sub = fmt.Sprintf("%s missing · %s unexpected · %s duplicates", count(s.Missing), count(s.Unexpected), count(s.Duplicates))
	if s.Unacknowledged > 0 {
		c.Sub += " · " + strings.TrimSuffix(unackedText(s.Unacknowledged), ", ")
	}
	if s.Late > 0 {
		c.Sub = lateWhy(s.Late, s.ShownByRefresh) + " · " + c.Sub
	}
	switch {
	case s.Missing > 0:
		c.Status = "bad"
	case s.Late > 0 || s.Unexpected > 0 || s.Duplicates > 0:
		c.Status = "warn"
	default:
		c.Status = "ok"
	}
	return c
}

// notAudited says why the completeness audit measured nothing, if so.
func notAudited(r *results.Result) string {
	for _, c := range r.Target().Completeness {
		if c.NotMeasured != "" {
			return c.NotMeasured
		}
	}
	return ""
}

func visibilityNote(s results.Summary) string {
	if s.VisibilityResolution > 0 {
		return "event time → first query that saw it (±" + msUnit(s.VisibilityResolution) + ")"
	}
	return "event time → first query that saw it"
}

func latency(name string, s stats.Summary) latencyRow {
	if s.Count == 0 {
		return latencyRow{Name: name, Count: "0", Empty: true}
	}
	f := func(v float64) string { return msOrDash(s, v) }
	r := latencyRow{
		Name: name, Count: count(s.Count),
		Min: f(s.MinMs), P50: f(s.P50Ms), P90: f(s.P90Ms), P95: f(s.P95Ms),
		P99: f(s.P99Ms), P999: f(s.P999Ms), Max: f(s.MaxMs),
	}
	if s.Clamped > 0 {
		r.Clamped = count(s.Clamped) + " over 1 h"
	}
	return r
}

func phaseRows(r *results.Result) []phaseRow {
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

func errorRows(r *results.Result) []errorRow {
	var rows []errorRow
	add := func(source string, m map[string]*stats.ErrorCount) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
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
	for _, e := range r.Endpoints {
		on := ""
		if len(r.Reads()) > 0 {
			on = " on " + e.Name
		}
		add("freshness query"+on, e.Freshness.Errors)
		add("probe query"+on, e.Visibility.Errors)
	}
	return rows
}

func completeness(r *results.Result) completenessView {
	s := r.Summary
	v := completenessView{Missing: s.Missing > 0}
	switch {
	case r.Target().AuditError != "":
		v.Status = "The audit failed: " + r.Target().AuditError
	case s.Audited:
		v.Status = "After the drain every generator's events were read back and compared with what the target acknowledged."
	case r.EndedEarly:
		v.Status = "Not audited: the run ended early."
	default:
		v.Status = "Not audited."
	}
	var total completenessRow
	var acked, visible, missing, unacked, unexpected, dups int64
	for _, c := range r.Target().Completeness {
		sample := make([]string, len(c.MissingSample))
		for i, q := range c.MissingSample {
			sample[i] = strconv.FormatInt(q, 10)
		}
		v.Rows = append(v.Rows, completenessRow{
			Generator: c.Generator, Acknowledged: count(c.Acknowledged), Visible: count(c.Visible),
			Missing: count(c.Missing), Unacknowledged: count(c.Unacknowledged), Unexpected: count(c.Unexpected), Duplicates: count(c.Duplicates),
			Sample: strings.Join(sample, ", "), Bad: c.Missing > 0 || c.Unexpected > 0,
		})
		acked += c.Acknowledged
		visible += c.Visible
		missing += c.Missing
		unacked += c.Unacknowledged
		unexpected += c.Unexpected
		dups += c.Duplicates
	}
	v.Unacknowledged = unacked > 0
	if len(r.Target().Completeness) > 1 {
		total = completenessRow{
			Generator: "all", Acknowledged: count(acked), Visible: count(visible), Missing: count(missing),
			Unacknowledged: count(unacked), Unexpected: count(unexpected), Duplicates: count(dups), Bad: missing > 0 || unexpected > 0,
		}
		v.Total = &total
	}
	vis := r.Target().Visibility
	v.Probes = []fact{
		{"probes", count(vis.Probes)},
		{"seen", count(vis.Seen)},
		{"never seen", count(vis.NeverSeen)},
		{"dropped (write failed)", count(vis.Dropped)},
		{"resolution", msUnit(vis.ResolutionMs)},
	}
	if l, ok := r.ProbeLoad(); ok {
		v.Probes = append(v.Probes,
			fact{"freshness polls", probeRateText(l.FreshnessPerSec, l.FreshnessService)},
			fact{"probe queries", probeRateText(l.ProbePerSec, l.ProbeService)})
	}
	return v
}

// probeRateText is a probe query's rate and service time.
func probeRateText(perSec float64, s stats.Summary) string {
	if s.Count == 0 {
		return fmt.Sprintf("%.1f/s, none answered", perSec)
	}
	return fmt.Sprintf("%.1f/s, service p50 %s, p99 %s", perSec, msUnit(s.P50Ms), msUnit(s.P99Ms))
}

func configFacts(res *results.Result) []fact {
	c := res.Config
	if queriesAlone(res) {
		facts := []fact{
			{"duration", seconds(c.DurationS)},
			{"warm-up", seconds(c.WarmupS)},
		}
		facts = append(facts, queryConfigFacts(res.Target().Queries)...)
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
		{"polling", c.Polling()},
		{"drain", seconds(c.DrainS)},
	}
	return append(facts, targetSettingFacts(c, "target setting ")...)
}

func environmentFacts(res *results.Result) []fact {
	e := res.Environment
	facts := []fact{
		{"target", orDash(e.Target)},
		{"target URL", orDash(targetURL(res))},
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
		facts = append(facts, fact{"driver CPU", fmt.Sprintf("%.1f s over %.1f s (%.0f%% of one core)", c.Seconds, c.WallS, c.CorePercent) + driverWaitText(c)})
	}
	switch c := res.Ceiling; {
	case c == nil:
	case c.NotUsed != "":
		facts = append(facts, fact{"driver ceiling", "unknown: " + c.NotUsed + "; run freshbench calibrate"})
	default:
		facts = append(facts, fact{"driver ceiling", fmt.Sprintf("%s events/s (%s; calibrated %s, %s): %.0f%% of it targeted, %.0f%% achieved",
			rate(c.EventsPerSec), c.Method, c.CalibratedAt.UTC().Format(time.RFC3339), c.File, 100*c.TargetShare, 100*c.AchievedShare)})
	}
	return facts
}

func peakSection(res *results.Result) *peakView {
	pv := &peakView{}
	peakIdx := -1
	if p := res.Peak; p != nil {
		pv.Found = p.Found
		if p.Found {
			peakIdx = p.Step
			pv.Headline = fmt.Sprintf("Peak sustainable throughput: %s events/s (%s MB/s) at target %s, step %d of %d.",
				rate(p.AchievedEventsPerSec), mbps(p.AchievedMBPerSec), p.Rate, p.Step+1, len(res.Steps))
			if p.Interval != "" {
				pv.Headline += " The peak lies in " + p.Interval + " (highest sustainable, lowest not sustainable target)."
			}
		} else {
			pv.Headline = fmt.Sprintf("No sustainable step among %d.", len(res.Steps))
		}
		pv.Reason = p.Reason
		if p.NotYetKnown > 0 {
			pv.Reason += fmt.Sprintf(" · %d step(s) not yet known, counted as neither", p.NotYetKnown)
		}
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
			row.Sustainable, row.Undecided = v.Sustainable, v.Undecided
			row.Verdict, row.Reason = v.Decision(), decisionPath(v)+v.Reason()
			if v.Sustainable {
				row.Reason = strings.TrimSuffix(decisionPath(v), ": ")
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
