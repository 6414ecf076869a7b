package elastic

import (
	"testing"
	"time"
)

func TestParseTimeValue(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"1s": time.Second, "200ms": 200 * time.Millisecond, "2m": 2 * time.Minute, "1d": 24 * time.Hour, "500micros": 500 * time.Microsecond,
		"-1": 0, "": 0, "1x": 0, "s": 0, "0s": 0, "1.5s": 0,
	} {
		got, ok := parseTimeValue(in)
		if got != want || ok != (want > 0) {
			t.Errorf("parseTimeValue(%q) = %s, %v; want %s, %v", in, got, ok, want, want > 0)
		}
	}
}
