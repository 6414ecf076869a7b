package docgen

import (
	"strconv"
	"sync"
)

// A shape says which fields a document carries. Small documents cannot hold
// the whole RockBench shape, so fields join level by level as the size
// allows; the fields the query workload uses (age, company, processBy,
// emails, tags) are present at every level.
type shape struct {
	level   int
	tags    int // mean number of tags
	emails  int // 1 or 2
	ratings int // small integers 1..5: cheap leaves for aggregations
	friends int // friend1..friendN
}

// Levels at which optional fields join.
const (
	lvlBalance  = 1 // email, balance, score
	lvlAddress  = 2 // address{street,city,state,zipcode,coordinates{lat,long}}
	lvlGuid     = 3 // guid, phone, registered
	lvlExtras   = 4 // picture, eyeColor, gender, favoriteFruit, second email
	lvlRatings  = 5 // ratings, ten tags
	lvlFriends  = 6 // friend1 joins here, one more per level
	maxFriends  = 10
	maxLevel    = lvlFriends + maxFriends - 1
	descMinText = 2500 // text budget above which a long description is added
)

func shapeAt(level int) shape {
	s := shape{level: level, emails: 1}
	switch {
	case level == 0:
		s.tags = 3
	case level < lvlExtras:
		s.tags = 3 + level
	case level == lvlExtras:
		s.tags = 8
	default:
		s.tags = 10
	}
	if level >= lvlExtras {
		s.emails = 2
	}
	if level >= lvlRatings {
		s.ratings = 5
	}
	if level >= lvlFriends {
		s.friends = level - lvlFriends + 1
	}
	return s
}

// plan picks the richest shape whose longest structure still leaves room
// for some text, then sizes the text fields so that the last one can fill
// the document to exactly g.size bytes.
func (g *Generator) plan() {
	const minText = 24
	level, mean, longest := 0, 0, 0
	for l, m := range structSizes() {
		mn, mx := m[0], m[1]
		if l > 0 && mx+minText > g.size {
			break
		}
		level, mean, longest = l, mn, mx
	}
	g.sh = shapeAt(level)

	budget := g.size - mean // text bytes for a typical document
	room := g.size - longest - 16
	if budget > descMinText {
		g.desc = true
		g.aboutMin, g.aboutSpan = 100, 300
		g.greetMin, g.greetSpan = 200, 400
		return
	}
	// about takes a fifth to two fifths of the text; the greeting fills.
	g.aboutMin, g.aboutSpan = budget/5, budget/5
	if g.aboutMin+g.aboutSpan > room {
		g.aboutMin, g.aboutSpan = max(room, 0)/2, max(room, 0)/2
	}
}

// structSizes holds measure's results per level; they do not depend on
// the Config, so they are measured once per process.
var structSizes = sync.OnceValue(func() (sizes [maxLevel + 1][2]int) {
	for l := range sizes {
		sizes[l][0], sizes[l][1] = measure(shapeAt(l))
	}
	return sizes
})

// measure returns the mean and longest serialized size of documents of
// shape s with empty text fields. It uses its own fixed seed so that
// planning never consumes the caller's random stream.
func measure(s shape) (mean, longest int) {
	const n = 256
	m := &Generator{id: "18446744073709551615", seq: 1_000_000_000, sh: s}
	m.rng.s = 1
	buf := make([]byte, 0, 4096)
	total := 0
	for range n {
		doc, _ := m.Next(buf[:0], 1_700_000_000_000_000)
		total += len(doc.JSON)
		longest = max(longest, len(doc.JSON))
	}
	return total / n, longest
}

// appendPayload writes everything after _seq, ending just before the
// closing brace at offset end.
// It stays one function on purpose: the generator's hot path, and split
// into steps it measured 2–3 % slower (BenchmarkNext1KB).
func (g *Generator) appendPayload(b []byte, end int) []byte {
	lvl := g.sh.level
	first := g.intn(len(firstNames))
	last := g.intn(len(lastNames))
	comp := g.intn(len(companies))
	tld := g.intn(len(tlds))

	if lvl >= lvlGuid {
		b = append(b, `,"guid":"`...)
		b = appendUUID(b, g.u64(), g.u64())
		b = append(b, '"')
	}
	b = append(b, `,"isActive":`...)
	b = strconv.AppendBool(b, g.u64()&1 == 1)
	if lvl >= lvlBalance {
		b = append(b, `,"balance":`...)
		b = appendInt(b, int64(g.intn(10_000)))
	}
	if lvl >= lvlExtras {
		b = append(b, `,"picture":"img`...)
		b = appendDigits(b, g.intn(10_000), 4)
		b = append(b, `.png"`...)
	}
	b = append(b, `,"age":`...)
	b = appendInt(b, int64(18+g.intn(73)))
	if lvl >= lvlExtras {
		b = append(b, `,"eyeColor":"`...)
		b = g.appendPick(b, padEyes)
		b = append(b, '"')
	}
	b = append(b, `,"name":"`...)
	b = appendPad(b, &padFirst[first])
	b = append(b, ' ')
	b = appendPad(b, &padLast[last])
	b = append(b, '"')
	if lvl >= lvlExtras {
		b = append(b, `,"gender":"`...)
		b = g.appendPick(b, padGenders)
		b = append(b, '"')
	}
	b = append(b, `,"company":"`...)
	b = appendPad(b, &padComp[comp])
	b = append(b, '"')
	if lvl >= lvlBalance {
		b = append(b, `,"email":"`...)
		b = appendEmail(b, first, last, comp, tld)
		b = append(b, '"')
	}
	b = append(b, `,"emails":["`...)
	b = appendEmail(b, first, last, comp, tld)
	if g.sh.emails > 1 {
		// A personal address beside the work one: f + last + two digits.
		b = append(b, `","`...)
		b = append(b, lowerFirst[first][0])
		b = appendPad(b, &padLowerLast[last])
		b = appendDigits(b, g.intn(100), 2)
		b = append(b, '@')
		b = g.appendPick(b, padMailHosts)
	}
	b = append(b, `"]`...)
	if lvl >= lvlGuid {
		b = append(b, `,"phone":"+1 (`...)
		b = appendInt(b, int64(200+g.intn(800)))
		b = append(b, ") "...)
		b = appendDigits(b, g.intn(1000), 3)
		b = append(b, ' ')
		b = appendDigits(b, g.intn(10_000), 4)
		b = append(b, '"')
	}
	// About 1000 distinct values, for point lookups.
	b = append(b, `,"processBy":"worker-`...)
	b = appendDigits(b, g.intn(1000), 3)
	b = append(b, '"')
	if lvl >= lvlAddress {
		b = append(b, `,"address":`...)
		b = g.appendAddress(b)
	}
	b = append(b, `,"about":"`...)
	b = g.appendText(b, g.aboutMin+g.intn(g.aboutSpan+1))
	b = append(b, '"')
	if lvl >= lvlGuid {
		b = append(b, `,"registered":"`...)
		b = appendInt(b, int64(2000+g.intn(25)))
		b = append(b, '-')
		b = appendDigits(b, 1+g.intn(12), 2)
		b = append(b, '-')
		b = appendDigits(b, 1+g.intn(28), 2)
		b = append(b, '"')
	}
	// Arrays of varying length, as real documents have.
	b = append(b, `,"tags":[`...)
	jitter := g.sh.tags / 4
	ntags := g.sh.tags - jitter + g.intn(2*jitter+1)
	for i := range ntags {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = g.appendPick(b, padWords)
		b = append(b, '"')
	}
	b = append(b, ']')
	if g.sh.ratings > 0 {
		b = append(b, `,"ratings":[`...)
		r := g.u64()
		for i := range g.sh.ratings {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, byte('1'+r%5))
			r /= 5
		}
		b = append(b, ']')
	}
	if g.sh.friends > 0 {
		b = append(b, `,"friends":{`...)
		for i := 1; i <= g.sh.friends; i++ {
			if i > 1 {
				b = append(b, ',')
			}
			b = append(b, `"friend`...)
			b = appendInt(b, int64(i))
			b = append(b, `":{"name":"`...)
			b = g.appendPick(b, padFirst)
			b = append(b, ' ')
			b = g.appendPick(b, padLast)
			b = append(b, `","age":`...)
			b = appendInt(b, int64(18+g.intn(63)))
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	if lvl >= lvlExtras {
		b = append(b, `,"favoriteFruit":"`...)
		b = g.appendPick(b, padFruits)
		b = append(b, '"')
	}
	if lvl >= lvlBalance {
		b = append(b, `,"score":`...)
		b = appendFixed2(b, g.intn(10_001))
	}
	b = append(b, `,"greeting":"`...)
	if g.desc {
		b = g.appendText(b, g.greetMin+g.intn(g.greetSpan+1))
		b = append(b, `","description":"`...)
	}
	// The last text fills the document up to end, less '"' and '}'.
	b = g.appendText(b, end-len(b)-2)
	return append(b, '"')
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

// appendAddress writes a postal address with its coordinates, in the
// RockBench sample's.
func (g *Generator) appendAddress(b []byte) []byte {
	b = append(b, `{"street":"`...)
	b = appendInt(b, int64(1+g.intn(9999)))
	b = append(b, ' ')
	b = g.appendPick(b, padStreets)
	b = append(b, ' ')
	b = g.appendPick(b, padSuffixes)
	b = append(b, `","city":"`...)
	b = g.appendPick(b, padCities)
	b = append(b, `","state":"`...)
	b = g.appendPick(b, padStates)
	b = append(b, `","zipcode":"`...)
	b = appendDigits(b, g.intn(100_000), 5)
	b = append(b, `","coordinates":{"lat":`...)
	b = appendFixed2(b, g.intn(18_001)-9000)
	b = append(b, `,"long":`...)
	b = appendFixed2(b, g.intn(36_001)-18_000)
	return append(b, `}}`...)
}
