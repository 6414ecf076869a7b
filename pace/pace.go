// Package pace schedules batches open-loop: the intended time of each batch
// depends only on the start time and the target rate, never on how fast the
// database answered the previous one.
package pace

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Unit says what a Rate counts.
type Unit int

const (
	Events Unit = iota // events per second
	Bytes              // serialized bytes per second (MB = 10^6 bytes)
)

// Rate is a target throughput.
type Rate struct {
	PerSecond float64
	Unit      Unit
}

func (r Rate) String() string {
	if r.Unit == Bytes {
		return FormatBytes(r.PerSecond) + "/s"
	}
	return strconv.FormatFloat(r.PerSecond, 'f', -1, 64) + " events/s"
}

// MarshalText writes the rate the way ParseRate reads it.
func (r Rate) MarshalText() ([]byte, error) {
	if r.Unit == Bytes {
		return []byte(strconv.FormatFloat(r.PerSecond, 'f', -1, 64) + "B/s"), nil
	}
	return []byte(strconv.FormatFloat(r.PerSecond, 'f', -1, 64)), nil
}

// UnmarshalText reads a rate with ParseRate.
func (r *Rate) UnmarshalText(b []byte) error {
	v, err := ParseRate(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// Scale returns the rate multiplied by f, in the same unit.
func (r Rate) Scale(f float64) Rate { return Rate{PerSecond: r.PerSecond * f, Unit: r.Unit} }

// EventsPerSecond is the rate in events per second, for events of docSize
// bytes each.
func (r Rate) EventsPerSecond(docSize int) float64 {
	if r.Unit == Bytes {
		return r.PerSecond / float64(docSize)
	}
	return r.PerSecond
}

// Share is one of n equal shares of r: the rate of each instance of an
// experiment given its total.
func (r Rate) Share(n int) Rate { return r.Scale(1 / float64(n)) }

var byteUnits = []struct {
	suffix string
	mult   float64
}{
	{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10},
	{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// ParseSize reads a byte count such as 1000, 1.25KB, 10MB or 4KiB.
func ParseSize(s string) (float64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes with an optional unit B, KB, MB, GB (10^3) or KiB, MiB, GiB (2^10), e.g. 1KB", s)
	}
	return v * mult, nil
}

// ParseRate reads "5000" or "5000/s" (events per second) or a byte rate
// such as "10MB/s" or "512KiB/s".
func ParseRate(s string) (Rate, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "/s"), "/S")
	bad := fmt.Errorf("rate %q: want events per second (e.g. 5000) or bytes per second with a unit (e.g. 10MB/s, 512KiB/s)", s)
	if t == "" {
		return Rate{}, bad
	}
	if v, err := strconv.ParseFloat(t, 64); err == nil {
		if v <= 0 {
			return Rate{}, bad
		}
		return Rate{PerSecond: v, Unit: Events}, nil
	}
	last := t[len(t)-1]
	if last != 'b' && last != 'B' {
		return Rate{}, bad
	}
	v, err := ParseSize(t)
	if err != nil {
		return Rate{}, bad
	}
	return Rate{PerSecond: v, Unit: Bytes}, nil
}

// FormatBytes renders a byte count in decimal units (MB = 10^6).
func FormatBytes(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 2, 64) + " GB"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + " MB"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 2, 64) + " KB"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " B"
}

// Schedule gives the intended time of each batch of one stream. With an
// event rate, batch k is due at start + k*batchSize/rate; with a byte rate,
// at start + (bytes sent before it)/rate, so that the byte rate is exact
// whatever the size of each document.
//
// Under a Shape f the target at t is rate·f(t), so the units due before t
// are N(t) = rate·F(t), F(t) = ∫₀ᵗ f. The unit that follows the sent ones
// is due when the count reaches what was sent: at N⁻¹(sent) = F⁻¹(sent/rate),
// the least such t (f ≥ 0, so F never falls; where f is 0 no unit is due).
// For the constant shape F(t) = t and this is the constant rate's formula.
type Schedule struct {
	start time.Time
	rate  Rate
	shape Shape
	sent  float64 // events or bytes already scheduled
}

// NewSchedule starts a schedule of a constant rate at start.
func NewSchedule(start time.Time, rate Rate) *Schedule {
	return &Schedule{start: start, rate: rate}
}

// NewShapedSchedule starts a schedule at start whose target at t after it
// is rate × shape.Factor(t).
func NewShapedSchedule(start time.Time, rate Rate, shape Shape) *Schedule {
	return &Schedule{start: start, rate: rate, shape: shape}
}

// From skips the units due before t without sending them (a stream that
// could not begin until t, such as queries waiting for a parameter): its
// first unit is due at t.
func (s *Schedule) From(t time.Time) {
	if d := t.Sub(s.start); d > 0 {
		s.sent = s.shape.integral(float64(d)) * s.rate.PerSecond / float64(time.Second)
	}
}

// never is an intended time after any end: the shape's rate stays 0.
const never = time.Duration(math.MaxInt64)

// Next returns the intended time of the next batch.
func (s *Schedule) Next() time.Time {
	x := s.shape.inverse(s.sent / s.rate.PerSecond * float64(time.Second))
	if x >= float64(never) {
		return s.start.Add(never)
	}
	return s.start.Add(time.Duration(math.Round(x)))
}

// Rate is the schedule's rate (its shape's factor 1).
func (s *Schedule) Rate() Rate { return s.rate }

// Skip advances the schedule past every unit of the given size (events,
// or bytes for a byte rate) due before end, and returns how many there
// were and the intended times of the first and the last.
//
// Unit k from now is due at start + round(N⁻¹(sent + k·unit)), the
// rounding of Next. For x ≥ 0, round(x) < D ⇔ x < D − ½ (durations in
// nanoseconds), and N⁻¹(c) < x ⇔ c < N(x) where N rises (where it is flat
// no unit falls due), so unit k is due before end exactly when
// k < (N(D − ½) − sent)/unit, and the count is the ceiling of that bound,
// or 0 when it is not positive. For the constant rate N(x) = x·rate/10⁹.
func (s *Schedule) Skip(end time.Time, unit float64) (n int, first, last time.Time) {
	if unit <= 0 {
		return 0, time.Time{}, time.Time{}
	}
	d := float64(end.Sub(s.start))
	bound := (s.shape.integral(d-0.5)*s.rate.PerSecond/float64(time.Second) - s.sent) / unit
	if bound <= 0 {
		return 0, time.Time{}, time.Time{}
	}
	n = int(math.Ceil(bound))
	first = s.Next()
	s.sent += float64(n-1) * unit
	last = s.Next()
	s.sent += unit
	return n, first, last
}

// At returns the intended time of the unit k units of the given size
// after the next one (k = 0: Next's), leaving s as it is. Under a shape
// the units are not evenly spaced: each is placed by N⁻¹ as Next places it.
func (s *Schedule) At(k int, unit float64) time.Time {
	c := *s
	c.sent += float64(k) * unit
	return c.Next()
}

// Advance marks a batch of the given size as scheduled.
func (s *Schedule) Advance(events, bytes int) {
	if s.rate.Unit == Bytes {
		s.sent += float64(bytes)
	} else {
		s.sent += float64(events)
	}
}

// Sleep waits until t or until done is closed; it returns false when done
// was closed first.
func Sleep(t time.Time, done <-chan struct{}) bool {
	d := time.Until(t)
	if d <= 0 {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-done:
		return false
	}
}
