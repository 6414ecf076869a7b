// Package report renders results files for people: the console summary,
// the HTML report and comparisons. Nothing here measures, reads or writes
// a file: everything is rendered from a results.Result, by its kind.
package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// Console writes the human summary of a run, of a peak search, or of a
// run at throughput levels.
func Console(w io.Writer, r *results.Result) {
	switch {
	case r.Kind == results.KindPeak:
		consolePeak(w, r)
		return
	case isLevels(r):
		consoleLevels(w, r)
		return
	}
	consoleHeader(w, r)
	consoleRates(w, r.Summary)
	on := targetSuffix(r)
	consoleLatencies(w, r, on)
	consoleProbes(w, r)
	consoleEndpoints(w, r)
	consoleWrites(w, r)
	consoleCompleteness(w, r, on)
	consoleUpdates(w, r)
	consoleVia(w, r)
	consoleAccount(w, r)
	if c := r.DriverCPU; c != nil {
		fmt.Fprintf(w, "driver: %.1f s CPU over %.1f s (%.0f%% of one core of %d)%s\n", c.Seconds, c.WallS, c.CorePercent, r.Environment.Cores, driverWaitText(c))
	}
	consoleCeiling(w, r.Ceiling)
	consoleErrors(w, r)
}

// targetSuffix marks the target's rows when read endpoints have rows of
// their own.
func targetSuffix(r *results.Result) string {
	if len(r.Reads()) > 0 {
		return " (target)"
	}
	return ""
}

// consoleHeader says what ran, how, and whether it ran to the end.
func consoleHeader(w io.Writer, r *results.Result) {
	s := r.Summary
	fmt.Fprintf(w, "freshbench %s: %s (%s)\n", r.Command, targetURL(r), r.Environment.TargetVersion)
	printWorkload(w, r)
	fmt.Fprintf(w, "%.1f s measured after %.0f s warm-up; %d generator(s), batch size %d, doc size %d B, max in-flight %d\n",
		s.MeasuredS, r.Config.WarmupS, r.Config.Generators, r.Config.BatchSize, r.Config.DocSize, r.Config.MaxInflight)
	if r.Config.WriteShape != "" {
		fmt.Fprintf(w, "write shape: %s, factors of %s; the target below is its mean over the measured window\n", r.Config.WriteShape, r.Config.Rate)
	}
	switch {
	case r.Merged != nil:
		if r.EndedEarly {
			fmt.Fprintf(w, "incomplete: %s (figures are of the instances merged)\n", r.EndReason)
		}
		consoleInstances(w, r.Merged)
	case r.EndedEarly:
		fmt.Fprintf(w, "ended early: %s (figures cover the time measured)\n", r.EndReason)
	}
}

// consoleRates sets the achieved rates beside the targets.
func consoleRates(w io.Writer, s results.Summary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\ttarget\tachieved\t\n")
	fmt.Fprintf(tw, "events/s\t%.0f\t%.0f\t\n", s.TargetEventsPerSec, s.AchievedEventsPerSec)
	fmt.Fprintf(tw, "MB/s\t%.2f\t%.2f\t\n", s.TargetMBPerSec, s.AchievedMBPerSec)
	tw.Flush()
	fmt.Fprintln(w)
}

// consoleLatencies tabulates the latency distributions of the writes and
// of the target's freshness, visibility and update probes.
func consoleLatencies(w io.Writer, r *results.Result, on string) {
	s := r.Summary
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "latency (ms)\tcount\tp50\tp95\tp99\tmax\t\n")
	row := func(name string, h stats.Summary, notMeasured string) {
		consoleLatencyRow(tw, name, h, notMeasured)
	}
	row("write latency", s.WriteLatency, "")
	row("write service time", s.ServiceTime, "")
	row("freshness lag"+on, s.FreshnessLag, r.Target().Freshness.NotMeasured)
	row("visibility latency"+on, s.VisibilityLatency, r.Target().Visibility.NotMeasured)
	if s.VisibilityMidpoint.Count > 0 {
		row("  interval midpoint"+on, s.VisibilityMidpoint, r.Target().Visibility.NotMeasured)
	}
	row("probe query service"+on, s.ProbeQueryService, r.Target().Visibility.NotMeasured)
	if u := s.Updates; u != nil {
		row("update freshness lag"+on, u.FreshnessLag, r.Target().Updates.Freshness.NotMeasured)
		row("update visibility"+on, u.VisibilityLatency, r.Target().Updates.Visibility.NotMeasured)
	}
	tw.Flush()
}

// consoleLatencyRow writes one distribution's row, or why it has none.
func consoleLatencyRow(tw io.Writer, name string, h stats.Summary, notMeasured string) {
	if notMeasured != "" {
		fmt.Fprintf(tw, "%s\tnot measured\t\t\t\t\t\n", name)
		return
	}
	if h.Count == 0 {
		fmt.Fprintf(tw, "%s\t0\t-\t-\t-\t-\t\n", name)
		return
	}
	fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", name, h.Count, msOrDash(h, h.P50Ms), msOrDash(h, h.P95Ms), msOrDash(h, h.P99Ms), msOrDash(h, h.MaxMs))
}

// consoleCompleteness states the completeness audit over every endpoint,
// or why there was none.
func consoleCompleteness(w io.Writer, r *results.Result, on string) {
	s := r.Summary
	notAudited := ""
	for _, c := range r.Target().Completeness {
		if c.NotMeasured != "" {
			notAudited = c.NotMeasured
		}
	}
	switch {
	case notAudited != "":
		fmt.Fprintf(w, "completeness%s: not measured: %s\n", on, notAudited)
	case s.Audited:
		var acked, visible int64
		for _, c := range r.Target().Completeness {
			acked += c.Acknowledged
			visible += c.Visible
		}
		fmt.Fprintf(w, "completeness%s: %d acknowledged, %d visible, %s%d missing (lost), %s%d unexpected, %d duplicates\n",
			on, acked, visible, lateText(s.Late, s.ShownByRefresh, r.Drain), s.Missing, unackedText(s.Unacknowledged), s.Unexpected, s.Duplicates)
		consoleRecheck(w, r.Target().Completeness)
	case r.Target().AuditError != "":
		fmt.Fprintf(w, "completeness%s: not audited: %s\n", on, r.Target().AuditError)
	default:
		fmt.Fprintf(w, "completeness%s: not audited (run ended early)\n", on)
	}
}

// consoleErrors lists the errors of the writes and of every endpoint's
// queries, by kind, each with a sample.
func consoleErrors(w io.Writer, r *results.Result) {
	errs := map[string]*stats.ErrorCount{}
	for k, e := range r.Summary.Errors {
		errs["write "+k] = e
	}
	for _, ep := range r.Endpoints {
		on := ""
		if len(r.Reads()) > 0 {
			on = " on " + ep.Name
		}
		for k, e := range ep.Freshness.Errors {
			errs["freshness query"+on+" "+k] = e
		}
		for k, e := range ep.Visibility.Errors {
			errs["probe query"+on+" "+k] = e
		}
	}
	if len(errs) == 0 {
		fmt.Fprintln(w, "errors: none")
		return
	}
	fmt.Fprintln(w, "errors:")
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		e := errs[k]
		sample := e.Sample
		if len(sample) > 160 {
			sample = sample[:160] + "…"
		}
		if sample != "" {
			sample = " (" + strings.ReplaceAll(sample, "\n", " ") + ")"
		}
		fmt.Fprintf(w, "  %s: %d%s\n", k, e.Count, sample)
	}
}

// consoleUpdates accounts for an update stream: the measured phase's
// updates, their probes, and the lost-update audit on every endpoint.
func consoleUpdates(w io.Writer, r *results.Result) {
	u := r.Summary.Updates
	if u == nil {
		return
	}
	v := r.Target().Updates.Visibility
	fmt.Fprintf(w, "updates: %d of the events due (%s): %d acknowledged, %d failed; %d probes, %d seen, %d never seen, %d dropped\n",
		u.Dispatched, updateKeysText(r.Config), u.Acked, u.Failed, v.Probes, v.Seen, v.NeverSeen, v.Dropped)
	for _, ep := range r.Endpoints {
		if ep.Updates == nil {
			continue
		}
		on := ""
		if len(r.Reads()) > 0 {
			on = " on " + ep.Name
		}
		audit := ep.Updates.Audit
		var events, current, lost, unacked int64
		notMeasured := ep.Updates.AuditError
		for _, a := range audit {
			events, current, lost, unacked = events+a.Events, current+a.Current, lost+a.Lost, unacked+a.Unacknowledged
			if a.NotMeasured != "" {
				notMeasured = a.NotMeasured
			}
		}
		switch {
		case notMeasured != "":
			fmt.Fprintf(w, "update audit%s: not audited: %s\n", on, notMeasured)
		case len(audit) == 0:
			fmt.Fprintf(w, "update audit%s: not audited (run ended early)\n", on)
		default:
			fmt.Fprintf(w, "update audit%s: %d events updated: %d show the revision acknowledged last, %d lost updates (an older revision), %d show a revision never acknowledged\n",
				on, events, current, lost, unacked)
		}
	}
}

// lateText says how many events were not visible within the drain while
// the target was still catching up: late, not lost.
func lateText(late, shownByRefresh int64, d *results.Drain) string {
	if late == 0 || d == nil {
		return ""
	}
	if shownByRefresh > 0 {
		return fmt.Sprintf("%d not visible until a refresh forced at the drain's end (stored, not yet searchable: late, not lost), ", shownByRefresh) + lateText(late-shownByRefresh, 0, d)
	}
	lag := ""
	if d.BehindMs != nil {
		lag = ", showing the events up to " + msUnit(*d.BehindMs) + " before the schedule's end"
	}
	return fmt.Sprintf("%d not visible within the drain (%s; the target was still catching up%s: late, not lost), ", late, seconds(d.WaitedS), lag)
}

// consoleRecheck says what a re-check after the drain found of the late
// events.
func consoleRecheck(w io.Writer, cs []results.Completeness) {
	var late, up, still int64
	after := 0.0
	for _, c := range cs {
		if r := c.Recheck; r != nil {
			late, up, still, after = late+c.Late, up+r.TurnedUp, still+r.StillNotVisible, r.AfterS
		}
	}
	if late > 0 {
		fmt.Fprintf(w, "recheck %s after the drain: %d of the %d late events turned up, %d still not visible\n", seconds(after), up, late, still)
	}
}

// driverWaitText says how long the driver's threads waited for a CPU
// that other processes or its CPU quota held back, when that was
// measured.
func driverWaitText(c *results.DriverCPU) string {
	if c.WaitS <= 0 {
		return ""
	}
	return fmt.Sprintf("; waited %.1f s for a CPU that other processes or its CPU quota held back (%.0f%% of one core)", c.WaitS, c.WaitPercent)
}

// stepsBackText says how many of e's freshness answers went back to an
// older view than one already shown; "" when none did.
func stepsBackText(e *results.Endpoint) string {
	f := e.Freshness
	if f.StepsBack == 0 {
		return ""
	}
	return fmt.Sprintf("%s polls on %s showed an older view than an earlier one had (events already seen went out of sight again, up to %s ms back); their lag counts from that view",
		count(f.StepsBack), e.Name, ms(f.StepBackMaxMs))
}

// updateKeysText says how a run's updates chose their events.
func updateKeysText(c results.Config) string {
	return fmt.Sprintf("share %.2g, keys %s", c.UpdateShare, c.UpdateKeys)
}

// consoleProbes says how the freshness and visibility figures were taken
// and which of their values are lower bounds.
func consoleProbes(w io.Writer, r *results.Result) {
	f, v := r.Target().Freshness, r.Target().Visibility
	if f.NotMeasured != "" {
		fmt.Fprintf(w, "freshness: not measured: %s\n", f.NotMeasured)
	} else if f.Censored > 0 {
		fmt.Fprintf(w, "freshness: %d of the lag values are lower bounds, from polls that failed or timed out (see errors)\n", f.Censored)
	}
	for _, e := range r.Endpoints {
		if s := stepsBackText(e); s != "" {
			fmt.Fprintf(w, "freshness: %s\n", s)
		}
	}
	if v.NotMeasured != "" {
		fmt.Fprintf(w, "visibility: not measured: %s\n", v.NotMeasured)
		return
	}
	censored := ""
	if v.Censored > 0 {
		censored = fmt.Sprintf(" (%d of the latency values are lower bounds: their age when the measurement ended)", v.Censored)
	}
	fmt.Fprintf(w, "visibility: resolution %s ms p99, %s ms max (measured gaps between polls); %d probes, %d seen, %d never seen%s, %d dropped (write failed)\n",
		ms(v.ResolutionMs), ms(v.ResolutionMaxMs), v.Probes, v.Seen, v.NeverSeen, censored, v.Dropped)
	fmt.Fprintln(w, "visibility latency: the first query that saw each probe, an upper bound (the headline); interval midpoint: the middle of the window in which it became visible, ± half the resolution; \"> X\": a lower bound, reached by probes never seen")
	if l, ok := r.ProbeLoad(); ok {
		fmt.Fprintf(w, "probe load on the target: %s\n", probeLoadText(l))
	}
}

// probeLoadText is the rate and service time of the freshness and probe
// queries, which load the database they measure.
func probeLoadText(l results.ProbeLoad) string {
	service := func(s stats.Summary) string {
		if s.Count == 0 {
			return "none answered"
		}
		return fmt.Sprintf("service p50 %s ms, p99 %s ms", ms(s.P50Ms), ms(s.P99Ms))
	}
	return fmt.Sprintf("freshness polls %.1f/s (%s), probe queries %.1f/s (%s)",
		l.FreshnessPerSec, service(l.FreshnessService), l.ProbePerSec, service(l.ProbeService))
}

// consoleCeiling says what share of this machine's driver ceiling the
// run used, warning above the half, or why that is unknown.
func consoleCeiling(w io.Writer, c *results.Ceiling) {
	switch {
	case c == nil:
	case c.NotUsed != "":
		fmt.Fprintf(w, "driver ceiling unknown (%s): run freshbench calibrate\n", c.NotUsed)
	case c.Warning != "":
		fmt.Fprintf(w, "warning: %s\n", c.Warning)
	default:
		fmt.Fprintf(w, "driver ceiling: %.0f%% of it targeted, %.0f%% achieved (%.0f events/s, %s)\n",
			100*c.TargetShare, 100*c.AchievedShare, c.EventsPerSec, c.Method)
	}
}

// consoleWrites accounts for every event due in the measured phase, and
// says where the events of the other phases went.
func consoleWrites(w io.Writer, r *results.Result) {
	s := r.Summary
	retried := ""
	if s.EventsAckedOnRetry > 0 {
		retried = fmt.Sprintf(" (%d found stored by a retry)", s.EventsAckedOnRetry)
	}
	unsent := ""
	if s.UnsentWait.Count > 0 {
		unsent = fmt.Sprintf(" (had waited at least %s ms p50, %s ms max: a lower bound of their write latency)", ms(s.UnsentWait.P50Ms), ms(s.UnsentWait.MaxMs))
	}
	fmt.Fprintf(w, "writes: %d events due: %d acknowledged%s, %d failed, %d unsent%s; %d batches, %d late; %d retries\n",
		s.EventsDue, s.EventsAcked, retried, s.EventsFailed, s.EventsUnsent, unsent, s.Batches, s.LateBatches, s.Retries)
	for _, p := range r.Phases {
		switch {
		case p.Name == "measured":
		case p.Due > 0:
			fmt.Fprintf(w, "  %s (not in the figures): %d events due: %d acknowledged, %d failed, %d unsent\n", p.Name, p.Due, p.Acked, p.Failed, p.Unsent)
		case p.Throughput > 0:
			fmt.Fprintf(w, "  %s: %d events acknowledged after the schedule ended\n", p.Name, p.Throughput)
		}
	}
}

// consolePeak writes a peak search: one row per step and the peak.
func consolePeak(w io.Writer, r *results.Result) {
	c := r.Config
	fmt.Fprintf(w, "freshbench %s: %s (%s)\n", r.Command, targetURL(r), r.Environment.TargetVersion)
	printWorkload(w, r)
	hold := seconds(c.DurationS - c.WarmupS)
	if p := r.Peak; p != nil && p.Search != nil && p.Search.MaxHoldS > 0 {
		hold = fmt.Sprintf("%s to %s (until decided)", hold, seconds(p.Search.MaxHoldS))
	}
	fmt.Fprintf(w, "%d step(s) of %s after %s warm-up; %d generator(s), batch size %d, doc size %d B, max in-flight %d\n",
		len(r.Steps), hold, seconds(c.WarmupS), c.Generators, c.BatchSize, c.DocSize, c.MaxInflight)
	if r.EndedEarly {
		fmt.Fprintf(w, "ended early: %s (the steps measured are kept)\n", r.EndReason)
	}
	peak := -1
	if r.Peak != nil && r.Peak.Found {
		peak = r.Peak.Step
	}
	// With read endpoints, the lag and visibility columns are the
	// target's, and the probes visible everywhere have a column.
	everywhere := slices.ContainsFunc(r.Steps, func(st *results.Result) bool { return st.Summary.VisibleEverywhere != nil })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "step\ttarget\tachieved events/s\tMB/s\twrite p99 ms\tlag p50 ms\tlag p95 ms\tlag p99 ms\tvisibility p95 ms\t"
	if everywhere {
		head += "everywhere p95 ms\t"
	}
	fmt.Fprintf(tw, "%sfailed\tlate\t  verdict\n", head)
	for i, st := range r.Steps {
		s := st.Summary
		mark := ""
		if i == peak {
			mark = "*"
		}
		fmt.Fprintf(tw, "%d%s\t%s\t%.0f\t%.2f\t%s\t%s\t%s\t%s\t%s\t",
			i+1, mark, st.Config.Rate, s.AchievedEventsPerSec, s.AchievedMBPerSec, msOrDash(s.WriteLatency, s.WriteLatency.P99Ms),
			msOrDash(s.FreshnessLag, s.FreshnessLag.P50Ms), msOrDash(s.FreshnessLag, s.FreshnessLag.P95Ms), msOrDash(s.FreshnessLag, s.FreshnessLag.P99Ms),
			msOrDash(s.VisibilityLatency, s.VisibilityLatency.P95Ms))
		if everywhere {
			fmt.Fprintf(tw, "%s\t", everywhereP95(s))
		}
		fmt.Fprintf(tw, "%d\t%d\t  %s\n", s.EventsFailed, s.LateBatches, verdictText(st))
	}
	tw.Flush()
	if p := r.Peak; p != nil {
		if p.Found {
			fmt.Fprintf(w, "peak (*): step %d at %s, achieved %.0f events/s (%.2f MB/s)\n", p.Step+1, p.Rate, p.AchievedEventsPerSec, p.AchievedMBPerSec)
			if p.Interval != "" {
				fmt.Fprintf(w, "peak interval (sustainable, not sustainable): %s\n", p.Interval)
			}
		} else {
			fmt.Fprintf(w, "peak: none of %d step(s) was sustainable\n", len(r.Steps))
		}
		if p.NotYetKnown > 0 {
			fmt.Fprintf(w, "not yet known: %d step(s), counted as neither\n", p.NotYetKnown)
		}
		fmt.Fprintf(w, "stopped: %s (after %.0f s)\n", p.Reason, p.ElapsedS)
	}
	consoleCeiling(w, r.Ceiling)
}

// StepLine writes one line about the i-th step (from 0) of a peak search,
// as it finishes.
func StepLine(w io.Writer, i int, st *results.Result) {
	s := st.Summary
	everywhere := ""
	if s.VisibleEverywhere != nil {
		everywhere = ", visible everywhere p95 " + everywhereP95(s) + " ms"
	}
	fmt.Fprintf(w, "step %d  %s: achieved %.0f events/s (%.2f MB/s), write p99 %s ms, freshness lag p95 %s ms, visibility p95 %s ms%s, %d failed: %s\n",
		i+1, st.Config.Rate, s.AchievedEventsPerSec, s.AchievedMBPerSec, msOrDash(s.WriteLatency, s.WriteLatency.P99Ms),
		msOrDash(s.FreshnessLag, s.FreshnessLag.P95Ms), msOrDash(s.VisibilityLatency, s.VisibilityLatency.P95Ms), everywhere, s.EventsFailed, verdictText(st))
}

// everywhereP95 is the p95 of the probes visible everywhere, – without.
func everywhereP95(s results.Summary) string {
	if e := s.VisibleEverywhere; e != nil {
		return msOrDash(*e, e.P95Ms)
	}
	return "–"
}

// decisionPath says when a step held until its verdict was known
// decided, at how many looks: "decided at 2m0s (look 3): ".
func decisionPath(v *stats.Verdict) string {
	if v.Looks == 0 || v.DecidedAtS == 0 {
		return ""
	}
	return fmt.Sprintf("after %s (look %d): ", (time.Duration(v.DecidedAtS) * time.Second).Round(time.Second), v.Looks)
}

func verdictText(st *results.Result) string {
	switch {
	case st.Verdict == nil:
		return "not judged (" + orDefault(st.EndReason, "no verdict") + ")"
	}
	return decisionPath(st.Verdict) + st.Verdict.String()
}

// Recheck says what a re-check found of the events an audit had found
// late or missing: which turned up since.
func Recheck(w io.Writer, cs []results.Completeness) {
	found := false
	for _, c := range cs {
		if c.Late+c.Missing == 0 {
			continue
		}
		found = true
		r := c.Recheck
		if r == nil {
			fmt.Fprintf(w, "generator %s: %d late, %d missing: not re-checked (the target did not answer)\n", c.Generator, c.Late, c.Missing)
			continue
		}
		cut := ""
		if c.NotVisibleCut {
			cut = " (of the first ranges only: the results keep a bounded list)"
		}
		fmt.Fprintf(w, "generator %s: %d late, %d missing at the drain's end; %s later, %d turned up, %d still not visible%s\n",
			c.Generator, c.Late, c.Missing, seconds(r.AfterS), r.TurnedUp, r.StillNotVisible, cut)
	}
	if !found {
		fmt.Fprintln(w, "every acknowledged event was visible at the drain's end: nothing to re-check")
	}
}
