package bench

import (
	"context"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// accountTimeout bounds one request for the server's account, which must
// not hold up the end of a run.
const accountTimeout = 10 * time.Second

// serverAccount takes the server's own account of tgt (when it is a
// target.AccountReporter) at the start and the end of the measured
// window, from and to, and derives its figures. It returns at to, or as
// soon as ctx ends, taking the end then; nil when the target reports no
// account or the run ended before its measured phase began. A failed
// request is recorded in the account's Error: the run goes on.
func serverAccount(ctx context.Context, tgt target.Target, from, to time.Time) *results.Account {
	r, ok := tgt.(target.AccountReporter)
	if !ok || !sleepUntil(ctx, from) {
		return nil
	}
	start, err := takeAccount(ctx, r)
	if err != nil {
		return &results.Account{Error: "at the start of the measured phase: " + err.Error()}
	}
	sleepUntil(ctx, to)
	end, err := takeAccount(ctx, r)
	if err != nil {
		return &results.Account{Start: start, Error: "at the end of the measured phase: " + err.Error()}
	}
	return results.NewAccount(start, end)
}

// takeAccount asks for the account, also after ctx has ended (the end of
// an interrupted run), and dates it halfway through the request.
func takeAccount(ctx context.Context, r target.AccountReporter) (*results.ServerAccount, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), accountTimeout)
	defer cancel()
	sent := time.Now()
	a, err := r.ServerAccount(ctx)
	if err != nil {
		return nil, err
	}
	a.At = sent.Add(time.Since(sent) / 2).UTC()
	return &a, nil
}

// sleepUntil waits until t and tells whether it got there before ctx
// ended.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// sampleBacklog records, once a second until ctx ends, the backlog of the
// intermediary of a target that has one (a run --via). A failed sample is
// left out: the backlog is the intermediary's account, and the run does
// not depend on it.
func sampleBacklog(ctx context.Context, tgt target.Target, series *stats.Series) {
	b, ok := tgt.(target.Backlogged)
	if !ok {
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		sctx, cancel := context.WithTimeout(ctx, accountTimeout)
		n, err := b.Backlog(sctx)
		cancel()
		if err == nil {
			series.Backlog(time.Now(), n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
