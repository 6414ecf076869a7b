package docgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/freshbench/freshbench/target"
)

const t0 = 1_700_000_000_000_000 // an _event_time in µs

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func mustNew(t testing.TB, cfg Config) *Generator {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// decode parses a document keeping numbers exact.
func decode(t testing.TB, js []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, js)
	}
	if d.More() {
		t.Fatalf("trailing data after the document:\n%s", js)
	}
	return m
}

// leaves counts scalar values, array elements included, as RockBench did.
func leaves(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := 0
		for _, e := range v {
			n += leaves(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range v {
			n += leaves(e)
		}
		return n
	default:
		return 1
	}
}

func TestShape(t *testing.T) {
	g := mustNew(t, Config{Seed: 42})
	for i := range 200 {
		doc, _ := g.Next(nil, t0+int64(i))
		m := decode(t, doc.JSON)

		str := func(k string) string {
			s, ok := m[k].(string)
			if !ok {
				t.Fatalf("%s: want a string, got %T\n%s", k, m[k], doc.JSON)
			}
			return s
		}
		num := func(obj map[string]any, k string) json.Number {
			n, ok := obj[k].(json.Number)
			if !ok {
				t.Fatalf("%s: want a number, got %T\n%s", k, obj[k], doc.JSON)
			}
			return n
		}
		obj := func(parent map[string]any, k string) map[string]any {
			o, ok := parent[k].(map[string]any)
			if !ok {
				t.Fatalf("%s: want an object, got %T\n%s", k, parent[k], doc.JSON)
			}
			return o
		}
		strs := func(k string) []string {
			a, ok := m[k].([]any)
			if !ok || len(a) == 0 {
				t.Fatalf("%s: want a non-empty array, got %T\n%s", k, m[k], doc.JSON)
			}
			out := make([]string, len(a))
			for j, e := range a {
				if out[j], ok = e.(string); !ok {
					t.Fatalf("%s[%d]: want a string, got %T", k, j, e)
				}
			}
			return out
		}

		if id := str("_id"); id != doc.ID || !uuidV4.MatchString(id) {
			t.Fatalf("_id %q: want doc.ID %q, a UUID v4", id, doc.ID)
		}
		if et, _ := num(m, "_event_time").Int64(); et != t0+int64(i) || doc.EventTime != et {
			t.Fatalf("_event_time %d, doc.EventTime %d: want %d", et, doc.EventTime, t0+int64(i))
		}
		if gi := str("generator_identifier"); gi != g.ID() || doc.Generator != gi {
			t.Fatalf("generator_identifier %q, doc.Generator %q: want %q", gi, doc.Generator, g.ID())
		}
		if seq, _ := num(m, "_seq").Int64(); seq != int64(i) || doc.Seq != seq {
			t.Fatalf("_seq %d, doc.Seq %d: want %d", seq, doc.Seq, i)
		}
		if !uuidV4.MatchString(str("guid")) {
			t.Fatalf("guid %q is not a UUID v4", m["guid"])
		}
		if _, ok := m["isActive"].(bool); !ok {
			t.Fatalf("isActive: want a bool, got %T", m["isActive"])
		}
		for _, k := range []string{"balance", "score"} {
			if _, err := num(m, k).Float64(); err != nil {
				t.Fatalf("%s: %v", k, err)
			}
		}
		if age, err := num(m, "age").Int64(); err != nil || age < 18 || age > 90 {
			t.Fatalf("age %v: want an integer in 18..90", m["age"])
		}
		for _, k := range []string{"picture", "eyeColor", "name", "gender", "company", "phone", "about", "registered", "favoriteFruit", "greeting"} {
			str(k)
		}
		email := str("email")
		if emails := strs("emails"); len(emails) != 2 || emails[0] != email {
			t.Fatalf("emails %q: want two addresses, the first %q", emails, email)
		}
		if company := strings.ToLower(str("company")); !strings.Contains(email, "@"+company+".") {
			t.Fatalf("email %q does not belong to company %q", email, company)
		}
		if pb := str("processBy"); !regexp.MustCompile(`^worker-\d{3}$`).MatchString(pb) {
			t.Fatalf("processBy %q: want worker-NNN", pb)
		}
		if tags := strs("tags"); len(tags) < 8 || len(tags) > 12 {
			t.Fatalf("tags %q: want 8..12", tags)
		}
		addr := obj(m, "address")
		for _, k := range []string{"street", "city", "state", "zipcode"} {
			if _, ok := addr[k].(string); !ok {
				t.Fatalf("address.%s: want a string, got %T", k, addr[k])
			}
		}
		coord := obj(addr, "coordinates")
		if lat, _ := num(coord, "lat").Float64(); lat < -90 || lat > 90 {
			t.Fatalf("lat %v out of range", lat)
		}
		if long, _ := num(coord, "long").Float64(); long < -180 || long > 180 {
			t.Fatalf("long %v out of range", long)
		}
		friends := obj(m, "friends")
		if len(friends) == 0 {
			t.Fatalf("no friends:\n%s", doc.JSON)
		}
		for j := 1; j <= len(friends); j++ {
			f := obj(friends, "friend"+strconv.Itoa(j))
			if _, ok := f["name"].(string); !ok {
				t.Fatalf("friend%d.name: want a string", j)
			}
			num(f, "age")
		}
		if n := leaves(m); n < 45 || n > 70 {
			t.Fatalf("%d leaf values at %d bytes, want about 50\n%s", n, len(doc.JSON), doc.JSON)
		}
	}
}

// The RockBench shape has about 60 leaf values; small documents carry
// fewer, larger ones all of them.
func TestLeafCount(t *testing.T) {
	for _, c := range []struct{ size, min, max int }{
		{400, 14, 20},
		{1000, 45, 55},
		{1250, 56, 64},
		{1500, 60, 68},
		{4096, 60, 70},
		{100_000, 60, 70},
	} {
		g := mustNew(t, Config{DocSize: c.size, Seed: 3})
		lo, hi := 1<<30, 0
		for range 100 {
			doc, _ := g.Next(nil, t0)
			n := leaves(decode(t, doc.JSON))
			lo, hi = min(lo, n), max(hi, n)
		}
		t.Logf("DocSize %d: %d..%d leaf values", c.size, lo, hi)
		if lo < c.min || hi > c.max {
			t.Errorf("DocSize %d: %d..%d leaf values, want within %d..%d", c.size, lo, hi, c.min, c.max)
		}
	}
}

// Query workloads rely on these fields at every size.
func TestQueryFieldsAtEverySize(t *testing.T) {
	for size := MinDocSize; size <= 2000; size += 50 {
		g := mustNew(t, Config{DocSize: size, Seed: 5})
		doc, _ := g.Next(nil, t0)
		m := decode(t, doc.JSON)
		for _, k := range []string{"processBy", "emails", "tags", "age", "company", "about", "greeting"} {
			if _, ok := m[k]; !ok {
				t.Errorf("DocSize %d: no %s\n%s", size, k, doc.JSON)
			}
		}
	}
}

func TestSize(t *testing.T) {
	for _, c := range []struct{ size, n int }{
		{400, 20_000}, {450, 5000}, {500, 5000}, {700, 5000}, {900, 5000}, {1000, 20_000}, {1100, 5000},
		{1250, 20_000}, {2000, 2000}, {2600, 2000}, {3000, 2000}, {4096, 2000}, {10_000, 500},
		{100_000, 50}, {MaxDocSize, 3},
	} {
		g := mustNew(t, Config{DocSize: c.size, Seed: 11})
		var buf []byte
		lo, hi := 1<<30, 0
		for i := range c.n {
			var doc target.Document
			doc, buf = g.Next(buf[:0], t0+int64(i))
			lo, hi = min(lo, len(doc.JSON)), max(hi, len(doc.JSON))
			if i < 50 && !json.Valid(doc.JSON) {
				t.Fatalf("DocSize %d: invalid JSON:\n%s", c.size, doc.JSON)
			}
		}
		// The contract is ±10 %; the generator aims for the exact size.
		if float64(lo) < 0.97*float64(c.size) || float64(hi) > 1.03*float64(c.size) {
			t.Errorf("DocSize %d: sizes %d..%d, want within ±3 %%", c.size, lo, hi)
		}
	}
}

func TestSizeDefault(t *testing.T) {
	g := mustNew(t, Config{Seed: 1})
	if g.Size() != DefaultDocSize {
		t.Fatalf("Size() = %d, want %d", g.Size(), DefaultDocSize)
	}
	doc, _ := g.Next(nil, t0)
	if len(doc.JSON) != DefaultDocSize {
		t.Errorf("len = %d, want %d", len(doc.JSON), DefaultDocSize)
	}
}

// Random seeds and many sizes, checked with encoding/json.
func TestValidJSON(t *testing.T) {
	for size := MinDocSize; size <= 3000; size += 37 {
		g := mustNew(t, Config{DocSize: size})
		var buf []byte
		for i := range 20 {
			var doc target.Document
			doc, buf = g.Next(buf[:0], t0+int64(i))
			if !json.Valid(doc.JSON) {
				t.Fatalf("DocSize %d: invalid JSON:\n%s", size, doc.JSON)
			}
		}
	}
}

// Values are copied into the JSON unescaped, so no list may hold a byte
// that JSON strings must escape.
func TestListsNeedNoEscaping(t *testing.T) {
	lists := map[string][]string{
		"loremWords": loremWords, "capWords": capWords, "firstNames": firstNames, "lastNames": lastNames,
		"companies": companies, "tlds": tlds, "mailHosts": mailHosts, "cities": cities, "states": states,
		"streetNames": streetNames, "streetSuffixes": streetSuffixes,
		"lowerFirst": lowerFirst, "lowerLast": lowerLast,
		"lowerComp": lowerComp,
	}
	for name, list := range lists {
		if len(list) == 0 {
			t.Errorf("%s is empty", name)
		}
		for _, s := range list {
			if s == "" {
				t.Errorf("%s holds an empty string", name)
			}
			for i := 0; i < len(s); i++ {
				if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
					t.Errorf("%s: %q holds byte %#x", name, s, c)
				}
			}
			q, _ := json.Marshal(s)
			if string(q) != `"`+s+`"` {
				t.Errorf("%s: %q would need escaping: %s", name, s, q)
			}
		}
	}
	for _, w := range loremWords {
		for i := 0; i < len(w); i++ {
			if w[i] < 'a' || w[i] > 'z' {
				t.Errorf("lorem word %q: want lower-case letters only", w)
			}
		}
	}
}

func TestAppendTextExactLength(t *testing.T) {
	g := mustNew(t, Config{Seed: 9})
	for n := -1; n <= 600; n++ {
		for range 20 {
			b := g.appendText([]byte("x"), n)
			text := string(b[1:])
			if want := max(n, 0); len(text) != want {
				t.Fatalf("appendText(%d) wrote %d bytes: %q", n, len(text), text)
			}
			if n <= 0 {
				continue
			}
			if strings.HasPrefix(text, " ") || strings.HasSuffix(text, " ") || strings.Contains(text, "  ") {
				t.Fatalf("appendText(%d): stray spaces in %q", n, text)
			}
			if n > 1 && !strings.HasSuffix(text, ".") {
				t.Fatalf("appendText(%d): %q does not end a sentence", n, text)
			}
			if c := text[0]; c < 'A' || c > 'Z' {
				t.Fatalf("appendText(%d): %q does not start with a capital", n, text)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, size := range []int{400, 1000, 5000} {
		cfg := Config{DocSize: size, Seed: 12345, Index: 2}
		a, b := mustNew(t, cfg), mustNew(t, cfg)
		if a.ID() != b.ID() {
			t.Fatalf("same config, generator IDs %s and %s", a.ID(), b.ID())
		}
		for i := range 1000 {
			da, _ := a.Next(nil, t0+int64(i)*7)
			db, _ := b.Next(nil, t0+int64(i)*7)
			if !bytes.Equal(da.JSON, db.JSON) || da.ID != db.ID {
				t.Fatalf("DocSize %d, doc %d differs:\n%s\n%s", size, i, da.JSON, db.JSON)
			}
		}
	}
	other := mustNew(t, Config{Seed: 12346, Index: 2})
	same := mustNew(t, Config{Seed: 12345, Index: 2})
	if other.ID() == same.ID() {
		t.Error("different seeds gave the same generator ID")
	}
}

func TestIndexDiffers(t *testing.T) {
	ids := map[string]int{}
	var first [][]byte
	for idx := range 8 {
		g := mustNew(t, Config{Seed: 7, Index: idx})
		if prev, dup := ids[g.ID()]; dup {
			t.Fatalf("Index %d and %d share generator ID %s", prev, idx, g.ID())
		}
		ids[g.ID()] = idx
		doc, _ := g.Next(nil, t0)
		payload := doc.JSON[bytes.Index(doc.JSON, []byte(`"_seq"`)):]
		for j, p := range first {
			if bytes.Equal(p, payload) {
				t.Fatalf("Index %d and %d generate the same document", j, idx)
			}
		}
		first = append(first, payload)
	}
}

func TestRandomSeed(t *testing.T) {
	a, b := mustNew(t, Config{}), mustNew(t, Config{})
	if a.ID() == b.ID() {
		t.Errorf("two randomly seeded generators share ID %s", a.ID())
	}
	if _, err := strconv.ParseUint(a.ID(), 10, 64); err != nil {
		t.Errorf("generator ID %q is not a decimal uint64: %v", a.ID(), err)
	}
}

func TestUniqueIDs(t *testing.T) {
	g := mustNew(t, Config{DocSize: 400, Seed: 1})
	const n = 100_000
	seen := make(map[string]struct{}, n)
	var buf []byte
	for i := range n {
		var doc target.Document
		doc, buf = g.Next(buf[:0], t0)
		if _, dup := seen[doc.ID]; dup {
			t.Fatalf("duplicate _id %s at document %d", doc.ID, i)
		}
		if !uuidV4.MatchString(doc.ID) {
			t.Fatalf("_id %q is not a UUID v4", doc.ID)
		}
		seen[doc.ID] = struct{}{}
	}
	// The IDs must stay intact after the buffer was reused.
	for id := range seen {
		if !uuidV4.MatchString(id) {
			t.Fatalf("_id changed after buffer reuse: %q", id)
		}
	}
}

func TestSeq(t *testing.T) {
	g := mustNew(t, Config{Seed: 1})
	for i := range int64(1000) {
		if g.Seq() != i {
			t.Fatalf("Seq() = %d, want %d", g.Seq(), i)
		}
		doc, _ := g.Next(nil, t0)
		if doc.Seq != i || !bytes.Contains(doc.JSON, []byte(`,"_seq":`+strconv.FormatInt(i, 10)+`,`)) {
			t.Fatalf("document %d carries _seq %d:\n%s", i, doc.Seq, doc.JSON)
		}
	}
}

// The Elasticsearch target cuts `{"_id":"<id>",` off without parsing.
func TestPrefix(t *testing.T) {
	g := mustNew(t, Config{Seed: 8})
	for range 100 {
		doc, _ := g.Next(nil, t0)
		prefix := `{"_id":"` + doc.ID + `",`
		if !bytes.HasPrefix(doc.JSON, []byte(prefix)) {
			t.Fatalf("document does not start with %s:\n%s", prefix, doc.JSON)
		}
		rest := doc.JSON[len(prefix):]
		want := `"_event_time":` + strconv.FormatInt(t0, 10) + `,"generator_identifier":"` + g.ID() + `","_seq":`
		if !bytes.HasPrefix(rest, []byte(want)) {
			t.Fatalf("after the _id: want %s…, got %.100s", want, rest)
		}
		if !json.Valid(append([]byte{'{'}, rest...)) {
			t.Fatal("the document without its _id prefix is not valid JSON")
		}
	}
}

func TestAliasesBuf(t *testing.T) {
	g := mustNew(t, Config{Seed: 1})
	buf := append(make([]byte, 0, 4096), "garbage"...)
	doc, out := g.Next(buf, t0)
	if string(out[:7]) != "garbage" || len(out) != 7+len(doc.JSON) {
		t.Fatalf("Next did not append to buf")
	}
	if unsafe.SliceData(doc.JSON) != &out[7] || unsafe.SliceData(out) != unsafe.SliceData(buf) {
		t.Fatal("doc.JSON does not alias the appended bytes of buf")
	}
	if cap(doc.JSON) != len(doc.JSON) {
		t.Errorf("cap(doc.JSON) = %d, want %d so appends cannot spill", cap(doc.JSON), len(doc.JSON))
	}
}

func TestNoAllocs(t *testing.T) {
	for _, size := range []int{400, 1000, 10_000} {
		g := mustNew(t, Config{DocSize: size, Seed: 1})
		buf := make([]byte, 0, size+64)
		allocs := testing.AllocsPerRun(1000, func() {
			g.Next(buf[:0], t0)
		})
		// One small ID arena per 32 documents rounds down to zero.
		if allocs != 0 {
			t.Errorf("DocSize %d: %v allocations per document, want 0", size, allocs)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, size := range []int{10, 399, 1_000_001, 2_000_000, -1} {
		_, err := New(Config{DocSize: size})
		if err == nil {
			t.Errorf("DocSize %d: no error", size)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, strconv.Itoa(size)) || !strings.Contains(msg, "400..1000000") {
			t.Errorf("DocSize %d: error %q should name the value and the range 400..1000000", size, msg)
		}
	}
	for _, size := range []int{0, MinDocSize, MaxDocSize} {
		if _, err := New(Config{DocSize: size}); err != nil {
			t.Errorf("DocSize %d: %v", size, err)
		}
	}
	if _, err := New(Config{Index: -1}); err == nil {
		t.Error("negative Index: no error")
	}
}

func TestUUIDFormat(t *testing.T) {
	for _, c := range []struct {
		hi, lo uint64
		want   string
	}{
		{0, 0, "00000000-0000-4000-8000-000000000000"},
		{^uint64(0), ^uint64(0), "ffffffff-ffff-4fff-bfff-ffffffffffff"},
		{0x0123456789abcdef, 0xfedcba9876543210, "01234567-89ab-4def-bedc-ba9876543210"},
	} {
		if got := string(appendUUID(nil, c.hi, c.lo)); got != c.want {
			t.Errorf("appendUUID(%#x, %#x) = %s, want %s", c.hi, c.lo, got, c.want)
		}
	}
}

func TestAppendFixed2(t *testing.T) {
	for v, want := range map[int]string{0: "0.00", 5: "0.05", -5: "-0.05", 5995: "59.95", -18000: "-180.00", 10000: "100.00"} {
		if got := string(appendFixed2(nil, v)); got != want {
			t.Errorf("appendFixed2(%d) = %s, want %s", v, got, want)
		}
	}
}

// appendInt and appendDigits write into the spare capacity themselves, so
// every length of number, at the edges of each, and a buffer with and
// without room are checked against strconv.
func TestAppendIntMatchesStrconv(t *testing.T) {
	vals := []int64{0, 1, 9, math.MinInt64, math.MaxInt64, math.MinInt64 + 1}
	for p := int64(10); p > 0 && p <= math.MaxInt64/10; p *= 10 {
		vals = append(vals, p-1, p, p+1, -p, -(p - 1), 7*p/3)
	}
	for _, v := range vals {
		for _, room := range []int{0, 1, 30} {
			prefix := append(make([]byte, 0, 3+room), "ab,"...)
			want := strconv.AppendInt([]byte("ab,"), v, 10)
			if got := appendInt(prefix, v); string(got) != string(want) {
				t.Errorf("appendInt(%d) with %d spare bytes = %q, want %q", v, room, got, want)
			}
		}
	}
	for n := 1; n <= 8; n++ {
		top := int(math.Pow10(n))
		for _, v := range []int{0, 1, top / 10, top/10 - 1, top - 1, top / 3} {
			want := fmt.Sprintf("x%0*d", n, v)
			if got := string(appendDigits([]byte("x"), v, n)); got != want {
				t.Errorf("appendDigits(%d, %d) = %q, want %q", v, n, got, want)
			}
		}
	}
}

// A target frames a Plain document without scanning it (no raw newline
// in its JSON, nothing to escape in its ID), so every generated document,
// of every shape, size, nonce and revision, must be what Plain promises.
func TestDocumentsArePlain(t *testing.T) {
	for _, cfg := range []Config{
		{DocSize: MinDocSize, Seed: 1}, {DocSize: 1000, Seed: 2, Nonce: 3}, {DocSize: 1250, Seed: 4},
		{DocSize: 20_000, Seed: 5}, {DocSize: 9000, Seed: 6, Shape: ShapeNested},
	} {
		g := mustNew(t, cfg)
		var buf []byte
		for i := range 500 {
			var d target.Document
			d, buf = g.Next(buf[:0], t0+int64(i))
			if i%5 == 0 {
				d, buf = g.Revise(buf[:0], Key{ID: d.ID, Seq: d.Seq, EventTime: d.EventTime}, 2, t0+int64(i)+1)
			}
			if !d.Plain {
				t.Fatalf("%+v: document %d is not marked Plain", cfg, i)
			}
			if bytes.IndexByte(d.JSON, '\n') >= 0 {
				t.Fatalf("%+v: document %d holds a raw newline:\n%s", cfg, i, d.JSON)
			}
			if q, _ := json.Marshal(d.ID); string(q) != `"`+d.ID+`"` {
				t.Fatalf("%+v: document %d's ID %q needs escaping", cfg, i, d.ID)
			}
		}
	}
}

func TestProcessByCardinality(t *testing.T) {
	g := mustNew(t, Config{DocSize: 400, Seed: 4})
	seen := map[string]bool{}
	re := regexp.MustCompile(`"processBy":"([^"]*)"`)
	for range 20_000 {
		doc, _ := g.Next(nil, t0)
		seen[string(re.FindSubmatch(doc.JSON)[1])] = true
	}
	if len(seen) < 900 || len(seen) > 1000 {
		t.Errorf("%d distinct processBy values, want about 1000", len(seen))
	}
}

func TestListsHaveNoDuplicates(t *testing.T) {
	for name, list := range map[string][]string{
		"loremWords": loremWords, "firstNames": firstNames, "lastNames": lastNames,
		"companies": companies, "cities": cities, "streetNames": streetNames,
	} {
		seen := map[string]bool{}
		for _, s := range list {
			if seen[s] {
				t.Errorf("%s lists %q twice", name, s)
			}
			seen[s] = true
		}
	}
}

// A nonce separates the identities of two runs with the same seed (so a
// repeated run on a reused index never overwrites the last one) while the
// documents' content stays what the seed alone gives.
func TestNonceChangesIDsNotPayload(t *testing.T) {
	const n = 20_000
	for _, size := range []int{400, 1000, 5000} {
		base := mustNew(t, Config{DocSize: size, Seed: 99, Index: 1})
		runs := []*Generator{
			mustNew(t, Config{DocSize: size, Seed: 99, Index: 1, Nonce: 1}),
			mustNew(t, Config{DocSize: size, Seed: 99, Index: 1, Nonce: 2}),
			mustNew(t, Config{DocSize: size, Seed: 99, Index: 1, Nonce: 1 << 63}),
		}
		owner := map[string]int{} // _id or generator ID → run (0 = no nonce)
		claim := func(id string, run, doc int) {
			t.Helper()
			if prev, dup := owner[id]; dup {
				t.Fatalf("DocSize %d: run %d (doc %d) repeats id %s of run %d", size, run, doc, id, prev)
			}
			owner[id] = run
		}
		claim("gen:"+base.ID(), 0, -1)
		for r, g := range runs {
			if len(g.ID()) != len(base.ID()) {
				t.Fatalf("DocSize %d: generator ID %s with a nonce has %d digits, %s without has %d; the payload would shift",
					size, g.ID(), len(g.ID()), base.ID(), len(base.ID()))
			}
			claim("gen:"+g.ID(), r+1, -1)
		}
		for i := range n {
			want, _ := base.Next(nil, t0+int64(i))
			claim(want.ID, 0, i)
			wantRest := afterGenerator(t, want.JSON)
			for r, g := range runs {
				got, _ := g.Next(nil, t0+int64(i))
				claim(got.ID, r+1, i)
				if !uuidV4.MatchString(got.ID) {
					t.Fatalf("run %d: _id %q is not a UUID v4", r+1, got.ID)
				}
				if got.Seq != want.Seq || got.Generator != g.ID() {
					t.Fatalf("run %d doc %d: _seq %d generator %s, want _seq %d generator %s", r+1, i, got.Seq, got.Generator, want.Seq, g.ID())
				}
				if rest := afterGenerator(t, got.JSON); !bytes.Equal(rest, wantRest) {
					t.Fatalf("DocSize %d run %d doc %d: payload differs from the seed's:\n%s\n%s", size, r+1, i, rest, wantRest)
				}
			}
		}
	}
}

// afterGenerator returns what follows the generator_identifier: _seq and
// the payload.
func afterGenerator(t *testing.T, js []byte) []byte {
	t.Helper()
	i := bytes.Index(js, []byte(`","_seq":`))
	if i < 0 {
		t.Fatalf("no _seq after the generator ID in %s", js)
	}
	return js[i:]
}

// Nonce 0 keeps the ids a seed gives without one: the seed command resumes
// by regenerating them.
func TestNonceZeroKeepsIDs(t *testing.T) {
	g := mustNew(t, Config{DocSize: 1000, Seed: 42})
	doc, _ := g.Next(nil, t0)
	// The generator identifier was recorded before Config.Nonce was added
	// (a seed's data set keeps its streams' identifiers across versions);
	// the _id when the payload moved to a random stream of its own.
	const wantGen, wantID = "13572966196038887496", "ffd60b8c-3556-4270-8594-80726dc64e1d"
	if g.ID() != wantGen || doc.ID != wantID {
		t.Errorf("Seed 42, Nonce 0: generator %s, first _id %s; want %s and %s without a nonce", g.ID(), doc.ID, wantGen, wantID)
	}
}

func TestSameDigits(t *testing.T) {
	for _, gen := range []uint64{0, 9, 10, 99, 100, 1e18 - 1, 1e18, 1e19 - 1, 1e19, 1<<64 - 1} {
		for _, mix := range []uint64{0, 1, 12345, 1e19 - 1, 1e19, 1<<64 - 1} {
			got := sameDigits(gen, mix)
			if g, w := strconv.FormatUint(got, 10), strconv.FormatUint(gen, 10); len(g) != len(w) {
				t.Errorf("sameDigits(%d, %d) = %s: %d digits, want %d", gen, mix, g, len(g), len(w))
			}
		}
	}
}
