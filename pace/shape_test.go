package pace

import (
	"math"
	"strings"
	"testing"
	"time"
)

// shapes the tests hold to their integral: every kind of piece, a rate
// that falls to 0 and rises again, and bursts.
var shapes = []string{
	"ramp 0.1x..3x for 20s",
	"ramp 2x..0x for 10s; const 0 for 5s; ramp 0..1 for 5s",
	"steps 1x,4x,0.5x,2x every 5s",
	"sine 1x±1x every 7s",
	"sine 2±0.5 every 3s for 10s; const 1 for 10s",
	"burst 5x at 4s for 3s; burst 0.2x at 10s for 6s",
}

// riemann adds ∫ f from a to b to sum by the midpoint rule on Factor
// alone: a truth apart from the closed forms the schedule inverts.
func riemann(s Shape, a, b time.Duration) float64 {
	const step = 100 * time.Microsecond
	var sum float64
	for x := a; x < b; x += step {
		w := min(step, b-x)
		sum += s.Factor(x+w/2) * w.Seconds()
	}
	return sum
}

// The intended times of each shape follow its integral: at any instant,
// the units due before it are the rate times ∫ f, within one.
func TestShapeCountFollowsIntegral(t *testing.T) {
	for _, text := range shapes {
		s, err := ParseShape(text)
		if err != nil {
			t.Fatalf("ParseShape(%q): %v", text, err)
		}
		start := time.Unix(1000, 0)
		const rate = 500.0
		sch := NewShapedSchedule(start, Rate{PerSecond: rate}, s)
		var due []time.Duration
		for {
			at := sch.Next().Sub(start)
			if at >= 20*time.Second {
				break
			}
			due = append(due, at)
			sch.Advance(1, 0)
		}
		for i := 1; i < len(due); i++ {
			if due[i] < due[i-1] {
				t.Fatalf("%s: unit %d due at %s before unit %d at %s", text, i, due[i], i-1, due[i-1])
			}
		}
		k, integral, prev := 0, 0.0, time.Duration(0)
		for at := time.Duration(0); at <= 20*time.Second; at += 37 * time.Millisecond {
			integral += riemann(s, prev, at)
			prev = at
			for k < len(due) && due[k] < at {
				k++
			}
			if want := rate * integral; math.Abs(float64(k)-want) > 1 {
				t.Fatalf("%s: %d units due before %s, want rate × ∫f = %.2f within 1", text, k, at, want)
			}
		}
	}
}

// Skip counts exactly the units Next would have made due before the end,
// under every shape.
func TestShapeSkipIsExact(t *testing.T) {
	start := time.Unix(1000, 0)
	for _, text := range shapes {
		s, _ := ParseShape(text)
		for _, end := range []time.Duration{0, 3 * time.Second, 5*time.Second + 1, 9 * time.Second, 17*time.Second + 3*time.Millisecond} {
			walk := NewShapedSchedule(start, Rate{PerSecond: 300}, s)
			n := 0
			for walk.Next().Before(start.Add(end)) {
				walk.Advance(2, 0)
				n++
			}
			skip := NewShapedSchedule(start, Rate{PerSecond: 300}, s)
			got, _, last := skip.Skip(start.Add(end), 2)
			if got != n {
				t.Fatalf("%s: Skip to %s counts %d units, stepping Next finds %d", text, end, got, n)
			}
			if n > 0 && !last.Before(start.Add(end)) {
				t.Fatalf("%s: the last unit skipped is due at %s, not before the end %s", text, last.Sub(start), end)
			}
			if !skip.Next().Equal(walk.Next()) {
				t.Fatalf("%s: after Skip the next unit is due at %s, after stepping at %s", text, skip.Next().Sub(start), walk.Next().Sub(start))
			}
		}
	}
}

// A shape of one constant piece of factor 1 is the constant schedule
// exactly: the same intended times to the nanosecond, the same counts.
func TestOneConstantPieceIsTheConstantSchedule(t *testing.T) {
	start := time.Unix(1000, 123)
	for _, text := range []string{"const 1", "const 1x", "const 1x for 30s"} {
		s, err := ParseShape(text)
		if err != nil || s.IsConstant() {
			t.Fatalf("ParseShape(%q) = %v, %v: want a shape of one piece", text, s, err)
		}
		for _, r := range []Rate{{PerSecond: 3333, Unit: Events}, {PerSecond: 1.7e6, Unit: Bytes}} {
			plain, shaped := NewSchedule(start, r), NewShapedSchedule(start, r, s)
			for k := range 5000 {
				if a, b := plain.Next(), shaped.Next(); !a.Equal(b) {
					t.Fatalf("%s, %s: unit %d due at %s, the constant schedule says %s", text, r, k, b.Sub(start), a.Sub(start))
				}
				plain.Advance(7, 1000+k%13)
				shaped.Advance(7, 1000+k%13)
			}
			end := start.Add(41*time.Second + 7)
			n1, f1, l1 := plain.Skip(end, 7)
			n2, f2, l2 := shaped.Skip(end, 7)
			if n1 != n2 || !f1.Equal(f2) || !l1.Equal(l2) {
				t.Fatalf("%s, %s: Skip gives %d %s %s, the constant schedule %d %s %s", text, r, n2, f2, l2, n1, f1, l1)
			}
		}
	}
}

// From makes a stream that begins late start at its instant with the
// shape still measured from the start.
func TestScheduleFrom(t *testing.T) {
	start := time.Unix(1000, 0)
	s, _ := ParseShape("burst 4x at 10s for 10s")
	sch := NewShapedSchedule(start, Rate{PerSecond: 100}, s)
	sch.From(start.Add(12 * time.Second))
	if got := sch.Next().Sub(start); got < 12*time.Second-time.Microsecond || got > 12*time.Second+time.Microsecond {
		t.Fatalf("first unit after From(12s) due at %s", got)
	}
	sch.Advance(1, 0)
	// 400 units per second in the burst: the next one 2.5 ms later.
	if got := sch.Next().Sub(start) - 12*time.Second; got < 2499*time.Microsecond || got > 2501*time.Microsecond {
		t.Fatalf("second unit %s after the first, want 2.5ms (the burst's rate)", got)
	}
}

// Bad shapes are refused with what is wrong in one line.
func TestBadShapes(t *testing.T) {
	for text, want := range map[string]string{
		"const -1x":          "factor \"-1x\"",
		"ramp 1..-2 for 10s": "factor \"-2\"",
		"burst 5x at 10s for 10s; burst 2x at 15s for 1s": "bursts overlap",
		"burst -3x at 10s for 10s":                        "factor",
		"burst 3x at 10s":                                 "a burst is",
		"sine 1±2 every 10s":                              "below 0",
		"const 1; ramp 1..2 for 3s":                       "only the last piece",
		"ramp 1..2":                                       "a ramp is",
		"burst 2x at 1s for 1s; const 1":                  "cannot be mixed",
		"wobble 3":                                        "want const, ramp",
		"steps 1,x2 every 5s":                             "factor",
	} {
		_, err := ParseShape(text)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseShape(%q) = %v, want one line saying %q", text, err, want)
		}
	}
	for text, run := range map[string]time.Duration{
		"burst 5x at 50s for 20s":     60 * time.Second,
		"burst 5x at 70s for 1s":      60 * time.Second,
		"steps 1,2,3 every 30s":       60 * time.Second,
		"ramp 1..2 for 61s; const 2x": 60 * time.Second,
	} {
		s, err := ParseShape(text)
		if err != nil {
			t.Fatalf("ParseShape(%q): %v", text, err)
		}
		if err := s.Check(run); err == nil || !strings.Contains(err.Error(), "after the run") {
			t.Errorf("%q in a run of %s: Check = %v, want it refused", text, run, err)
		}
	}
	for _, text := range []string{"burst 5x at 40s for 20s", "steps 1,2 every 30s", "ramp 1..2 for 60s", "const 2"} {
		s, _ := ParseShape(text)
		if err := s.Check(60 * time.Second); err != nil {
			t.Errorf("%q fits a run of 60s; Check = %v", text, err)
		}
	}
}
