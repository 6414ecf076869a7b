package bench

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/probe"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

// drainPause is the pause between the drain's checks when the polls
// have no fixed interval: each check counts every generator's events on
// every endpoint, heavier than a probe.
const drainPause = 100 * time.Millisecond

// drainStretch is how far past Drain the drain goes at most, as a
// multiple of it, while the target is still catching up, when DrainMax
// is not set.
const drainStretch = 4

// minStall is how long, at least, the count of visible events must stay
// still before the target is taken to have caught up: longer than a busy
// machine's pauses. It is also at least twice the longest freshness lag
// the run measured, two refresh periods of a target that refreshes, and
// twice the longest the count was seen still before it moved again
// during the drain: a starved search engine whose refreshes come every
// few seconds, whatever its setting, is not taken as done between two.
const minStall = 2 * time.Second

// drainMax is the longest the drain may last.
func (c Config) drainMax() time.Duration {
	if c.DrainMax > 0 {
		return max(c.DrainMax, c.Drain)
	}
	return drainStretch * c.Drain
}

// drain waits until every acknowledged event and every probe is visible
// on every endpoint, as an audit shows once the counts reach the
// ledger's. After cfg.Drain it waits on only while the target is
// still catching up (its count of visible events moved within the stall
// window), up to the drain's maximum. It says whether the target had
// caught up: everything visible, or the count still for a stall window
// once cfg.Drain had passed; only then is an event still not visible
// lost rather than late. lagMax is the longest freshness lag the run
// measured; end is the schedule's.
func drain(ctx context.Context, eps []*endpointRun, cfg Config, gens []string, ledger *probe.Ledger, probes *probe.Probes, upd *updateProbes, clock probe.Clock, end time.Time, lagMax time.Duration) *results.Drain {
	start := time.Now()
	limit := cfg.drainMax()
	pause := cfg.PollInterval
	if pause == 0 {
		pause = drainPause
	}
	stall := max(minStall, 2*lagMax)
	for _, e := range eps {
		if r, ok := e.Reader.(target.Refresher); ok {
			if p, ok := r.RefreshPeriod(); ok {
				stall = max(stall, 2*p)
			}
		}
	}
	d := &results.Drain{MaxS: limit.Seconds()}
	last, moved := int64(-1), start
	// The audit of the count auditedAt: the counts reaching the ledger's
	// do not show every acknowledged event visible (a request that failed
	// after the server stored its events adds events never acknowledged),
	// so an audit must; it is run again only when the count has moved.
	auditedAt, audits := int64(-1), [][]results.Completeness(nil)
	for ctx.Err() == nil {
		n, covered, known := visibleCount(ctx, eps, gens, ledger)
		now := time.Now()
		switch {
		case !known:
			moved = now // a count that failed says nothing of progress
		case last >= 0 && n != last:
			stall = max(stall, 2*now.Sub(moved))
			moved = now
		}
		if known {
			last = n
		}
		if known && covered && n != auditedAt {
			auditedAt, audits = n, auditAll(ctx, eps, gens, ledger)
		}
		all := known && covered && audits != nil
		if all && probes.Pending() == 0 && upd.pending() == 0 && upd.allVisible(ctx, gens, ledger) {
			for i, e := range eps {
				e.drained = audits[i]
			}
			d.CaughtUp = true
			break
		}
		if now.Sub(start) >= cfg.Drain {
			if now.Sub(moved) >= stall {
				d.CaughtUp = true
				break
			}
			if now.Sub(start) >= limit {
				break
			}
		}
		if !pace.Sleep(now.Add(pause), ctx.Done()) {
			break
		}
	}
	d.WaitedS = time.Since(start).Seconds()
	if behind, ok := behindAt(ctx, eps[0].Reader, gens, clock, end); ok {
		ms := float64(behind.Microseconds()) / 1000
		d.BehindMs = &ms
	}
	return d
}

// visibleCount is how many events of gens every endpoint shows in all,
// whether each count reaches what was acknowledged, and whether every
// count answered (an endpoint that keeps nothing is left out).
func visibleCount(ctx context.Context, eps []*endpointRun, gens []string, ledger *probe.Ledger) (n int64, all, known bool) {
	all, known = true, true
	for _, e := range eps {
		for _, g := range gens {
			c, err := e.Reader.Count(ctx, g)
			if errors.Is(err, target.ErrNotKept) {
				continue // nothing will ever show: nothing to wait for
			}
			if err != nil {
				all, known = false, false
				continue
			}
			n += c
			if c < ledger.AckedCount(g) {
				all = false
			}
		}
	}
	return n, all, known
}

// auditAll audits every endpoint, and returns the audits when they find
// every acknowledged event visible everywhere; nil when some is not, or
// an audit failed. Unlike the run's last audit it ends with ctx: the
// drain is cut short by an interrupt.
func auditAll(ctx context.Context, eps []*endpointRun, gens []string, ledger *probe.Ledger) [][]results.Completeness {
	out := make([][]results.Completeness, len(eps))
	for i, e := range eps {
		for _, g := range gens {
			c, err := ledger.Audit(ctx, e.Reader, g)
			if err != nil || c.Missing > 0 {
				return nil
			}
			out[i] = append(out[i], c)
		}
	}
	return out
}

// behindAt is how far before end the newest event r shows of some
// generator of gens was generated, the largest over them; false when no
// generator answers with an event.
func behindAt(ctx context.Context, r target.Reader, gens []string, clock probe.Clock, end time.Time) (time.Duration, bool) {
	var behind time.Duration
	known := false
	for _, g := range gens {
		newest, ok, err := r.Freshness(ctx, g)
		if err == nil && ok {
			b := clock.Since(end, newest)
			if !known || b > behind {
				behind = b
			}
			known = true
		}
	}
	return behind, known
}

// recheck looks again for the events c found not visible, after (how
// long after the drain it is); nil when the target does not answer.
func recheck(ctx context.Context, r target.Reader, c *results.Completeness, after time.Duration) *results.Recheck {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	up, total, err := probe.Recheck(rctx, r, c.Generator, c.NotVisible)
	if err != nil {
		return nil
	}
	return &results.Recheck{AfterS: after.Seconds(), TurnedUp: up, StillNotVisible: total - up}
}

// settle books what the endpoints' audits (eps, read through readers)
// found not visible: lost when the target had caught up by the drain's
// end, late otherwise; and, with a Recheck, audits the late events again
// after it and says which turned up. Before it books an event lost it
// forces a refresh of a target that can (refreshAudit).
func settle(ctx context.Context, cfg Config, ledger *probe.Ledger, d *results.Drain, eps []*results.Endpoint, readers []*endpointRun) {
	late := false
	for i, e := range eps {
		cs := e.Completeness
		if d.CaughtUp {
			refreshAudit(ctx, ledger, readers[i].Reader, cs)
		}
		for j := range cs {
			if c := &cs[j]; !d.CaughtUp && c.Missing > 0 {
				c.Late, c.LateSample, c.Missing, c.MissingSample = c.Missing, c.MissingSample, 0, nil
				late = true
			}
		}
	}
	if !late || cfg.Recheck <= 0 || !pace.Sleep(time.Now().Add(cfg.Recheck), ctx.Done()) {
		return
	}
	for i, e := range eps {
		cs := e.Completeness
		for j := range cs {
			if c := &cs[j]; c.Late > 0 {
				c.Recheck = recheck(ctx, readers[i].Reader, c, cfg.Recheck)
			}
		}
	}
}

// refreshAudit forces one refresh of r, when it can and its audits cs
// find acknowledged events not visible, and audits those generators
// again: an event stored but not yet searchable (refreshes disabled, or
// a starved server) is late, not lost; what a forced refresh still does
// not show is lost. A refresh or audit that fails leaves cs as it was.
func refreshAudit(ctx context.Context, ledger *probe.Ledger, r target.Reader, cs []results.Completeness) {
	fr, ok := r.(target.ForceRefresher)
	if !ok || !slices.ContainsFunc(cs, func(c results.Completeness) bool { return c.Missing > 0 }) {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	if fr.Refresh(rctx) != nil {
		return
	}
	for i := range cs {
		c := &cs[i]
		if c.Missing == 0 {
			continue
		}
		again, err := ledger.Audit(rctx, r, c.Generator)
		if err != nil || again.Missing >= c.Missing {
			continue
		}
		again.Late = c.Missing - again.Missing
		again.ShownByRefresh = again.Late
		for _, seq := range c.MissingSample {
			if found(seq, again) {
				again.LateSample = append(again.LateSample, seq)
			}
		}
		*c = again
	}
}

// found says whether the audit c found seq visible, as far as its ranges
// of events not visible tell: past the last range of a cut list, it
// cannot say, and says no.
func found(seq int64, c results.Completeness) bool {
	for _, rg := range c.NotVisible {
		if seq >= rg.From && seq <= rg.To {
			return false
		}
	}
	if n := len(c.NotVisible); c.NotVisibleCut && n > 0 && seq > c.NotVisible[n-1].To {
		return false
	}
	return true
}

// Recheck looks again, on r, for the events res's audit of its target
// found late or missing, and returns that audit with each generator's
// Recheck set: how many turned up since (AfterS from res's end).
func Recheck(ctx context.Context, r target.Reader, res *results.Result) []results.Completeness {
	after := time.Since(res.EndedAt)
	out := slices.Clone(res.Target().Completeness)
	for i := range out {
		if c := &out[i]; c.Late+c.Missing > 0 {
			c.Recheck = recheck(ctx, r, c, after)
		}
	}
	return out
}
