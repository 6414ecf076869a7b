package docgen

import (
	"fmt"
	"math/bits"
	"slices"
)

// A template is compiled into a program: a flat list of ops run by one
// loop and one switch. Literal bytes between values (keys, quotes,
// braces) are merged and go with the op that follows them, stored padded
// to litLen so that one store copies them; an array's element, a
// nullable value and an absent member are the ops that follow theirs. Walking a tree of interface
// values instead cost twice the hand-written generators' time per event
// (BenchmarkTemplateRockBench, BenchmarkTemplateNested).

type opKind uint8

const (
	opLit            opKind = iota // its literal alone
	opLongLit                      // more.long, literal bytes longer than 3*litLen
	opComma                        // a comma unless the object has no member yet
	opPick                         // an entry of more.list
	opName                         // first and last name
	opEmail                        // first.last@company.tld
	opStreet                       // number, street and suffix
	opPhone                        // +1 (NXX) XXX XXXX
	opUUID                         // a version 4 UUID
	opWords                        // lo+[0,span) lorem words; a sentence when p is 1
	opText                         // lo+[0,span) bytes of lorem text
	opInt                          // lo+[0,span)
	opSmallInt                     // lo+[0,span), all in 0..99: an age, a rating
	opFloat                        // lo+[0,span) in units of 1/p, with n decimals
	opDigits                       // n random digits
	opDate                         // day lo+[0,span) after 1970-01-01, YYYY-MM-DD
	opDatetime                     // second lo+[0,span) after 1970, RFC 3339 in UTC
	opBool                         // true when a draw falls below p
	opChoice                       // a value of more.vals, by weight out of span
	opEvenChoice                   // a value of more.list, all of weight 1: an opPick
	opFill                         // text up to the event's size, less n closing bytes
	opRepeat                       // the n ops that follow, lo+[0,span) times, comma-separated
	opNull                         // null when a draw falls below p, else the n ops that follow
	opAbsent                       // nothing when a draw falls below p, else the n ops that follow
	opPersonName                   // the event's person's first and last name
	opPersonCompany                // the event's person's company
	opPersonEmail                  // the event's person's first.last@company.tld
	opPersonPersonal               // the event's person's personal address: initial, last name, two digits @ a mail host
)

// An op is one step of a program: its literal, then its value. span
// counts the values a draw takes (0: every uint64).
type op struct {
	kind opKind
	nlit uint8 // the literal's length
	n    int32
	lo   int64
	span uint64
	p    uint64
	lit  [litLen]byte
	more *opMore // what few ops need, kept out of the others' way
}

type opMore struct {
	long  []byte
	list  []padWord
	vals  []padLit
	table []uint32 // a value's index per unit of weight, or nil
	cum   []uint64 // running sums of the weights, without a table
	text  bool     // the choice's values are strings
	sep   padLit   // an array's element's closing literal and a comma
}

// litLen is the most literal bytes an op carries: enough for most keys
// with their quotes and the closing bytes of the value before, so that
// one op writes them (with 16, one op in six of a 1250-byte event was a
// literal alone), and an op is 64 bytes.
const litLen = 24

// choiceTable is the largest total weight a choice draws from a table.
const choiceTable = 4096

// literal returns a literal op's bytes, or nil.
func (o *op) literal() []byte {
	switch o.kind {
	case opLit:
		return o.lit[:o.nlit]
	case opLongLit:
		return o.more.long
	}
	return nil
}

// padLit is a choice's value: up to padLen bytes copied with one store.
type padLit struct {
	pad  padWord
	long []byte // a longer value; pad unused
}

func newPadLit(b []byte) padLit {
	if len(b) > padLen {
		return padLit{long: b}
	}
	return padLit{pad: newPadWord(string(b))}
}

func (l *padLit) appendTo(b []byte) []byte {
	if l.long != nil {
		return append(b, l.long...)
	}
	return appendPad(b, &l.pad)
}

// emitter builds a program.
type emitter struct {
	prog         []op
	pend         []byte // literal bytes not yet in an op
	open         []int  // the ops whose following ops are still being emitted
	fill         int    // the opFill's index; -1: none
	fillInRegion bool   // the opFill follows an opRepeat, opNull or opAbsent
	size         int    // the events' size: members not in them are left out
	err          error  // the first error found, with its line
}

func (e *emitter) lit(b ...byte) { e.pend = append(e.pend, b...) }

// flush turns the pending literal bytes into ops: up to three padded
// stores, or one copy.
func (e *emitter) flush() {
	p := e.pend
	e.pend = nil
	if len(p) > 3*litLen {
		e.prog = append(e.prog, op{kind: opLongLit, more: &opMore{long: p}})
		return
	}
	for len(p) > 0 {
		k := min(len(p), litLen)
		e.prog = append(e.prog, withLit(op{kind: opLit}, p[:k]))
		p = p[k:]
	}
}

// withLit returns o with its literal l, at most litLen bytes.
func withLit(o op, l []byte) op {
	o.nlit = uint8(len(l))
	copy(o.lit[:], l)
	return o
}

// op emits o, its literal the last pending bytes.
func (e *emitter) op(o op) {
	p := e.pend
	k := max(0, len(p)-litLen)
	e.pend = p[:k]
	e.flush()
	o = withLit(o, p[k:])
	if o.kind == opFill {
		if e.fill >= 0 && e.err == nil {
			e.err = fmt.Errorf("line %d: a second {{fill}} (the first on line %d); a template has one at each size", o.p, e.prog[e.fill].p)
		}
		e.fill, e.fillInRegion = len(e.prog), len(e.open) > 0
	}
	e.prog = append(e.prog, o)
}

// begin emits o, whose ops are those emitted until end.
func (e *emitter) begin(o op) {
	e.open = append(e.open, len(e.prog))
	e.op(o)
	e.open[len(e.open)-1] = len(e.prog) - 1
}

func (e *emitter) end() {
	e.flush()
	i := e.open[len(e.open)-1]
	e.open = e.open[:len(e.open)-1]
	e.prog[i].n = int32(len(e.prog) - i - 1)
}

// endRepeat ends an opRepeat's ops. The element's closing literal and
// the comma between elements go with the opRepeat, written by one store:
// an op of its own per element was a tenth of a 1250-byte event's ops.
func (e *emitter) endRepeat() {
	i := e.open[len(e.open)-1]
	sep := append(slices.Clip(e.pend), ',')
	if len(sep) > padLen {
		sep = []byte{','}
	} else {
		e.pend = nil
	}
	e.prog[i].more = &opMore{sep: newPadLit(sep)}
	e.end()
}

// below returns a number in [0,n), or any uint64 when n is 0, as intn.
func (g *Generator) below(n uint64) uint64 {
	if n == 0 {
		return g.u64()
	}
	hi, _ := bits.Mul64(g.u64(), n)
	return hi
}

// run writes prog; a filler ends the event at end. It stays one loop
// and one switch, as an interpreter does: every template event runs it.
func run(g *Generator, b []byte, prog []op, end int) []byte {
	// An array's elements are written by going back to the first op of
	// its body, not by a call each: the calls took a fifth of a 1250-byte
	// event's time. Only the outermost array does; one inside it is a call.
	loopStart, loopEnd, left := 0, -1, 0
	for pc := 0; ; pc++ {
		for pc == loopEnd { // an element is written
			b = prog[loopStart-1].more.sep.appendTo(b)
			if left--; left > 0 {
				pc = loopStart
			} else {
				b = b[:len(b)-1] // no comma after the last
				loopEnd = -1
			}
		}
		if pc >= len(prog) {
			return b
		}
		o := &prog[pc]
		if n := len(b); cap(b)-n >= litLen {
			*(*[litLen]byte)(b[n : n+litLen]) = o.lit
			b = b[:n+int(o.nlit)]
		} else {
			b = append(b, o.lit[:o.nlit]...)
		}
		switch o.kind {
		case opLit:
		case opLongLit:
			b = append(b, o.more.long...)
		case opComma:
			if b[len(b)-1] != '{' {
				b = append(b, ',')
			}
		case opPick, opEvenChoice:
			b = g.appendPick(b, o.more.list)
		case opName:
			r := g.u64()
			b = appendPad(b, &padFirst[part(r, 0, len(padFirst))])
			b = append(b, ' ')
			b = appendPad(b, &padLast[part(r, 21, len(padLast))])
		case opEmail:
			b = appendEmail(b, g.intn(len(firstNames)), g.intn(len(lastNames)), g.intn(len(companies)), g.intn(len(tlds)))
		case opStreet:
			r := g.u64()
			b = appendInt(b, int64(1+part(r, 0, 9999)))
			b = append(b, ' ')
			b = appendPad(b, &padStreets[part(r, 21, len(padStreets))])
			b = append(b, ' ')
			b = appendPad(b, &padSuffixes[part(r, 42, len(padSuffixes))])
		case opPhone:
			r := g.u64()
			b = append(b, "+1 ("...)
			b = appendInt(b, int64(200+part(r, 0, 800)))
			b = append(b, ") "...)
			b = appendDigits(b, part(r, 21, 1000), 3)
			b = append(b, ' ')
			b = appendDigits(b, part(r, 42, 10_000), 4)
		case opUUID:
			b = appendUUID(b, g.u64(), g.u64())
		case opWords:
			b = g.appendWords(b, int(o.lo)+int(g.below(o.span)), o.p == 1)
		case opText:
			b = g.appendText(b, int(o.lo)+int(g.below(o.span)))
		case opInt:
			b = appendInt(b, o.lo+int64(g.below(o.span)))
		case opSmallInt: // a table load, not appendInt's length and loop
			v := 2 * (o.lo + int64(g.below(o.span)))
			if v < 20 {
				b = append(b, digitPairs[v+1])
			} else {
				b = append(b, digitPairs[v], digitPairs[v+1])
			}
		case opFloat:
			v := o.lo + int64(g.below(o.span))
			switch o.n {
			case 0:
				b = appendInt(b, v)
				continue
			case 2: // the usual: a division by a constant, not by o.p
				b = appendFixed2(b, int(v))
				continue
			}
			if v < 0 {
				b = append(b, '-')
				v = -v
			}
			b = appendInt(b, v/int64(o.p))
			b = append(b, '.')
			b = appendDigits(b, int(v%int64(o.p)), int(o.n))
		case opDigits:
			for k := int(o.n); k > 0; k -= 18 {
				c := min(k, 18)
				b = appendDigits(b, g.intn(pow10[c]), c)
			}
		case opDate:
			b = appendCivil(b, o.lo+int64(g.below(o.span)))
		case opDatetime:
			s := o.lo + int64(g.below(o.span))
			day, sec := s/86_400, s%86_400
			if sec < 0 {
				day, sec = day-1, sec+86_400
			}
			b = appendCivil(b, day)
			b = append(b, 'T')
			b = appendDigits(b, int(sec/3600), 2)
			b = append(b, ':')
			b = appendDigits(b, int(sec/60%60), 2)
			b = append(b, ':')
			b = appendDigits(b, int(sec%60), 2)
			b = append(b, 'Z')
		case opBool:
			if g.u64() < o.p {
				b = append(b, "true"...)
			} else {
				b = append(b, "false"...)
			}
		case opChoice:
			m := o.more
			r := g.below(o.span)
			var i int
			if m.table != nil {
				i = int(m.table[r])
			} else {
				i = searchCum(m.cum, r)
			}
			b = m.vals[i].appendTo(b)
		case opFill:
			b = g.appendText(b, end-len(b)-int(o.n))
		case opRepeat:
			if loopEnd >= 0 {
				// An array in an array's element: a run of its own, which
				// writes its literal again.
				b = run(g, b[:len(b)-int(o.nlit)], prog[pc:pc+1+int(o.n)], end)
				pc += int(o.n)
				continue
			}
			left = int(o.lo) + int(g.below(o.span))
			if left == 0 {
				pc += int(o.n)
			} else {
				loopStart, loopEnd = pc+1, pc+1+int(o.n)
			}
		case opNull:
			if g.u64() < o.p {
				b = append(b, "null"...)
				pc += int(o.n)
			}
		case opAbsent:
			if g.u64() < o.p {
				pc += int(o.n)
			}
		case opPersonName:
			b = appendPad(b, &padFirst[g.who.first])
			b = append(b, ' ')
			b = appendPad(b, &padLast[g.who.last])
		case opPersonCompany:
			b = appendPad(b, &padComp[g.who.comp])
		case opPersonEmail:
			b = appendEmail(b, g.who.first, g.who.last, g.who.comp, g.who.tld)
		case opPersonPersonal:
			b = append(b, lowerFirst[g.who.first][0])
			b = appendPad(b, &padLowerLast[g.who.last])
			b = appendDigits(b, g.intn(100), 2)
			b = append(b, '@')
			b = g.appendPick(b, padMailHosts)
		}
	}
}

// appendEmail writes first.last@company.tld in lower case.
func appendEmail(b []byte, first, last, comp, tld int) []byte {
	b = appendPad(b, &padLowerFirst[first])
	b = append(b, '.')
	b = appendPad(b, &padLowerLast[last])
	b = append(b, '@')
	b = appendPad(b, &padLowerComp[comp])
	b = append(b, '.')
	return appendPad(b, &padTLDs[tld])
}

// person is an event's one person, as the built-in shapes draw it: its
// name, company and email agree, and drawing it once costs four draws
// where three independent {{email}} cost twelve.
type person struct{ first, last, comp, tld int }

// drawPerson draws the event's person, in the built-in shapes' order.
func (g *Generator) drawPerson() {
	r := g.u64()
	g.who = person{part(r, 0, len(firstNames)), part(r, 21, len(lastNames)), part(r, 42, len(companies)), g.intn(len(tlds))}
}

// part returns the 21 bits of r from bit at as a number in [0,n), by
// multiply-shift: three draws from one u64 for the values whose n is far
// below 2^21 (a bias under n/2^21; at most 0.5 %, for a street's number).
// A draw per value took a tenth of a template event's time.
func part(r uint64, at uint, n int) int {
	return int((r >> at & (1<<21 - 1)) * uint64(n) >> 21)
}

// usesPerson reports whether prog writes the event's person.
func usesPerson(prog []op) bool {
	return slices.ContainsFunc(prog, func(o op) bool {
		return o.kind == opPersonName || o.kind == opPersonCompany || o.kind == opPersonEmail || o.kind == opPersonPersonal
	})
}

// searchCum returns the index of the first running sum above r.
func searchCum(cum []uint64, r uint64) int {
	lo, hi := 0, len(cum)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cum[m] <= r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// appendWords writes n lorem words; as a sentence, the first capitalized
// and a full stop at the end.
func (g *Generator) appendWords(b []byte, n int, sentence bool) []byte {
	for i := range n {
		switch {
		case i == 0 && sentence:
			b = g.appendPick(b, padCaps)
		case i > 0:
			b = append(b, ' ')
			fallthrough
		default:
			b = g.appendPick(b, padWords)
		}
	}
	if sentence && n > 0 {
		b = append(b, '.')
	}
	return b
}

var pow10 = [19]int{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// appendCivil writes the date days after 1970-01-01 (years 0 to 9999) as
// YYYY-MM-DD, by Hinnant's civil_from_days: the time package's formatting
// took a tenth of a nested event's time.
func appendCivil(b []byte, days int64) []byte {
	z := days + 719_468 // days since 0000-03-01
	era := z / 146_097
	doe := z - era*146_097
	yoe := (doe - doe/1460 + doe/36_524 - doe/146_096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	y := yoe + era*400
	if m <= 2 {
		y++
	}
	n := len(b)
	b = slices.Grow(b, 10)[:n+10]
	out := (*[10]byte)(b[n:])
	*(*[2]byte)(out[0:]) = pair(int(y / 100))
	*(*[2]byte)(out[2:]) = pair(int(y % 100))
	*(*[2]byte)(out[5:]) = pair(int(m))
	*(*[2]byte)(out[8:]) = pair(int(d))
	out[4], out[7] = '-', '-'
	return b
}

// pair returns v (0..99) as two digits.
func pair(v int) [2]byte { return [2]byte{digitPairs[2*v], digitPairs[2*v+1]} }
