package retry

import (
	"context"
	"testing"
	"time"
)

// Each wait lies in [c/2, c] with c doubling from Base up to Max.
func TestDelayBounds(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	for attempt, c := range []time.Duration{100, 200, 400, 800, 1000, 1000, 1000} {
		c *= time.Millisecond
		if attempt >= 4 {
			c = time.Second
		}
		for range 200 {
			if d := b.Delay(attempt); d < c/2 || d > c {
				t.Fatalf("attempt %d: waited %s, want within [%s, %s]", attempt, d, c/2, c)
			}
		}
	}
	if d := b.Delay(1 << 20); d < b.Max/2 || d > b.Max {
		t.Fatalf("a late attempt waited %s, want within [%s, %s]", d, b.Max/2, b.Max)
	}
}

// A cancelled context ends the wait at once.
func TestWaitCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if (Backoff{Base: time.Hour, Max: time.Hour}).Wait(ctx, 0) {
		t.Fatal("Wait returned true on a cancelled context")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Wait took %s on a cancelled context", d)
	}
}
