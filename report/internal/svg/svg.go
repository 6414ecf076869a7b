// Package svg is the report's small SVG toolkit: a chart laid out in user
// units, linear and logarithmic scales, round ticks, axes and paths. It
// computes geometry only; the report's template draws it, so a page needs no
// JavaScript. Nothing here knows about results files.
package svg

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Chart is a chart laid out in SVG user units. Everything is computed
// here; the template only draws.
type Chart struct {
	W, H          int
	Plot          Box
	XTicks        []Tick
	YTicks        []Tick
	XLabel        string
	YLabel        string
	Bands         []Shape // shaded x ranges (warm-up, outage)
	Areas         []Shape // filled paths
	Bars          []Shape
	Lines         []Shape // stroked paths
	Marks         []Shape // small markers with a tooltip
	Texts         []Text
	Hovers        []Shape // invisible rectangles that carry a tooltip
	Empty         string
	YLabelX       float64
	YLabelY       float64
	XLabelX       float64
	XLabelY       float64
	PlotRight     float64
	PlotBottom    float64
	XTickY        float64 // baseline of the x tick labels
	YTickX        float64 // right edge of the y tick labels
	CategoryTicks bool
}

// Box is a rectangle in user units.
type Box struct{ X, Y, W, H float64 }

// Tick is one labelled position on an axis.
type Tick struct {
	Pos   float64
	Label string
}

// Shape is one drawn element: a path (D) or a rectangle, with a tooltip.
type Shape struct {
	Class, D, Title string
	X, Y, W, H      float64
}

// Text is a label placed on the chart.
type Text struct {
	X, Y         float64
	Class, Value string
	Anchor       string
}

// New returns an empty chart of w × h user units with room for tick
// labels and axis labels around the plot area.
func New(w, h int) *Chart {
	// Left margin leaves room for tick labels and the rotated axis label.
	c := &Chart{W: w, H: h, Plot: Box{X: 62, Y: 14, W: float64(w) - 62 - 18, H: float64(h) - 14 - 46}}
	c.YLabelX, c.YLabelY = 14, c.Plot.Y+c.Plot.H/2
	c.XLabelX, c.XLabelY = c.Plot.X+c.Plot.W/2, float64(h)-6
	c.PlotRight, c.PlotBottom = c.Plot.X+c.Plot.W, c.Plot.Y+c.Plot.H
	c.XTickY, c.YTickX = c.PlotBottom+18, c.Plot.X-8
	return c
}

// MaxHovers bounds the tooltip rectangles of a timeline: beyond it each
// would be narrower than a pixel and only bloat the file.
const MaxHovers = 1000

// Hover adds a tooltip area, unless the series has too many points.
func (c *Chart) Hover(points int, s Shape) {
	if points <= MaxHovers {
		c.Hovers = append(c.Hovers, s)
	}
}

// Scale maps data values to user units, linearly or by decades.
type Scale struct {
	lo, hi   float64
	from, to float64
	log      bool
}

// At maps v to user units.
func (s Scale) At(v float64) float64 {
	lo, hi := s.lo, s.hi
	if s.log {
		v, lo, hi = math.Log10(math.Max(v, s.lo)), math.Log10(lo), math.Log10(hi)
	}
	if hi == lo {
		return s.from
	}
	p := s.from + (v-lo)/(hi-lo)*(s.to-s.from)
	// Keep wild values on the canvas instead of producing giant paths.
	return math.Max(math.Min(p, math.Max(s.from, s.to)+2), math.Min(s.from, s.to)-2)
}

// XScale maps [lo, hi] onto the plot area from left to right.
func (c *Chart) XScale(lo, hi float64) Scale {
	return Scale{lo: lo, hi: hi, from: c.Plot.X, to: c.Plot.X + c.Plot.W}
}

// YScale maps [lo, hi] onto the plot area from bottom to top, by decades
// when log is set.
func (c *Chart) YScale(lo, hi float64, log bool) Scale {
	return Scale{lo: lo, hi: hi, from: c.Plot.Y + c.Plot.H, to: c.Plot.Y, log: log}
}

// niceTicks returns round tick values covering [0, hi] (about n of them)
// and the top of the axis.
func niceTicks(hi float64, n int) ([]float64, float64) {
	if hi <= 0 || math.IsNaN(hi) || math.IsInf(hi, 0) {
		hi = 1
	}
	step := niceStep(hi / float64(n))
	top := math.Ceil(hi/step-1e-9) * step
	var out []float64
	for v := 0.0; v <= top+step/2; v += step {
		out = append(out, v)
	}
	return out, top
}

func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// TimeAxis sets the x axis of a timeline: seconds, or minutes for long runs.
func (c *Chart) TimeAxis(end float64) Scale {
	unit, div := "s", 1.0
	if end > 1200 {
		unit, div = "min", 60
	}
	vals, top := niceTicks(end/div, 10)
	for _, v := range vals {
		c.XTicks = append(c.XTicks, Tick{Pos: c.Plot.X + v/top*c.Plot.W, Label: Compact(v) + unit})
	}
	c.XLabel = "time since start"
	return c.XScale(0, top*div)
}

// ValueAxis sets a linear y axis from 0 to about hi.
func (c *Chart) ValueAxis(hi float64, label string, format func(float64) string) Scale {
	vals, top := niceTicks(hi, 5)
	y := c.YScale(0, top, false)
	for _, v := range vals {
		c.YTicks = append(c.YTicks, Tick{Pos: y.At(v), Label: format(v)})
	}
	c.YLabel = label
	return y
}

// XValueAxis sets a linear x axis from 0 to about hi.
func (c *Chart) XValueAxis(hi float64, label string, format func(float64) string) Scale {
	vals, top := niceTicks(hi, 8)
	x := c.XScale(0, top)
	for _, v := range vals {
		c.XTicks = append(c.XTicks, Tick{Pos: x.At(v), Label: format(v)})
	}
	c.XLabel = label
	return x
}

// MsAxis is a latency axis, in seconds when the values reach seconds.
func (c *Chart) MsAxis(hi float64) Scale {
	if hi >= 2000 {
		s := c.ValueAxis(hi/1000, "seconds", Compact)
		s.lo, s.hi = s.lo*1000, s.hi*1000
		return s
	}
	return c.ValueAxis(hi, "milliseconds", Compact)
}

// TimelineMsAxis is the latency axis of a timeline: linear, unless a few
// intervals (an outage, a stall) are so far above the typical one that a
// linear axis would flatten everything else onto zero; then by decades.
func (c *Chart) TimelineMsAxis(vals []float64) Scale {
	var pos []float64
	for _, v := range vals {
		if v > 0 {
			pos = append(pos, v)
		}
	}
	if len(pos) == 0 {
		return c.MsAxis(0)
	}
	slices.Sort(pos)
	median, hi := pos[len(pos)/2], pos[len(pos)-1]
	if hi > 30*median {
		return c.LogMsAxis(pos[0], hi)
	}
	return c.MsAxis(hi * 1.05)
}

// LogMsAxis is a latency axis by decades, for values far apart.
func (c *Chart) LogMsAxis(lo, hi float64) Scale {
	lo = math.Pow(10, math.Floor(math.Log10(math.Max(lo, 0.001))))
	hi = math.Pow(10, math.Ceil(math.Log10(math.Max(hi, lo*10))))
	y := c.YScale(lo, hi, true)
	for v := lo; v <= hi*1.001; v *= 10 {
		c.YTicks = append(c.YTicks, Tick{Pos: y.At(v), Label: msTick(v)})
	}
	c.YLabel = "latency (log)"
	return y
}

func msTick(v float64) string {
	switch {
	case v >= 60000:
		return Compact(v/60000) + "min"
	case v >= 1000:
		return Compact(v/1000) + "s"
	case v >= 1:
		return Compact(v) + "ms"
	}
	return Compact(v*1000) + "µs"
}

// Path joins points into an SVG path; a NaN y breaks the line, so that
// an interval without samples shows as a gap rather than a fake slope.
func Path(xs, ys []float64) string {
	var b strings.Builder
	pen := false
	for i := range xs {
		if math.IsNaN(ys[i]) {
			pen = false
			continue
		}
		if pen {
			b.WriteString("L")
		} else {
			b.WriteString("M")
		}
		b.WriteString(Num(xs[i]))
		b.WriteString(" ")
		b.WriteString(Num(ys[i]))
		pen = true
	}
	return b.String()
}

// Area is Path closed down to the baseline, one polygon per run of
// defined points.
func Area(xs, ys []float64, base float64) string {
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		fmt.Fprintf(&b, "M%s %s", Num(xs[start]), Num(base))
		for j := start; j < end; j++ {
			fmt.Fprintf(&b, "L%s %s", Num(xs[j]), Num(ys[j]))
		}
		fmt.Fprintf(&b, "L%s %sZ", Num(xs[end-1]), Num(base))
		start = -1
	}
	for i := range xs {
		if math.IsNaN(ys[i]) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(xs))
	return b.String()
}

// Dot is a circle of radius r around (x, y).
func Dot(x, y, r float64) string {
	return fmt.Sprintf("M%s %sa%s %s 0 1 0 %s 0a%s %s 0 1 0 %s 0Z",
		Num(x-r), Num(y), Num(r), Num(r), Num(2*r), Num(r), Num(r), Num(-2*r))
}

// Triangle is a downward triangle of width w whose tip is at (x, y):
// a marker pointing at what it marks.
func Triangle(x, y, w float64) string {
	return fmt.Sprintf("M%s %sL%s %sL%s %sZ", Num(x), Num(y), Num(x-w/2), Num(y-w), Num(x+w/2), Num(y-w))
}

// Num writes a coordinate to a tenth of a user unit, which is below what
// a screen shows and keeps the page small.
func Num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// Compact writes an axis value briefly: 2.5k, 1.2M, 0.25.
func Compact(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trimFloat(v/1e6) + "M"
	case a >= 1e3:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}

// trimFloat keeps four significant digits, which also hides the float
// noise of tick arithmetic (0.30000000000000004).
func trimFloat(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
