package report

// Number and text formatting shared by the console, the comparison and the
// HTML report, so that a figure reads the same wherever it is shown.

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// ms writes milliseconds with two decimals below 10, one below 100 and
// none above: 0.42, 12.5, 312.
func ms(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// percent shows a share with as many decimals as it takes not to round a
// loss away: 99.98 % must not read as 100 %.
func percent(f float64) string {
	if f >= 1 {
		return "100"
	}
	for d := 1; d < 6; d++ {
		s := strconv.FormatFloat(100*f, 'f', d, 64)
		if s != "100."+strings.Repeat("0", d) {
			return s
		}
	}
	return strconv.FormatFloat(100*f, 'f', 6, 64)
}

// percentText writes a fraction as a percentage with no rounding: 0.5 %.
func percentText(f float64) string {
	return strconv.FormatFloat(100*f, 'f', -1, 64) + " %"
}

// count writes an integer with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// rate writes events/s: whole numbers with separators, small ones with a
// decimal.
func rate(v float64) string {
	if v < 100 {
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	}
	return count(int64(math.Round(v)))
}

func mbps(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// durationParts splits a latency in milliseconds into a figure and a unit
// readable at a glance: 4.2 ms, 312 ms, 1.43 s, 2.1 min.
func durationParts(v float64) (string, string) {
	switch {
	case v >= 120000:
		return strconv.FormatFloat(v/60000, 'f', 1, 64), "min"
	case v >= 1000:
		return strconv.FormatFloat(v/1000, 'f', 2, 64), "s"
	}
	return ms(v), "ms"
}

func msUnit(v float64) string {
	n, u := durationParts(v)
	return n + " " + u
}

// msOrDash writes one of s's figures: "–" when s has no values, "> X"
// when the figure is only a lower bound (stats.Summary.LowerBound). Every
// latency figure shown goes through it or through durationOf.
func msOrDash(s stats.Summary, v float64) string {
	if s.Count == 0 {
		return "–"
	}
	if s.LowerBound(v) {
		return "> " + ms(v)
	}
	return ms(v)
}

// durationOf is msUnit for one of s's figures, "> X" when only a lower
// bound.
func durationOf(s stats.Summary, v float64) string {
	if s.LowerBound(v) {
		return "> " + msUnit(v)
	}
	return msUnit(v)
}

func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

func bytesText(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return strconv.Itoa(n/1000) + " KB"
	}
	return strconv.Itoa(n) + " B"
}

func orDash(s string) string { return orDefault(s, "-") }

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// targetURL is the results file's target URL as every output shows it:
// through redact.URL once more, so that a file written before the
// redactor knew a credential form, or edited by hand, shows no secret.
func targetURL(r *results.Result) string { return redact.URL(r.Environment.TargetURL) }

// workloadText names the workload file or preset a result ran, its scale
// and the setup it replays; "" when it ran from flags alone.
func workloadText(r *results.Result) string {
	wl := r.Workload
	if wl == nil {
		return ""
	}
	s := fmt.Sprintf("%s at scale %g", wl.Source, wl.Scale)
	if wl.Replays != "" {
		s += "; replays " + wl.Replays
	}
	return s
}

// printWorkload prints the workload line of a console header, if any.
func printWorkload(w io.Writer, r *results.Result) {
	if s := workloadText(r); s != "" {
		fmt.Fprintf(w, "workload: %s\n", s)
	}
}

// unackedText names the visible events whose writes were answered as
// failed ("" when none), to go before the unexpected ones: stored, not
// lost, and written by this run.
func unackedText(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d stored though their writes failed, ", n)
}
