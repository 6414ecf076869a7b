package probe

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// everyPoll calls fn until ctx ends, at intervals drawn uniformly from
// [poll/2, 3·poll/2]: the mean is the poll interval, but the samples cannot
// lock to the phase of the batch schedule. With a fixed ticker, a poll
// interval equal to (or a multiple of) the batch interval samples every
// batch at the same age and turns a spread of latencies into one value.
// The interval is only the pause between polls: each poll also takes the
// queries' own time, which is why the visibility resolution is measured
// (results.Visibility.Gap) rather than derived from the interval.
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

// queryBound is how long one freshness or probe query may take before the
// poll gives up on it: long enough for a slow database to answer, short
// enough that a stalled one does not stop the sampling for long.
func queryBound(poll time.Duration) time.Duration { return 10*poll + 5*time.Second }

// boundError is a query that the poll stopped at its own bound. The
// target's message would name the target's request timeout, which is not
// what fired; Unwrap keeps the cause, so that it still counts as a
// timeout.
type boundError struct {
	query string // e.g. "freshness query of generator 42"
	bound time.Duration
	err   error
}

func (e *boundError) Error() string {
	return fmt.Sprintf("%s: no answer within the poll's bound of %s", e.query, e.bound)
}

func (e *boundError) Unwrap() error { return e.err }

// withBound runs query under the poll's bound and, when that bound is
// what stopped it, says so in the error it returns.
func withBound(ctx context.Context, bound time.Duration, what func() string, query func(context.Context) error) error {
	cause := &boundError{bound: bound}
	qctx, cancel := context.WithTimeoutCause(ctx, bound, cause)
	defer cancel()
	err := query(qctx)
	if err != nil && ctx.Err() == nil && context.Cause(qctx) == cause {
		cause.query, cause.err = what(), err
		return cause
	}
	return err
}
