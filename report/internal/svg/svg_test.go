package svg

import (
	"math"
	"strings"
	"testing"
)

func TestNiceTicksCoverTheRangeInRoundSteps(t *testing.T) {
	for _, c := range []struct {
		hi      float64
		n       int
		wantTop float64
		step    float64
	}{
		{1, 5, 1, 0.2}, {7, 5, 8, 2}, {1234, 5, 1250, 250}, {0.03, 5, 0.03, 0.01}, {0, 5, 1, 0.2}, {math.NaN(), 5, 1, 0.2},
	} {
		vals, top := niceTicks(c.hi, c.n)
		if math.Abs(top-c.wantTop) > 1e-9*c.wantTop {
			t.Errorf("niceTicks(%g, %d): top %g, want %g", c.hi, c.n, top, c.wantTop)
		}
		if vals[0] != 0 || math.Abs(vals[len(vals)-1]-top) > 1e-9*top {
			t.Errorf("niceTicks(%g, %d) = %v: want 0 … %g", c.hi, c.n, vals, top)
		}
		for i := 1; i < len(vals); i++ {
			if d := vals[i] - vals[i-1]; math.Abs(d-c.step) > 1e-9*c.step {
				t.Errorf("niceTicks(%g, %d) = %v: step %g, want %g", c.hi, c.n, vals, d, c.step)
				break
			}
		}
	}
}

func TestScaleMapsAndKeepsWildValuesOnTheCanvas(t *testing.T) {
	c := New(200, 100)
	x := c.XScale(0, 10)
	if got := x.At(5); got != c.Plot.X+c.Plot.W/2 {
		t.Errorf("x.At(5) = %g, want the middle %g", got, c.Plot.X+c.Plot.W/2)
	}
	if got := x.At(1e12); got > c.PlotRight+2 {
		t.Errorf("x.At(1e12) = %g, beyond the canvas edge %g", got, c.PlotRight+2)
	}
	y := c.YScale(1, 1000, true)
	if lo, mid, hi := y.At(1), y.At(math.Sqrt(1000)), y.At(1000); lo != c.PlotBottom || hi != c.Plot.Y || math.Abs(mid-(lo+hi)/2) > 1e-9 {
		t.Errorf("log scale: 1 → %g, √1000 → %g, 1000 → %g; want bottom %g, middle, top %g", lo, mid, hi, c.PlotBottom, c.Plot.Y)
	}
	if got := y.At(0); got != c.PlotBottom {
		t.Errorf("log scale at 0 = %g, want the bottom %g", got, c.PlotBottom)
	}
}

func TestXValueAxisSpansZeroToARoundTop(t *testing.T) {
	c := New(300, 100)
	x := c.XValueAxis(3300, "events/s", Compact)
	first, last := c.XTicks[0], c.XTicks[len(c.XTicks)-1]
	if first.Label != "0" || first.Pos != c.Plot.X || last.Label != "3.5k" || last.Pos != c.PlotRight {
		t.Errorf("ticks from %+v to %+v; want 0 at the left edge and 3.5k at the right", first, last)
	}
	if got := x.At(1750); math.Abs(got-(c.Plot.X+c.Plot.W/2)) > 1e-9 {
		t.Errorf("x.At(1750) = %g, want the middle", got)
	}
	if c.XLabel != "events/s" {
		t.Errorf("label %q", c.XLabel)
	}
}

func TestTimelineAxisGoesLogOnlyForAnOutlier(t *testing.T) {
	flat := New(200, 100)
	flat.TimelineMsAxis([]float64{10, 12, 11, 13})
	if flat.YLabel != "milliseconds" {
		t.Errorf("flat latencies: axis %q, want milliseconds", flat.YLabel)
	}
	stall := New(200, 100)
	stall.TimelineMsAxis([]float64{10, 12, 11, 5000})
	if stall.YLabel != "latency (log)" {
		t.Errorf("a stall 400 times the median: axis %q, want a log axis", stall.YLabel)
	}
	var labels []string
	for _, tk := range stall.YTicks {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "10ms 100ms 1s 10s" {
		t.Errorf("log ticks %q, want decades 10ms 100ms 1s 10s", got)
	}
	secs := New(200, 100)
	secs.MsAxis(4000)
	if secs.YLabel != "seconds" || secs.YTicks[len(secs.YTicks)-1].Label != "4" {
		t.Errorf("4000 ms: axis %q ending at %q, want seconds ending at 4", secs.YLabel, secs.YTicks[len(secs.YTicks)-1].Label)
	}
}

func TestPathBreaksAtGapsAndAreaCloses(t *testing.T) {
	xs := []float64{0, 1, 2, 3, 4}
	ys := []float64{5, 6, math.NaN(), 7, 8}
	if got, want := Path(xs, ys), "M0 5L1 6M3 7L4 8"; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if got, want := Area(xs, ys, 9), "M0 9L0 5L1 6L1 9ZM3 9L3 7L4 8L4 9Z"; got != want {
		t.Errorf("Area = %q, want %q", got, want)
	}
	if got := Path(nil, nil); got != "" {
		t.Errorf("Path of nothing = %q", got)
	}
}

func TestNumAndCompact(t *testing.T) {
	for v, want := range map[float64]string{1.26: "1.3", 0.04: "0", math.NaN(): "0", math.Inf(1): "0", 12: "12"} {
		if got := Num(v); got != want {
			t.Errorf("Num(%g) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{0.1 + 0.2: "0.3", 2500: "2.5k", 1.25e6: "1.25M", -3000: "-3k", 12345678: "12.35M"} {
		if got := Compact(v); got != want {
			t.Errorf("Compact(%g) = %q, want %q", v, got, want)
		}
	}
}
