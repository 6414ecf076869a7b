package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// endpointRow is one endpoint's figures as the console and the HTML
// report show them side by side.
type endpointRow struct {
	Name, URL          string
	Freshness          stats.Summary
	Visibility         stats.Summary
	ResolutionMs       float64
	ProbeService       stats.Summary
	FailedPolls, Polls int64
	FailedProbes       int64
	NeverSeen          int64
	BeforeTarget       int64
	AfterTarget        int64
	FreshnessNot       string // why freshness was not measured, if it was not
	VisibilityNot      string
	Audit              string // the audit in a few words
	Everywhere         bool   // the row of the probes visible everywhere
}

// endpointRows lists r's endpoints, the target first, and the probes
// visible everywhere last; nil without read endpoints.
func endpointRows(r *results.Result) []endpointRow {
	if len(r.Reads()) == 0 {
		return nil
	}
	var rows []endpointRow
	for i, e := range r.Endpoints {
		s := endpointSummary(r, i)
		row := endpointRow{
			Name: e.Name, URL: redact.URL(e.URL), Freshness: s.FreshnessLag, Visibility: s.VisibilityLatency,
			ResolutionMs: s.VisibilityResolution, ProbeService: s.ProbeQueryService,
			FailedPolls: e.Freshness.Censored, Polls: e.Freshness.Samples + e.Freshness.Censored,
			FailedProbes: errorCount(e.Visibility.Errors), NeverSeen: e.Visibility.NeverSeen, BeforeTarget: e.Visibility.BeforeTarget,
			AfterTarget:  e.Visibility.AfterTarget,
			FreshnessNot: e.Freshness.NotMeasured, VisibilityNot: e.Visibility.NotMeasured,
			Audit: auditText(s, e),
		}
		rows = append(rows, row)
	}
	if v := r.VisibleEverywhere; v != nil {
		row := endpointRow{Name: "everywhere", Everywhere: true, VisibilityNot: v.NotMeasured, NeverSeen: v.NeverSeen, ResolutionMs: v.ResolutionMs}
		if s := r.Summary.VisibleEverywhere; s != nil {
			row.Visibility = *s
		}
		rows = append(rows, row)
	}
	return rows
}

// endpointSummary is the summary of r's i-th endpoint (0: the target).
func endpointSummary(r *results.Result, i int) results.EndpointSummary {
	s := r.Summary
	if i == 0 {
		return results.EndpointSummary{
			Name: results.TargetEndpoint, FreshnessLag: s.FreshnessLag, VisibilityLatency: s.VisibilityLatency,
			VisibilityResolution: s.VisibilityResolution, ProbeQueryService: s.ProbeQueryService,
			Missing: s.Missing, Unacknowledged: s.Unacknowledged, Unexpected: s.Unexpected, Duplicates: s.Duplicates, Audited: s.Audited,
		}
	}
	if i-1 < len(s.ReadEndpoints) {
		return s.ReadEndpoints[i-1]
	}
	return results.EndpointSummary{Name: r.Reads()[i-1].Name}
}

// resolution is a visibility resolution, – when no probe was seen to
// measure it.
func resolution(v float64) string {
	if v <= 0 {
		return "–"
	}
	return ms(v)
}

func errorCount(m map[string]*stats.ErrorCount) int64 {
	var n int64
	for _, e := range m {
		n += e.Count
	}
	return n
}

// lateWhy says how many events were late, and why: not visible within
// the drain, or shown only by the refresh forced after it.
func lateWhy(late, shownByRefresh int64) string {
	if shownByRefresh > 0 {
		return count(late) + " late (" + count(shownByRefresh) + " shown only by a refresh forced at the drain's end)"
	}
	return count(late) + " late (not visible within the drain)"
}

// auditText says what the audit of one endpoint found, in a few words.
func auditText(s results.EndpointSummary, e *results.Endpoint) string {
	for _, c := range e.Completeness {
		if c.NotMeasured != "" {
			return "not measured"
		}
	}
	switch {
	case s.Audited:
		var late, shown int64
		for _, c := range e.Completeness {
			late, shown = late+c.Late, shown+c.ShownByRefresh
		}
		text := fmt.Sprintf("%d missing, %s%d unexpected, %d duplicates", s.Missing, unackedText(s.Unacknowledged), s.Unexpected, s.Duplicates)
		if late > 0 {
			text = lateWhy(late, shown) + ", " + text
		}
		return text
	case e.AuditError != "":
		return "failed: " + e.AuditError
	}
	return "not audited"
}

// consoleEndpoints writes the endpoints side by side: the freshness lag
// and visibility latency each showed, with what each missed, and the
// probes visible everywhere.
func consoleEndpoints(w io.Writer, r *results.Result) {
	rows := endpointRows(r)
	if rows == nil {
		return
	}
	fmt.Fprintln(w, "\nread endpoints (ms; each polled on its own, every probe watched on each; everywhere: per probe the latest):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "endpoint\tfreshness p50\tp99\tvisibility p50\tp95\tp99\tmax\tresolution\tprobe service p50\tpolls failed\tprobe queries failed\tnever seen\tseen before/after target\t\n")
	for _, e := range rows {
		fresh := func(v float64) string {
			if e.Everywhere || e.FreshnessNot != "" {
				return "–"
			}
			return msOrDash(e.Freshness, v)
		}
		vis := func(v float64) string {
			if e.VisibilityNot != "" {
				return "–"
			}
			return msOrDash(e.Visibility, v)
		}
		polls, probes, before, service := "", "", "", ""
		if !e.Everywhere {
			polls = fmt.Sprintf("%d of %d", e.FailedPolls, e.Polls)
			probes = fmt.Sprint(e.FailedProbes)
			before = fmt.Sprintf("%d / %d", e.BeforeTarget, e.AfterTarget)
			service = msOrDash(e.ProbeService, e.ProbeService.P50Ms)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n", e.Name,
			fresh(e.Freshness.P50Ms), fresh(e.Freshness.P99Ms),
			vis(e.Visibility.P50Ms), vis(e.Visibility.P95Ms), vis(e.Visibility.P99Ms), vis(e.Visibility.MaxMs),
			resolution(e.ResolutionMs), service, polls, probes, e.NeverSeen, before)
	}
	tw.Flush()
	for _, e := range rows {
		if e.Everywhere {
			if e.NeverSeen > 0 {
				fmt.Fprintf(w, "  everywhere: %d probes not seen on every endpoint: their values are lower bounds, their age when the measurement ended\n", e.NeverSeen)
			}
			continue
		}
		fmt.Fprintf(w, "  %s: %s; completeness %s\n", e.Name, orDash(e.URL), e.Audit)
	}
}

// endpointCells is one row of the HTML report's endpoints table.
type endpointCells struct {
	Name, URL                                       string
	FreshP50, FreshP99, VisP50, VisP95, VisP99, Max string
	Resolution, Service, Polls, Probes, NeverSeen   string
	Before, Audit                                   string
	Bad, Total                                      bool
}

// endpointSection is the HTML report's table of the endpoints; nil
// without read endpoints.
func endpointSection(r *results.Result) []endpointCells {
	var out []endpointCells
	for _, e := range endpointRows(r) {
		cell := func(s stats.Summary, v float64, not string) string {
			if not != "" {
				return "not measured"
			}
			return msOrDash(s, v)
		}
		c := endpointCells{
			Name: e.Name, URL: e.URL, Total: e.Everywhere,
			VisP50: cell(e.Visibility, e.Visibility.P50Ms, e.VisibilityNot), VisP95: cell(e.Visibility, e.Visibility.P95Ms, e.VisibilityNot),
			VisP99: cell(e.Visibility, e.Visibility.P99Ms, e.VisibilityNot), Max: cell(e.Visibility, e.Visibility.MaxMs, e.VisibilityNot),
			Resolution: resolution(e.ResolutionMs), NeverSeen: count(e.NeverSeen),
			Bad: e.NeverSeen > 0 || e.FailedPolls > 0 || e.FailedProbes > 0,
		}
		if !e.Everywhere {
			c.FreshP50, c.FreshP99 = cell(e.Freshness, e.Freshness.P50Ms, e.FreshnessNot), cell(e.Freshness, e.Freshness.P99Ms, e.FreshnessNot)
			c.Service = msOrDash(e.ProbeService, e.ProbeService.P50Ms)
			c.Polls = fmt.Sprintf("%s of %s", count(e.FailedPolls), count(e.Polls))
			c.Probes, c.Before, c.Audit = count(e.FailedProbes), count(e.BeforeTarget)+" / "+count(e.AfterTarget), e.Audit
		}
		out = append(out, c)
	}
	return out
}
