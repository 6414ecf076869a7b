package report

// The charts of the HTML report: each turns part of a results file into an
// svg.Chart and the words around it (title, note, legend).

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/freshbench/freshbench/report/internal/svg"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// chartView is one chart of the page with the words around it.
type chartView struct {
	Title, Note string
	Legend      []legendItem
	SVG         *svg.Chart
}

// legendItem names the class (colour) of one series.
type legendItem struct{ Class, Name string }

// Chart sizes in user units: the CSS scales them to the page width, so
// these only set the aspect ratio and the relative size of the text.
const (
	wideW, wideH = 1160, 300
	halfW, halfH = 560, 280
)

// seriesEnd is the end of the last interval, in seconds.
func seriesEnd(pts []stats.Point) float64 {
	end := 0.0
	for _, p := range pts {
		end = math.Max(end, p.StartS+p.WidthS)
	}
	return end
}

// phaseBands shades the warm-up and the time after the schedule, so that
// nobody reads figures from them as measured ones.
func phaseBands(c *svg.Chart, r *results.Result, x svg.Scale, end float64) {
	if w := r.Config.WarmupS; w > 0 {
		c.Bands = append(c.Bands, svg.Shape{Class: "band-warmup", X: x.At(0), Y: c.Plot.Y, W: x.At(w) - x.At(0), H: c.Plot.H, Title: "warm-up: not measured"})
		c.Texts = append(c.Texts, svg.Text{X: x.At(0) + 6, Y: c.Plot.Y + 14, Class: "band-label", Value: "warm-up"})
	}
	if d := r.Config.DurationS; d > 0 && end > d {
		c.Bands = append(c.Bands, svg.Shape{Class: "band-tail", X: x.At(d), Y: c.Plot.Y, W: x.At(end) - x.At(d), H: c.Plot.H, Title: "after the schedule: acknowledgements still arriving"})
	}
	burstBands(c, r, x)
}

func throughputChart(r *results.Result) chartView {
	pts := r.Series
	cv := chartView{
		Title:  "Throughput over time",
		Note:   "Events per second, target against acknowledged. Red bands: intervals with failed writes or no acknowledgement at all.",
		Legend: throughputLegend(pts),
	}
	c := svg.New(wideW, wideH)
	cv.SVG = c
	if len(pts) == 0 {
		c.Empty = "no per-interval series in this result"
		return cv
	}
	end := seriesEnd(pts)
	x := c.TimeAxis(end)
	y := c.ValueAxis(peakEventRate(pts)*1.08, "events/s", svg.Compact)
	phaseBands(c, r, x, end)
	// The target is drawn as steps (it is what the schedule asked for in
	// each interval); the others are per-interval values at the midpoints.
	tx, ty := targetSteps(r, x, y)
	fx, fy := failureSteps(pts, x, y)
	xs, acked := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		w := intervalWidth(p)
		x0, x1 := x.At(p.StartS), x.At(p.StartS+w)
		xs[i] = (x0 + x1) / 2
		acked[i] = y.At(float64(p.AckedEvents) / w)
		if p.AckedEvents == 0 && p.TargetEvents == 0 {
			acked[i] = math.NaN() // nothing asked, nothing due: not a drop
		}
		annotateInterval(c, p, x0, x1, xs[i], len(pts))
	}
	base := y.At(0)
	c.Areas = append(c.Areas, svg.Shape{Class: "area-achieved", D: svg.Area(xs, acked, base)})
	c.Lines = append(c.Lines,
		svg.Shape{Class: "c-target line dashed", D: svg.Path(tx, ty)},
		svg.Shape{Class: "c-achieved line", D: svg.Path(xs, acked)},
	)
	if len(fx) > 0 {
		c.Areas = append(c.Areas, svg.Shape{Class: "area-failed", D: svg.Area(fx, fy, base)})
		c.Lines = append(c.Lines, svg.Shape{Class: "c-failed line", D: svg.Path(fx, fy)})
	}
	return cv
}

// throughputLegend names failed events and late batches only when there
// are some: an entry for nothing would send the reader looking.
func throughputLegend(pts []stats.Point) []legendItem {
	legend := []legendItem{{"c-target", "target"}, {"c-achieved", "acknowledged"}}
	var failed, late int64
	for _, p := range pts {
		failed += p.FailedEvents
		late += p.LateBatches
	}
	if failed > 0 {
		legend = append(legend, legendItem{"c-failed", "failed"})
	}
	if late > 0 {
		legend = append(legend, legendItem{"c-late", "late batches"})
	}
	return legend
}

// peakEventRate is the highest rate, target or answered, of any interval.
func peakEventRate(pts []stats.Point) float64 {
	hi := 0.0
	for _, p := range pts {
		if p.WidthS > 0 {
			hi = math.Max(hi, math.Max(float64(p.TargetEvents), float64(p.AckedEvents+p.FailedEvents))/p.WidthS)
		}
	}
	return hi
}

// intervalWidth is a point's width in seconds, 1 when it has none.
func intervalWidth(p stats.Point) float64 {
	if p.WidthS <= 0 {
		return 1
	}
	return p.WidthS
}

// targetSteps draws the schedule's rate as a step over each interval,
// none past the schedule's end.
func targetSteps(r *results.Result, x, y svg.Scale) (tx, ty []float64) {
	for _, p := range r.Series {
		w := intervalWidth(p)
		target := float64(p.TargetEvents) / w
		if p.TargetEvents == 0 && p.StartS >= r.Config.DurationS && r.Config.DurationS > 0 {
			target = math.NaN() // the schedule is over: no target to show
		}
		ty = append(ty, y.At(target), y.At(target))
		if math.IsNaN(target) {
			ty[len(ty)-2], ty[len(ty)-1] = math.NaN(), math.NaN()
		}
		tx = append(tx, x.At(p.StartS), x.At(p.StartS+w))
	}
	return tx, ty
}

// failureSteps draws failures as steps over the intervals that had them,
// and not at all elsewhere: a red line along zero reads as noise.
func failureSteps(pts []stats.Point, x, y svg.Scale) (fx, fy []float64) {
	for _, p := range pts {
		x0, x1 := x.At(p.StartS), x.At(p.StartS+intervalWidth(p))
		if p.FailedEvents > 0 {
			f := y.At(float64(p.FailedEvents) / intervalWidth(p))
			if len(fy) == 0 || math.IsNaN(fy[len(fy)-1]) || fx[len(fx)-1] != x0 {
				fx, fy = append(fx, x0), append(fy, y.At(0))
			} else {
				// Continue the previous interval's step instead of
				// dropping to zero between them.
				fx, fy = fx[:len(fx)-1], fy[:len(fy)-1]
			}
			fx, fy = append(fx, x0, x1, x1), append(fy, f, f, y.At(0))
		} else if len(fy) > 0 && !math.IsNaN(fy[len(fy)-1]) {
			fx, fy = append(fx, x0), append(fy, math.NaN())
		}
	}
	return fx, fy
}

// annotateInterval marks an interval with failures or no answer at all,
// with late batches, and gives it its hover text.
func annotateInterval(c *svg.Chart, p stats.Point, x0, x1, mid float64, n int) {
	w := intervalWidth(p)
	title := fmt.Sprintf("%s–%s s: target %s/s, acknowledged %s/s, failed %s, late batches %s",
		svg.Compact(p.StartS), svg.Compact(p.StartS+w), rate(float64(p.TargetEvents)/w), rate(float64(p.AckedEvents)/w), count(p.FailedEvents), count(p.LateBatches))
	if p.FailedEvents > 0 || (p.TargetEvents > 0 && p.AckedEvents == 0) {
		c.Bands = append(c.Bands, svg.Shape{Class: "band-outage", X: x0, Y: c.Plot.Y, W: x1 - x0, H: c.Plot.H, Title: title})
	}
	if p.LateBatches > 0 {
		c.Marks = append(c.Marks, svg.Shape{Class: "mark-late", D: svg.Triangle(mid, c.PlotBottom-7, 6),
			Title: fmt.Sprintf("%s late batches in %s–%s s", count(p.LateBatches), svg.Compact(p.StartS), svg.Compact(p.StartS+w))})
	}
	c.Hover(n, svg.Shape{X: x0, Y: c.Plot.Y, W: x1 - x0, H: c.Plot.H, Title: title})
}

func writeLatencyChart(r *results.Result) chartView {
	cv := chartView{
		Title:  "Write latency over time",
		Note:   "Per interval, from each batch's intended time to its acknowledgement.",
		Legend: []legendItem{{"c-write", "p99"}, {"c-max", "max"}},
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
	var vals []float64
	for _, p := range pts {
		if p.WriteMaxMs > 0 {
			vals = append(vals, p.WriteP99Ms, p.WriteMaxMs)
		}
	}
	y := c.TimelineMsAxis(vals)
	phaseBands(c, r, x, end)
	xs, p99, mx := make([]float64, len(pts)), make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i] = x.At(p.StartS + p.WidthS/2)
		p99[i], mx[i] = math.NaN(), math.NaN()
		if p.WriteMaxMs > 0 {
			p99[i], mx[i] = y.At(p.WriteP99Ms), y.At(p.WriteMaxMs)
		}
		c.Hover(len(pts), svg.Shape{X: x.At(p.StartS), Y: c.Plot.Y, W: x.At(p.StartS+p.WidthS) - x.At(p.StartS), H: c.Plot.H,
			Title: fmt.Sprintf("%s–%s s: p99 %s, max %s", svg.Compact(p.StartS), svg.Compact(p.StartS+p.WidthS), msUnit(p.WriteP99Ms), msUnit(p.WriteMaxMs))})
	}
	c.Lines = append(c.Lines, svg.Shape{Class: "c-max line thin", D: svg.Path(xs, mx)}, svg.Shape{Class: "c-write line", D: svg.Path(xs, p99)})
	return cv
}

func freshnessChart(r *results.Result) chartView {
	cv := chartView{
		Title:  "Freshness lag over time",
		Note:   "Per interval, the largest lag sampled: how stale the newest queryable event was.",
		Legend: []legendItem{{"c-fresh", "freshness lag (max per interval)"}},
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
	var vals []float64
	for _, p := range pts {
		if p.FreshnessN > 0 {
			vals = append(vals, p.FreshnessLagMs)
		}
	}
	y := c.TimelineMsAxis(vals)
	phaseBands(c, r, x, end)
	xs, lag := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i] = x.At(p.StartS + p.WidthS/2)
		lag[i] = math.NaN()
		if p.FreshnessN > 0 {
			lag[i] = y.At(p.FreshnessLagMs)
			c.Hover(len(pts), svg.Shape{X: x.At(p.StartS), Y: c.Plot.Y, W: x.At(p.StartS+p.WidthS) - x.At(p.StartS), H: c.Plot.H,
				Title: fmt.Sprintf("%s–%s s: lag up to %s (%d samples)", svg.Compact(p.StartS), svg.Compact(p.StartS+p.WidthS), msUnit(p.FreshnessLagMs), p.FreshnessN)})
		}
	}
	c.Areas = append(c.Areas, svg.Shape{Class: "area-fresh", D: svg.Area(xs, lag, y.At(0))})
	c.Lines = append(c.Lines, svg.Shape{Class: "c-fresh line", D: svg.Path(xs, lag)})
	return cv
}

// percentileChart draws an HdrHistogram-style percentile curve: the x axis
// is 1/(1−q) by decades (0 %, 90 %, 99 %, 99.9 % …), so the tail gets as
// much room as the body.
func percentileChart(title, note, class string, h *stats.Histogram) chartView {
	cv := chartView{Title: title, Note: note}
	c := svg.New(halfW, halfH)
	cv.SVG = c
	if h == nil || h.Count() == 0 {
		c.Empty = "no samples"
		return cv
	}
	s := h.Summarize()
	marked := []struct {
		name string
		q, v float64
	}{{"p50", 0.5, s.P50Ms}, {"p99", 0.99, s.P99Ms}, {"p99.9", 0.999, s.P999Ms}}
	// The curve's ticks halve the distance to 100 %, so 99 % is not one of
	// them: add the marked percentiles, or the line would pass beside their
	// dots wherever the distribution jumps.
	curve := h.Curve(5)
	for _, m := range marked {
		curve = append(curve, stats.Percentile{Quantile: m.q, ValueMs: m.v})
	}
	slices.SortStableFunc(curve, func(a, b stats.Percentile) int {
		return cmp.Or(cmp.Compare(a.Quantile, b.Quantile), cmp.Compare(a.ValueMs, b.ValueMs))
	})
	// As many decades as the sample count can resolve, at least two.
	decades := math.Ceil(math.Log10(float64(h.Count())))
	decades = math.Max(2, math.Min(decades, 6))
	x := c.XScale(0, decades)
	for d := 0.0; d <= decades; d++ {
		label := "0%"
		if d > 0 {
			label = strconv.FormatFloat(100*(1-math.Pow(10, -d)), 'f', -1, 64) + "%"
		}
		c.XTicks = append(c.XTicks, svg.Tick{Pos: x.At(d), Label: label})
	}
	c.XLabel = "percentile"
	hi := 0.0
	for _, p := range curve {
		hi = math.Max(hi, p.ValueMs)
	}
	y := c.MsAxis(hi * 1.05)
	xs, ys := make([]float64, 0, len(curve)), make([]float64, 0, len(curve))
	for _, p := range curve {
		pos := decades
		if p.Quantile < 1 {
			pos = math.Min(decades, math.Log10(1/(1-p.Quantile)))
		}
		xs, ys = append(xs, x.At(pos)), append(ys, y.At(p.ValueMs))
	}
	c.Areas = append(c.Areas, svg.Shape{Class: "area-" + strings.TrimPrefix(class, "c-"), D: svg.Area(xs, ys, y.At(0))})
	c.Lines = append(c.Lines, svg.Shape{Class: class + " line", D: svg.Path(xs, ys)})
	for _, m := range marked {
		pos := math.Log10(1 / (1 - m.q))
		if pos > decades {
			continue
		}
		px, py := x.At(pos), y.At(m.v)
		c.Marks = append(c.Marks, svg.Shape{Class: "dot " + class, D: svg.Dot(px, py, 3.5), Title: m.name + " " + msUnit(m.v)})
		// The median's label goes right of its dot, away from the y axis;
		// the tail labels go left, away from the chart's edge.
		lx, anchor := px-7, "end"
		if m.q < 0.9 {
			lx, anchor = px+7, "start"
		}
		c.Texts = append(c.Texts, svg.Text{X: lx, Y: py - 8, Class: "point-label", Value: m.name + " " + msUnit(m.v), Anchor: anchor})
	}
	return cv
}

// stepRateChart shows target and achieved rate per peak-search step, the
// bars coloured by verdict and the peak marked.
func stepRateChart(res *results.Result, peak int) chartView {
	cv := chartView{
		Title:  "Achieved vs target per step",
		Note:   "Outline: target rate; bar: acknowledged rate, green when the step was sustainable.",
		Legend: []legendItem{{"c-target", "target"}, {"c-ok", "sustainable"}, {"c-bad", "not sustainable"}},
	}
	c := svg.New(halfW, halfH)
	cv.SVG = c
	hi := 0.0
	for _, s := range res.Steps {
		if s != nil {
			hi = math.Max(hi, math.Max(s.Summary.TargetEventsPerSec, s.Summary.AchievedEventsPerSec))
		}
	}
	y := c.ValueAxis(hi*1.15, "events/s", svg.Compact)
	n := float64(len(res.Steps))
	slot := c.Plot.W / n
	c.XLabel = "step (target rate)"
	for i, s := range res.Steps {
		if s == nil {
			continue
		}
		cx := c.Plot.X + slot*(float64(i)+0.5)
		bw := math.Min(slot*0.6, 70)
		c.XTicks = append(c.XTicks, svg.Tick{Pos: cx, Label: svg.Compact(s.Summary.TargetEventsPerSec)})
		ty, ay := y.At(s.Summary.TargetEventsPerSec), y.At(s.Summary.AchievedEventsPerSec)
		class := "bar-bad"
		reason := "no verdict"
		if v := s.Verdict; v != nil {
			reason = v.String()
			switch {
			case v.Sustainable:
				class = "bar-ok"
			case v.Undecided:
				class = "bar-unknown"
			}
		}
		title := fmt.Sprintf("step %d: target %s/s, achieved %s/s — %s", i+1, rate(s.Summary.TargetEventsPerSec), rate(s.Summary.AchievedEventsPerSec), reason)
		c.Bars = append(c.Bars,
			svg.Shape{Class: class, X: cx - bw/2, Y: ay, W: bw, H: y.At(0) - ay, Title: title},
			svg.Shape{Class: "bar-target", X: cx - bw/2, Y: ty, W: bw, H: y.At(0) - ty, Title: title})
		if i == peak {
			c.Marks = append(c.Marks, svg.Shape{Class: "peak-mark", D: svg.Triangle(cx, math.Min(ty, ay)-9, 8), Title: "peak: " + rate(s.Summary.AchievedEventsPerSec) + " events/s"})
			c.Texts = append(c.Texts, svg.Text{X: cx, Y: math.Min(ty, ay) - 20, Class: "peak-label", Value: "peak " + svg.Compact(s.Summary.AchievedEventsPerSec) + "/s", Anchor: "middle"})
		}
	}
	c.CategoryTicks = true
	return cv
}

// stepLatencyChart shows how the latencies move from step to step; a
// backlog shows as freshness lag taking off at the last steps.
func stepLatencyChart(res *results.Result, peak int) chartView {
	cv := chartView{
		Title:  "Latency per step",
		Note:   "Freshness lag p95, visibility latency p95 and write latency p99; log scale.",
		Legend: []legendItem{{"c-fresh", "freshness lag p95"}, {"c-vis", "visibility p95"}, {"c-write", "write p99"}},
	}
	c := svg.New(halfW, halfH)
	cv.SVG = c
	lo, hi := math.Inf(1), 0.0
	for _, s := range res.Steps {
		if s == nil {
			continue
		}
		for _, v := range []float64{s.Summary.FreshnessLag.P95Ms, s.Summary.VisibilityLatency.P95Ms, s.Summary.WriteLatency.P99Ms} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == 0 {
		c.Empty = "no latency samples"
		return cv
	}
	y := c.LogMsAxis(lo, hi)
	slot := c.Plot.W / float64(len(res.Steps))
	c.XLabel = "step (target rate)"
	c.CategoryTicks = true
	series := []struct {
		class string
		get   func(results.Summary) float64
	}{
		{"c-fresh", func(s results.Summary) float64 { return s.FreshnessLag.P95Ms }},
		{"c-vis", func(s results.Summary) float64 { return s.VisibilityLatency.P95Ms }},
		{"c-write", func(s results.Summary) float64 { return s.WriteLatency.P99Ms }},
	}
	if peak >= 0 {
		cx := c.Plot.X + slot*(float64(peak)+0.5)
		c.Bands = append(c.Bands, svg.Shape{Class: "band-peak", X: cx - slot/2, Y: c.Plot.Y, W: slot, H: c.Plot.H, Title: "peak step"})
	}
	for i, s := range res.Steps {
		if s != nil {
			c.XTicks = append(c.XTicks, svg.Tick{Pos: c.Plot.X + slot*(float64(i)+0.5), Label: svg.Compact(s.Summary.TargetEventsPerSec)})
		}
	}
	for _, sr := range series {
		xs, ys := make([]float64, len(res.Steps)), make([]float64, len(res.Steps))
		for i, s := range res.Steps {
			xs[i], ys[i] = c.Plot.X+slot*(float64(i)+0.5), math.NaN()
			if s == nil {
				continue
			}
			if v := sr.get(s.Summary); v > 0 {
				ys[i] = y.At(v)
				c.Marks = append(c.Marks, svg.Shape{Class: "dot " + sr.class, D: svg.Dot(xs[i], ys[i], 3.5), Title: fmt.Sprintf("step %d: %s", i+1, msUnit(v))})
			}
		}
		c.Lines = append(c.Lines, svg.Shape{Class: sr.class + " line", D: svg.Path(xs, ys)})
	}
	return cv
}
