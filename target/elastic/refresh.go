package elastic

import (
	"strconv"
	"strings"
	"time"
)

// RefreshPeriod is the refresh_interval the index is created with; false
// when refreshes are disabled (-1) or the interval is not a time the
// server would take.
func (t *Target) RefreshPeriod() (time.Duration, bool) {
	return parseTimeValue(t.cfg.refreshInterval)
}

// parseTimeValue reads an Elasticsearch time value (500ms, 1s, 2m, 1d,
// …): a whole number and a unit; false for anything else, -1 included.
func parseTimeValue(s string) (time.Duration, bool) {
	units := []struct {
		suffix string
		unit   time.Duration
	}{ // longer suffixes first: "ms" before "s", "micros" before "s"
		{"nanos", time.Nanosecond}, {"micros", time.Microsecond}, {"ms", time.Millisecond},
		{"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour},
	}
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil || v <= 0 {
				return 0, false
			}
			return time.Duration(v) * u.unit, true
		}
	}
	return 0, false
}
