package noop

import "bytes"

var (
	keyGenerator = []byte(`"generator_identifier":`)
	keyEventTime = []byte(`"_event_time":`)
	keySeq       = []byte(`"_seq":`)
)

// scanEvent reads generator_identifier, _event_time and _seq from a JSON
// document without parsing it: freshbench's documents carry them as
// top-level members near the start, and a key followed by its colon
// cannot occur inside a JSON string (its quotes would be escaped). A
// document that lacks one, or nests one of those keys earlier, is read as
// it is found; the server answers every write the same either way.
func scanEvent(doc []byte) event {
	var e event
	if v, ok := after(doc, keyGenerator); ok && len(v) > 0 && v[0] == '"' {
		if end := bytes.IndexByte(v[1:], '"'); end >= 0 && bytes.IndexByte(v[1:1+end], '\\') < 0 {
			e.gen = v[1 : 1+end]
		}
	}
	if v, ok := after(doc, keyEventTime); ok {
		e.time, e.hasTime = leadingInt(v)
	}
	if v, ok := after(doc, keySeq); ok {
		e.seq, e.hasSeq = leadingInt(v)
	}
	return e
}

// after returns what follows key in doc, blanks skipped.
func after(doc, key []byte) ([]byte, bool) {
	i := bytes.Index(doc, key)
	if i < 0 {
		return nil, false
	}
	return bytes.TrimLeft(doc[i+len(key):], " \t\r\n"), true
}

// leadingInt parses the integer that b starts with; a fraction or an
// exponent after it makes it no integer.
func leadingInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	i := 0
	for ; i < len(b) && i < 19 && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	if i == 0 || i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E' || b[i] >= '0' && b[i] <= '9') {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}
