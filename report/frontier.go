package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/freshbench/freshbench/report/internal/svg"
	"github.com/freshbench/freshbench/results"
)

// FrontierStepLine prints the step that just ended of a frontier search:
// the ingest rate it runs beside, and the step.
func FrontierStepLine(w io.Writer, fr *results.Frontier) {
	p := fr.Points[len(fr.Points)-1]
	i := len(p.Sweep.Steps) - 1
	fmt.Fprintf(w, "ingest %s, ", p.IngestRate)
	QueryStepLine(w, i, p.Sweep.Steps[i])
}

// consoleFrontier prints the frontier: per ingest rate, the highest QPS
// that met the bound and the freshness there.
func consoleFrontier(w io.Writer, fr *results.Frontier) {
	fmt.Fprintf(w, "frontier: the highest QPS with %s at each ingest rate, and the freshness there\n", fr.SLO)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "ingest\tachieved\thighest QPS\tachieved QPS\tquery p50 ms\tp95\tp99\tfreshness lag p50 ms\tp95\tvisibility p50 ms\tp99\tmissing\tsteps\t\n")
	for _, p := range fr.Points {
		qps := "none met"
		if p.Found {
			qps = strconv.FormatFloat(p.QPS, 'g', -1, 64)
		}
		q, f, v := p.QueryLatency, p.FreshnessLag, p.VisibilityLatency
		fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t\n",
			p.IngestRate, rate(p.IngestAchieved), p.IngestUnit, qps, rate(p.AchievedQPS),
			msOrDash(q, q.P50Ms), msOrDash(q, q.P95Ms), msOrDash(q, q.P99Ms),
			msOrDash(f, f.P50Ms), msOrDash(f, f.P95Ms), msOrDash(v, v.P50Ms), msOrDash(v, v.P99Ms), p.Missing, len(p.Sweep.Steps))
	}
	tw.Flush()
	for _, p := range fr.Points {
		fmt.Fprintf(w, "  at %s: stopped %s\n", p.IngestRate, p.Sweep.Reason)
	}
	fmt.Fprintln(w, "(figures of each rate's highest QPS that met the bound; of its last step where none did)")
}

// frontierChart draws the frontier: ingest rate across, the highest QPS
// under the bound up, each point labelled with the freshness lag p95
// there.
func frontierChart(fr *results.Frontier) chartView {
	cv := chartView{
		Title: "Frontier: highest QPS with " + fr.SLO + " at each ingest rate",
		Note:  "One dot per ingest rate, at its achieved ingest, labelled with the freshness lag p95 at that point; a red dot at 0: no step met the bound.",
	}
	cv.Legend = []legendItem{{"c-query", "highest QPS"}}
	c := svg.New(halfW, halfH)
	cv.SVG = c
	hiX, hiY := 0.0, 0.0
	for _, p := range fr.Points {
		hiX, hiY = math.Max(hiX, math.Max(p.IngestTarget, p.IngestAchieved)), math.Max(hiY, p.QPS)
	}
	if hiX == 0 || len(fr.Points) == 0 {
		c.Empty = "no ingest rate measured"
		return cv
	}
	unit := fr.Points[0].IngestUnit
	x := c.XValueAxis(hiX*1.05, "achieved ingest, "+unit, svg.Compact)
	y := c.ValueAxis(math.Max(hiY, 1)*1.1, "highest QPS", svg.Compact)
	var xs, ys []float64
	for _, p := range fr.Points {
		px, py := x.At(p.IngestAchieved), y.At(p.QPS)
		class := "dot c-query"
		if !p.Found {
			class = "dot c-bad"
		}
		label := "freshness p95 " + msOrDash(p.FreshnessLag, p.FreshnessLag.P95Ms) + " ms"
		c.Marks = append(c.Marks, svg.Shape{Class: class, D: svg.Dot(px, py, 4),
			Title: fmt.Sprintf("ingest %s (achieved %s %s): highest QPS %g; %s", p.IngestRate, rate(p.IngestAchieved), unit, p.QPS, label)})
		c.Texts = append(c.Texts, svg.Text{X: px, Y: py - 10, Class: "point-label", Value: label, Anchor: "middle"})
		if p.Found {
			xs, ys = append(xs, px), append(ys, py)
		}
	}
	c.Lines = append(c.Lines, svg.Shape{Class: "c-query line thin", D: svg.Path(xs, ys)})
	return cv
}

type frontierView struct {
	Headline string
	Rows     []frontierRow
	Chart    chartView
}

type frontierRow struct {
	Ingest, Achieved, QPS, AchievedQPS, QueryP95, FreshP50, FreshP95, VisP50, VisP99, Missing, Steps, Reason string
	Found                                                                                                    bool
}

// frontierSection renders a frontier for the HTML report; nil without.
func frontierSection(fr *results.Frontier) *frontierView {
	if fr == nil {
		return nil
	}
	v := &frontierView{
		Headline: fmt.Sprintf("The highest QPS with %s at each of %d ingest rates, and the freshness there.", fr.SLO, len(fr.Points)),
		Chart:    frontierChart(fr),
	}
	for _, p := range fr.Points {
		q, f, vis := p.QueryLatency, p.FreshnessLag, p.VisibilityLatency
		row := frontierRow{
			Ingest: p.IngestRate, Achieved: rate(p.IngestAchieved) + " " + p.IngestUnit, QPS: "none met", AchievedQPS: rate(p.AchievedQPS),
			QueryP95: msOrDash(q, q.P95Ms), FreshP50: msOrDash(f, f.P50Ms), FreshP95: msOrDash(f, f.P95Ms),
			VisP50: msOrDash(vis, vis.P50Ms), VisP99: msOrDash(vis, vis.P99Ms), Missing: count(p.Missing),
			Steps: strconv.Itoa(len(p.Sweep.Steps)), Reason: p.Sweep.Reason, Found: p.Found,
		}
		if p.Found {
			row.QPS = strconv.FormatFloat(p.QPS, 'g', -1, 64)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}
