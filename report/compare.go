package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// Compare writes the headline figures of several results side by side,
// each with its ratio to the first (the baseline), followed by the
// configuration and environment settings that differ between them: a
// difference in figures means little until one knows what else changed.
// names label the results; a missing name is replaced by the result's
// position.
func Compare(w io.Writer, names []string, rs []*results.Result) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "compare: no results")
		return
	}
	labels := make([]string, len(rs))
	for i := range rs {
		labels[i] = "#" + strconv.Itoa(i+1)
		if i < len(names) && strings.TrimSpace(names[i]) != "" {
			labels[i] = names[i]
		}
		if rs[i] == nil {
			rs[i] = &results.Result{}
		}
	}
	fmt.Fprintf(w, "freshbench compare: %d results, baseline %s\n\n", len(rs), labels[0])
	compareFigures(w, labels, rs)
	fmt.Fprintln(w, "\nratio = value / baseline; for latencies, failed and missing events and lost updates lower is better.")
	if len(levelMetrics(rs)) > 0 {
		fmt.Fprintln(w, "at a level: the median over the level's trials (warm-up trials and trials cut short left out).")
	}
	fmt.Fprintln(w)
	compareSettings(w, "configuration", labels, configValues(rs))
	fmt.Fprintln(w)
	compareSettings(w, "environment", labels, environmentValues(rs))
}

// metric is one compared figure: its value in a result and whether the
// result has it at all (a latency without samples is not zero).
type metric struct {
	name string
	get  func(*results.Result) (float64, bool)
	text func(float64) string
	// lower, when set, says whether the value in a result is only a
	// lower bound (censored values reach it): shown as "> X".
	lower func(*results.Result) bool
}

func compareMetrics(rs []*results.Result) []metric {
	list := runMetrics()
	if slices.ContainsFunc(rs, func(r *results.Result) bool { return detailSummary(r).Updates != nil }) {
		list = append(list, updateMetrics()...)
	}
	list = append(list, endpointMetrics(rs)...)
	list = blankInLevels(list)
	if lm := levelMetrics(rs); len(lm) > 0 {
		if !slices.ContainsFunc(rs, func(r *results.Result) bool { return !isLevels(r) }) {
			return lm
		}
		list = append(list, lm...)
	}
	list = append(list, isolationMetrics(rs)...)
	// The peak row appears only when some result is a peak search.
	if slices.ContainsFunc(rs, func(r *results.Result) bool { return r.Peak != nil }) {
		list = append(list, metric{"peak sustainable events/s", func(r *results.Result) (float64, bool) {
			if r.Peak == nil || !r.Peak.Found {
				return 0, false
			}
			return r.Peak.AchievedEventsPerSec, true
		}, rate, nil})
	}
	return list
}

// detailSummary is the summary a result's figures are compared by.
func detailSummary(r *results.Result) results.Summary { return detailResult(r).Summary }

func atP50(s stats.Summary) float64 { return s.P50Ms }
func atP95(s stats.Summary) float64 { return s.P95Ms }
func atP99(s stats.Summary) float64 { return s.P99Ms }

func countText(v float64) string { return count(int64(v)) }

// runMetrics are the figures of a single run: rates, latencies, the
// probes' load, failures and losses.
func runMetrics() []metric {
	events := func(f func(results.Summary) float64) func(*results.Result) (float64, bool) {
		return func(r *results.Result) (float64, bool) { return f(detailSummary(r)), detailSummary(r).MeasuredS > 0 }
	}
	lat := func(h func(results.Summary) stats.Summary, q func(stats.Summary) float64) func(*results.Result) (float64, bool) {
		return func(r *results.Result) (float64, bool) {
			s := h(detailSummary(r))
			return q(s), s.Count > 0
		}
	}
	lower := func(h func(results.Summary) stats.Summary, q func(stats.Summary) float64) func(*results.Result) bool {
		return func(r *results.Result) bool { s := h(detailSummary(r)); return s.LowerBound(q(s)) }
	}
	counted := func(f func(results.Summary) int64) func(*results.Result) (float64, bool) {
		return func(r *results.Result) (float64, bool) { return float64(f(detailSummary(r))), true }
	}
	write := func(s results.Summary) stats.Summary { return s.WriteLatency }
	service := func(s results.Summary) stats.Summary { return s.ServiceTime }
	fresh := func(s results.Summary) stats.Summary { return s.FreshnessLag }
	vis := func(s results.Summary) stats.Summary { return s.VisibilityLatency }
	perSecond := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	probeLoad := func(f func(results.ProbeLoad) float64) func(*results.Result) (float64, bool) {
		return func(r *results.Result) (float64, bool) {
			l, ok := detailResult(r).ProbeLoad()
			return f(l), ok
		}
	}
	probeService := func(f func(results.ProbeLoad) stats.Summary) func(*results.Result) (float64, bool) {
		return func(r *results.Result) (float64, bool) {
			l, _ := detailResult(r).ProbeLoad()
			s := f(l)
			return s.P99Ms, s.Count > 0
		}
	}
	return []metric{
		{"target events/s", events(func(s results.Summary) float64 { return s.TargetEventsPerSec }), rate, nil},
		{"achieved events/s", events(func(s results.Summary) float64 { return s.AchievedEventsPerSec }), rate, nil},
		{"achieved MB/s", events(func(s results.Summary) float64 { return s.AchievedMBPerSec }), mbps, nil},
		{"write latency p50 ms", lat(write, atP50), ms, lower(write, atP50)},
		{"write latency p99 ms", lat(write, atP99), ms, lower(write, atP99)},
		{"service time p99 ms", lat(service, atP99), ms, lower(service, atP99)},
		{"freshness lag p50 ms", lat(fresh, atP50), ms, lower(fresh, atP50)},
		{"freshness lag p95 ms", lat(fresh, atP95), ms, lower(fresh, atP95)},
		{"freshness lag p99 ms", lat(fresh, atP99), ms, lower(fresh, atP99)},
		{"visibility latency p50 ms", lat(vis, atP50), ms, lower(vis, atP50)},
		{"visibility latency p95 ms", lat(vis, atP95), ms, lower(vis, atP95)},
		{"freshness polls/s", probeLoad(func(l results.ProbeLoad) float64 { return l.FreshnessPerSec }), perSecond, nil},
		{"freshness poll service p99 ms", probeService(func(l results.ProbeLoad) stats.Summary { return l.FreshnessService }), ms, nil},
		{"probe queries/s", probeLoad(func(l results.ProbeLoad) float64 { return l.ProbePerSec }), perSecond, nil},
		{"probe query service p99 ms", probeService(func(l results.ProbeLoad) stats.Summary { return l.ProbeService }), ms, nil},
		{"failed events", counted(func(s results.Summary) int64 { return s.EventsFailed }), countText, nil},
		{"late batches", counted(func(s results.Summary) int64 { return s.LateBatches }), countText, nil},
		{"missing events", func(r *results.Result) (float64, bool) {
			s := detailSummary(r)
			return float64(s.Missing), s.Audited
		}, countText, nil},
	}
}

// updateMetrics are the figures of an update stream.
func updateMetrics() []metric {
	upd := func(f func(*results.UpdateSummary) (float64, bool)) func(*results.Result) (float64, bool) {
		return func(r *results.Result) (float64, bool) {
			if u := detailSummary(r).Updates; u != nil {
				return f(u)
			}
			return 0, false
		}
	}
	updLat := func(h func(*results.UpdateSummary) stats.Summary, q func(stats.Summary) float64) func(*results.Result) (float64, bool) {
		return upd(func(u *results.UpdateSummary) (float64, bool) { s := h(u); return q(s), s.Count > 0 })
	}
	updLower := func(h func(*results.UpdateSummary) stats.Summary, q func(stats.Summary) float64) func(*results.Result) bool {
		return func(r *results.Result) bool {
			u := detailSummary(r).Updates
			return u != nil && h(u).LowerBound(q(h(u)))
		}
	}
	updVis := func(u *results.UpdateSummary) stats.Summary { return u.VisibilityLatency }
	updFresh := func(u *results.UpdateSummary) stats.Summary { return u.FreshnessLag }
	return []metric{
		{"update freshness lag p95 ms", updLat(updFresh, atP95), ms, updLower(updFresh, atP95)},
		{"update visibility p50 ms", updLat(updVis, atP50), ms, updLower(updVis, atP50)},
		{"update visibility p95 ms", updLat(updVis, atP95), ms, updLower(updVis, atP95)},
		{"lost updates", upd(func(u *results.UpdateSummary) (float64, bool) { return float64(u.Lost), u.Audited }), countText, nil},
	}
}

// blankInLevels leaves the metrics empty in levels runs: those have their
// figures per level, none of a single run's (not even a count of zero).
func blankInLevels(list []metric) []metric {
	for i, m := range list {
		get := m.get
		list[i].get = func(r *results.Result) (float64, bool) {
			if isLevels(r) {
				return 0, false
			}
			return get(r)
		}
	}
	return list
}

// endpointMetrics are the figures of every read endpoint any result
// has, by name, and of the probes visible everywhere: a result without
// that endpoint has none of them.
func endpointMetrics(rs []*results.Result) []metric {
	var names []string
	everywhere := false
	for _, r := range rs {
		s := detailResult(r).Summary
		for _, e := range s.ReadEndpoints {
			if !slices.Contains(names, e.Name) {
				names = append(names, e.Name)
			}
		}
		everywhere = everywhere || s.VisibleEverywhere != nil
	}
	var list []metric
	for _, name := range names {
		lat := func(h func(results.EndpointSummary) stats.Summary, q func(stats.Summary) float64) func(*results.Result) (float64, bool) {
			return func(r *results.Result) (float64, bool) {
				for _, e := range detailResult(r).Summary.ReadEndpoints {
					if e.Name == name {
						s := h(e)
						return q(s), s.Count > 0
					}
				}
				return 0, false
			}
		}
		lower := func(h func(results.EndpointSummary) stats.Summary, q func(stats.Summary) float64) func(*results.Result) bool {
			return func(r *results.Result) bool {
				for _, e := range detailResult(r).Summary.ReadEndpoints {
					if e.Name == name {
						return h(e).LowerBound(q(h(e)))
					}
				}
				return false
			}
		}
		fresh := func(e results.EndpointSummary) stats.Summary { return e.FreshnessLag }
		vis := func(e results.EndpointSummary) stats.Summary { return e.VisibilityLatency }
		p50 := func(s stats.Summary) float64 { return s.P50Ms }
		p95 := func(s stats.Summary) float64 { return s.P95Ms }
		list = append(list,
			metric{name + " freshness lag p50 ms", lat(fresh, func(s stats.Summary) float64 { return s.P50Ms }), ms, nil},
			metric{name + " freshness lag p99 ms", lat(fresh, func(s stats.Summary) float64 { return s.P99Ms }), ms, nil},
			metric{name + " visibility latency p50 ms", lat(vis, p50), ms, lower(vis, p50)},
			metric{name + " visibility latency p95 ms", lat(vis, p95), ms, lower(vis, p95)},
		)
	}
	if everywhere {
		every := func(q func(stats.Summary) float64) func(*results.Result) (float64, bool) {
			return func(r *results.Result) (float64, bool) {
				s := detailResult(r).Summary.VisibleEverywhere
				if s == nil || s.Count == 0 {
					return 0, false
				}
				return q(*s), true
			}
		}
		everyLower := func(q func(stats.Summary) float64) func(*results.Result) bool {
			return func(r *results.Result) bool {
				s := detailResult(r).Summary.VisibleEverywhere
				return s != nil && s.LowerBound(q(*s))
			}
		}
		p50 := func(s stats.Summary) float64 { return s.P50Ms }
		p95 := func(s stats.Summary) float64 { return s.P95Ms }
		list = append(list,
			metric{"visible everywhere p50 ms", every(p50), ms, everyLower(p50)},
			metric{"visible everywhere p95 ms", every(p95), ms, everyLower(p95)},
		)
	}
	return list
}

func compareFigures(w io.Writer, labels []string, rs []*results.Result) {
	metrics := compareMetrics(rs)
	// Labels are padded by hand so that they read left-aligned while
	// tabwriter right-aligns the figures.
	width := 0
	for _, m := range metrics {
		width = max(width, len(m.name))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t%s\t", width, "", labels[0])
	for _, l := range labels[1:] {
		fmt.Fprintf(tw, "%s\tratio\t", l)
	}
	fmt.Fprintln(tw)
	for _, m := range metrics {
		base, baseOK := m.get(rs[0])
		baseLow := m.isLower(rs[0])
		fmt.Fprintf(tw, "%-*s\t%s\t", width, m.name, valueText(m, base, baseOK, baseLow))
		for _, r := range rs[1:] {
			v, ok := m.get(r)
			low := m.isLower(r)
			fmt.Fprintf(tw, "%s\t%s\t", valueText(m, v, ok, low), boundedRatio(ratio(base, baseOK, v, ok), baseLow, low))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func valueText(m metric, v float64, ok, lower bool) string {
	switch {
	case !ok:
		return "-"
	case lower:
		return "> " + m.text(v)
	}
	return m.text(v)
}

func (m metric) isLower(r *results.Result) bool { return m.lower != nil && m.lower(r) }

// boundedRatio qualifies a ratio of figures of which one or both are
// lower bounds: more than it when only the value is, less when only the
// baseline is, unknown when both are.
func boundedRatio(ratio string, baseLower, lower bool) string {
	switch {
	case ratio == "-" || baseLower == lower && !lower:
		return ratio
	case baseLower && lower:
		return "?"
	case lower:
		return "> " + ratio
	}
	return "< " + ratio
}

// ratio is v against the baseline; "=" when both are zero (nothing failed
// in either run), "-" when there is nothing to divide by.
func ratio(base float64, baseOK bool, v float64, ok bool) string {
	switch {
	case !baseOK || !ok:
		return "-"
	case base == 0 && v == 0:
		return "="
	case base == 0:
		return "-"
	}
	r := v / base
	if r >= 100 || r < 0.01 {
		return strconv.FormatFloat(r, 'g', 2, 64) + "x"
	}
	return strconv.FormatFloat(math.Round(r*100)/100, 'f', 2, 64) + "x"
}

// setting is one named value per result; unset means the result does not
// have it at all (a target setting given for one run only).
type setting struct {
	name   string
	values []string
}

const unset = "(unset)"

// configValues lists every configuration field of every result, the
// fields by their results-file name so that new fields show up without
// a change here.
func configValues(rs []*results.Result) []setting {
	out := fieldValues(rs, func(r *results.Result) any { return r.Config }, "TargetSettings")
	keys := map[string]bool{}
	for _, r := range rs {
		for k := range r.Config.TargetSettings {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		s := setting{name: "target setting " + k}
		for _, r := range rs {
			v, ok := r.Config.TargetSettings[k]
			if !ok {
				v = unset
			}
			s.values = append(s.values, v)
		}
		out = append(out, s)
	}
	return out
}

func environmentValues(rs []*results.Result) []setting {
	out := fieldValues(rs, func(r *results.Result) any {
		e := r.Environment
		e.TargetURL = targetURL(r)
		return e
	})
	extra := []struct {
		name string
		get  func(*results.Result) string
	}{
		{"tool", func(r *results.Result) string { return strings.TrimSpace(r.Tool.Name + " " + r.Tool.Version) }},
		{"command", func(r *results.Result) string { return r.Command }},
		{"schema_version", func(r *results.Result) string { return strconv.Itoa(r.SchemaVersion) }},
	}
	for _, e := range extra {
		s := setting{name: e.name}
		for _, r := range rs {
			s.values = append(s.values, e.get(r))
		}
		out = append(out, s)
	}
	return out
}

// fieldValues reads the exported fields of the struct get returns, named
// by their JSON tags, skipping the named fields.
func fieldValues(rs []*results.Result, get func(*results.Result) any, skip ...string) []setting {
	var out []setting
	t := reflect.TypeOf(get(rs[0]))
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || slices.Contains(skip, f.Name) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			name = f.Name
		}
		s := setting{name: name}
		for _, r := range rs {
			s.values = append(s.values, fmt.Sprint(reflect.ValueOf(get(r)).Field(i).Interface()))
		}
		out = append(out, s)
	}
	return out
}

// compareSettings lists only the settings that differ.
func compareSettings(w io.Writer, what string, labels []string, all []setting) {
	var diff []setting
	for _, s := range all {
		for _, v := range s.values[1:] {
			if v != s.values[0] {
				diff = append(diff, s)
				break
			}
		}
	}
	if len(diff) == 0 {
		fmt.Fprintf(w, "%s: identical\n", what)
		return
	}
	fmt.Fprintf(w, "%s that differs:\n", what)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  \t%s\n", strings.Join(labels, "\t"))
	for _, s := range diff {
		vals := make([]string, len(s.values))
		for i, v := range s.values {
			vals[i] = orDash(strings.ReplaceAll(v, "\t", " "))
		}
		fmt.Fprintf(tw, "  %s\t%s\n", s.name, strings.Join(vals, "\t"))
	}
	tw.Flush()
}
