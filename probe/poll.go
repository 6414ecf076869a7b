package probe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/freshbench/freshbench/invalid"
)

// Budget bounds how often a freshness or probe loop polls, and so what
// the measurement costs the target. Each loop adapts on its own: it polls
// as often as the target answers, within Share and MaxRate, and no more
// than PollsPerRefresh times per Refresh; Interval fixes its pace
// instead. Zero fields take DefaultBudget's.
type Budget struct {
	// Interval, when set, is the mean pause between polls, whatever the
	// queries take (the fixed-rate override).
	Interval time.Duration
	// Share is the share of one connection's time the loop may spend in
	// its queries: after polls that took d on average, it pauses
	// d·(1/Share − 1) on average.
	Share float64
	// MaxRate caps the loop's polls per second.
	MaxRate float64
	// Refresh is the period at which the target makes writes visible,
	// when it says (a search engine's refresh interval): polling faster
	// than a few times a period sees nothing new.
	Refresh time.Duration
}

// DefaultBudget is the probe budget of a run that sets none: each loop
// spends at most a tenth of one connection's time and polls at most
// 1,000 times a second. The probe load is reported with every run
// (results.ProbeLoad), so what it cost is measured, not assumed.
var DefaultBudget = Budget{Share: 0.1, MaxRate: 1000}

// PollsPerRefresh is how many polls a loop makes at most per refresh of
// a target that refreshes periodically: enough to place a probe within a
// quarter of the period, no more (a search costs the cluster work).
const PollsPerRefresh = 4

// WithDefaults returns b with its zero fields set from DefaultBudget.
func (b Budget) WithDefaults() Budget {
	if b.Share == 0 {
		b.Share = DefaultBudget.Share
	}
	if b.MaxRate == 0 {
		b.MaxRate = DefaultBudget.MaxRate
	}
	return b
}

// Validate names the first bad setting (a zero field stands for its
// default).
func (b Budget) Validate() error {
	switch {
	case b.Interval < 0:
		return invalid.New(invalid.PollInterval, b.Interval, "0 (poll as often as the probe budget allows) or a positive duration, e.g. 200ms")
	case b.Share < 0 || b.Share > 1:
		return invalid.New(invalid.ProbeShare, b.Share, "a share of one connection's time in (0, 1], e.g. 0.1")
	case b.MaxRate < 0:
		return invalid.New(invalid.ProbeMaxRate, b.MaxRate, "a positive number of polls per second, e.g. 1000")
	case b.Refresh < 0:
		return invalid.New(invalid.RefreshPeriod, b.Refresh, "0 or more")
	}
	return nil
}

// Adaptive reports whether the pace follows the target's answers.
func (b Budget) Adaptive() bool { return b.Interval == 0 }

// period is the shortest mean time from one poll's start to the next's
// that the rate cap and the refresh period allow.
func (b Budget) period() time.Duration {
	p := time.Duration(float64(time.Second) / b.MaxRate)
	return max(p, b.Refresh/PollsPerRefresh)
}

// pacer chooses the mean pause after each poll from the time the recent
// polls took: their median, so that a few slow answers (a pause of the
// collector, a busy machine) do not stretch the pace, and so the
// resolution, while a target that slows down for good is given room.
type pacer struct {
	b      Budget
	recent [costWindow]time.Duration // the last polls' times, a ring
	n      int                       // polls so far
}

// costWindow is how many recent polls the pace follows.
const costWindow = 15

func newPacer(b Budget) *pacer { return &pacer{b: b.WithDefaults()} }

// pause returns the mean pause after a poll that took took.
func (p *pacer) pause(took time.Duration) time.Duration {
	if !p.b.Adaptive() {
		return p.b.Interval
	}
	p.recent[p.n%costWindow] = took
	p.n++
	sorted := p.recent
	recent := sorted[:min(p.n, costWindow)]
	slices.Sort(recent)
	cost := recent[len(recent)/2]
	share := time.Duration(float64(cost) * (1/p.b.Share - 1))
	return max(share, p.b.period()-cost)
}

// bound is how long one query may take before the poll gives up on it:
// long enough for a slow database to answer, short enough that a stalled
// one does not stop the sampling for long.
func (b Budget) bound() time.Duration {
	b = b.WithDefaults()
	return 10*max(b.Interval, b.period()) + 5*time.Second
}

// everyPoll calls fn until ctx ends, pausing between calls for intervals
// drawn uniformly from [p/2, 3p/2], p the mean pause the budget gives
// after the polls so far: the samples cannot lock to the phase of the
// batch schedule (or of a refresh). With a fixed pause, one equal to (or a
// multiple of) the batch interval samples every batch at the same age and
// turns a spread of latencies into one value. The pause is not all of
// the resolution: each poll also takes the queries' own time, which is why
// the visibility resolution is measured (results.Visibility.Gap) rather
// than derived from the budget.
func everyPoll(ctx context.Context, b Budget, first bool, fn func()) {
	pace := newPacer(b)
	next := pace.b.Interval
	if pace.b.Adaptive() {
		next = pace.b.period()
	}
	if first {
		start := time.Now()
		fn()
		next = pace.pause(time.Since(start))
	}
	t := time.NewTimer(jitter(next))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		fn()
		t.Reset(jitter(pace.pause(time.Since(start))))
	}
}

func jitter(mean time.Duration) time.Duration {
	return mean/2 + rand.N(mean+1)
}

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
		cause.query = what()
		// The client's error may wrap the cause itself (it carries
		// context.Cause): wrapping it back would make the chain a cycle,
		// which errors.Is and errors.As never leave.
		if errors.Is(err, cause) {
			cause.err = context.DeadlineExceeded
		} else {
			cause.err = err
		}
		return cause
	}
	return err
}
