// Package bound bounds one request to a database by its target's request
// timeout, and tells, when the request runs out of time, that timeout
// from a caller's shorter deadline, so that an error names the bound it
// hit (pgwire's and jsonapi's clients share it).
package bound

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errRequestTimeout is the cause of a request context that ran out of
// its request timeout. It wraps context.DeadlineExceeded because
// net/http returns a context's cause, not its error, and a timeout must
// still read as one.
var errRequestTimeout = fmt.Errorf("request timeout: %w", context.DeadlineExceeded)

// Request bounds one request, made with ctx, by timeout.
func Request(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, timeout, errRequestTimeout)
}

// RequestTimedOut reports whether ctx, made by Request, ran out of its
// request timeout.
func RequestTimedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errRequestTimeout)
}

// CallersDeadline reports whether ctx, made by Request, ended at a
// deadline of its caller's, shorter than the request timeout.
func CallersDeadline(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.DeadlineExceeded) && !RequestTimedOut(ctx)
}
