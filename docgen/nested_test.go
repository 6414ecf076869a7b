package docgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// depth is how deep objects and arrays nest in v.
func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

// The nested shape comes out at its size to the byte (a few bytes over
// at most; at its least size, MinSize, a rare event may be longer), valid JSON, nested five levels and more, with strings,
// numbers, booleans and null, and with the query workload's fields at the
// top level: processBy a scalar, emails an array.
func TestNestedShape(t *testing.T) {
	for _, size := range []int{9000, 20_000, 100_000} {
		g := mustNew(t, Config{DocSize: size, Seed: 5, Shape: ShapeNested})
		buf := make([]byte, 0, 2*size)
		for i := range 200 {
			doc, _ := g.Next(buf[:0], t0+int64(i))
			if n := len(doc.JSON); n < size || n > size+4 {
				t.Fatalf("size %d: document of %d bytes", size, n)
			}
			m := decode(t, doc.JSON)
			if _, ok := m["processBy"].(string); !ok {
				t.Fatalf("size %d: processBy %v, want a string", size, m["processBy"])
			}
			if e, ok := m["emails"].([]any); !ok || len(e) != 2 {
				t.Fatalf("size %d: emails %v, want two", size, m["emails"])
			}
			for _, f := range []string{"company", "age", "tags", "profile", "orders", "events", "metrics", "notes", "_seq", "_event_time", "generator_identifier"} {
				if _, ok := m[f]; !ok {
					t.Fatalf("size %d: no %s in %s", size, f, doc.JSON)
				}
			}
			if d := depth(m); d < 5 {
				t.Fatalf("size %d: nested %d levels, want at least 5", size, d)
			}
		}
	}
	g := mustNew(t, Config{DocSize: 9000, Seed: 5, Shape: ShapeNested})
	doc, _ := g.Next(nil, t0)
	var whole map[string]any
	if err := json.Unmarshal(doc.JSON, &whole); err != nil {
		t.Fatal(err)
	}
	js := string(doc.JSON)
	for _, kind := range []string{`":true`, `":false`, `":null`, `":"`, `":[`, `":{`} {
		if !strings.Contains(js, kind) {
			t.Errorf("no %s value in a 9 KB nested document", kind)
		}
	}
	if n := len(whole["orders"].([]any)); n < 3 {
		t.Errorf("a 9 KB nested document holds %d orders, want several", n)
	}
}

// The same seed gives the same nested documents; shapes and sizes that
// cannot be made are refused.
func TestNestedDeterministicAndRefused(t *testing.T) {
	a := mustNew(t, Config{DocSize: 9000, Seed: 9, Shape: ShapeNested})
	b := mustNew(t, Config{DocSize: 9000, Seed: 9, Shape: ShapeNested})
	for i := range 50 {
		da, _ := a.Next(nil, t0+int64(i))
		db, _ := b.Next(nil, t0+int64(i))
		if string(da.JSON) != string(db.JSON) {
			t.Fatalf("document %d differs under the same seed", i)
		}
	}
	for _, c := range []Config{{DocSize: 5000, Shape: ShapeNested}, {DocSize: 1000, Shape: "flat"}} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// The nested shape is the shipped nested template at the configured size:
// the same events, byte for byte, as the template run at that size, and a
// size below what the template's other values take is refused naming the
// least size that works.
func TestNestedShapeIsTheShippedTemplate(t *testing.T) {
	tm := mustShipped(t, "nested")
	shape := mustNew(t, Config{DocSize: 9000, Seed: 6, Shape: ShapeNested})
	tmpl := mustNew(t, Config{Template: tm, Seed: 6})
	if a, b := digest(shape, true), digest(tmpl, true); a != b {
		t.Fatalf("the nested shape's events (digest %s) are not the shipped template's (%s)", a, b)
	}
	least := MinSize(ShapeNested)
	if _, err := New(Config{DocSize: least, Shape: ShapeNested}); err != nil {
		t.Fatalf("the least nested size %d refused: %v", least, err)
	}
	_, err := New(Config{DocSize: least - 1, Shape: ShapeNested})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at least %d bytes", least)) {
		t.Fatalf("size %d: error %v, want one naming the least size %d", least-1, err, least)
	}
}
