package dispatch

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

// simSender writes each unit, one event, to a sim target and keeps when it
// was due and sent.
type simSender struct {
	t      *sim.Target
	mu     sync.Mutex
	due    []Due
	unsent Unsent
}

func (s *simSender) Build(d Due) Unit {
	s.mu.Lock()
	s.due = append(s.due, d)
	s.mu.Unlock()
	return Unit{Events: 1, Send: func(ctx context.Context) {
		s.t.Write(ctx, target.Batch{Generator: "g", Docs: []target.Document{{ID: "x", JSON: []byte("{}")}}})
	}}
}

func (s *simSender) Unsent(u Unsent) { s.unsent = u }

// queued is what the dispatcher must do with one slot in front of a queue
// that serves one event in service: each unit goes at its intended time
// or, when the one before still holds the slot, the moment that one is
// served; it is late when it waited or went more than lateAfter behind;
// from the end on, a unit behind by more than lateAfter gives up with
// every one still due before the end.
func queued(t *testing.T, sch *pace.Schedule, end time.Time, service, lateAfter, finalWait time.Duration) (due []Due, unsent int) {
	var free, pacer time.Time
	for {
		intended := sch.Next()
		if !intended.Before(end) {
			return due, 0
		}
		p := intended
		if pacer.After(p) {
			p = pacer
		}
		if free.Equal(p) {
			t.Fatalf("a slot frees at %s, the instant a unit is due: the order is not defined, choose other figures", p)
		}
		sent, waited := p, free.After(p)
		if waited {
			if !p.Before(end) && p.Sub(intended) > lateAfter || free.After(end.Add(finalWait)) {
				n, _, _ := sch.Skip(end, 1)
				return due, n
			}
			sent = free
		}
		if !waited && !sent.Before(end) && sent.Sub(intended) > lateAfter {
			n, _, _ := sch.Skip(end, 1)
			return due, n
		}
		due = append(due, Due{Intended: intended, Sent: sent, Late: waited || sent.Sub(intended) > lateAfter})
		sch.Advance(1, 1)
		free, pacer = sent.Add(service), sent
	}
}

// Under a ramp and a burst that outrun the sim's capacity, the units sent,
// their send times, which are late, and how many go unsent are exactly
// those of the queue the sim models.
func TestShapedLatenessAndUnsentAreExact(t *testing.T) {
	for _, c := range []struct {
		shape    string
		rate     float64
		capacity float64
	}{
		{"ramp 0.5x..2x for 2s", 800, 1024},        // over capacity from 1.28 s: a backlog at the end
		{"burst 3x at 500ms for 400ms", 700, 1024}, // a backlog in the burst, worked off after it
	} {
		t.Run(c.shape, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				shape, err := pace.ParseShape(c.shape)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now().Add(10 * time.Millisecond)
				end := start.Add(2 * time.Second)
				rate := pace.Rate{PerSecond: c.rate}
				s := Stream{
					Schedule: pace.NewShapedSchedule(start, rate, shape), End: end,
					Slots: NewSlots(1), LateAfter: 10 * time.Millisecond, FinalWait: time.Second,
					UnitEvents: 1, UnitBytes: 1,
				}
				snd := &simSender{t: sim.New(sim.Config{Capacity: c.capacity})}
				s.Run(context.Background(), snd)

				service := time.Duration(1 / c.capacity * float64(time.Second))
				want, unsent := queued(t, pace.NewShapedSchedule(start, rate, shape), end, service, s.LateAfter, s.FinalWait)
				if len(snd.due) != len(want) || snd.unsent.Units != unsent {
					t.Fatalf("sent %d, unsent %d; the queue model sends %d, leaves %d unsent", len(snd.due), snd.unsent.Units, len(want), unsent)
				}
				if all, _, _ := pace.NewShapedSchedule(start, rate, shape).Skip(end, 1); len(snd.due)+snd.unsent.Units != all {
					t.Fatalf("sent %d + unsent %d, want the %d units the shape made due", len(snd.due), snd.unsent.Units, all)
				}
				late, worst := 0, time.Duration(0)
				for i, d := range snd.due {
					if d != want[i] {
						t.Fatalf("unit %d: due %s sent %s late %v; the model: due %s sent %s late %v", i,
							d.Intended.Sub(start), d.Sent.Sub(start), d.Late, want[i].Intended.Sub(start), want[i].Sent.Sub(start), want[i].Late)
					}
					if d.Late {
						late++
					}
					worst = max(worst, d.Lateness())
				}
				// Both shapes outrun the capacity: the test must see lateness.
				if late == 0 || worst < 50*time.Millisecond {
					t.Fatalf("late %d, worst lateness %s: the shape should outrun the capacity", late, worst)
				}
				t.Logf("%s at %g/s, capacity %g/s: %d sent, %d late (worst %s), %d unsent", c.shape, c.rate, c.capacity, len(want), late, worst, unsent)
			})
		})
	}
}
