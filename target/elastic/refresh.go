package elastic

import (
	"context"
	"fmt"
	"net/http"
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

// Refresh refreshes the index (POST /<index>/_refresh): every write the
// server has stored becomes visible to search.
func (t *Target) Refresh(ctx context.Context) error {
	res, err := t.do(ctx, http.MethodPost, "/"+t.ip+"/_refresh", "", nil)
	if err == nil && !is2xx(res.status) {
		err = serverError(res.status, res.body)
	}
	if err != nil {
		return fmt.Errorf("%s: refresh: %w", t.display, err)
	}
	return nil
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
