package pace

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Shape is a target rate over time, as a factor of the run's rate: at t
// after the start the target is rate × f(t). The zero Shape is f = 1, the
// constant rate.
//
// A shape is written as text, read by ParseShape, either as a sequence of
// pieces back to back, separated by ";":
//
//	const F [for D]           the factor F
//	ramp F..G for D           from F to G linearly
//	sine F±A every P [for D]  F + A·sin(2πt/P), A ≤ F ("+-" for "±")
//	steps F,G,H every D       one constant piece of length D per factor
//
// or as bursts over the run's rate (factor 1), separated by ";":
//
//	burst K at S for L        the factor K from S to S+L
//
// Factors are numbers, optionally followed by "x" (2x, 0.5x). After the
// last piece the shape goes on: a constant or a sine as it was, a ramp at
// its last factor, and 1 after the last burst. The last piece of a
// sequence may leave out its length.
type Shape struct {
	text   string
	pieces []piece // cover [0, ∞) back to back; nil: the constant 1
	end    float64 // nanoseconds: where the last length written ends
}

// piece is one part of a shape, in nanoseconds since the start.
type piece struct {
	start, length float64 // length +Inf: the last piece
	kind          pieceKind
	from, to      float64 // factor at the start and the end (to: a ramp's)
	amp, period   float64 // a sine's amplitude and period
}

type pieceKind int

const (
	constant pieceKind = iota
	ramp
	sine
)

// factor is f at offset x into the piece.
func (p piece) factor(x float64) float64 {
	switch p.kind {
	case ramp:
		return p.from + (p.to-p.from)*x/p.length
	case sine:
		return p.from + p.amp*math.Sin(2*math.Pi*x/p.period)
	}
	return p.from
}

// integral is ∫₀ˣ f over the piece (factor·nanoseconds):
//
//	constant  F·x
//	ramp      F·x + (G−F)·x²/(2L)
//	sine      F·x + A·P/(2π)·(1 − cos(2πx/P))
func (p piece) integral(x float64) float64 {
	switch p.kind {
	case ramp:
		return p.from*x + (p.to-p.from)*x*x/(2*p.length)
	case sine:
		return p.from*x + p.amp*p.period/(2*math.Pi)*(1-math.Cos(2*math.Pi*x/p.period))
	}
	return p.from * x
}

// inverse is the least x in the piece with integral(x) = c, for c ≥ 0
// within the piece's total (every f here is ≥ 0, so the integral never
// falls):
//
//	constant  x = c/F
//	ramp      the root of (a/2)x² + F·x − c = 0, a = (G−F)/L, written
//	          x = 2c/(F + √(F² + 2ac)) so that a = 0 and F = 0 stay exact
//	sine      no closed form: bisection to a hundredth of a nanosecond
//	          (the integral is monotone)
func (p piece) inverse(c float64) float64 {
	if c <= 0 {
		return 0
	}
	switch p.kind {
	case ramp:
		a := (p.to - p.from) / p.length
		return 2 * c / (p.from + math.Sqrt(p.from*p.from+2*a*c))
	case sine:
		lo, hi := 0.0, p.length
		if math.IsInf(hi, 1) {
			if p.from == 0 {
				return math.Inf(1) // the rate is 0 from here on
			}
			// f averages F over each period, so c is reached within
			// c/F plus one period.
			hi = c/p.from + p.period
		}
		for hi-lo > 0.01 {
			mid := (lo + hi) / 2
			if p.integral(mid) < c {
				lo = mid
			} else {
				hi = mid
			}
		}
		return hi
	}
	return c / p.from
}

// Factor is f(t), the target at t after the start as a factor of the rate.
func (s Shape) Factor(t time.Duration) float64 {
	if s.pieces == nil {
		return 1
	}
	x := float64(t)
	i := s.at(x)
	return s.pieces[i].factor(x - s.pieces[i].start)
}

// at is the index of the piece holding x ≥ 0.
func (s Shape) at(x float64) int {
	i, _ := slices.BinarySearchFunc(s.pieces, x, func(p piece, x float64) int {
		if p.start+p.length <= x {
			return -1
		}
		return 1
	})
	return min(i, len(s.pieces)-1)
}

// integral is ∫₀ˣ f in factor·nanoseconds: the pieces before x whole, and
// the part of x's piece up to x.
func (s Shape) integral(x float64) float64 {
	if s.pieces == nil {
		return x
	}
	if x <= 0 {
		return 0
	}
	var sum float64
	for _, p := range s.pieces {
		if x < p.start+p.length {
			return sum + p.integral(x-p.start)
		}
		sum += p.integral(p.length)
	}
	return sum
}

// inverse is the least x with integral(x) = c (+Inf when the shape stays
// at 0 before reaching c).
func (s Shape) inverse(c float64) float64 {
	if s.pieces == nil {
		return c
	}
	var sum float64
	for _, p := range s.pieces {
		whole := math.Inf(1)
		if !math.IsInf(p.length, 1) {
			whole = p.integral(p.length)
		}
		if c <= sum+whole {
			return p.start + p.inverse(c-sum)
		}
		sum += whole
	}
	return math.Inf(1)
}

// Mean is the mean factor over [from, to) (f(from) when they are one
// instant): a shaped load's mean target over a window is its rate times it.
func (s Shape) Mean(from, to time.Duration) float64 {
	if to <= from {
		return s.Factor(from)
	}
	return (s.integral(float64(to)) - s.integral(float64(from))) / float64(to-from)
}

// IsConstant says whether the shape is the constant rate.
func (s Shape) IsConstant() bool { return s.pieces == nil }

// String is the shape as written ("" for the constant rate).
func (s Shape) String() string { return s.text }

// MarshalText writes the shape as ParseShape reads it.
func (s Shape) MarshalText() ([]byte, error) { return []byte(s.text), nil }

// UnmarshalText reads a shape with ParseShape.
func (s *Shape) UnmarshalText(b []byte) error {
	v, err := ParseShape(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Check refuses a shape that does not fit a run of the given length: a
// burst or a piece that ends after it.
func (s Shape) Check(run time.Duration) error {
	if s.end > float64(run) {
		return fmt.Errorf("the shape ends at %s, after the run's %s: shorten the shape or lengthen the run", time.Duration(s.end), run)
	}
	return nil
}

// ParseShape reads a shape written as Shape describes; "" and "const" are
// the constant rate.
func ParseShape(text string) (Shape, error) {
	t := strings.TrimSpace(text)
	if t == "" || t == "const" {
		return Shape{}, nil
	}
	fail := func(err error) (Shape, error) { return Shape{}, fmt.Errorf("shape %q: %w", text, err) }
	var (
		pieces []piece
		bursts int
		at     float64
		open   bool    // the last piece left out its length
		end    float64 // where the last length written ends
	)
	for part := range strings.SplitSeq(t, ";") {
		w := strings.Fields(part)
		if len(w) == 0 {
			return fail(errors.New("an empty piece between two \";\""))
		}
		if open {
			return fail(errors.New("only the last piece may leave out its length (add \"for D\")"))
		}
		if w[0] == "burst" {
			b, err := parseBurst(w)
			if err != nil {
				return fail(err)
			}
			bursts++
			pieces = append(pieces, b)
			continue
		}
		ps, err := parsePiece(w)
		if err != nil {
			return fail(err)
		}
		for _, p := range ps {
			p.start = at
			if p.length == 0 {
				open = true
				p.length = math.Inf(1)
			}
			at += p.length
			if !open {
				end = at
			}
			pieces = append(pieces, p)
		}
	}
	if bursts > 0 && bursts != len(pieces) {
		return fail(errors.New("bursts and a sequence of pieces cannot be mixed: write either \"burst K at S for L; …\" or pieces back to back"))
	}
	if bursts > 0 {
		ps, err := overBase(pieces)
		if err != nil {
			return fail(err)
		}
		pieces = ps
		end = ps[len(ps)-1].start
	} else if last := &pieces[len(pieces)-1]; !math.IsInf(last.length, 1) {
		if last.kind == ramp {
			pieces = append(pieces, piece{start: at, length: math.Inf(1), kind: constant, from: last.to})
		} else {
			last.length = math.Inf(1) // a constant or a sine goes on as it was
		}
	}
	return Shape{text: t, pieces: pieces, end: end}, nil
}

// overBase sorts bursts by start, refuses overlaps, and fills the gaps
// and the tail with the factor 1.
func overBase(bursts []piece) ([]piece, error) {
	slices.SortFunc(bursts, func(a, b piece) int { return cmp.Compare(a.start, b.start) })
	var out []piece
	at := 0.0
	for i, b := range bursts {
		if b.start < at {
			prev := bursts[i-1]
			return nil, fmt.Errorf("bursts overlap: the one at %s for %s and the one at %s: start each after the previous one ends",
				time.Duration(prev.start), time.Duration(prev.length), time.Duration(b.start))
		}
		if b.start > at {
			out = append(out, piece{start: at, length: b.start - at, kind: constant, from: 1})
		}
		out = append(out, b)
		at = b.start + b.length
	}
	return append(out, piece{start: at, length: math.Inf(1), kind: constant, from: 1}), nil
}

// parseBurst reads "burst K at S for L" as its piece.
func parseBurst(w []string) (piece, error) {
	bad := errors.New("a burst is \"burst K at S for L\", e.g. burst 5x at 60s for 30s")
	if len(w) != 6 || w[2] != "at" || w[4] != "for" {
		return piece{}, bad
	}
	k, err := parseFactor(w[1])
	if err != nil {
		return piece{}, err
	}
	s, err1 := time.ParseDuration(w[3])
	l, err2 := time.ParseDuration(w[5])
	if err1 != nil || err2 != nil || s < 0 || l <= 0 {
		return piece{}, fmt.Errorf("burst at %s for %s: want a start of 0 or more and a positive length, e.g. at 60s for 30s", w[3], w[5])
	}
	return piece{start: float64(s), length: float64(l), kind: constant, from: k}, nil
}

// parsePiece reads one piece of a sequence (steps make several); a length
// left out is 0.
func parsePiece(w []string) ([]piece, error) {
	switch w[0] {
	case "const":
		if len(w) < 2 {
			break
		}
		f, err := parseFactor(w[1])
		if err != nil {
			return nil, err
		}
		l, err := parseLength(w[2:])
		return []piece{{kind: constant, from: f, length: l}}, err
	case "ramp":
		return parseRamp(w)
	case "sine":
		return parseSine(w)
	case "steps":
		return parseSteps(w)
	}
	return nil, fmt.Errorf("piece %q: want const, ramp, sine, steps or burst", strings.Join(w, " "))
}

// parseLength reads a piece's optional "for D"; left out, it is 0.
func parseLength(rest []string) (float64, error) {
	switch {
	case len(rest) == 0:
		return 0, nil
	case len(rest) == 2 && rest[0] == "for":
		d, err := time.ParseDuration(rest[1])
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("length %q: want a positive duration, e.g. 30s", rest[1])
		}
		return float64(d), nil
	}
	return 0, fmt.Errorf("%q: want \"for D\" after the piece", strings.Join(rest, " "))
}

// parseRamp reads "ramp F..G for D".
func parseRamp(w []string) ([]piece, error) {
	if len(w) != 4 || w[2] != "for" {
		return nil, errors.New("a ramp is \"ramp F..G for D\", e.g. ramp 0.1x..2x for 60s")
	}
	a, b, ok := strings.Cut(w[1], "..")
	if !ok {
		return nil, errors.New("a ramp is \"ramp F..G for D\", e.g. ramp 0.1x..2x for 60s")
	}
	f, err := parseFactor(a)
	if err != nil {
		return nil, err
	}
	g, err := parseFactor(b)
	if err != nil {
		return nil, err
	}
	l, err := parseLength(w[2:])
	if err == nil && l == 0 {
		err = errors.New("a ramp needs its length")
	}
	return []piece{{kind: ramp, from: f, to: g, length: l}}, err
}

// parseSine reads "sine F±A every P [for D]".
func parseSine(w []string) ([]piece, error) {
	if len(w) < 4 || w[2] != "every" {
		return nil, errors.New("a sine is \"sine F±A every P [for D]\", e.g. sine 1x±0.5x every 60s")
	}
	m, a, ok := strings.Cut(w[1], "±")
	if !ok {
		m, a, ok = strings.Cut(w[1], "+-")
	}
	if !ok {
		return nil, errors.New("a sine is \"sine F±A every P [for D]\", e.g. sine 1x±0.5x every 60s")
	}
	f, err := parseFactor(m)
	if err != nil {
		return nil, err
	}
	amp, err := parseFactor(a)
	if err != nil {
		return nil, err
	}
	if amp > f {
		return nil, fmt.Errorf("sine %s: the amplitude %g is more than the mean %g, so the rate would fall below 0", w[1], amp, f)
	}
	p, err := time.ParseDuration(w[3])
	if err != nil || p <= 0 {
		return nil, fmt.Errorf("period %q: want a positive duration, e.g. 60s", w[3])
	}
	l, err := parseLength(w[4:])
	return []piece{{kind: sine, from: f, amp: amp, period: float64(p), length: l}}, err
}

// parseSteps reads "steps F,G,… every D": one constant piece a factor.
func parseSteps(w []string) ([]piece, error) {
	if len(w) != 4 || w[2] != "every" {
		return nil, errors.New("steps are \"steps F,G,… every D\", e.g. steps 1x,2x,3x every 30s")
	}
	d, err := time.ParseDuration(w[3])
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("step length %q: want a positive duration, e.g. 30s", w[3])
	}
	var ps []piece
	for s := range strings.SplitSeq(w[1], ",") {
		f, err := parseFactor(s)
		if err != nil {
			return nil, err
		}
		ps = append(ps, piece{kind: constant, from: f, length: float64(d)})
	}
	return ps, nil
}

// parseFactor reads a factor of the rate: a number of 0 or more, with an
// optional "x".
func parseFactor(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "x"), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("factor %q: want a factor of the rate of 0 or more, e.g. 2x", s)
	}
	return v, nil
}
