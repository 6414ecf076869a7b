package dispatch

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/pace"
)

// counter records what a stream did; each send takes delay.
type counter struct {
	mu           sync.Mutex
	delay        time.Duration
	sent, late   int
	latencies    []time.Duration // intended → done
	unsentUnits  int
	unsentBounds []time.Duration
}

func (c *counter) Build(d Due) Unit {
	c.mu.Lock()
	c.sent++
	if d.Late {
		c.late++
	}
	c.mu.Unlock()
	return Unit{Events: 1, Send: func(context.Context) {
		time.Sleep(c.delay)
		c.mu.Lock()
		c.latencies = append(c.latencies, time.Since(d.Intended))
		c.mu.Unlock()
	}}
}

func (c *counter) Unsent(u Unsent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unsentUnits += u.Units
	u.Spread(1000, func(at time.Time, w int64) {
		for range w {
			c.unsentBounds = append(c.unsentBounds, u.GaveUp.Sub(at))
		}
	})
}

func stream(rate float64, d time.Duration, slots int) (Stream, time.Time) {
	start := time.Now().Add(10 * time.Millisecond)
	return Stream{
		Schedule: pace.NewSchedule(start, pace.Rate{PerSecond: rate}), End: start.Add(d),
		Slots: NewSlots(slots), LateAfter: 10 * time.Millisecond, FinalWait: 2 * time.Second,
		UnitEvents: 1, UnitBytes: 1,
	}, start
}

// Against a target that takes 4 of every 5 units too long, every unit the
// schedule made due is sent or unsent; the one waiting for a slot at the
// end is sent and its latency runs from its intended time; the unsent
// ones carry a lower bound of theirs.
func TestBacklogAtTheEndIsMeasured(t *testing.T) { synctest.Test(t, testBacklogAtTheEndIsMeasured) }

func testBacklogAtTheEndIsMeasured(t *testing.T) {
	s, start := stream(50, time.Second, 1) // 50 units due, 20 ms apart
	c := &counter{delay: 100 * time.Millisecond}
	if stopped := s.Run(context.Background(), c); !stopped.IsZero() {
		t.Errorf("Run says a context stopped it at %s; none did", stopped)
	}
	if c.sent+c.unsentUnits != 50 {
		t.Fatalf("sent %d + unsent %d, want the 50 units due", c.sent, c.unsentUnits)
	}
	if c.late == 0 || c.unsentUnits == 0 {
		t.Fatalf("late %d, unsent %d: want both, the target takes a fifth of the schedule", c.late, c.unsentUnits)
	}
	worst := time.Duration(0)
	for _, l := range c.latencies {
		worst = max(worst, l)
	}
	// The last unit sent waited in line at the end: its latency includes
	// most of the run's backlog (about 0.8 s), not just its service time.
	if worst < 500*time.Millisecond {
		t.Fatalf("worst latency %s, want the backlog (> 500ms) measured", worst)
	}
	for _, b := range c.unsentBounds {
		if b < 0 {
			t.Fatalf("an unsent unit's latency bound is %s, want ≥ 0 (it was due)", b)
		}
	}
	_ = start
}

// An interrupted stream counts as unsent only the units due before the
// interruption.
func TestInterruptionEndsWhatIsDue(t *testing.T) { synctest.Test(t, testInterruptionEndsWhatIsDue) }

func testInterruptionEndsWhatIsDue(t *testing.T) {
	s, start := stream(100, 10*time.Second, 4)
	c := &counter{}
	ctx, cancel := context.WithCancel(context.Background())
	var stoppedAt time.Time
	// Between two instants of the schedule: which of two timers due at
	// one instant fires first is not defined.
	time.AfterFunc(305*time.Millisecond, func() { stoppedAt = time.Now(); cancel() })
	stopped := s.Run(ctx, c)
	if !stopped.Equal(stoppedAt) {
		t.Errorf("Run says it stopped at +%s, the context was cancelled at +%s", stopped.Sub(start), stoppedAt.Sub(start))
	}
	// On virtual time the interruption falls on an instant of the
	// schedule exactly: the unit due then is due, none after it.
	due := int(stoppedAt.Sub(start)/(10*time.Millisecond)) + 1
	if got := c.sent + c.unsentUnits; got != due {
		t.Fatalf("sent %d + unsent %d = %d, want the %d units due before the interruption", c.sent, c.unsentUnits, got, due)
	}
}

// Spread gives every unit a weight, over at most the samples asked for.
func TestSpread(t *testing.T) {
	u := Unsent{Units: 2503, from: *pace.NewSchedule(time.Unix(0, 0), pace.Rate{PerSecond: 100}), unit: 1}
	var total int64
	calls := 0
	u.Spread(1000, func(at time.Time, w int64) { total += w; calls++ })
	if total != 2503 || calls != 1000 {
		t.Fatalf("weights sum to %d over %d calls, want 2503 over 1000", total, calls)
	}
}

// Units given up under a shape are placed at their own intended times,
// not evenly between the first and the last: a burst's units land in the
// burst (an isolation experiment's windows count the unsent by them).
func TestUnsentFollowsTheShape(t *testing.T) {
	shape, err := pace.ParseShape("burst 3x at 2s for 2s")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1000, 0)
	s := Stream{Schedule: pace.NewShapedSchedule(start, pace.Rate{PerSecond: 10}, shape), End: start.Add(6 * time.Second), UnitEvents: 1, UnitBytes: 1}
	var c counter
	gaveUp := start.Add(6 * time.Second)
	s.giveUp(&c, gaveUp)
	inBurst := 0
	for _, b := range c.unsentBounds {
		if at := gaveUp.Add(-b).Sub(start); at >= 2*time.Second && at < 4*time.Second {
			inBurst++
		}
	}
	// 10 units/s for 4 s and 30 units/s for the 2 s of the burst.
	if c.unsentUnits != 100 || inBurst != 60 {
		t.Errorf("%d units unsent, %d of them in the burst; want 100, 60", c.unsentUnits, inBurst)
	}
}
