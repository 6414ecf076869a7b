// Package dispatch sends work open-loop. It is written once for every load
// freshbench generates — write batches, queries, and the loads to come —
// because the guarantee against coordinated omission is the product:
//
//   - every unit is due at its intended time from a pace.Schedule, whatever
//     the target did with the previous ones;
//   - units in flight are bounded by Slots, which several streams may share;
//   - a unit is late when it waited for a slot, or when the pacer itself
//     sends it more than LateAfter behind its intended time;
//   - every unit the schedule made due before the end is either sent or
//     counted unsent, exactly, with the time it was given up so that the
//     caller can bound its latency from below.
//
// Only what a unit is and how it is sent vary, through a Sender (vegeta's
// Attack owns pacing and workers in the same way while only the hit varies).
package dispatch

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/freshbench/freshbench/pace"
)

// Slots bounds the units in flight. Streams that share one Slots share
// the bound.
type Slots struct{ c chan struct{} }

// NewSlots returns a bound of n units in flight (n ≥ 1).
func NewSlots(n int) *Slots { return &Slots{c: make(chan struct{}, max(n, 1))} }

// InUse is how many units are in flight now.
func (s *Slots) InUse() int { return len(s.c) }

// Due is how one unit was dispatched.
type Due struct {
	Intended time.Time // from the schedule
	Sent     time.Time // when it got its slot and was handed to Send
	Late     bool      // waited for a slot, or the pacer was behind
}

// Lateness is how long after its intended time the unit was sent.
func (d Due) Lateness() time.Duration { return d.Sent.Sub(d.Intended) }

// Unit is what a Sender builds for one intended time.
type Unit struct {
	// Events and Bytes advance the schedule: an event rate counts Events,
	// a byte rate counts Bytes.
	Events, Bytes int
	// Send runs in its own goroutine while the unit holds its slot. Its
	// context is not cancelled when the stream is stopped, so that what
	// was sent finishes (each send bounds itself by its own timeout) and
	// its outcome is counted.
	Send func(ctx context.Context)
}

// Unsent describes units the schedule made due that were never sent.
type Unsent struct {
	Units  int // how many
	Events int // Units × the stream's UnitEvents
	// from is the schedule as it stood before the units, and unit their
	// size in its terms: together they place each at its intended time.
	from pace.Schedule
	unit float64
	// GaveUp is when the stream gave them up. A unit's latency, had it
	// been sent, is at least GaveUp − its intended time.
	GaveUp time.Time
}

// Sender makes and counts the units of one stream.
type Sender interface {
	// Build makes the unit of d, just before it is sent: a unit is built
	// only once it holds a slot, so memory stays bounded by the slots.
	Build(d Due) Unit
	// Unsent is told once, at the end, of the units never sent (not
	// called when there are none).
	Unsent(u Unsent)
}

// Stream is one open-loop stream of units.
type Stream struct {
	Schedule *pace.Schedule
	// End: no unit is due from End on. A stopped context moves it to the
	// instant it stopped.
	End   time.Time
	Slots *Slots
	// LateAfter: a unit sent more than this after its intended time is
	// late although it did not wait for a slot.
	LateAfter time.Duration
	// FinalWait: a unit already waiting for a slot at End keeps waiting
	// this long after End (slots free as sends finish within their own
	// timeouts), so that the backlog at the end is measured from intended
	// time instead of being censored. Units that had not reached their
	// slot by End are unsent.
	FinalWait time.Duration
	// UnitEvents and UnitBytes are the size of a unit not built, used to
	// count unsent units exactly along the schedule (for a byte rate the
	// nominal bytes of a unit: documents of a fixed size).
	UnitEvents, UnitBytes int
}

// Run dispatches the stream's units until End, or until ctx is done, and
// returns when every unit it sent has finished. It returns the instant a
// done ctx stopped it, or the zero time when the schedule ran to End: a
// caller that closes its measured window there needs the instant before it
// reads its figures, which a callback on ctx, run in a goroutine of its
// own, does not promise.
func (s Stream) Run(ctx context.Context, snd Sender) (stopped time.Time) {
	var inflight sync.WaitGroup
	defer inflight.Wait()
	sendCtx := context.WithoutCancel(ctx)
	finalWait := time.NewTimer(time.Until(s.End.Add(s.FinalWait)))
	defer finalWait.Stop()
	stop := func() time.Time {
		stopped = time.Now()
		s.giveUp(snd, stopped)
		return stopped
	}
	for {
		intended := s.Schedule.Next()
		if !intended.Before(s.End) {
			return
		}
		if !pace.Sleep(intended, ctx.Done()) {
			return stop()
		}
		waited := false
		select {
		case s.Slots.c <- struct{}{}:
		default:
			waited = true
			if now := time.Now(); s.pastEnd(now, intended) {
				s.giveUp(snd, now) // behind at the end: not waiting in line
				return
			}
			select {
			case s.Slots.c <- struct{}{}:
			case <-ctx.Done():
				return stop()
			case <-finalWait.C:
				s.giveUp(snd, time.Now())
				return
			}
		}
		sent := time.Now()
		if !waited && s.pastEnd(sent, intended) {
			// The pacer itself reached this unit only after the end.
			<-s.Slots.c
			s.giveUp(snd, sent)
			return
		}
		d := Due{Intended: intended, Sent: sent, Late: waited || sent.Sub(intended) > s.LateAfter}
		u := snd.Build(d)
		s.Schedule.Advance(u.Events, u.Bytes)
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			defer func() { <-s.Slots.c }()
			u.Send(sendCtx)
		}()
	}
}

// pastEnd says whether a unit reached at now, due at intended, comes too
// late to be sent: after the end, and later than timer jitter explains.
func (s Stream) pastEnd(now, intended time.Time) bool {
	return !now.Before(s.End) && now.Sub(intended) > s.LateAfter
}

// giveUp counts the units still due before the end as unsent. After an
// interruption at t, the end is t: units whose time had not come are not
// due.
func (s Stream) giveUp(snd Sender, t time.Time) {
	end := s.End
	if t.Before(end) {
		end = t
	}
	unit := float64(s.UnitEvents)
	if s.Schedule.Rate().Unit == pace.Bytes {
		unit = float64(s.UnitBytes)
	}
	from := *s.Schedule
	n, _, _ := s.Schedule.Skip(end, unit)
	if n == 0 {
		return
	}
	snd.Unsent(Unsent{Units: n, Events: n * s.UnitEvents, from: from, unit: unit, GaveUp: t})
}

// Spread calls fn for up to samples of u's units, evenly spread over
// them, each at its intended time and standing for weight units, so that
// a caller can record the lower bounds of many unsent units in bounded
// time. Under a shape the units are not evenly spaced in time (a burst's
// are denser), and each sample keeps its unit's own time.
func (u Unsent) Spread(samples int, fn func(intended time.Time, weight int64)) {
	if u.Units <= 0 || samples <= 0 {
		return
	}
	k := min(u.Units, samples)
	base, extra := u.Units/k, u.Units%k
	for i := range k {
		w := int64(base)
		if i < extra {
			w++
		}
		unit := 0
		if k > 1 {
			unit = int(math.Round(float64(u.Units-1) * float64(i) / float64(k-1)))
		}
		fn(u.from.At(unit, u.unit), w)
	}
}
