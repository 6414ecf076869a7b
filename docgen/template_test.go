package docgen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/invalid"
)

func mustTemplate(t testing.TB, text string) *Template {
	t.Helper()
	tm, err := ParseTemplate([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// events generates n events of tm and decodes them.
func events(t testing.TB, tm *Template, n int) []map[string]any {
	t.Helper()
	g, err := New(Config{Template: tm, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for i := range n {
		d, _ := g.Next(nil, int64(i))
		var m map[string]any
		if err := json.Unmarshal(d.JSON, &m); err != nil {
			t.Fatalf("event %s: %v", d.JSON, err)
		}
		if m["_id"] != d.ID || m["_seq"] != float64(i) {
			t.Fatalf("event %s lacks its head", d.JSON)
		}
		out = append(out, m)
	}
	return out
}

// Every expression writes values of its kind within its range, in the
// template's order; probabilities hold within a bound no one tuned
// (five standard deviations of the binomial).
func TestTemplateValues(t *testing.T) {
	tm := mustTemplate(t, `{
	  "lit": {"n": 1.5, "b": false, "z": null, "s": "plain \"q\""},
	  "age": "{{int 18 20}}",
	  "neg": "{{float -1 1 1}}",
	  "id": "w-{{digits 3}}-{{int 7 7}}",
	  "who": "{{name}}", "mail": "{{email}}", "u": "{{uuid}}",
	  "day": "{{date 2024-02-27 2024-03-01}}",
	  "at": "{{datetime 2024-01-01 2024-01-01}}",
	  "c": "{{choice red:3 'dark blue':1}}",
	  "num": "{{choice 1 2.5 true}}",
	  "tags": {"$array": "2..4", "of": "{{word}}"},
	  "s": "{{sentence 3 3}}",
	  "t": "{{text 10 10}}",
	  "maybe": "{{int 1 1 | null 0.25}}",
	  "gone": "{{bool 1 | absent 0.25}}",
	  "fixed": ["{{int 5 5}}", {"k": "{{word}}"}],
	  "opt": {"a": "{{int 1 1 | absent 0.5}}", "b": "{{int 2 2 | absent 0.5}}", "c": 3},
	  "long": "{{digits 40}}"
	}`)
	const n = 4000
	evs := events(t, tm, n)
	var nulls, absent, red int
	for _, m := range evs {
		if s := m["lit"].(map[string]any)["s"]; s != `plain "q"` {
			t.Fatalf("literal string %q", s)
		}
		if a := m["age"].(float64); a < 18 || a > 20 || a != float64(int(a)) {
			t.Fatalf("age %v outside 18..20", a)
		}
		if f := m["neg"].(float64); f < -1 || f > 1 {
			t.Fatalf("float %v outside -1..1", f)
		}
		if id := m["id"].(string); len(id) != 7 || !strings.HasPrefix(id, "w-") || !strings.HasSuffix(id, "-7") {
			t.Fatalf("interpolated %q", id)
		}
		if d := m["day"].(string); d < "2024-02-27" || d > "2024-03-01" || len(d) != 10 {
			t.Fatalf("date %q", d)
		}
		if d := m["at"].(string); !strings.HasPrefix(d, "2024-01-01T") || !strings.HasSuffix(d, "Z") {
			t.Fatalf("datetime %q", d)
		}
		if !strings.Contains(m["mail"].(string), "@") || len(m["u"].(string)) != 36 || !strings.Contains(m["who"].(string), " ") {
			t.Fatalf("email %q, uuid %q, name %q", m["mail"], m["u"], m["who"])
		}
		switch m["c"] {
		case "red":
			red++
		case "dark blue":
		default:
			t.Fatalf("choice %q", m["c"])
		}
		switch m["num"].(type) {
		case float64, bool:
		default:
			t.Fatalf("a choice of numbers wrote %T", m["num"])
		}
		if k := len(m["tags"].([]any)); k < 2 || k > 4 {
			t.Fatalf("%d tags, want 2..4", k)
		}
		if s := m["s"].(string); strings.Count(s, " ") != 2 || !strings.HasSuffix(s, ".") {
			t.Fatalf("sentence of 3 words %q", s)
		}
		if len(m["t"].(string)) != 10 {
			t.Fatalf("text of 10 bytes %q", m["t"])
		}
		if m["maybe"] == nil {
			nulls++
		}
		if g, ok := m["gone"]; !ok {
			absent++
		} else if g != true {
			t.Fatalf("bool 1 wrote %v", g)
		}
		if f := m["fixed"].([]any); len(f) != 2 || f[0] != 5.0 {
			t.Fatalf("array %v", f)
		}
		// A member after members that may all be absent gets its comma
		// only after a member written (the events decode: no "{,").
		if o := m["opt"].(map[string]any); o["c"] != 3.0 {
			t.Fatalf("object %v", o)
		}
		if d := m["long"].(string); len(d) != 40 || strings.Trim(d, "0123456789") != "" {
			t.Fatalf("digits 40 wrote %q", d)
		}
	}
	within := func(what string, got int, p float64) {
		t.Helper()
		mean, sd := n*p, 5*sqrt(n*p*(1-p))
		if float64(got) < mean-sd || float64(got) > mean+sd {
			t.Errorf("%s: %d of %d, want %v ± %.0f", what, got, n, mean, sd)
		}
	}
	within("null 0.25", nulls, 0.25)
	within("absent 0.25", absent, 0.25)
	within("choice red:3 of 4", red, 0.75)
}

func sqrt(x float64) float64 {
	r := x
	for range 50 {
		r = (r + x/r) / 2
	}
	return r
}

// Members keep the template's order, and the output is byte for byte
// the same under a seed.
func TestTemplateOrderAndSeed(t *testing.T) {
	tm := mustTemplate(t, `{"z": "{{int 1 9}}", "a": "{{word}}", "m": {"y": 1, "b": 2}}`)
	a, _ := New(Config{Template: tm, Seed: 3})
	b, _ := New(Config{Template: tm, Seed: 3})
	da, _ := a.Next(nil, 1)
	db, _ := b.Next(nil, 1)
	s := string(da.JSON)
	if !(strings.Index(s, `"z":`) < strings.Index(s, `"a":`) && strings.Index(s, `"a":`) < strings.Index(s, `"m":{"y":1,"b":2}`)) {
		t.Fatalf("members out of order: %s", s)
	}
	if string(da.JSON[strings.Index(s, `,"z"`):]) != string(db.JSON[strings.Index(string(db.JSON), `,"z"`):]) {
		t.Fatalf("the same seed gave %s and %s", da.JSON, db.JSON)
	}
}

// A bad template is refused in one line naming its line and the fix.
func TestTemplateRefused(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"{\n\"a\": 1,\n\"b\": }", "line 3: invalid character '}'"},
		{"[1]", "line 1: a template is one JSON object"},
		{"{\"a\": 1", "the template ends early"},
		{"{\n\"_seq\": 1}", `line 2: the field "_seq" is one freshbench stamps`},
		{"{\n\n\"a\": \"{{int 5 1}}\"}", "line 3: {{int 5 1}}: int 5 1: want 0 ≤ MIN ≤ MAX"},
		{"{\"a\": \"{{nmae}}\"}", `line 1: {{nmae}}: unknown expression "nmae"; want one of name,`},
		{"{\"a\": \"{{int 1}}\"}", "int takes [2] arguments, not 1"},
		{"{\"a\": \"{{int 1 5\"}", "an expression is not closed; end it with }}"},
		{"{\"a\": [\"{{int 1 5 | absent 0.5}}\"]}", "| absent leaves out an object's member; in an array use | null"},
		{"{\"a\": \"x{{int 1 5 | null 0.5}}\"}", "| null and | absent apply to a whole value"},
		{"{\"a\": \"{{word | null 2}}\"}", "null 2: want a probability in [0, 1]"},
		{"{\"a\": {\"$array\": \"5..2\", \"of\": 1}}", `$array 5..2: want "MIN..MAX"`},
		{"{\"a\": {\"$array\": \"2\"}}", `{"$array": "MIN..MAX", "of": VALUE} and nothing else`},
		{"{\"$x\": 1}", "keys starting with $ are the template's own"},
		{"{\"a\": \"{{choice red:0}}\"}", `weight "0": want a positive integer`},
		{"{\"a\": \"{{date 2024-13-01 2024-01-01}}\"}", "want two dates YYYY-MM-DD"},
		{"{} {}", "text after the template's object"},
	} {
		_, err := ParseTemplate([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("template %q: error %v, want one line with %q", tc.text, err, tc.want)
		}
	}
	p := filepath.Join(t.TempDir(), "t.json")
	os.WriteFile(p, []byte("{\"a\":\n\"{{int x 1}}\"}"), 0o600)
	_, err := ParseTemplateFile(p)
	if _, ok := invalid.As(err); !ok || !strings.Contains(err.Error(), p+": line 2: {{int x 1}}") {
		t.Fatalf("error %v, want the file and line named", err)
	}
}

// The shipped RockBench template has the RockBench sample's fields
// (docs/rockbench-sample-document.json): at its own size, the default
// 1000 bytes, every top-level field of the sample and the address's, with
// the first two of its friends (the hand-written shape had two at 1000
// bytes, and friends join one per level); from 1323 bytes, every
// field at the same path, friend10 included. Its size is exact to the
// byte, as the built-in shape's.
func TestRockBenchTemplate(t *testing.T) {
	tm := mustShipped(t, "rockbench")
	data, err := os.ReadFile("../docs/rockbench-sample-document.json")
	if err != nil {
		t.Fatal(err)
	}
	var sample map[string]any
	if err := json.Unmarshal(data, &sample); err != nil {
		t.Fatal(err)
	}
	top := map[string]any{}
	for k, v := range sample {
		top[k] = v
	}
	friends := sample["friends"].(map[string]any)
	top["friends"] = map[string]any{"friend1": friends["friend1"], "friend2": friends["friend2"]}
	for _, ev := range events(t, tm, 50) {
		if missing := missingPaths("", top, ev); len(missing) > 0 {
			t.Fatalf("event of %d bytes lacks the sample's fields %v", DefaultDocSize, missing)
		}
	}
	for _, size := range []int{1323, 2600, 10_000} {
		r, err := tm.resized(size)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events(t, r, 50) {
			if missing := missingPaths("", sample, ev); len(missing) > 0 {
				t.Fatalf("event of %d bytes lacks the sample's fields %v", size, missing)
			}
		}
	}
	exactSize(t, tm, DefaultDocSize, func(m map[string]any) any { return m["greeting"] })
}

// exactSize holds a shipped template's events to its size, as the
// built-in shapes': none short, and over only when the rest of an event
// ran longer than in the template's sample, which leaves the filler
// empty, in at most 1 % of the events.
func exactSize(t *testing.T, tm *Template, size int, filler func(map[string]any) any) {
	t.Helper()
	if s := tm.MeanSize(); s != size {
		t.Fatalf("mean event %d bytes, want %d", s, size)
	}
	g := mustNew(t, Config{Template: tm, Seed: 2})
	buf := make([]byte, 0, 2*size)
	const n = 3000
	over := 0
	for i := range n {
		d, _ := g.Next(buf[:0], t0+int64(i))
		switch l := len(d.JSON); {
		case l < size:
			t.Fatalf("event of %d bytes, want %d", l, size)
		case l > size:
			if f := filler(decode(t, d.JSON)); f != "" {
				t.Fatalf("event of %d bytes, over %d, with the filler %q", l, size, f)
			}
			over++
		}
	}
	if over > n/100 {
		t.Fatalf("%d of %d events over %d bytes", over, n, size)
	}
}

// The shipped nested template, now the nested shape, has the fields of
// the hand-written nested shape it replaced (every object path of a 9 KB
// document it wrote, testdata/nested-builtin-9000.json, into the first
// element of each array) with the same kinds of value, the query
// workload's fields at the top level, nests as deep, and is as large, to
// the byte.
func TestNestedTemplate(t *testing.T) {
	tm, err := ShippedTemplate("nested")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/nested-builtin-9000.json")
	if err != nil {
		t.Fatal(err)
	}
	builtin := decode(t, data)
	for _, ev := range events(t, tm, 50) {
		if diff := kindDiff("", builtin, ev); len(diff) > 0 {
			t.Fatalf("event differs from the built-in nested shape: %v", diff)
		}
		if d := depth(ev); d < depth(builtin) {
			t.Fatalf("event nests %d levels, the built-in %d", d, depth(builtin))
		}
	}
	exactSize(t, tm, 9000, func(m map[string]any) any { return m["notes"].(map[string]any)["text"] })
}

// kindDiff lists the paths of want (objects, and the first element of
// arrays) that got lacks or holds a value of another kind; null in want
// takes any kind in got, and a number takes a number.
func kindDiff(prefix string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{prefix + ": not an object"}
		}
		var out []string
		for k, v := range w {
			if _, ok := g[k]; !ok {
				out = append(out, prefix+"."+k+": missing")
				continue
			}
			out = append(out, kindDiff(prefix+"."+k, v, g[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) == 0 != (len(w) == 0) {
			return []string{prefix + ": not an array like the built-in's"}
		}
		if len(w) == 0 {
			return nil
		}
		return kindDiff(prefix+"[0]", w[0], g[0])
	case nil:
		return nil
	}
	if kind(want) != kind(got) {
		return []string{fmt.Sprintf("%s: a %s, the built-in a %s", prefix, kind(got), kind(want))}
	}
	return nil
}

// kind names a decoded scalar's JSON kind.
func kind(v any) string {
	switch v.(type) {
	case json.Number, float64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// missingPaths lists the object paths of want that got lacks.
func missingPaths(prefix string, want, got map[string]any) []string {
	var out []string
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			out = append(out, prefix+k)
			continue
		}
		if wm, ok := v.(map[string]any); ok {
			gm, _ := g.(map[string]any)
			out = append(out, missingPaths(prefix+k+".", wm, gm)...)
		}
	}
	return out
}

// BenchmarkTemplateRockBench: the shipped RockBench template.
func BenchmarkTemplateRockBench(b *testing.B) {
	tm, err := ShippedTemplate("rockbench")
	if err != nil {
		b.Fatal(err)
	}
	benchmarkNextConfig(b, Config{Template: tm, Seed: 1})
}

// BenchmarkTemplateNested: the shipped nested template.
func BenchmarkTemplateNested(b *testing.B) {
	tm, err := ShippedTemplate("nested")
	if err != nil {
		b.Fatal(err)
	}
	benchmarkNextConfig(b, Config{Template: tm, Seed: 1})
}

// person name, person company and person email are one person per event:
// the email is made of the name and the company, as the built-in shapes'
// is, every person expression of an event agrees, and the persons of
// events differ.
func TestTemplatePerson(t *testing.T) {
	tm := mustTemplate(t, `{"n": "{{person name}}", "c": "{{person company}}", "e": "{{person email}}",
		"more": {"$array": "2", "of": "{{person email}}"}, "n2": "{{person name}}"}`)
	names := map[string]bool{}
	for _, ev := range events(t, tm, 200) {
		name, comp, email := ev["n"].(string), ev["c"].(string), ev["e"].(string)
		first, last, ok := strings.Cut(name, " ")
		if !ok {
			t.Fatalf("name %q, want first and last", name)
		}
		want := strings.ToLower(first + "." + last + "@" + comp + ".")
		if !strings.HasPrefix(email, want) {
			t.Fatalf("email %q of %q at %q, want it to begin %q", email, name, comp, want)
		}
		if more := fmt.Sprint(ev["more"]); more != fmt.Sprint([]any{email, email}) || ev["n2"] != name {
			t.Fatalf("event %v: its person expressions disagree", ev)
		}
		names[name] = true
	}
	if len(names) < 100 {
		t.Fatalf("%d distinct persons in 200 events, want each event to draw its own", len(names))
	}
}

// A person expression names what of the person it writes.
func TestTemplatePersonRefused(t *testing.T) {
	for _, bad := range []string{`{{person}}`, `{{person age}}`, `{{person name email}}`} {
		_, err := ParseTemplate([]byte(`{"a": "` + bad + `"}`))
		if err == nil || !strings.Contains(err.Error(), "person") {
			t.Errorf("%s: error %v, want one naming person", bad, err)
		}
	}
}

// part splits one draw into three values, each in [0,n) and each of the
// n values reached: the top bits of a field do not leak into the next.
func TestPart(t *testing.T) {
	g := mustNew(t, Config{DocSize: 1000, Seed: 3})
	for _, n := range []int{1, 8, 90, 800, 9999} {
		for _, at := range []uint{0, 21, 42} {
			if v := part(^uint64(0), at, n); v != n-1 {
				t.Errorf("part(all ones, %d, %d) = %d, want %d", at, n, v, n-1)
			}
			seen := make([]bool, n)
			for range 40 * n {
				v := part(g.u64(), at, n)
				if v < 0 || v >= n {
					t.Fatalf("part(_, %d, %d) = %d, out of range", at, n, v)
				}
				seen[v] = true
			}
			if i := slices.Index(seen, false); i >= 0 {
				t.Errorf("part(_, %d, %d) never drew %d in %d draws", at, n, i, 40*n)
			}
		}
	}
}

// TestTemplateArrayElements holds the arrays the interpreter writes by
// going back to their body: empty ones, constant elements, an array in an
// element, an element longer than one store, and elements that end in a
// null or an absent member.
func TestTemplateArrayElements(t *testing.T) {
	tm := mustTemplate(t, `{
	  "a": {"$array": "0..3", "of": "const"},
	  "b": {"$array": "2", "of": {"$array": "0..2", "of": {"k": "{{int 1 1}}", "long": "a literal longer than sixteen bytes"}}},
	  "c": {"$array": "1..3", "of": "{{int 5 5 | null 0.5}}"},
	  "d": {"$array": "3", "of": {"x": "{{int 7 7 | absent 0.5}}"}}
	}`)
	lens := map[string]map[int]bool{"a": {}, "b": {}, "c": {}}
	var nulls, absent int
	for _, ev := range events(t, tm, 400) {
		a := ev["a"].([]any)
		lens["a"][len(a)] = true
		for _, v := range a {
			if v != "const" {
				t.Fatalf("a: element %v, want const", v)
			}
		}
		b := ev["b"].([]any)
		if len(b) != 2 {
			t.Fatalf("b: %d elements, want 2", len(b))
		}
		for _, inner := range b {
			lens["b"][len(inner.([]any))] = true
			for _, v := range inner.([]any) {
				if o := v.(map[string]any); o["k"] != 1.0 || o["long"] != "a literal longer than sixteen bytes" || len(o) != 2 {
					t.Fatalf("b: element %v", o)
				}
			}
		}
		c := ev["c"].([]any)
		lens["c"][len(c)] = true
		for _, v := range c {
			switch v {
			case nil:
				nulls++
			case 5.0:
			default:
				t.Fatalf("c: element %v, want 5 or null", v)
			}
		}
		for _, v := range ev["d"].([]any) {
			switch o := v.(map[string]any); {
			case len(o) == 0:
				absent++
			case len(o) != 1 || o["x"] != 7.0:
				t.Fatalf("d: element %v, want {} or {\"x\":7}", o)
			}
		}
	}
	for k, want := range map[string]int{"a": 4, "b": 3, "c": 3} {
		if len(lens[k]) != want {
			t.Errorf("%s: lengths %v, want %d different", k, lens[k], want)
		}
	}
	if nulls == 0 || absent == 0 {
		t.Errorf("%d nulls, %d absent members: want some of each", nulls, absent)
	}
}
