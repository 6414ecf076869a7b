package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/stats"
)

// Console writes the human summary of a run.
func Console(w io.Writer, r *bench.Result) {
	s := r.Summary
	fmt.Fprintf(w, "freshbench %s: %s (%s)\n", r.Command, r.Environment.TargetURL, r.Environment.TargetVersion)
	fmt.Fprintf(w, "%.1f s measured after %.0f s warm-up; %d generator(s), batch size %d, doc size %d B, max in-flight %d\n",
		s.MeasuredS, r.Config.WarmupS, r.Config.Generators, r.Config.BatchSize, r.Config.DocSize, r.Config.MaxInflight)
	if r.EndedEarly {
		fmt.Fprintf(w, "ended early: %s (figures cover the time measured)\n", r.EndReason)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\ttarget\tachieved\t\n")
	fmt.Fprintf(tw, "events/s\t%.0f\t%.0f\t\n", s.TargetEventsPerSec, s.AchievedEventsPerSec)
	fmt.Fprintf(tw, "MB/s\t%.2f\t%.2f\t\n", s.TargetMBPerSec, s.AchievedMBPerSec)
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "latency (ms)\tcount\tp50\tp95\tp99\tmax\t\n")
	row := func(name string, h stats.Summary) {
		if h.Count == 0 {
			fmt.Fprintf(tw, "%s\t0\t-\t-\t-\t-\t\n", name)
			return
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", name, h.Count, ms(h.P50Ms), ms(h.P95Ms), ms(h.P99Ms), ms(h.MaxMs))
	}
	row("write latency", s.WriteLatency)
	row("write service time", s.ServiceTime)
	row("freshness lag", s.FreshnessLag)
	row("visibility latency", s.VisibilityLatency)
	row("probe query service", s.ProbeQueryService)
	tw.Flush()
	v := r.Visibility
	fmt.Fprintf(w, "visibility: resolution %s ms (longest gap between polls); %d probes, %d seen, %d never seen, %d dropped (write failed)\n",
		ms(v.ResolutionMs), v.Probes, v.Seen, v.NeverSeen, v.Dropped)
	fmt.Fprintf(w, "writes: %d batches, %d late; %d events acknowledged, %d failed, %d unsent; %d retries\n",
		s.Batches, s.LateBatches, s.EventsAcked, s.EventsFailed, s.EventsUnsent, s.Retries)
	switch {
	case s.Audited:
		var acked, visible int64
		for _, c := range r.Completeness {
			acked += c.Acknowledged
			visible += c.Visible
		}
		fmt.Fprintf(w, "completeness: %d acknowledged, %d visible, %d missing, %d unexpected, %d duplicates\n",
			acked, visible, s.Missing, s.Unexpected, s.Duplicates)
	case r.AuditError != "":
		fmt.Fprintf(w, "completeness: not audited: %s\n", r.AuditError)
	default:
		fmt.Fprintf(w, "completeness: not audited (run ended early)\n")
	}
	errs := map[string]*stats.ErrorCount{}
	for k, e := range s.Errors {
		errs["write "+k] = e
	}
	for k, e := range r.Freshness.Errors {
		errs["freshness query "+k] = e
	}
	for k, e := range r.Visibility.Errors {
		errs["probe query "+k] = e
	}
	if len(errs) == 0 {
		fmt.Fprintln(w, "errors: none")
		return
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "errors:")
	for _, k := range keys {
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

func ms(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
