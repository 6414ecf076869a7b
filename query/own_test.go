package query

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func own(texts map[string]string, params ...Param) *Own {
	return &Own{Name: "q", Texts: texts, Params: params, Where: "w.yaml:7"}
}

// Parameters become the family's numbered placeholders; quoted text,
// identifiers and casts are left alone; a parameter used twice is one.
func TestPlaceholders(t *testing.T) {
	o := own(map[string]string{
		"postgres": `SELECT doc FROM {table} WHERE doc->>'a:b' = :v AND "x:y" = :w::text OR :v = ''`,
		"sqlite":   `SELECT 1 WHERE json_extract(doc, '$.a') = :v AND :w`,
	}, Param{Name: "v", Field: "a"}, Param{Name: "w", Field: "b"})
	for family, want := range map[string]string{
		"postgres": `SELECT doc FROM {table} WHERE doc->>'a:b' = $1 AND "x:y" = $2::text OR $1 = ''`,
		"sqlite":   `SELECT 1 WHERE json_extract(doc, '$.a') = ?1 AND ?2`,
	} {
		c, err := o.compile(family)
		if err != nil {
			t.Fatal(err)
		}
		if c.sql != want {
			t.Errorf("%s: %s, want %s", family, c.sql, want)
		}
	}
}

// A search body takes each parameter as a JSON value, a number staying a
// number.
func TestSearchBody(t *testing.T) {
	o := own(map[string]string{"elasticsearch": `{"query": {"bool": {"filter": [{"term": {"a": "{{v}}"}}, {"range": {"n": {"gte": "{{ n }}"}}}]}}}`},
		Param{Name: "v", Field: "a"}, Param{Name: "n", Field: "n"})
	s, err := o.Statement("opensearch", `x"y`, int64(42)) // opensearch takes elasticsearch's body
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"query": {"bool": {"filter": [{"term": {"a": "x\"y"}}, {"range": {"n": {"gte": 42}}}]}}}`; s.Text != want || !json.Valid([]byte(s.Text)) {
		t.Fatalf("body %s, want %s", s.Text, want)
	}
}

// Bad queries are refused with where they are defined and the fix.
func TestOwnRefused(t *testing.T) {
	v := Param{Name: "v", Field: "a"}
	for _, tc := range []struct {
		o      *Own
		family string
		want   string
	}{
		{own(map[string]string{"sqlite": "SELECT :x"}, v), "sqlite", "(w.yaml:7) sqlite text uses the parameter x, which params does not define; add x: FIELD under params"},
		{own(map[string]string{"sqlite": "SELECT 1"}, v), "sqlite", "parameter v is not used by its sqlite text; use it, or remove it from params"},
		{own(map[string]string{"sqlite": "SELECT ':v"}, v), "sqlite", "sqlite text: a quote ' is not closed"},
		{own(map[string]string{"postgres": "SELECT :v"}, v), "sqlite", "has no text for sqlite (it has postgres)"},
		{own(map[string]string{"elasticsearch": `{"term": {"a": "{{v}}"}`}, v), "elasticsearch", "elasticsearch body is not valid JSON"},
		{own(map[string]string{"elasticsearch": `{"term": {"a": "pre-{{v}}"}}`}, v), "elasticsearch", `a parameter must be the whole JSON string "{{name}}"`},
		{own(map[string]string{"elasticsearch": `{"term": {"a": "{{v"}}`}, v), "elasticsearch", "a parameter is not closed"},
	} {
		_, err := tc.o.compile(tc.family)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "query q: (w.yaml:7) ") {
			t.Errorf("%v: error %v, want %q", tc.o.Texts, err, tc.want)
		}
	}
}

// A parameter's value is the field at its path, one element of an array
// along it; objects and missing fields give none.
func TestValue(t *testing.T) {
	var doc any
	json.Unmarshal([]byte(`{"a":{"b":[{"c":"x"},{"c":"y"}]},"n":3,"f":2.5,"o":{},"t":true,"e":[]}`), &doc)
	first := func(int) int { return 0 }
	last := func(n int) int { return n - 1 }
	for _, tc := range []struct {
		path string
		pick func(int) int
		want any
	}{
		{"a.b.c", first, "x"}, {"a.b.c", last, "y"}, {"n", first, int64(3)}, {"f", first, 2.5},
		{"t", first, true}, {"o", first, nil}, {"e", first, nil}, {"nope", first, nil}, {"n.x", first, nil},
	} {
		if got := value(doc, strings.Split(tc.path, "."), tc.pick); got != tc.want {
			t.Errorf("%s: %#v, want %#v", tc.path, got, tc.want)
		}
	}
}

// A recent parameter draws from the newest values only; a uniform one
// from all that were written.
func TestRecentAndUniform(t *testing.T) {
	p := newPool(0, 1)
	rec := p.field(Param{Name: "r", Field: "n", Recent: true})
	uni := p.field(Param{Name: "u", Field: "n"})
	const n = 3000
	for i := range n {
		p.add([]byte(fmt.Sprintf(`{"n":%d}`, i)))
	}
	c := &compiled{fields: []int{rec, uni}}
	var oldRecent, oldUniform int
	for range 2000 {
		args, ok := p.drawOwn(c)
		if !ok {
			t.Fatal("nothing to draw")
		}
		if args[0].(int64) < n-ownRecent {
			oldRecent++
		}
		if args[1].(int64) < n/2 {
			oldUniform++
		}
	}
	if oldRecent != 0 {
		t.Errorf("%d recent draws older than the newest %d", oldRecent, ownRecent)
	}
	// Half the values are in the older half: 1000 of 2000 draws, within
	// five standard deviations (√500 ≈ 22).
	if oldUniform < 1000-112 || oldUniform > 1000+112 {
		t.Errorf("%d of 2000 uniform draws from the older half, want about 1000", oldUniform)
	}
}
