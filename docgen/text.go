package docgen

import "slices"

// appendText appends exactly n bytes (none when n <= 0) of lorem-ipsum
// sentences: capitalized first word, an occasional comma, a full stop.
// Exactness is what lets a document hit its target size to the byte.
//
// Words are stored space-padded to 16 bytes and copied with one fixed-size
// store, which is several times faster than a memmove per word.
func (g *Generator) appendText(b []byte, n int) []byte {
	if n <= 0 {
		return b
	}
	b = slices.Grow(b, n)
	end := len(b) + n
	out := b[:end]
	pos := len(b)
	left, comma := 0, 0 // words left in the sentence; where the comma goes
	var r uint64        // random bits, 16 per word
	nr := 0
	// A step stores 16 bytes and keeps at most maxWordLen+2 of them, so
	// the store stays inside out and at least 2 bytes remain for finishText.
	for end-pos >= padLen {
		if nr == 0 {
			r, nr = g.u64(), 4
		}
		i := int((r & 0xffff) * uint64(len(loremWords)) >> 16)
		r >>= 16
		nr--
		w := &padWords[i]
		if left == 0 {
			s := g.u64()
			left = 4 + int(s%12)
			comma = -1
			if s>>32&1 == 1 {
				comma = left / 2
			}
			w = &padCaps[i]
		}
		*(*[padLen]byte)(out[pos : pos+padLen]) = w.b
		pos += int(w.n)
		left--
		switch left {
		case 0:
			out[pos] = '.'
			pos += 2 // the padding supplies the space
		case comma:
			out[pos] = ','
			pos += 2
		default:
			pos++
		}
	}
	return g.finishText(out[:pos], end, left == 0)
}

// appendPad appends w's word with one 16-byte store, several times faster
// than the memmove of an append. The store runs past the word into b's
// spare capacity, which is free for any append to overwrite.
func appendPad(b []byte, w *padWord) []byte {
	n := len(b)
	if cap(b)-n < padLen {
		return append(b, w.b[:w.n]...)
	}
	*(*[padLen]byte)(b[n : n+padLen]) = w.b
	return b[:n+int(w.n)]
}

// appendPick appends a random entry of list, drawing as pick does.
func (g *Generator) appendPick(b []byte, list []padWord) []byte {
	return appendPad(b, &list[g.intn(len(list))])
}

// finishText fills b up to end with words of exact lengths and a full stop.
func (g *Generator) finishText(b []byte, end int, capital bool) []byte {
	for rem := end - len(b); rem > 0; rem = end - len(b) {
		switch {
		case rem == 1: // the whole text is one byte
			b = append(b, g.wordOfLen(1, capital)...)
		case rem-1 <= maxWordLen:
			b = append(b, g.wordOfLen(rem-1, capital)...)
			b = append(b, '.')
		default:
			b = append(b, g.wordOfLen(4, capital)...)
			b = append(b, ' ')
			capital = false
		}
	}
	return b
}

func (g *Generator) wordOfLen(n int, capital bool) string {
	if capital {
		return g.pick(capsByLen[n])
	}
	return g.pick(wordsByLen[n])
}

const uuidLen = 36

const hexDigits = "0123456789abcdef"

// uuidHexAt is where the two hex digits of each of a UUID's 16 bytes go.
var uuidHexAt = [16]uint8{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// hexPairs holds the two hex digits of every byte value: one table load
// per byte instead of two shifts, masks and loads per nibble.
var hexPairs = func() (t [256][2]byte) {
	for i := range t {
		t[i] = [2]byte{hexDigits[i>>4], hexDigits[i&0xf]}
	}
	return t
}()

// appendUUID formats 128 random bits as a version 4, variant 10 UUID.
func appendUUID(b []byte, hi, lo uint64) []byte {
	hi = hi&^0xf000 | 0x4000 // version nibble: high half of byte 6
	lo = lo&^(3<<62) | 2<<62 // variant bits: top of byte 8
	n := len(b)
	b = slices.Grow(b, uuidLen)[:n+uuidLen]
	u := (*[uuidLen]byte)(b[n:])
	for i := range 8 {
		*(*[2]byte)(u[uuidHexAt[i]:]) = hexPairs[byte(hi>>(56-8*i))]
		*(*[2]byte)(u[uuidHexAt[8+i]:]) = hexPairs[byte(lo>>(56-8*i))]
	}
	u[8], u[13], u[18], u[23] = '-', '-', '-', '-'
	return b
}

// digitPairs holds "00" to "99": one table load writes two digits.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendDigits writes v (0 <= v < 10^n) as exactly n digits. The digits
// go straight into b's spare capacity: an append of a digit buffer of
// variable length was a runtime memmove call per number.
func appendDigits(b []byte, v, n int) []byte {
	b = slices.Grow(b, n)
	end := len(b) + n
	out := b[len(b):end]
	for i := n - 1; i >= 0; i-- {
		out[i] = byte('0' + v%10)
		v /= 10
	}
	return b[:end]
}

// appendInt writes v in decimal, as strconv.AppendInt does, straight into
// b's spare capacity (strconv formats into a buffer of its own and then
// appends it: a memmove call per number, about ten per document).
func appendInt(b []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = -u
	}
	n := decimalLen(u)
	b = slices.Grow(b, n)
	end := len(b) + n
	out := b[len(b):end]
	i := n
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		out[i], out[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		out[0], out[1] = digitPairs[2*u], digitPairs[2*u+1]
	} else {
		out[0] = byte('0' + u)
	}
	return b[:end]
}

// decimalLen is the number of decimal digits of u (1 for 0).
func decimalLen(u uint64) int {
	n := 1
	for ; u >= 10_000; u /= 10_000 {
		n += 4
	}
	switch {
	case u >= 1000:
		return n + 3
	case u >= 100:
		return n + 2
	case u >= 10:
		return n + 1
	}
	return n
}

// appendFixed2 writes v hundredths as a JSON number with two decimals.
func appendFixed2(b []byte, v int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	b = appendInt(b, int64(v/100))
	f := 2 * (v % 100)
	return append(b, '.', digitPairs[f], digitPairs[f+1])
}
