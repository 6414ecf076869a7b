package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/report/internal/svg"
	"github.com/freshbench/freshbench/results"
)

// consoleVia says, for a run whose events passed through Kafka, what its
// figures mean (acknowledged = by Kafka; missing = lost in the pipeline)
// and Kafka's own account: the topic's records and the sink's consumer
// lag at the start and the end of the measured phase.
func consoleVia(w io.Writer, r *results.Result) {
	if r.Config.Via == "" {
		return
	}
	fmt.Fprintf(w, "via %s: writes acknowledged by Kafka; missing = acknowledged by Kafka, never visible: lost in the pipeline\n", redact.URL(r.Config.Via))
	a := r.ServerAccount
	switch {
	case a == nil:
		return
	case a.Error != "":
		fmt.Fprintf(w, "  Kafka's account: %s\n", a.Error)
		return
	case a.Start == nil || a.End == nil || a.Start.Kafka == nil || a.End.Kafka == nil:
		return
	}
	start, end := a.Start.Kafka, a.End.Kafka
	fmt.Fprintf(w, "  topic %s: %d records at the start of the measured phase, %d at its end\n", end.Topic, records(start), records(end))
	before := map[string]int64{}
	for _, g := range start.Groups {
		before[g.Group] = g.Lag
	}
	if len(end.Groups) == 0 {
		fmt.Fprintln(w, "  consumer lag: no group committed offsets on the topic (no sink, or it has not committed yet)")
		return
	}
	var lags []string
	for _, g := range end.Groups {
		from := "-"
		if l, ok := before[g.Group]; ok {
			from = fmt.Sprint(l)
		}
		lags = append(lags, fmt.Sprintf("%s %s → %d records", g.Group, from, g.Lag))
	}
	slices.Sort(lags)
	fmt.Fprintf(w, "  consumer lag (records the sink has not committed): %s\n", strings.Join(lags, ", "))
}

// records is how many records the topic holds, over its partitions.
func records(a *results.KafkaAccount) int64 {
	var n int64
	for _, o := range a.EndOffsets {
		n += o
	}
	return n
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
