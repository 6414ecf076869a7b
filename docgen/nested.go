package docgen

import "strconv"

// Shapes of document. ShapeRockBench is the RockBench sample's: flat
// profile fields, an address, tags and friends, about 1 KB. ShapeNested is
// the 20K-QPS study's: about 9 KB, deeply nested (a profile with contact
// details and preferences, orders of line items with their attributes,
// activity events with metadata, metrics), of mixed types; the fields
// the query workload filters on (processBy, emails, company, tags, age)
// stay at the top level in both.
const (
	ShapeRockBench = "rockbench"
	ShapeNested    = "nested"
)

// Shapes lists the shapes New takes.
var Shapes = []string{ShapeRockBench, ShapeNested}

// MinNestedSize is the smallest nested document: its fixed structure and
// one order and one event, with some text.
const MinNestedSize = 2000

// Typical serialized sizes of the parts of a nested document (measured:
// the fixed part 1.2–1.3 KB, an order 250–450 bytes, an event 130–170),
// from which planNested sizes it; the text that ends the document takes
// up the difference.
const (
	nestedFixed = 1250 // the profile, preferences, metrics and the query fields
	nestedOrder = 350  // one order of one to three items
	nestedEvent = 150  // one activity event
)

// planNested chooses how many orders and events a nested document of
// g.size bytes holds: half the room goes to orders, a fifth to events,
// and the rest, about a third of the document, to text (the notes). At
// 9 KB that is 11 orders and 10 events.
func (g *Generator) planNested() {
	room := g.size - nestedFixed
	g.orders = max(1, room/2/nestedOrder)
	g.events = max(1, room/5/nestedEvent)
}

// appendNested writes a nested document's payload after _seq, ending just
// before the closing brace at offset end.
// It stays one function on purpose: the generator's hot path, and split
// into steps it measured 1–2 % slower (BenchmarkNextNested9KB).
func (g *Generator) appendNested(b []byte, end int) []byte {
	first := g.intn(len(firstNames))
	last := g.intn(len(lastNames))
	comp := g.intn(len(companies))
	tld := g.intn(len(tlds))

	// The fields the query workload uses, at the top level.
	b = append(b, `,"processBy":"worker-`...)
	b = appendDigits(b, g.intn(1000), 3)
	b = append(b, `","emails":["`...)
	b = appendEmail(b, first, last, comp, tld)
	b = append(b, `","`...)
	b = append(b, lowerFirst[first][0])
	b = append(b, lowerLast[last]...)
	b = appendDigits(b, g.intn(100), 2)
	b = append(b, '@')
	b = append(b, g.pick(mailHosts)...)
	b = append(b, `"],"company":"`...)
	b = append(b, companies[comp]...)
	b = append(b, `","age":`...)
	b = appendInt(b, int64(18+g.intn(73)))
	b = append(b, `,"isActive":`...)
	b = strconv.AppendBool(b, g.u64()&1 == 1)
	b = append(b, `,"tags":[`...)
	for i := range 6 + g.intn(5) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, g.pick(loremWords)...)
		b = append(b, '"')
	}
	b = append(b, ']')

	b = append(b, `,"profile":{"name":{"first":"`...)
	b = append(b, firstNames[first]...)
	b = append(b, `","last":"`...)
	b = append(b, lastNames[last]...)
	b = append(b, `"},"guid":"`...)
	b = appendUUID(b, g.u64(), g.u64())
	b = append(b, `","registered":"`...)
	b = g.appendDate(b)
	b = append(b, `","contact":{"phones":[`...)
	for i, kind := range []string{"work", "mobile"} {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"`...)
		b = append(b, kind...)
		b = append(b, `","number":"+1 (`...)
		b = appendInt(b, int64(200+g.intn(800)))
		b = append(b, ") "...)
		b = appendDigits(b, g.intn(1000), 3)
		b = append(b, ' ')
		b = appendDigits(b, g.intn(10_000), 4)
		b = append(b, `","primary":`...)
		b = strconv.AppendBool(b, i == 0)
		b = append(b, '}')
	}
	b = append(b, `],"addresses":{"home":`...)
	b = g.appendAddress(b)
	b = append(b, `,"work":`...)
	b = g.appendAddress(b)
	b = append(b, `}},"preferences":{"language":"`...)
	b = append(b, g.pick(languages)...)
	b = append(b, `","notifications":{"email":`...)
	b = strconv.AppendBool(b, g.u64()&1 == 1)
	b = append(b, `,"sms":`...)
	b = strconv.AppendBool(b, g.u64()&1 == 1)
	b = append(b, `,"push":{"enabled":`...)
	b = strconv.AppendBool(b, g.u64()&1 == 1)
	b = append(b, `,"quietHours":{"from":`...)
	b = appendInt(b, int64(19+g.intn(5)))
	b = append(b, `,"to":`...)
	b = appendInt(b, int64(5+g.intn(4)))
	b = append(b, `}}},"favoriteFruit":"`...)
	b = append(b, g.pick(fruits)...)
	b = append(b, `","eyeColor":"`...)
	b = append(b, g.pick(eyeColors)...)
	b = append(b, `"}}`...)

	b = append(b, `,"orders":[`...)
	for i := range g.orders {
		if i > 0 {
			b = append(b, ',')
		}
		b = g.appendOrder(b)
	}
	b = append(b, `],"events":[`...)
	for i := range g.events {
		if i > 0 {
			b = append(b, ',')
		}
		b = g.appendEvent(b)
	}
	b = append(b, `],"metrics":{"score":`...)
	b = appendFixed2(b, g.intn(10_001))
	b = append(b, `,"balance":`...)
	b = appendInt(b, int64(g.intn(100_000)))
	b = append(b, `,"daily":[`...)
	for i := range 7 {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(b, int64(g.intn(500)))
	}
	b = append(b, `],"ratios":{"open":`...)
	b = appendFixed2(b, g.intn(101))
	b = append(b, `,"click":`...)
	b = appendFixed2(b, g.intn(101))
	b = append(b, `,"bounce":`...)
	b = appendFixed2(b, g.intn(101))
	b = append(b, `}},"notes":{"author":"`...)
	b = append(b, g.pick(firstNames)...)
	b = append(b, `","pinned":`...)
	b = strconv.AppendBool(b, g.u64()&1 == 1)
	b = append(b, `,"text":"`...)
	// The last text fills the document up to end, less '"}' and '}'.
	b = g.appendText(b, end-len(b)-3)
	return append(b, `"}`...)
}

// appendAddress writes a postal address with its coordinates, the
// RockBench sample's and the nested shape's alike.
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

// appendOrder writes an order of one to three line items, each with a
// nested attributes object, and its shipping.
func (g *Generator) appendOrder(b []byte) []byte {
	b = append(b, `{"id":"`...)
	b = appendUUID(b, g.u64(), g.u64())
	b = append(b, `","placed":"`...)
	b = g.appendDate(b)
	b = append(b, `","status":"`...)
	b = append(b, g.pick(orderStatuses)...)
	b = append(b, `","items":[`...)
	total := 0
	for i := range 1 + g.intn(3) {
		if i > 0 {
			b = append(b, ',')
		}
		qty, price := 1+g.intn(5), 100+g.intn(20_000)
		total += qty * price
		b = append(b, `{"sku":"SKU-`...)
		b = appendDigits(b, g.intn(100_000), 5)
		b = append(b, `","qty":`...)
		b = appendInt(b, int64(qty))
		b = append(b, `,"price":`...)
		b = appendFixed2(b, price)
		b = append(b, `,"attrs":{"color":"`...)
		b = append(b, g.pick(colors)...)
		b = append(b, `","size":"`...)
		b = append(b, g.pick(sizes)...)
		b = append(b, `","gift":`...)
		b = strconv.AppendBool(b, g.intn(8) == 0)
		b = append(b, `}}`...)
	}
	b = append(b, `],"total":`...)
	b = appendFixed2(b, total)
	b = append(b, `,"shipping":{"method":"`...)
	b = append(b, g.pick(shippingMethods)...)
	b = append(b, `","days":`...)
	b = appendInt(b, int64(1+g.intn(9)))
	b = append(b, `,"tracking":null}}`...)
	return b
}

// appendEvent writes one activity event with its metadata.
func (g *Generator) appendEvent(b []byte) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, g.pick(eventTypes)...)
	b = append(b, `","at":`...)
	b = appendInt(b, 1_600_000_000+int64(g.intn(200_000_000)))
	b = append(b, `,"meta":{"ip":"10.`...)
	b = appendInt(b, int64(g.intn(256)))
	b = append(b, '.')
	b = appendInt(b, int64(g.intn(256)))
	b = append(b, '.')
	b = appendInt(b, int64(g.intn(256)))
	b = append(b, `","agent":"`...)
	b = append(b, g.pick(agents)...)
	b = append(b, `","durationMs":`...)
	b = appendInt(b, int64(g.intn(5000)))
	b = append(b, `,"ok":`...)
	b = strconv.AppendBool(b, g.intn(20) != 0)
	return append(b, `}}`...)
}

// appendDate writes a date from 2000 to 2024 as YYYY-MM-DD.
func (g *Generator) appendDate(b []byte) []byte {
	b = appendInt(b, int64(2000+g.intn(25)))
	b = append(b, '-')
	b = appendDigits(b, 1+g.intn(12), 2)
	b = append(b, '-')
	return appendDigits(b, 1+g.intn(28), 2)
}

var (
	languages       = []string{"en", "fr", "de", "es", "it", "pt", "nl", "ja", "zh", "ko"}
	orderStatuses   = []string{"placed", "paid", "shipped", "delivered", "returned", "cancelled"}
	colors          = []string{"red", "blue", "green", "black", "white", "gray", "navy", "olive"}
	sizes           = []string{"XS", "S", "M", "L", "XL", "XXL"}
	shippingMethods = []string{"ground", "express", "overnight", "pickup"}
	eventTypes      = []string{"login", "logout", "search", "view", "add_to_cart", "checkout", "review", "share"}
	agents          = []string{"Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_2)", "Mozilla/5.0 (Windows NT 10.0; Win64; x64)", "okhttp/4.12.0", "curl/8.5.0"}
)
