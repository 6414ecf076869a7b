// Package retry spaces the re-sends of a request: capped exponential
// back-off with jitter, so that many writers that failed together do not
// retry in lockstep, and cancellable. Written by hand because it is a
// dozen lines; the well-kept libraries (cenkalti/backoff) bring a timer
// API of their own that every caller would have to adapt to a context.
package retry

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/freshbench/freshbench/pace"
)

// Backoff is the wait before each re-send.
type Backoff struct {
	Base time.Duration // the first wait is drawn from [Base/2, Base]
	Max  time.Duration // no wait is longer
}

// Default is freshbench's back-off: 100 ms doubling up to 5 s.
func Default() Backoff { return Backoff{Base: 100 * time.Millisecond, Max: 5 * time.Second} }

// Delay is the wait before re-send number attempt (0 for the first):
// uniform in [c/2, c] with c = min(Max, Base·2^attempt). Half of it is
// certain, so that a server that refused work for load gets a rest; the
// other half spreads the writers apart.
func (b Backoff) Delay(attempt int) time.Duration {
	c := b.Base << min(attempt, 30)
	if c <= 0 || c > b.Max {
		c = b.Max
	}
	if c <= 0 {
		return 0
	}
	return c/2 + rand.N(c/2+1)
}

// Wait sleeps before re-send number attempt; it returns false when ctx
// ended first.
func (b Backoff) Wait(ctx context.Context, attempt int) bool {
	return pace.Sleep(time.Now().Add(b.Delay(attempt)), ctx.Done())
}
