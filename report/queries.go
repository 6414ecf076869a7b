package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// ConsoleQueries writes the human summary of the query workload of r:
// per kind, and the ingest's figures over the same window when it ran
// beside; for a sweep, one row per step first. It writes nothing when r
// has no query results.
func ConsoleQueries(w io.Writer, r *results.Result) {
	q := r.Target().Queries
	if q == nil {
		return
	}
	if queriesAlone(r) { // Console did not introduce the run
		fmt.Fprintf(w, "freshbench %s: %s (%s)\n", r.Command, targetURL(r), r.Environment.TargetVersion)
		printWorkload(w, r)
		if r.EndedEarly {
			fmt.Fprintf(w, "ended early: %s (figures cover the time measured)\n", r.EndReason)
		}
	}
	if sw := r.QuerySweep; sw != nil {
		consoleSweep(w, sw)
	}
	if fr := r.Frontier; fr != nil {
		consoleFrontier(w, fr)
		fmt.Fprintf(w, "\nthe last rate's step at %g QPS:\n", q.TargetQPS)
	}
	if r.QuerySweep != nil {
		fmt.Fprintf(w, "\nbest step, %g QPS:\n", q.TargetQPS)
	}
	fmt.Fprintf(w, "query load: %s; mix %s, limit %d, miss share %g\n", loopText(q), q.Mix, q.Limit, q.MissShare)
	fmt.Fprintf(w, "%.1f s measured; achieved %s QPS; %d late, %d unsent", q.MeasuredS, rate(q.AchievedQPS), q.Total.Late, q.Unsent)
	if q.WaitedS > 0.05 {
		fmt.Fprintf(w, "; first query %.1f s after the start (written documents settling)", q.WaitedS)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "query\ttarget QPS\tachieved\tqueries\trows/query\tempty\tmisses\tfailed\tlatency p50\tp95\tp99\tp99.9\tmax\tservice p50\tp99\t\n")
	for _, k := range append(q.Kinds, q.Total) {
		l, s := k.Latency, k.ServiceTime
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			k.Kind, targetQPS(k), rate(k.AchievedQPS), k.Queries, k.RowsPerQuery(), k.Empty, k.Misses, k.Failed,
			msOrDash(l, l.P50Ms), msOrDash(l, l.P95Ms), msOrDash(l, l.P99Ms), msOrDash(l, l.P999Ms), msOrDash(l, l.MaxMs),
			msOrDash(s, s.P50Ms), msOrDash(s, s.P99Ms))
	}
	tw.Flush()
	fmt.Fprintln(w, "(ms; latency from the intended time, service time from sending)")
	consoleEndpointQueries(w, r)
	if b := q.Beside; b != nil {
		fmt.Fprintf(w, "beside the ingest: %s of %s events/s; freshness lag p50 %s, p95 %s, p99 %s ms; write latency p99 %s ms\n",
			rate(b.AchievedEventsPerSec), rate(b.TargetEventsPerSec),
			msOrDash(b.FreshnessLag, b.FreshnessLag.P50Ms), msOrDash(b.FreshnessLag, b.FreshnessLag.P95Ms), msOrDash(b.FreshnessLag, b.FreshnessLag.P99Ms),
			msOrDash(b.WriteLatency, b.WriteLatency.P99Ms))
	}
	errs := endpointQueryErrors(r)
	if len(errs) == 0 {
		fmt.Fprintln(w, "query errors: none")
		return
	}
	fmt.Fprintln(w, "query errors:")
	for _, e := range errs {
		fmt.Fprintf(w, "  %s %s: %s (%s)\n", e.Source, e.Kind, e.Count, e.Sample)
	}
}

// kindRow is one row of figures of a query kind (or of all kinds),
// labelled name.
func kindRow(name string, k *results.QueryKind, total bool) queryRow {
	l, s := k.Latency, k.ServiceTime
	return queryRow{
		Kind: name, TargetQPS: targetQPS(k), AchievedQPS: rate(k.AchievedQPS), Queries: count(k.Queries),
		RowsPerQuery: strconv.FormatFloat(k.RowsPerQuery(), 'f', 1, 64), Empty: count(k.Empty), Misses: count(k.Misses),
		Late: count(k.Late), Failed: count(k.Failed),
		P50: msOrDash(l, l.P50Ms), P95: msOrDash(l, l.P95Ms), P99: msOrDash(l, l.P99Ms), P999: msOrDash(l, l.P999Ms), Max: msOrDash(l, l.MaxMs),
		ServiceP50: msOrDash(s, s.P50Ms), ServiceP99: msOrDash(s, s.P99Ms),
		NoLatency: l.Count == 0, Total: total,
	}
}

// endpointQueryErrors are the query errors of every endpoint's load,
// each named by its endpoint when there are read endpoints.
func endpointQueryErrors(r *results.Result) []errorRow {
	var errs []errorRow
	for _, e := range r.Endpoints {
		if e.Queries == nil {
			continue
		}
		rows := queryErrors(e.Queries)
		for i := range rows {
			if len(r.Reads()) > 0 {
				rows[i].Source += " on " + e.Name
			}
		}
		errs = append(errs, rows...)
	}
	return errs
}

// consoleEndpointQueries writes, with read endpoints, the query load on
// each endpoint side by side, all kinds together (the table by kind
// above is the target's).
func consoleEndpointQueries(w io.Writer, r *results.Result) {
	if len(r.Reads()) == 0 {
		return
	}
	fmt.Fprintln(w, "\nthe same load on each endpoint (the table above is the target's), all kinds, ms:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "endpoint\tachieved QPS\tqueries\tfailed\tlatency p50\tp95\tp99\tmax\tservice p50\tp99\t\n")
	for _, e := range r.Endpoints {
		if e.Queries == nil || e.Queries.Total == nil {
			fmt.Fprintf(tw, "%s\tnone\t\t\t\t\t\t\t\t\t\n", e.Name)
			continue
		}
		k := e.Queries.Total
		l, sv := k.Latency, k.ServiceTime
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", e.Name, rate(e.Queries.AchievedQPS), k.Queries, k.Failed,
			msOrDash(l, l.P50Ms), msOrDash(l, l.P95Ms), msOrDash(l, l.P99Ms), msOrDash(l, l.MaxMs), msOrDash(sv, sv.P50Ms), msOrDash(sv, sv.P99Ms))
	}
	tw.Flush()
}

// queriesAlone tells whether r is a query load (its kind: one
// measurement or a sweep) that ran without an ingest beside it (it has no
// generators): there were no writes to report.
func queriesAlone(r *results.Result) bool {
	return (r.Kind == results.KindQuery || r.Kind == results.KindSweep) && len(r.Generators) == 0 && r.Target().Queries != nil
}

// QueryStepLine writes one line about the i-th step (from 0) of a QPS
// sweep, as it finishes.
func QueryStepLine(w io.Writer, i int, st *results.Queries) {
	l := st.Total.Latency
	fresh := ""
	if b := st.Beside; b != nil {
		fresh = ", freshness lag p95 " + msOrDash(b.FreshnessLag, b.FreshnessLag.P95Ms) + " ms"
	}
	fmt.Fprintf(w, "step %d  %g QPS: achieved %s, latency p50 %s, p99 %s ms, %d failed, %d unsent%s: %s\n",
		i+1, st.TargetQPS, rate(st.AchievedQPS), msOrDash(l, l.P50Ms), msOrDash(l, l.P99Ms), st.Total.Failed, st.Unsent, fresh, sweepVerdict(st))
}

func consoleSweep(w io.Writer, sw *results.QuerySweep) {
	fmt.Fprintf(w, "query sweep: %d step(s) held to %s\n", len(sw.Steps), sw.SLO)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "step\ttarget QPS\tachieved\tlatency at SLO ms\tp99 ms\tfailed\tunsent\tfreshness lag p95 ms\t  verdict\n")
	for i, st := range sw.Steps {
		mark := ""
		if sw.Found && i == sw.Best {
			mark = "*"
		}
		l := st.Total.Latency
		fresh := "–"
		if b := st.Beside; b != nil {
			fresh = msOrDash(b.FreshnessLag, b.FreshnessLag.P95Ms)
		}
		fmt.Fprintf(tw, "%d%s\t%g\t%s\t%s\t%s\t%d\t%d\t%s\t  %s\n", i+1, mark, st.TargetQPS, rate(st.AchievedQPS),
			stepLatency(st), msOrDash(l, l.P99Ms), st.Total.Failed, st.Unsent, fresh, sweepVerdict(st))
	}
	tw.Flush()
	if sw.Found {
		fmt.Fprintf(w, "highest QPS with %s (*): %g, achieved %s\n", sw.SLO, sw.QPS, rate(sw.AchievedQPS))
	} else {
		fmt.Fprintf(w, "no step met %s\n", sw.SLO)
	}
	fmt.Fprintf(w, "stopped: %s\n", sw.Reason)
}

func loopText(q *results.Queries) string {
	if q.Mode == "open" && q.Shape != "" {
		return fmt.Sprintf("open loop shaped %q, %.4g QPS on average over the measured window (at most %d in flight)", q.Shape, q.TargetQPS, q.MaxInflight)
	}
	if q.Mode == "open" {
		return fmt.Sprintf("open loop at %g QPS (at most %d in flight)", q.TargetQPS, q.MaxInflight)
	}
	return fmt.Sprintf("closed loop with %d worker(s): latency equals service time", q.Concurrency)
}

func targetQPS(k *results.QueryKind) string {
	if k.TargetQPS == 0 {
		return "–"
	}
	return rate(k.TargetQPS)
}

func stepLatency(st *results.Queries) string {
	if st.Verdict == nil || st.Total.Latency.Count == 0 {
		return "–"
	}
	return ms(st.Verdict.LatencyMs)
}

func sweepVerdict(st *results.Queries) string {
	switch {
	case st.Verdict == nil:
		return "not judged"
	case st.Verdict.Met:
		return "met"
	}
	return "missed: " + st.Verdict.Reason
}

// queryErrors lists the failed queries by kind of query and of error.
func queryErrors(q *results.Queries) []errorRow {
	var rows []errorRow
	for _, k := range q.Kinds {
		for _, e := range slices.Sorted(maps.Keys(k.Errors)) {
			c := k.Errors[e]
			sample := strings.ReplaceAll(c.Sample, "\n", " ")
			if len(sample) > 300 {
				sample = sample[:300] + "…"
			}
			rows = append(rows, errorRow{Source: k.Kind + " query", Kind: e, Count: count(c.Count), Sample: sample})
		}
	}
	return rows
}

// queriesView is the HTML report's query-load section.
type queriesView struct {
	Headline string
	Notes    []string
	Rows     []queryRow
	// Endpoints, with read endpoints, is the load on each endpoint, all
	// kinds (Rows are the target's).
	Endpoints []queryRow
	Beside    []fact
	Charts    []chartView
	Texts     []queryText
	Errors    []errorRow
	Sweep     *sweepView
	Frontier  *frontierView
}

type queryRow struct {
	Kind, TargetQPS, AchievedQPS, Queries, RowsPerQuery, Empty, Misses, Late, Failed string
	P50, P95, P99, P999, Max, ServiceP50, ServiceP99                                 string
	NoLatency, Total                                                                 bool
}

type queryText struct{ Kind, Text string }

type sweepView struct {
	Headline, Reason string
	Found            bool
	Rows             []sweepRow
}

type sweepRow struct {
	Index, TargetQPS, AchievedQPS, AtSLO, P99, Failed, Unsent, Freshness, Verdict, Reason string
	Met, Best                                                                             bool
}

// queryLoad renders the query-load results of res, or nil when it has none.
func queryLoad(res *results.Result) *queriesView {
	q := res.Target().Queries
	if q == nil {
		return nil
	}
	v := &queriesView{
		Headline: fmt.Sprintf("%s; achieved %s QPS over %s measured.", capitalize(loopText(q)), rate(q.AchievedQPS), seconds(q.MeasuredS)),
	}
	v.Notes = append(v.Notes, fmt.Sprintf("Mix %s; at most %d rows per query; %s of the parameters never written (misses); per-query timeout %s.",
		q.Mix, q.Limit, percentText(q.MissShare), seconds(q.TimeoutS)))
	if q.Unsent > 0 || q.Total.Late > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("%s queries were late and %s never sent: the target fell behind the schedule, and their wait is in the latency.", count(q.Total.Late), count(q.Unsent)))
	}
	if q.WaitedS > 0.05 {
		v.Notes = append(v.Notes, fmt.Sprintf("The first query went out %s after the start, once written documents had settled (%s) to draw parameters from.", seconds(q.WaitedS), seconds(q.SettleS)))
	}
	for _, k := range append(q.Kinds, q.Total) {
		v.Rows = append(v.Rows, kindRow(k.Kind, k, k == q.Total))
		if k.Text != "" {
			v.Texts = append(v.Texts, queryText{Kind: k.Kind, Text: k.Text})
		}
	}
	if len(res.Reads()) > 0 {
		for _, e := range res.Endpoints {
			if e.Queries != nil && e.Queries.Total != nil {
				v.Endpoints = append(v.Endpoints, kindRow(e.Name, e.Queries.Total, false))
			}
		}
	}
	if b := q.Beside; b != nil {
		v.Beside = []fact{
			{"ingest achieved", rate(b.AchievedEventsPerSec) + " of " + rate(b.TargetEventsPerSec) + " events/s"},
			{"freshness lag p50 · p95 · p99", lagText(b.FreshnessLag)},
			{"write latency p99", msOrDash(b.WriteLatency, b.WriteLatency.P99Ms) + " ms"},
		}
	}
	v.Charts = []chartView{
		percentileChart("Query latency", "intended time → answered, all kinds", "c-write", q.Total.LatencyHistogram),
		percentileChart("Query service time", "sent → answered, all kinds", "c-service", q.Total.ServiceTimeHistogram),
	}
	v.Errors = endpointQueryErrors(res)
	v.Sweep = sweepSection(res.QuerySweep)
	v.Frontier = frontierSection(res.Frontier)
	return v
}

// queryCards are the HTML report's headline figures of a query load that
// ran alone.
func queryCards(q *results.Queries) []card {
	t := q.Total
	l := t.Latency
	qps := card{Label: "Achieved QPS", Value: rate(q.AchievedQPS), Unit: "QPS", Sub: loopText(q)}
	if q.Mode == "open" && q.TargetQPS > 0 {
		share := q.AchievedQPS / q.TargetQPS
		qps.Sub = fmt.Sprintf("%.1f%% of target %s · %s measured", 100*share, rate(q.TargetQPS), seconds(q.MeasuredS))
		qps.Status = shareStatus(share)
	}
	errs := card{Label: "Query errors", Value: count(t.Failed), Unit: "failed", Status: "ok",
		Sub: fmt.Sprintf("of %s queries · %s unsent · %s late", count(t.Queries), count(q.Unsent), count(t.Late))}
	switch {
	case t.Failed > 0:
		errs.Status = "bad"
	case q.Unsent > 0:
		errs.Status = "warn"
	}
	return []card{
		qps,
		latencyCard("Query latency p95", l, l.P95Ms, "p50 "+msUnit(l.P50Ms)+" · service p95 "+msUnit(t.ServiceTime.P95Ms)),
		latencyCard("Query latency p99", l, l.P99Ms, "p99.9 "+msUnit(l.P999Ms)+" · max "+msUnit(l.MaxMs)),
		errs,
	}
}

// queryConfigFacts is the configuration of a query load.
func queryConfigFacts(q *results.Queries) []fact {
	seed := "random"
	if q.Seed != 0 {
		seed = strconv.FormatUint(q.Seed, 10)
	}
	return []fact{
		{"query load", loopText(q)},
		{"mix", q.Mix},
		{"rows per query at most", strconv.Itoa(q.Limit)},
		{"miss share", percentText(q.MissShare)},
		{"query timeout", seconds(q.TimeoutS)},
		{"settle", seconds(q.SettleS)},
		{"seed", seed},
	}
}

func lagText(s stats.Summary) string {
	if s.Count == 0 {
		return "no samples"
	}
	return ms(s.P50Ms) + " · " + ms(s.P95Ms) + " · " + ms(s.P99Ms) + " ms"
}

func sweepSection(sw *results.QuerySweep) *sweepView {
	if sw == nil {
		return nil
	}
	v := &sweepView{Found: sw.Found, Reason: "Stopped: " + sw.Reason + "."}
	if sw.Found {
		v.Headline = fmt.Sprintf("Highest QPS with %s: %g (achieved %s). The tables above show that step.", sw.SLO, sw.QPS, rate(sw.AchievedQPS))
	} else {
		v.Headline = fmt.Sprintf("No step met %s.", sw.SLO)
	}
	for i, st := range sw.Steps {
		l := st.Total.Latency
		r := sweepRow{
			Index: strconv.Itoa(i + 1), TargetQPS: strconv.FormatFloat(st.TargetQPS, 'f', -1, 64), AchievedQPS: rate(st.AchievedQPS),
			AtSLO: stepLatency(st), P99: msOrDash(l, l.P99Ms), Failed: count(st.Total.Failed), Unsent: count(st.Unsent), Freshness: "–",
			Best: sw.Found && i == sw.Best,
		}
		if b := st.Beside; b != nil {
			r.Freshness = msOrDash(b.FreshnessLag, b.FreshnessLag.P95Ms)
		}
		switch {
		case st.Verdict == nil:
			r.Verdict = "not judged"
		case st.Verdict.Met:
			r.Verdict, r.Met = "met", true
		default:
			r.Verdict, r.Reason = "missed", st.Verdict.Reason
		}
		v.Rows = append(v.Rows, r)
	}
	return v
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
