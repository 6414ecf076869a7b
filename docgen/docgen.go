// Package docgen generates freshbench's events: JSON documents shaped like
// the RockBench sample (nested objects, arrays), of a chosen serialized
// size, deterministic under a seed, and fast enough that the driver is never
// the bottleneck.
//
// Documents come out at exactly Config.DocSize bytes (rarely a few bytes
// over). Each shape is a shipped template (templates/*.json) resized to
// that size. Small sizes cannot hold the whole RockBench shape, so its
// fields join as the size allows (its members' | from SIZE): about 15 leaf
// values at 400 bytes, 48 at 1000, 60 at 1250 (RockBench's 2023 size) and
// 65 from 1323 up, where the rest of the size goes into the about,
// greeting and, from 3759 bytes, description texts.
//
// Templates are compiled into programs that write with append-style
// formatting from built-in lists, without reflection or encoding/json, and
// without allocating when the caller's buffer has room.
package docgen

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"unsafe"

	"github.com/freshbench/freshbench/corpus"
	"github.com/freshbench/freshbench/target"
)

// Accepted document sizes, in serialized bytes.
const (
	DefaultDocSize = 1000
	MinDocSize     = 400
	MaxDocSize     = 1_000_000
)

// Config sets up one Generator.
type Config struct {
	DocSize int    // target serialized size in bytes; 0 means DefaultDocSize
	Seed    uint64 // 0 = random (crypto/rand); otherwise fully deterministic
	Index   int    // number of this generator within the process; mixed into the seed

	// Nonce, when not 0, is mixed into the generator_identifier and every
	// _id, so that two runs with the same Seed and different Nonces share
	// no id (a repeated run on a reused index neither overwrites nor
	// "sees" the last one), while every other field is exactly what Seed
	// alone gives. 0 keeps the ids Seed alone gives, which is what lets a
	// seeding resume by regenerating them.
	Nonce uint64

	// Shape is the document's shape, one of Shapes; "" means
	// ShapeRockBench.
	Shape string

	// Corpus, when not nil, replaces the generated payload: each event is
	// the corpus's next line with the head stamped in, and DocSize and
	// Shape are not used. Generators may share one corpus.
	Corpus *corpus.Corpus

	// Template, when not nil and without a corpus, writes the payload
	// instead of the built-in shapes; DocSize and Shape are not used.
	Template *Template
}

// HeadSize is the typical size in bytes of the fields stamped at the head
// of an event (_id, _event_time, generator_identifier, _seq), the
// separators included: a corpus event is about its line's size plus this.
const HeadSize = 130

// Generator produces the events of one stream: one generator_identifier and
// _seq 0, 1, 2, …
//
// A Generator is not safe for concurrent use: give each goroutine its own
// (with its own Config.Index).
type Generator struct {
	// _ids are drawn from a PCG, whose 128 bits of state keep the ids of a
	// terabyte of events apart; the payload from a wyrand, whose 64 bits
	// are enough for fake values and which costs a fifth of a document's
	// time less (see wyrand).
	idRNG rand.PCG
	rng   wyrand
	id    string
	seq   int64
	size  int

	// With a nonce, the two halves of each _id are mixed with these keys
	// after they are drawn, so the random stream (and with it the payload)
	// is the same as without one.
	nonce      bool
	idk1, idk2 uint64

	ids []byte // arena that Document.ID strings point into

	corpus *corpus.Corpus // nil: generated payloads
	tmpl   *Template      // without a corpus: the template, or the shape's
	who    person         // the template event's person ({{person ...}})
}

// New returns a generator for cfg, or an error when cfg.DocSize is outside
// MinDocSize..MaxDocSize.
func New(cfg Config) (*Generator, error) {
	size := cfg.DocSize
	if size == 0 {
		size = DefaultDocSize
	}
	switch {
	case cfg.Corpus != nil:
		size = cfg.Corpus.MeanLine() + HeadSize
	case cfg.Template != nil:
		size = cfg.Template.MeanSize()
	default:
		if err := checkShape(size, cfg.Shape); err != nil {
			return nil, err
		}
	}
	tmpl := cfg.Template
	if cfg.Corpus == nil && tmpl == nil {
		var err error
		if tmpl, err = shapeAt(cfg.Shape, size); err != nil {
			return nil, err
		}
	}
	if cfg.Index < 0 {
		return nil, fmt.Errorf("docgen: generator index %d is negative", cfg.Index)
	}
	seed := cfg.Seed
	if seed == 0 {
		var b [8]byte
		if _, err := crand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("docgen: random seed: %w", err)
		}
		seed = binary.LittleEndian.Uint64(b[:])
	}
	// splitmix64 spreads nearby seeds and indexes over the whole PCG state.
	s1 := splitmix64(seed + uint64(cfg.Index)*0x9e3779b97f4a7c15)
	s2 := splitmix64(s1 ^ 0xda3e39cb94b95bdb)

	g := &Generator{size: size, corpus: cfg.Corpus, tmpl: tmpl}
	g.idRNG.Seed(s1, s2)
	gen := g.idRNG.Uint64() // the first draw, so that a seed's generators keep their identifiers
	g.rng.s = g.idRNG.Uint64()
	if cfg.Nonce != 0 {
		g.nonce = true
		k := splitmix64(cfg.Nonce ^ 0x6a09e667f3bcc909)
		g.idk1, g.idk2 = splitmix64(k), splitmix64(k^0xbb67ae8584caa73b)
		gen = sameDigits(gen, splitmix64(gen^k))
	}
	g.id = strconv.FormatUint(gen, 10)
	return g, nil
}

// checkShape says what is wrong with a built-in shape of size bytes.
func checkShape(size int, shape string) error {
	if size < MinDocSize || size > MaxDocSize {
		return fmt.Errorf("docgen: document size %d bytes is out of range: accepted %d..%d bytes", size, MinDocSize, MaxDocSize)
	}
	switch shape {
	case "", ShapeRockBench:
	case ShapeNested: // its template says its least size
	default:
		return fmt.Errorf("docgen: document shape %q: want %s or %s", shape, ShapeRockBench, ShapeNested)
	}
	return nil
}

// shapeAt is a built-in shape's shipped template at size bytes.
func shapeAt(shape string, size int) (*Template, error) {
	t, err := shapeTemplate(shape)
	if err != nil {
		return nil, err
	}
	return t.resized(size)
}

// sameDigits maps mix to a number with as many decimal digits as gen. The
// payload fills the document to its size after the generator_identifier,
// so an identifier of another length would change the payload's text.
func sameDigits(gen, mix uint64) uint64 {
	if gen >= 1e19 { // 20 digits: [1e19, 2^64)
		return 1e19 + mix%(math.MaxUint64-1e19+1)
	}
	lo, hi := uint64(0), uint64(10) // [lo, hi) holds the numbers with gen's digit count
	for gen >= hi {
		lo, hi = hi, hi*10
	}
	return lo + mix%(hi-lo)
}

// ID returns the generator_identifier written into every document.
func (g *Generator) ID() string { return g.id }

// Seq returns the _seq the next document will carry.
func (g *Generator) Seq() int64 { return g.seq }

// Size returns the target serialized size in bytes; with a corpus, its
// mean line's plus HeadSize.
func (g *Generator) Size() int { return g.size }

// Next appends one serialized document to buf and returns it with the
// extended buf. doc.JSON aliases the appended bytes, so it is valid until
// the caller reuses that part of buf.
//
// doc.ID shares an arena with the IDs of a few dozen neighbouring
// documents; a caller that keeps a handful of IDs for a long time may
// strings.Clone them to let the rest be collected.
//
// With a corpus that has ended, Next returns a Document without JSON and
// buf unchanged.
func (g *Generator) Next(buf []byte, eventTime int64) (target.Document, []byte) {
	start := len(buf)
	id := g.newID()
	seq := g.seq

	buf = g.appendHead(buf, id, eventTime, seq)
	buf, ok := g.appendBody(buf, start)
	if !ok {
		return target.Document{}, buf[:start]
	}
	g.seq++
	end := len(buf)
	return target.Document{
		ID:        id,
		Generator: g.id,
		Seq:       seq,
		EventTime: eventTime,
		JSON:      buf[start:end:end], // capped so an append by the caller cannot run into the next document
		Plain:     true,
	}, buf
}

// appendHead appends the fields every event starts with, _id first (see
// target.Document).
func (g *Generator) appendHead(buf []byte, id string, eventTime, seq int64) []byte {
	buf = append(buf, `{"_id":"`...)
	buf = append(buf, id...)
	buf = append(buf, `","_event_time":`...)
	buf = appendInt(buf, eventTime)
	buf = append(buf, `,"generator_identifier":"`...)
	buf = append(buf, g.id...)
	buf = append(buf, `","_seq":`...)
	return appendInt(buf, seq)
}

// appendBody appends the payload that fills the document begun at start
// to the generator's size, or the corpus's next line, and closes it. It
// returns false when the corpus has ended.
func (g *Generator) appendBody(buf []byte, start int) ([]byte, bool) {
	switch {
	case g.corpus != nil:
		comma := len(buf)
		var ok bool
		if buf, ok = g.corpus.AppendNext(append(buf, ',')); !ok {
			return buf, false
		}
		if len(buf) == comma+1 { // {}: no members to follow the head
			buf = buf[:comma]
		}
	default:
		buf = g.tmpl.appendPayload(g, buf, start)
	}
	return append(buf, '}'), true
}

// Key is what an update keeps of the event it updates.
type Key struct {
	ID        string
	Seq       int64
	EventTime int64
}

// Revise appends revision (≥ 1) of the event k, generated at updateTime:
// the same _id, generator_identifier, _seq and _event_time, the fields
// _revision and _update_time, and a new payload of the generator's size
// and shape (with a corpus, its next line). It returns the document as
// Next does; the generator's _seq does not move.
func (g *Generator) Revise(buf []byte, k Key, revision, updateTime int64) (target.Document, []byte) {
	start := len(buf)
	buf = g.appendHead(buf, k.ID, k.EventTime, k.Seq)
	buf = append(buf, `,"_revision":`...)
	buf = appendInt(buf, revision)
	buf = append(buf, `,"_update_time":`...)
	buf = appendInt(buf, updateTime)
	buf, ok := g.appendBody(buf, start)
	if !ok {
		return target.Document{}, buf[:start]
	}
	end := len(buf)
	return target.Document{
		ID: k.ID, Generator: g.id, Seq: k.Seq, EventTime: k.EventTime,
		Revision: revision, UpdateTime: updateTime,
		JSON: buf[start:end:end], Plain: true,
	}, buf
}

// idsPerChunk trades allocations (one per chunk) against how much memory a
// retained ID keeps alive.
const idsPerChunk = 32

// newID returns a fresh UUID v4 string without a per-document allocation:
// IDs are written into an append-only arena that is never modified after
// the fact, so strings pointing into it stay immutable.
func (g *Generator) newID() string {
	if cap(g.ids)-len(g.ids) < uuidLen {
		g.ids = make([]byte, 0, uuidLen*idsPerChunk)
	}
	start := len(g.ids)
	hi, lo := g.idRNG.Uint64(), g.idRNG.Uint64()
	if g.nonce {
		// splitmix64 is a bijection, so for one draw two nonces never give
		// the same half; across draws a collision is as unlikely as
		// between any two random UUIDs.
		hi, lo = splitmix64(hi^g.idk1), splitmix64(lo^g.idk2)
	}
	g.ids = appendUUID(g.ids, hi, lo)
	return unsafe.String(&g.ids[start], uuidLen)
}

func (g *Generator) u64() uint64 { return g.rng.Uint64() }

// intn returns a number in [0,n) by Lemire's multiply-shift; the bias, at
// most n/2^64, is irrelevant here and skipping the rejection step is faster.
func (g *Generator) intn(n int) int {
	hi, _ := bits.Mul64(g.rng.Uint64(), uint64(n))
	return int(hi)
}

func (g *Generator) pick(list []string) string { return list[g.intn(len(list))] }

// wyrand is Wang Yi's generator (wyhash's wyrand): a Weyl sequence mixed
// by one 128-bit multiply, the generator Go's runtime uses for its cheap
// random numbers. Written here because math/rand/v2 offers none as cheap:
// its PCG took a fifth of the time of a 1 KB document (BenchmarkNext1KB).
type wyrand struct{ s uint64 }

func (w *wyrand) Uint64() uint64 {
	w.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(w.s, w.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
