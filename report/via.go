package report

import (
	"fmt"
	"io"
	"math"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/report/internal/svg"
	"github.com/freshbench/freshbench/results"
)

// consoleVia says, for a run whose events passed through an
// intermediary, what its figures mean (acknowledged = by Kafka; missing =
// lost in the pipeline); the intermediary's own account is in the
// server's account.
func consoleVia(w io.Writer, r *results.Result) {
	if r.Config.Via == "" {
		return
	}
	fmt.Fprintf(w, "via %s: writes acknowledged by Kafka; missing = acknowledged by Kafka, never visible: lost in the pipeline\n", redact.URL(r.Config.Via))
}

// backlogChart draws the sink's consumer lag over the run (a run --via),
// nil for a run of direct writes.
func backlogChart(r *results.Result) *chartView {
	if r.Config.Via == "" {
		return nil
	}
	cv := &chartView{
		Title:  "Backlog in Kafka over time",
		Note:   "Per interval, the largest consumer lag of the sink that Kafka reported (sampled each second): events acknowledged by Kafka that the sink had not committed.",
		Legend: []legendItem{{"c-write", "consumer lag (max per interval)"}},
	}
	pts := r.Series
	c := svg.New(halfW, halfH)
	cv.SVG = c
	if len(pts) == 0 {
		c.Empty = "no per-interval series in this result"
		return cv
	}
	end := seriesEnd(pts)
	x := c.TimeAxis(end)
	var hi float64
	for _, p := range pts {
		hi = math.Max(hi, float64(p.Backlog))
	}
	y := c.ValueAxis(math.Max(hi, 1)*1.08, "records", svg.Compact)
	phaseBands(c, r, x, end)
	xs, lag := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i], lag[i] = x.At(p.StartS+p.WidthS/2), y.At(float64(p.Backlog))
		c.Hover(len(pts), svg.Shape{X: x.At(p.StartS), Y: c.Plot.Y, W: x.At(p.StartS+p.WidthS) - x.At(p.StartS), H: c.Plot.H,
			Title: fmt.Sprintf("%s–%s s: consumer lag up to %d records", svg.Compact(p.StartS), svg.Compact(p.StartS+p.WidthS), p.Backlog)})
	}
	c.Lines = append(c.Lines, svg.Shape{Class: "c-write line", D: svg.Path(xs, lag)})
	return cv
}
