package docgen

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/freshbench/freshbench/corpus"
	"github.com/freshbench/freshbench/invalid"
)

// A Template describes a user's events: a JSON object whose string values
// may be generator expressions between {{ and }}, compiled once into a
// tree that writes events without parsing or reflection.
//
// A string that is one expression and nothing else is the expression's
// value: a number for int and float, true/false for bool, a string for
// the rest ("{{int 18 90}}" writes 42). Text around an expression makes a
// string ("worker-{{digits 3}}" writes "worker-042"). An object
// {"$array": "3..8", "of": T} is an array of 3 to 8 values of T. After
// the expression, "| null P" writes null with probability P, and, for an
// object's member, "| absent P" leaves the member out with probability P.
// A member's key may end with "| from SIZE" and "| below SIZE": the member
// is there only in events of that size, which the {{fill}} or the resize
// sets, so that one template makes small events with a few fields and
// larger ones with more. TemplateSyntax lists the expressions.
type Template struct {
	bands  []band // by size: each member's | from and | below resolved
	prog   []op   // the program of the band of size
	person bool   // an event draws its person first
	mean   int    // mean serialized size of the payload, measured
	size   int    // with a {{fill}}, every event's size; 0: none
	least  int    // with a {{fill}}, the least size that holds the other values
	name   string // its file, or the shipped template's name
}

// A band is the program of the event sizes from its from up to the next
// band's: members join and leave only at a | from or | below, so the
// program is compiled and measured once per band, when the template is
// parsed, and a resize picks one.
type band struct {
	from    int
	prog    []op
	person  bool
	mean    int // of the payload, its filler empty
	longest int
}

// Name is the template's file, or the name of a shipped template.
func (t *Template) Name() string { return t.name }

// TemplateSyntax is the expressions a template may use, for help texts.
const TemplateSyntax = `name, first, last, company, city, state, street, email, phone, uuid, word, ` +
	`person name, person company, person email (the event's one person: its email is made of its name and company), ` +
	`person personal email (its initial, last name and two digits at a mail host), ` +
	`words N M, sentence [N M] (words), text N M (bytes), int MIN MAX, float MIN MAX [DECIMALS], digits N, ` +
	`date YYYY-MM-DD YYYY-MM-DD, datetime YYYY-MM-DD YYYY-MM-DD, bool [P], choice A[:WEIGHT] B[:WEIGHT] … ('quoted values' may hold spaces), ` +
	`fill SIZE (the last value: text that makes every event SIZE bytes); ` +
	`then optionally | null P, | absent P; ` +
	`a member's key may end with | from SIZE and | below SIZE (the member is there only in events of at least SIZE, or fewer than SIZE, bytes; needs a fill)`

// ParseTemplateFile compiles the template in file. A bad template is
// refused with the file, the line and the fix.
func ParseTemplateFile(file string) (*Template, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, invalid.Wrap(invalid.Template, file, err)
	}
	t, err := ParseTemplate(data)
	if err != nil {
		return nil, invalid.Wrap(invalid.Template, file, err)
	}
	t.name = file
	return t, nil
}

// ParseTemplate compiles a template; its errors name the line.
func ParseTemplate(data []byte) (*Template, error) {
	c := &compiler{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	c.dec.UseNumber()
	tok, err := c.dec.Token()
	if err != nil {
		return nil, c.syntax(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("line %d: a template is one JSON object, e.g. {\"user\":\"{{name}}\"}", c.line())
	}
	root, err := c.object(true)
	if err != nil {
		return nil, err
	}
	if _, err := c.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("line %d: text after the template's object; remove it", c.line())
	}
	return c.compile(root.(object))
}

// compile lowers root into a program per band of sizes and measures
// each; with a {{fill}}, it refuses a band that cannot hold its values
// from the size where it begins, and notes the least size.
func (c *compiler) compile(root object) (*Template, error) {
	if len(c.edges) > 0 && c.fillSize == 0 {
		return nil, fmt.Errorf("line %d: | from and | below choose members by the event's size, which a {{fill SIZE}} sets; add one as the last value", c.firstEdge)
	}
	starts := []int{0}
	for from := range c.edges {
		starts = append(starts, from)
	}
	slices.Sort(starts)
	t := &Template{size: c.fillSize}
	for _, from := range starts {
		b, err := c.band(root, from)
		if err != nil {
			return nil, err
		}
		if need := HeadSize + b.longest + 1; from > 0 && need > from {
			ed := c.edges[from]
			return nil, fmt.Errorf("line %d: | %s %d: at %d bytes the template's other values take up to %d bytes with the head; raise it to %d or more", ed.line, ed.word, from, from, need, need)
		}
		t.bands = append(t.bands, b)
	}
	if t.size != 0 {
		// The filler writes what the rest leaves: at least nothing, as in
		// the longest event of the sample.
		t.least = HeadSize + t.bands[0].longest + 1
		if len(t.bands) > 1 {
			t.least = min(t.least, t.bands[1].from)
		}
		if t.size < t.least {
			return nil, fmt.Errorf("line %d: {{fill %d}}: the template's other values take up to %d bytes with the head; raise the size to %d or more", c.fillLine, t.size, t.least, t.least)
		}
	}
	t.use(t.size)
	return t, nil
}

// band compiles root for events of size bytes and measures it.
func (c *compiler) band(root object, size int) (band, error) {
	e := &emitter{fill: -1, size: size}
	root.emitMembers(e, true)
	e.flush()
	if e.err != nil {
		return band{}, e.err
	}
	b := band{from: size, prog: e.prog, person: usesPerson(e.prog)}
	switch {
	case e.fill >= 0:
		if err := placeFill(b.prog, e); err != nil {
			return band{}, err
		}
	case c.fillSize != 0:
		line := c.fillLine
		if size > 0 {
			line = c.edges[size].line
		}
		return band{}, fmt.Errorf("line %d: from %d bytes no {{fill}} is left to size the event; keep one at every size", line, size)
	}
	b.mean, b.longest = measure(b.prog, b.person)
	return b, nil
}

// use makes t write the events of size bytes: the program of its band.
func (t *Template) use(size int) {
	b := &t.bands[0]
	for i := range t.bands {
		if t.bands[i].from <= size {
			b = &t.bands[i]
		}
	}
	t.prog, t.person, t.mean = b.prog, b.person, b.mean
	if t.size != 0 {
		t.mean = t.size - HeadSize
	}
}

// placeFill checks that the {{fill}} is the program's last value, so that
// what is left of the size is known when it is written, and notes the
// closing bytes that follow it.
func placeFill(prog []op, e *emitter) error {
	tail := 1 // the event's closing brace
	ok := !e.fillInRegion
	for _, o := range prog[e.fill+1:] {
		lit := o.literal()
		ok = ok && lit != nil && strings.Trim(string(lit), `"]}`) == ""
		tail += len(lit)
	}
	f := &prog[e.fill]
	if !ok {
		return fmt.Errorf("line %d: {{fill %d}} is not the template's last value outside any $array, | null and | absent; move it last, as the filler gets what the rest of the event leaves", f.p, f.lo)
	}
	f.n = int32(tail)
	return nil
}

// MeanSize is the mean serialized size of an event of t, stamped head
// included; with a {{fill}}, its size.
func (t *Template) MeanSize() int { return t.mean + HeadSize }

// measure returns the mean and the longest size of prog's payload, its
// filler empty, over a sample drawn with a fixed seed of its own.
func measure(prog []op, person bool) (mean, longest int) {
	const n = 256
	g := &Generator{}
	g.rng.s = 1
	buf := make([]byte, 0, 4096)
	total := 0
	t := &Template{prog: prog, person: person}
	for range n {
		l := len(t.write(g, buf[:0], 0))
		total += l
		longest = max(longest, l)
	}
	return total / n, longest
}

// appendPayload writes the members of t's object after the head of the
// event begun at start: each after a comma.
func (t *Template) appendPayload(g *Generator, b []byte, start int) []byte {
	return t.write(g, b, start+t.size)
}

// write draws the event's person, if t has one, and runs t's program; a
// filler ends the event at end.
func (t *Template) write(g *Generator, b []byte, end int) []byte {
	if t.person {
		g.drawPerson()
	}
	return run(g, b, t.prog, end)
}

// gen is one JSON value of the parsed template; emit lowers it into the
// program that writes it.
type gen interface{ emit(e *emitter) }

type lit []byte

func (l lit) emit(e *emitter) { e.lit(l...) }

type member struct {
	key    []byte // "key":
	val    gen
	absent uint64 // left out when a draw falls below; 0: always there
	from   int    // there in events of at least from bytes
	below  int    // and fewer than below; 0: no bound
	line   int
}

// at reports whether m is in the events of size bytes.
func (m *member) at(size int) bool { return size >= m.from && (m.below == 0 || size < m.below) }

type object []member

func (o object) emit(e *emitter) {
	e.lit('{')
	o.emitMembers(e, false)
	e.lit('}')
}

// emitMembers lowers o's members: at the root each follows a comma (the
// head comes first); in an object every one but the first written. A
// member after members that may all be absent cannot know that at compile
// time, and gets a comma that looks at what was written.
// Members not in events of the emitter's size are left out.
func (o object) emitMembers(e *emitter, root bool) {
	mayBeFirst := !root
	written := 0
	for i, m := range o {
		if !m.at(e.size) {
			continue
		}
		for _, d := range o[:i] {
			if bytes.Equal(d.key, m.key) && d.at(e.size) && e.err == nil {
				e.err = fmt.Errorf("line %d: the member %s is there twice in events of %d bytes (also line %d); keep them apart with | from and | below", m.line, m.key[:len(m.key)-1], e.size, d.line)
			}
		}
		if m.absent != 0 {
			e.begin(op{kind: opAbsent, p: m.absent})
		}
		written++
		switch {
		case written == 1 && !root:
		case mayBeFirst:
			e.op(op{kind: opComma})
		default:
			e.lit(',')
		}
		e.lit(m.key...)
		m.val.emit(e)
		if m.absent != 0 {
			e.end()
		} else {
			mayBeFirst = false
		}
	}
}

type array []gen

func (a array) emit(e *emitter) {
	e.lit('[')
	for i, v := range a {
		if i > 0 {
			e.lit(',')
		}
		v.emit(e)
	}
	e.lit(']')
}

type repeat struct {
	min, span int
	of        gen
}

func (r repeat) emit(e *emitter) {
	e.lit('[')
	e.begin(op{kind: opRepeat, lo: int64(r.min), span: uint64(r.span) + 1})
	r.of.emit(e)
	e.endRepeat()
	e.lit(']')
}

type nullable struct {
	p  uint64
	of gen
}

func (n nullable) emit(e *emitter) {
	e.begin(op{kind: opNull, p: n.p})
	n.of.emit(e)
	e.end()
}

// str is a string of literal text and expressions' text.
type str []expr

func (s str) emit(e *emitter) {
	e.lit('"')
	for _, x := range s {
		x.emit(e)
	}
	e.lit('"')
}

// bare is one expression as a whole value: a number or a boolean as it
// is, anything else as a string.
type bare struct{ e expr }

func (v bare) emit(e *emitter) {
	if v.e.quoted() {
		str{v.e}.emit(e)
		return
	}
	v.e.emit(e)
}

// expr is an expression: it lowers into the op that writes its text, JSON
// for an unquoted value or string content that needs no escaping.
type expr interface {
	emit(e *emitter)
	quoted() bool
}

type litText []byte // escaped

func (l litText) emit(e *emitter) { e.lit(l...) }
func (litText) quoted() bool      { return true }

// opExpr is every other expression: one op.
type opExpr op

func (x opExpr) emit(e *emitter) { e.op(op(x)) }

func (x opExpr) quoted() bool {
	switch x.kind {
	case opInt, opSmallInt, opFloat, opBool:
		return false
	case opChoice, opEvenChoice:
		return x.more.text
	}
	return true
}

// compiler turns a template's JSON into gens, reading it token by token
// so that members keep their order and errors their line.
type compiler struct {
	data      []byte
	dec       *json.Decoder
	fillLine  int          // the line of the first {{fill}}; 0: none
	fillSize  int          // its size
	edges     map[int]edge // the sizes that | from and | below name
	firstEdge int          // the line of the first of them
}

// edge is where a | from or | below is first named, for errors.
type edge struct {
	line int
	word string // from or below
}

func (c *compiler) line() int {
	return 1 + bytes.Count(c.data[:min(int(c.dec.InputOffset()), len(c.data))], []byte("\n"))
}

func (c *compiler) syntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("line %d: %v; fix the JSON", 1+bytes.Count(c.data[:min(int(se.Offset), len(c.data))], []byte("\n")), se)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("line %d: the template ends early; close every object and array", c.line())
	}
	return err
}

func (c *compiler) token() (json.Token, error) {
	tok, err := c.dec.Token()
	if err != nil {
		return nil, c.syntax(err)
	}
	return tok, nil
}

// object compiles the members of an object whose '{' was read; root
// refuses the fields freshbench stamps.
func (c *compiler) object(root bool) (gen, error) {
	var o object
	var rep *repeat
	haveRange := false
	for c.dec.More() {
		tok, err := c.token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		name, from, below, err := memberKey(key)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q: %v", c.line(), key, err)
		}
		if root && slices.Contains(corpus.Stamped, name) {
			return nil, fmt.Errorf("line %d: the field %q is one freshbench stamps into every event (%s); rename or remove it", c.line(), name, strings.Join(corpus.Stamped, ", "))
		}
		switch key {
		case "$array":
			if rep == nil {
				rep = &repeat{}
			}
			tok, err := c.token()
			if err != nil {
				return nil, err
			}
			lo, hi, err := parseRange(fmt.Sprint(tok))
			if err != nil {
				return nil, fmt.Errorf("line %d: $array %v: %v", c.line(), tok, err)
			}
			rep.min, rep.span, haveRange = lo, hi-lo, true
			continue
		case "of":
			if rep == nil {
				rep = &repeat{}
			}
			tok, err := c.token()
			if err != nil {
				return nil, err
			}
			of, _, err := c.value(tok, false)
			if err != nil {
				return nil, err
			}
			rep.of = of
			continue
		}
		if strings.HasPrefix(name, "$") {
			return nil, fmt.Errorf("line %d: %q: keys starting with $ are the template's own ($array); rename it", c.line(), key)
		}
		c.edge(from, "from")
		c.edge(below, "below")
		line := c.line()
		tok, err = c.token()
		if err != nil {
			return nil, err
		}
		v, absent, err := c.value(tok, true)
		if err != nil {
			return nil, err
		}
		k, _ := json.Marshal(name)
		o = append(o, member{key: append(k, ':'), val: v, absent: absent, from: from, below: below, line: line})
	}
	if _, err := c.token(); err != nil { // '}'
		return nil, err
	}
	if rep != nil {
		if !haveRange || rep.of == nil || len(o) > 0 {
			return nil, fmt.Errorf(`line %d: an array of random length is {"$array": "MIN..MAX", "of": VALUE} and nothing else`, c.line())
		}
		return *rep, nil
	}
	return o, nil
}

// edge notes a size a | from or | below names (0: none) at the line read.
func (c *compiler) edge(size int, word string) {
	if size == 0 {
		return
	}
	if c.edges == nil {
		c.edges, c.firstEdge = map[int]edge{}, c.line()
	}
	if _, ok := c.edges[size]; !ok {
		c.edges[size] = edge{line: c.line(), word: word}
	}
}

// memberKey splits a member's key into its name and its | from SIZE and
// | below SIZE (0 when not given).
func memberKey(key string) (name string, from, below int, err error) {
	name, rest, ok := strings.Cut(key, "|")
	if !ok {
		return key, 0, 0, nil
	}
	for _, a := range strings.Split(rest, "|") {
		f := strings.Fields(a)
		if len(f) != 2 || (f[0] != "from" && f[0] != "below") {
			return "", 0, 0, fmt.Errorf("%q: want | from SIZE or | below SIZE after a member's name", strings.TrimSpace(a))
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 1 || n > MaxDocSize {
			return "", 0, 0, fmt.Errorf("%s %s: want an event size in bytes, 1..%d", f[0], f[1], MaxDocSize)
		}
		if f[0] == "from" {
			from = n
		} else {
			below = n
		}
	}
	if below != 0 && from >= below {
		return "", 0, 0, fmt.Errorf("from %d and below %d: never there; want from under below", from, below)
	}
	return strings.TrimSpace(name), from, below, nil
}

// value compiles the value that begins with tok; absent is the chance,
// as a threshold, that a member is left out (only where inMember).
func (c *compiler) value(tok json.Token, inMember bool) (gen, uint64, error) {
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			g, err := c.object(false)
			return g, 0, err
		}
		var a array
		for c.dec.More() {
			tok, err := c.token()
			if err != nil {
				return nil, 0, err
			}
			v, _, err := c.value(tok, false)
			if err != nil {
				return nil, 0, err
			}
			a = append(a, v)
		}
		if _, err := c.token(); err != nil { // ']'
			return nil, 0, err
		}
		return a, 0, nil
	case string:
		return c.str(t, inMember)
	case json.Number:
		return lit(t.String()), 0, nil
	case bool:
		return lit(strconv.FormatBool(t)), 0, nil
	case nil:
		return lit("null"), 0, nil
	}
	return nil, 0, fmt.Errorf("line %d: unexpected %v", c.line(), tok)
}

// str compiles a string value with its expressions.
func (c *compiler) str(s string, inMember bool) (gen, uint64, error) {
	if !strings.Contains(s, "{{") {
		q, _ := json.Marshal(s)
		return lit(q), 0, nil
	}
	var parts str
	var nullP, absentP float64
	whole := strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}") && strings.Count(s, "{{") == 1
	for rest := s; rest != ""; {
		i := strings.Index(rest, "{{")
		if i < 0 {
			parts = append(parts, escaped(rest))
			break
		}
		if i > 0 {
			parts = append(parts, escaped(rest[:i]))
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return nil, 0, fmt.Errorf("line %d: %q: an expression is not closed; end it with }}", c.line(), s)
		}
		e, np, ap, err := parseExpr(rest[i+2 : i+j])
		if err != nil {
			return nil, 0, fmt.Errorf("line %d: {{%s}}: %v", c.line(), rest[i+2:i+j], err)
		}
		if (np > 0 || ap > 0) && !whole {
			return nil, 0, fmt.Errorf("line %d: %q: | null and | absent apply to a whole value; give the expression a string of its own", c.line(), s)
		}
		if ap > 0 && !inMember {
			return nil, 0, fmt.Errorf("line %d: %q: | absent leaves out an object's member; in an array use | null", c.line(), s)
		}
		if x, ok := e.(opExpr); ok && x.kind == opFill {
			if !whole {
				return nil, 0, fmt.Errorf("line %d: %q: {{fill}} is a whole value; give it a string of its own", c.line(), s)
			}
			if c.fillLine != 0 && int(x.lo) != c.fillSize {
				return nil, 0, fmt.Errorf("line %d: {{fill %d}}: the {{fill}} on line %d says %d; a template's fills give one size", c.line(), x.lo, c.fillLine, c.fillSize)
			}
			if c.fillLine == 0 {
				c.fillLine, c.fillSize = c.line(), int(x.lo)
			}
			x.p = uint64(c.line()) // for the emitter's errors
			e = x
		}
		nullP, absentP = np, ap
		parts = append(parts, e)
		rest = rest[i+j+2:]
	}
	var g gen = parts
	if whole {
		g = bare{e: parts[0]}
	}
	if nullP > 0 {
		g = nullable{p: threshold(nullP), of: g}
	}
	return g, threshold(absentP), nil
}

func escaped(s string) litText {
	q, _ := json.Marshal(s)
	return litText(q[1 : len(q)-1])
}

// threshold is p as a bound for a uniform uint64 draw.
func threshold(p float64) uint64 {
	if p >= 1 {
		return math.MaxUint64
	}
	return uint64(p * (1 << 63) * 2)
}

// parseExpr compiles one expression, with its null and absent chances.
func parseExpr(s string) (e expr, nullP, absentP float64, err error) {
	parts := strings.Split(s, "|")
	for _, m := range parts[1:] {
		f := strings.Fields(m)
		if len(f) != 2 || (f[0] != "null" && f[0] != "absent") {
			return nil, 0, 0, fmt.Errorf("%q: want | null P or | absent P (| from and | below go after a member's key)", strings.TrimSpace(m))
		}
		p, err := strconv.ParseFloat(f[1], 64)
		if err != nil || p < 0 || p > 1 {
			return nil, 0, 0, fmt.Errorf("%s %s: want a probability in [0, 1]", f[0], f[1])
		}
		if f[0] == "null" {
			nullP = p
		} else {
			absentP = p
		}
	}
	args, err := fields(parts[0])
	if err != nil {
		return nil, 0, 0, err
	}
	if len(args) == 0 {
		return nil, 0, 0, fmt.Errorf("empty; want one of %s", TemplateSyntax)
	}
	e, err = compileExpr(args[0], args[1:])
	return e, nullP, absentP, err
}

// fields splits on blanks, keeping 'quoted text' as one field.
func fields(s string) ([]string, error) {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '\'' {
			j := strings.IndexByte(s[1:], '\'')
			if j < 0 {
				return nil, errors.New("a quote ' is not closed")
			}
			end := j + 2
			for end < len(s) && s[end] != ' ' {
				end++
			}
			out = append(out, s[:end])
			s = s[end:]
			continue
		}
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			i = len(s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out, nil
}

func compileExpr(kind string, args []string) (expr, error) {
	want := func(n ...int) error { return wantArgs(kind, args, n...) }
	lists := map[string][]padWord{"first": padFirst, "last": padLast, "company": padComp, "city": padCities, "state": padStates, "word": padWords}
	if l, ok := lists[kind]; ok {
		return opExpr{kind: opPick, more: &opMore{list: l}}, want(0)
	}
	simple := map[string]opKind{"name": opName, "email": opEmail, "street": opStreet, "phone": opPhone, "uuid": opUUID}
	if k, ok := simple[kind]; ok {
		return opExpr{kind: k}, want(0)
	}
	switch kind {
	case "person":
		return compilePerson(args)
	case "words", "sentence", "text", "int":
		return compileRange(kind, args)
	case "fill", "digits":
		return compileCount(kind, args)
	case "float":
		return compileFloat(args)
	case "date", "datetime":
		return compileDate(kind, args)
	case "bool":
		return compileBool(args)
	case "choice":
		return compileChoice(args)
	}
	return nil, fmt.Errorf("unknown expression %q; want one of %s", kind, TemplateSyntax)
}

// compilePerson compiles person name, person company, person email and
// person personal email: the event's one person, drawn once, so that its
// emails are made of its name and company as the RockBench shape's are.
func compilePerson(args []string) (expr, error) {
	if err := wantArgs("person", args, 1, 2); err != nil {
		return nil, err
	}
	what := strings.Join(args, " ")
	k, ok := map[string]opKind{"name": opPersonName, "company": opPersonCompany, "email": opPersonEmail, "personal email": opPersonPersonal}[what]
	if !ok {
		return nil, fmt.Errorf("person %s: want person name, person company, person email or person personal email", what)
	}
	return opExpr{kind: k}, nil
}

// compileRange compiles the expressions that take MIN MAX: words,
// sentence (also with none), text and int.
func compileRange(kind string, args []string) (expr, error) {
	if kind == "sentence" && len(args) == 0 {
		return opExpr{kind: opWords, lo: 4, span: 12, p: 1}, nil
	}
	if err := wantArgs(kind, args, 2); err != nil {
		return nil, err
	}
	v := make([]int64, len(args))
	for i, a := range args {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: argument %q is not an integer", kind, a)
		}
		v[i] = n
	}
	if lo, hi := v[0], v[1]; lo > hi || lo < 0 && kind != "int" {
		return nil, fmt.Errorf("%s %d %d: want 0 ≤ MIN ≤ MAX", kind, lo, hi)
	}
	span := uint64(v[1]-v[0]) + 1
	switch kind {
	case "int":
		if v[0] >= 0 && v[1] < 100 {
			return opExpr{kind: opSmallInt, lo: v[0], span: span}, nil
		}
		return opExpr{kind: opInt, lo: v[0], span: span}, nil
	case "text":
		return opExpr{kind: opText, lo: v[0], span: span}, nil
	}
	x := opExpr{kind: opWords, lo: v[0], span: span}
	if kind == "sentence" {
		x.p = 1
	}
	return x, nil
}

// compileCount compiles the expressions that take one count: fill (an
// event size in bytes) and digits.
func compileCount(kind string, args []string) (expr, error) {
	if err := wantArgs(kind, args, 1); err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(args[0])
	if kind == "fill" {
		if err != nil || n < 1 || n > MaxDocSize {
			return nil, fmt.Errorf("fill %s: want an event size in bytes, 1..%d", args[0], MaxDocSize)
		}
		return opExpr{kind: opFill, lo: int64(n)}, nil
	}
	if err != nil || n < 1 || n > 64 {
		return nil, fmt.Errorf("digits %s: want 1..64", args[0])
	}
	return opExpr{kind: opDigits, n: int32(n)}, nil
}

// wantArgs says, in the template's words, when kind has not one of the
// argument counts n.
func wantArgs(kind string, args []string, n ...int) error {
	if slices.Contains(n, len(args)) {
		return nil
	}
	return fmt.Errorf("%s takes %v arguments, not %d; see: %s", kind, n, len(args), TemplateSyntax)
}

// compileFloat compiles float MIN MAX [DECIMALS].
func compileFloat(args []string) (expr, error) {
	if err := wantArgs("float", args, 2, 3); err != nil {
		return nil, err
	}
	dec := 2
	if len(args) == 3 {
		d, err := strconv.Atoi(args[2])
		if err != nil || d < 0 || d > 9 {
			return nil, fmt.Errorf("float: decimals %q: want 0..9", args[2])
		}
		dec = d
	}
	lo, err1 := strconv.ParseFloat(args[0], 64)
	hi, err2 := strconv.ParseFloat(args[1], 64)
	if err1 != nil || err2 != nil || lo > hi {
		return nil, fmt.Errorf("float %s %s: want numbers MIN ≤ MAX", args[0], args[1])
	}
	p := math.Pow10(dec)
	return opExpr{kind: opFloat, lo: int64(math.Round(lo * p)), span: uint64(math.Round(hi*p)-math.Round(lo*p)) + 1, n: int32(dec), p: uint64(p)}, nil
}

// compileDate compiles date or datetime FROM TO.
func compileDate(kind string, args []string) (expr, error) {
	if err := wantArgs(kind, args, 2); err != nil {
		return nil, err
	}
	from, err1 := time.Parse(time.DateOnly, args[0])
	to, err2 := time.Parse(time.DateOnly, args[1])
	if err1 != nil || err2 != nil || to.Before(from) {
		return nil, fmt.Errorf("%s %s %s: want two dates YYYY-MM-DD, the first not after the second", kind, args[0], args[1])
	}
	span := to.Unix() - from.Unix()
	if kind == "date" { // whole days: draw a day, not a second
		return opExpr{kind: opDate, lo: from.Unix() / 86_400, span: uint64(span/86_400) + 1}, nil
	}
	return opExpr{kind: opDatetime, lo: from.Unix(), span: uint64(span) + 86_400}, nil
}

// compileBool compiles bool [P].
func compileBool(args []string) (expr, error) {
	if err := wantArgs("bool", args, 0, 1); err != nil {
		return nil, err
	}
	p := 0.5
	if len(args) == 1 {
		var err error
		if p, err = strconv.ParseFloat(args[0], 64); err != nil || p < 0 || p > 1 {
			return nil, fmt.Errorf("bool %s: want a probability of true in [0, 1]", args[0])
		}
	}
	return opExpr{kind: opBool, p: threshold(p)}, nil
}

// compileChoice compiles "choice a:3 b 'c d':2": values, weights 1 unless
// given. Values that are all JSON numbers, booleans or null are written
// as such; otherwise as strings.
func compileChoice(args []string) (expr, error) {
	if len(args) == 0 {
		return nil, errors.New("choice needs one or more values, e.g. choice red:3 blue")
	}
	m := &opMore{}
	var vals []string
	var weights []uint64
	for _, a := range args {
		v, w := a, uint64(1)
		if i := strings.LastIndexByte(a, ':'); i > 0 && (a[0] != '\'' || i > strings.LastIndexByte(a, '\'')) {
			n, err := strconv.ParseUint(a[i+1:], 10, 32)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("choice %s: weight %q: want a positive integer", a, a[i+1:])
			}
			v, w = a[:i], n
		}
		v = strings.Trim(v, "'")
		vals = append(vals, v)
		weights = append(weights, w)
	}
	for _, v := range vals {
		if !json.Valid([]byte(v)) || strings.HasPrefix(v, "\"") || strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{") {
			m.text = true
		}
	}
	for _, v := range vals {
		if m.text {
			v = string(escaped(v))
		}
		m.vals = append(m.vals, newPadLit([]byte(v)))
	}
	var total uint64
	for _, w := range weights {
		total += w
		m.cum = append(m.cum, total)
	}
	if int(total) == len(vals) && !slices.ContainsFunc(m.vals, func(v padLit) bool { return v.long != nil }) {
		for _, v := range m.vals {
			m.list = append(m.list, v.pad)
		}
		m.vals, m.cum = nil, nil
		return opExpr{kind: opEvenChoice, more: m}, nil
	}
	// Up to choiceTable draws, a table of value indices (one per unit of
	// weight) picks in one load; beyond, a search of the running sums.
	if total <= choiceTable {
		for i, w := range weights {
			for range w {
				m.table = append(m.table, uint32(i))
			}
		}
		m.cum = nil
	}
	return opExpr{kind: opChoice, span: total, more: m}, nil
}

// parseRange reads "MIN..MAX" or "N".
func parseRange(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		b = a
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || lo < 0 || lo > hi {
		return 0, 0, errors.New(`want "MIN..MAX" with 0 ≤ MIN ≤ MAX, or a count`)
	}
	return lo, hi, nil
}

//go:embed templates/*.json
var shipped embed.FS

// ShippedTemplates names the templates freshbench ships.
var ShippedTemplates = []string{"rockbench", "nested"}

// ShippedTemplate compiles a template freshbench ships, by name.
func ShippedTemplate(name string) (*Template, error) {
	data, err := shipped.ReadFile("templates/" + name + ".json")
	if err != nil {
		return nil, invalid.New(invalid.Template, name, "a template file, or one of "+strings.Join(ShippedTemplates, ", "))
	}
	t, err := ParseTemplate(data)
	if err != nil {
		return nil, err
	}
	t.name = name
	return t, nil
}

// resized returns t with its {{fill}} making every event size bytes, or
// an error naming the least size that works. The programs are shared: the
// size picks the band of members, compiled when t was, and where the
// filler ends.
func (t *Template) resized(size int) (*Template, error) {
	if t.size == 0 {
		return nil, fmt.Errorf("docgen: template %s has no {{fill}} to size its events with", t.name)
	}
	if size < t.least {
		return nil, fmt.Errorf("docgen: document size %d bytes is too small for the %s shape: at least %d bytes", size, t.name, t.least)
	}
	r := *t
	r.size = size
	r.use(size)
	return &r, nil
}

// MinSize is the least event size of a built-in shape ("" is rockbench):
// what its shipped template's values other than the filler take, with
// the head; 0 for an unknown shape.
func MinSize(shape string) int {
	t, err := shapeTemplate(shape)
	if err != nil {
		return 0
	}
	return t.least
}

// shapeTemplates compiles each built-in shape's shipped template once
// per process: compiling measures 256 events (about 5 ms for the nested
// one), and every generator of a run, every check of a size and the flag
// help ask for it. A Template is read-only once compiled, so they share it.
var shapeTemplates = map[string]func() (*Template, error){
	ShapeRockBench: sync.OnceValues(func() (*Template, error) { return ShippedTemplate(ShapeRockBench) }),
	ShapeNested:    sync.OnceValues(func() (*Template, error) { return ShippedTemplate(ShapeNested) }),
}

// shapeTemplate is the compiled shipped template of a built-in shape.
func shapeTemplate(shape string) (*Template, error) {
	if shape == "" {
		shape = ShapeRockBench
	}
	compiled, ok := shapeTemplates[shape]
	if !ok {
		return nil, fmt.Errorf("docgen: document shape %q: want %s", shape, strings.Join(Shapes, " or "))
	}
	return compiled()
}
