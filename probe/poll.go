package probe

import (
	"context"
	"math/rand/v2"
	"time"
)

// everyPoll calls fn until ctx ends, at intervals drawn uniformly from
// [poll/2, 3·poll/2]: the mean is the poll interval, but the samples cannot
// lock to the phase of the batch schedule. With a fixed ticker, a poll
// interval equal to (or a multiple of) the batch interval samples every
// batch at the same age and turns a spread of latencies into one value.
// The longest gap, 1.5 poll intervals, is the resolution of the figures.
func everyPoll(ctx context.Context, poll time.Duration, first bool, fn func()) {
	if first {
		fn()
	}
	t := time.NewTimer(jitter(poll))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fn()
		t.Reset(jitter(poll))
	}
}

func jitter(poll time.Duration) time.Duration {
	return poll/2 + rand.N(poll+1)
}

// Resolution is the longest gap between two polls.
func Resolution(poll time.Duration) time.Duration { return poll * 3 / 2 }
