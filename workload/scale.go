package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// How each flag that a scale changes is scaled: rates (events/s or
// bytes/s, lists of them, increments "+N"; factors "xF" are left alone),
// durations, and counts of events. Flags not named here — batch size,
// document size, settings, concurrency — describe the setup, not its
// size, and are never scaled.
var scaled = map[string]func(string, float64) (string, error){
	"rate": scaleRates, "levels": scaleRates, "start": scaleRates, "step": scaleRates, "max-rate": scaleRates,
	"total-rate": scaleRates, "qps": scaleRates, "sweep-start": scaleRates, "sweep-step": scaleRates, "sweep-max": scaleRates,
	"duration": scaleDuration, "warmup": scaleDuration, "hold": scaleDuration, "max-hold": scaleDuration,
	"baseline": scaleDuration, "burst": scaleDuration, "recovery": scaleDuration, "resolution": scaleDuration,
	"events": scaleCount,
	// A shape's factors are of the scaled rate; its times scale as the
	// duration does, so that a burst stays where it was in the run.
	"write-shape": scaleShape, "query-shape": scaleShape,
}

// Scale multiplies the file's rates, durations and data set sizes by
// factor, so that a setup measured on a large cluster fits a laptop (or
// the other way round). A scaled duration is rounded to the millisecond.
// The events a run's measured part holds scale as factor² (rate ×
// duration): far below 1, a run may hold too few batches to measure, and
// is refused as any such run is.
func (f *File) Scale(factor float64) error {
	if !(factor > 0) || math.IsInf(factor, 1) {
		return fmt.Errorf("scale %g: want a factor above 0, e.g. 0.1", factor)
	}
	if factor == 1 {
		return nil // the file as written, its values checked by the flags they set
	}
	for i, e := range f.Flags {
		scale, ok := scaled[e.Name]
		if !ok {
			continue
		}
		for j, v := range e.Values {
			s, err := scale(v, factor)
			if err != nil {
				return &Error{Path: f.Path, Line: e.Line, Field: e.Name, Err: err}
			}
			f.Flags[i].Values[j] = s
		}
	}
	return nil
}

// scaleRates scales a rate or a comma-separated list of them: 5000,
// +2000, 10MB/s, +10MB/s. A factor (x1.5) is not a rate and stays.
func scaleRates(v string, factor float64) (string, error) {
	items := strings.Split(v, ",")
	for i, item := range items {
		item = strings.TrimSpace(item)
		if strings.HasPrefix(item, "x") {
			continue
		}
		sign := ""
		if strings.HasPrefix(item, "+") {
			sign, item = "+", item[1:]
		}
		end := strings.IndexFunc(item, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if end < 0 {
			end = len(item)
		}
		n, err := strconv.ParseFloat(item[:end], 64)
		if err != nil {
			return "", fmt.Errorf("%q: want a rate such as 5000, +2000 or 10MB/s to scale", v)
		}
		items[i] = sign + number(n*factor) + item[end:]
	}
	return strings.Join(items, ","), nil
}

// number writes x to six significant digits, without an exponent, which
// the rate parsers would not take.
func number(x float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func scaleDuration(v string, factor float64) (string, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return "", fmt.Errorf("%q: want a duration such as 60s to scale", v)
	}
	return time.Duration(float64(d) * factor).Round(time.Millisecond).String(), nil
}

// scaleShape scales the durations written in a load shape (pace.Shape):
// every word that reads as a duration with a unit, such as 60s.
func scaleShape(v string, factor float64) (string, error) {
	pieces := strings.Split(v, ";")
	for i, p := range pieces {
		words := strings.Fields(p)
		for j, w := range words {
			if _, err := time.ParseDuration(w); err != nil || strings.Trim(w, "0123456789.") == "" {
				continue
			}
			words[j], _ = scaleDuration(w, factor)
		}
		pieces[i] = strings.Join(words, " ")
	}
	return strings.Join(pieces, "; "), nil
}

func scaleCount(v string, factor float64) (string, error) {
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return "", fmt.Errorf("%q: want a number of events to scale", v)
	}
	return strconv.FormatInt(int64(math.Round(n*factor)), 10), nil
}
