package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/freshbench/freshbench/report/internal/svg"
	"github.com/freshbench/freshbench/results"
)

// isolationView is the isolation experiment's section: what each burst
// did, and each window's figures.
type isolationView struct {
	Headline string
	Bursts   []isolationBurstRow
	Windows  []isolationWindowRow
}

type isolationBurstRow struct {
	Load, Endpoint, Window                              string
	QueryP95, QueryP99, Freshness, Visibility, WriteP95 string
	Recovery                                            string
	Recovered                                           bool
}

type isolationWindowRow struct {
	Window, Span, Endpoint, WriteP50, WriteP95, WriteFailed, WriteUnsent string
	Queries, QueryP50, QueryP95, QueryP99, QueryErrors                   string
	FreshP50, FreshP95, VisP50, VisP95                                   string
}

func isolationHeadline(iso *results.Isolation) string {
	return fmt.Sprintf("Each load ×%g for %s in turn. Interference: the burst window's p95 over the baseline's. Recovered: query p95 and freshness lag p95 back within %g× the baseline's, judged in buckets of %s.",
		iso.Factor, seconds(iso.BurstS), iso.Band, seconds(iso.ResolutionS))
}

func isolationSection(r *results.Result) *isolationView {
	iso := r.Isolation
	if iso == nil {
		return nil
	}
	v := &isolationView{Headline: isolationHeadline(iso)}
	for _, b := range iso.Bursts {
		for _, e := range b.Endpoints {
			v.Bursts = append(v.Bursts, isolationBurstRow{
				Load: b.Load, Endpoint: e.Endpoint, Window: fmt.Sprintf("%s–%s", seconds(b.FromS), seconds(b.ToS)),
				QueryP95: times(e.QueryP95Ratio), QueryP99: times(e.QueryP99Ratio), Freshness: times(e.FreshnessRatio),
				Visibility: times(e.VisibilityRatio), WriteP95: times(b.WriteP95Ratio),
				Recovery: recoveryText(e), Recovered: e.Recovered,
			})
		}
	}
	for _, w := range iso.Windows {
		for i, e := range w.Endpoints {
			row := isolationWindowRow{Endpoint: e.Endpoint,
				Queries: count(e.QueryLatency.N), QueryP50: quantile(e.QueryLatency, e.QueryLatency.P50Ms), QueryP95: quantile(e.QueryLatency, e.QueryLatency.P95Ms),
				QueryP99: quantile(e.QueryLatency, e.QueryLatency.P99Ms), QueryErrors: errorsByKind(e.QueryErrors),
				FreshP50: quantile(e.FreshnessLag, e.FreshnessLag.P50Ms), FreshP95: quantile(e.FreshnessLag, e.FreshnessLag.P95Ms),
				VisP50: quantile(e.Visibility, e.Visibility.P50Ms), VisP95: quantile(e.Visibility, e.Visibility.P95Ms)}
			if i == 0 {
				row.Window, row.Span = w.Name, fmt.Sprintf("%s–%s", seconds(w.FromS), seconds(w.ToS))
				row.WriteP50, row.WriteP95 = quantile(w.WriteLatency, w.WriteLatency.P50Ms), quantile(w.WriteLatency, w.WriteLatency.P95Ms)
				row.WriteFailed, row.WriteUnsent = count(w.WritesFailed), count(w.WritesUnsent)
				if w.WritesUnsent > 0 && w.WriteLatency.N > 0 {
					row.WriteP50, row.WriteP95 = "> "+row.WriteP50, "> "+row.WriteP95
				}
			}
			v.Windows = append(v.Windows, row)
		}
	}
	return v
}

// ConsoleIsolation writes the interference and recovery table, then each
// window's figures.
func ConsoleIsolation(w io.Writer, r *results.Result) {
	v := isolationSection(r)
	if v == nil {
		return
	}
	fmt.Fprintf(w, "\nisolation: %s\n", v.Headline)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "burst\tendpoint\twindow\tquery p95\tquery p99\tfreshness p95\tvisibility p95\twrite p95\trecovery\t")
	for _, b := range v.Bursts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", b.Load, b.Endpoint, b.Window, b.QueryP95, b.QueryP99, b.Freshness, b.Visibility, b.WriteP95, b.Recovery)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nper window (ms; queries and writes by intended time, probes by write time, freshness lags by sample time):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window\tfrom–to\twrite p50\tp95\tfailed\tunsent\tendpoint\tqueries\tquery p50\tp95\tp99\terrors\tfreshness p50\tp95\tvisibility p50\tp95\t")
	for _, x := range v.Windows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", x.Window, x.Span, x.WriteP50, x.WriteP95, x.WriteFailed, x.WriteUnsent,
			x.Endpoint, x.Queries, x.QueryP50, x.QueryP95, x.QueryP99, x.QueryErrors, x.FreshP50, x.FreshP95, x.VisP50, x.VisP95)
	}
	tw.Flush()
	if q := r.Target().Queries; q != nil && q.Unsent > 0 {
		fmt.Fprintf(w, "%s queries due were never sent (the load fell behind its in-flight bound): their latency, longer than any answered, is in no window's figures, which are lower bounds where they fell.\n", count(q.Unsent))
	}
}

// burstBands shades each burst of an isolation run on a time chart.
func burstBands(c *svg.Chart, r *results.Result, x svg.Scale) {
	if r.Isolation == nil {
		return
	}
	for _, b := range r.Isolation.Bursts {
		name := fmt.Sprintf("%s ×%g", b.Load, r.Isolation.Factor)
		c.Bands = append(c.Bands, svg.Shape{Class: "band-burst", X: x.At(b.FromS), Y: c.Plot.Y, W: x.At(b.ToS) - x.At(b.FromS), H: c.Plot.H, Title: name + " burst"})
		c.Texts = append(c.Texts, svg.Text{X: x.At(b.FromS) + 6, Y: c.Plot.Y + 14, Class: "band-label", Value: name})
	}
}

// times is a ratio as "×3.2", or "not known" without samples on either
// side.
func times(v *float64) string {
	if v == nil {
		return "not known"
	}
	return fmt.Sprintf("×%.3g", *v)
}

func recoveryText(e *results.BurstEndpoint) string {
	switch {
	case e.RecoveryNotKnown:
		return "not yet known (≥ " + seconds(e.RecoveryS) + "; no samples after)"
	case !e.Recovered:
		return "> " + seconds(e.RecoveryS) + ", not recovered by the end"
	}
	return seconds(e.RecoveryS)
}

func quantile(q results.Quantiles, v float64) string {
	if q.N == 0 {
		return "-"
	}
	return ms(v)
}

func errorsByKind(m map[string]int64) string {
	if len(m) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// isolationMetrics compare what each burst did on each endpoint, when
// some result is an isolation run.
func isolationMetrics(rs []*results.Result) []metric {
	type key struct{ load, endpoint string }
	var keys []key
	for _, r := range rs {
		if r.Isolation == nil {
			continue
		}
		for _, b := range r.Isolation.Bursts {
			for _, e := range b.Endpoints {
				if k := (key{b.Load, e.Endpoint}); !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	var list []metric
	for _, k := range keys {
		find := func(r *results.Result) *results.BurstEndpoint {
			if r.Isolation == nil {
				return nil
			}
			for _, b := range r.Isolation.Bursts {
				for _, e := range b.Endpoints {
					if b.Load == k.load && e.Endpoint == k.endpoint {
						return e
					}
				}
			}
			return nil
		}
		ratio := func(f func(*results.BurstEndpoint) *float64) func(*results.Result) (float64, bool) {
			return func(r *results.Result) (float64, bool) {
				if e := find(r); e != nil && f(e) != nil {
					return *f(e), true
				}
				return 0, false
			}
		}
		x := func(v float64) string { return fmt.Sprintf("×%.3g", v) }
		name := k.load + " burst on " + k.endpoint + ": "
		list = append(list,
			metric{name + "query p95 ×", ratio(func(e *results.BurstEndpoint) *float64 { return e.QueryP95Ratio }), x, nil},
			metric{name + "freshness p95 ×", ratio(func(e *results.BurstEndpoint) *float64 { return e.FreshnessRatio }), x, nil},
			metric{name + "recovery s", func(r *results.Result) (float64, bool) {
				if e := find(r); e != nil {
					return e.RecoveryS, true
				}
				return 0, false
			}, func(v float64) string { return seconds(v) }, func(r *results.Result) bool {
				e := find(r)
				return e != nil && !e.Recovered // not recovered, or not known: a lower bound
			}},
		)
	}
	return list
}
