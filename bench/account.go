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

// accountSamples is about how many times the account is taken through
// the measured phase besides its two ends, and accountEveryMin the
// shortest time between two: a lag the server reports for a few seconds
// (a standby whose replay stalls) shows beside the client's figures,
// while an hour-long run of a 64-copy index keeps its account small.
const (
	accountSamples  = 120
	accountEveryMin = time.Second
)

// serverAccount takes the server's own account of tgt (when it is a
// target.AccountReporter) at the start and the end of the measured
// window, from and to, and about every window/accountSamples (at least a
// second) in between, and derives its figures. It returns at to, or as
// soon as ctx ends, taking the end then; nil when the target reports no
// account or the run ended before its measured phase began. A failed
// request is recorded in the account's Error: the run goes on. A failed
// sample in between is left out (the error of the first is kept). A
// failed start is taken again at each sample until one answers: the
// account then starts there, and LateStart says why.
//
// sched ends with the schedule, when it ends before to: the account then
// ends there.
func serverAccount(ctx, sched context.Context, tgt target.Target, from, to time.Time) *results.Account {
	r, ok := tgt.(target.AccountReporter)
	if !ok || !sleepUntil(ctx, from) {
		return nil
	}
	start, err := takeAccount(ctx, r)
	var startErr string
	if err != nil {
		startErr = "at the start of the measured phase: " + err.Error()
	}
	every := max(accountEveryMin, to.Sub(from)/accountSamples)
	var samples []*results.ServerAccount
	var sampleErr string
	for next := from.Add(every); next.Before(to) && sleepUntil(sched, next); next = nextSample(next, every) {
		a, err := takeAccount(ctx, r)
		switch {
		case start == nil:
			if err == nil && a.At.Before(to) {
				start = a
			}
		case err == nil:
			samples = append(samples, a)
		case sampleErr == "":
			sampleErr = "in the measured phase: " + err.Error()
		}
	}
	if start == nil {
		return &results.Account{Error: startErr}
	}
	sleepUntil(sched, to)
	end, err := takeAccount(ctx, r)
	if err != nil {
		return &results.Account{Start: start, Samples: samples, LateStart: startErr, Error: "at the end of the measured phase: " + err.Error()}
	}
	a := results.NewAccount(start, end)
	a.Samples, a.LateStart, a.Error = samples, startErr, sampleErr
	return a
}

// nextSample is the first time after now of the samples every apart
// from last: those a slow reading held up are skipped, not taken back to
// back.
func nextSample(last time.Time, every time.Duration) time.Time {
	next := last.Add(every)
	if now := time.Now(); !next.After(now) {
		next = next.Add((now.Sub(next)/every + 1) * every)
	}
	return next
}

// takeAccount asks for the account, also after ctx has ended (the end of
// an interrupted run), and dates it halfway through the request, within
// half its round trip.
func takeAccount(ctx context.Context, r target.AccountReporter) (*results.ServerAccount, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), accountTimeout)
	defer cancel()
	sent := time.Now()
	snap, err := r.ServerAccount(ctx)
	if err != nil {
		return nil, err
	}
	half := time.Since(sent) / 2
	return &results.ServerAccount{At: sent.Add(half).UTC(), WithinMS: float64(half) / float64(time.Millisecond), Tables: snap.AccountTables()}, nil
}

// checkAccount adds to res's server account the target's checks of it
// against res's own figures, when the target makes any.
func checkAccount(tgt target.Target, res *results.Result) {
	c, ok := tgt.(target.AccountChecker)
	if !ok || res.ServerAccount == nil || res.ServerAccount.Error != "" {
		return
	}
	res.ServerAccount.Findings = c.CheckAccount(res.ServerAccount, res)
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
