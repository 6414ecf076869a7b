package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/target"
)

func own(texts map[string]string, params ...Param) *Own {
	return &Own{Name: "q", Texts: texts, Params: params, Where: "w.yaml:7"}
}

// Parameters become the family's placeholders: numbered ones bound to
// the parameters (a parameter used twice is one), Druid's positional ?
// bound to the values in the order they appear (one used twice is bound
// twice), Pinot's literals written in; quoted text, identifiers and casts
// are left alone.
func TestPlaceholders(t *testing.T) {
	o := own(map[string]string{
		"postgres": `SELECT doc FROM {table} WHERE doc->>'a:b' = :v AND "x:y" = :w::text OR :v = ''`,
		"sqlite":   `SELECT 1 WHERE json_extract(doc, '$.a') = :v AND :w`,
		"druid":    `SELECT * FROM {table} WHERE "a:b" = :w AND "n" = :v OR ARRAY_CONTAINS("e", :w) AND 'x:y' = ':v'`,
		"pinot":    `SELECT * FROM {table} WHERE "a:b" = :w AND "n" = :v OR "e" = :w AND 'x:y' = ':v'`,
	}, Param{Name: "v", Field: "a"}, Param{Name: "w", Field: "b"})
	for _, tc := range []struct {
		family, text string
		args         []any
	}{
		{"postgres", `SELECT doc FROM {table} WHERE doc->>'a:b' = $1 AND "x:y" = $2::text OR $1 = ''`, []any{int64(7), "it's"}},
		{"sqlite", `SELECT 1 WHERE json_extract(doc, '$.a') = ?1 AND ?2`, []any{int64(7), "it's"}},
		{"druid", `SELECT * FROM {table} WHERE "a:b" = ? AND "n" = ? OR ARRAY_CONTAINS("e", ?) AND 'x:y' = ':v'`, []any{"it's", int64(7), "it's"}},
		{"pinot", `SELECT * FROM {table} WHERE "a:b" = 'it''s' AND "n" = 7 OR "e" = 'it''s' AND 'x:y' = ':v'`, nil},
	} {
		s, err := o.Statement(tc.family, 10, int64(7), "it's")
		if err != nil {
			t.Fatal(err)
		}
		if s.Text != tc.text || fmt.Sprint(s.Args) != fmt.Sprint(tc.args) {
			t.Errorf("%s: %s %v, want %s %v", tc.family, s.Text, s.Args, tc.text, tc.args)
		}
	}
	// A null parameter (CheckOwn's) is NULL in Druid's text: Druid binds
	// no null.
	s, err := o.Statement("druid", 10, nil, "x")
	if want := `SELECT * FROM {table} WHERE "a:b" = ? AND "n" = NULL OR ARRAY_CONTAINS("e", ?) AND 'x:y' = ':v'`; err != nil || s.Text != want || len(s.Args) != 2 {
		t.Errorf("druid, null: %s %v %v, want %s and two args", s.Text, s.Args, err, want)
	}
}

// literals splits Pinot SQL (Calcite's lexis: a string literal in single
// quotes, a quote in it doubled, no backslash escapes) into the text
// outside its string literals, each written as L, and the literals'
// values.
func literals(t *testing.T, sql string) (outside string, values []string) {
	t.Helper()
	var out, lit strings.Builder
	in := false
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case !in && c == '\'':
			in = true
			lit.Reset()
		case in && c == '\'' && i+1 < len(sql) && sql[i+1] == '\'':
			lit.WriteByte('\'')
			i++
		case in && c == '\'':
			in = false
			out.WriteByte('L')
			values = append(values, lit.String())
		case in:
			lit.WriteByte(c)
		default:
			out.WriteByte(c)
		}
	}
	if in {
		t.Fatalf("%s: a literal is not closed", sql)
	}
	return out.String(), values
}

// Pinot binds no parameters, so its values are written in as literals: a
// value holding quotes, backslashes or SQL of its own stays inside its
// literal, which reads back as the value, and the query around it is the
// user's.
func TestPinotLiteralsHoldTheirValue(t *testing.T) {
	o := own(map[string]string{"pinot": `SELECT * FROM {table} WHERE "processBy" = :v AND "company" = 'c' LIMIT 10`}, Param{Name: "v", Field: "a"})
	for _, v := range []string{`x' OR '1'='1`, `'`, `''`, `\'`, `a\' OR 1=1 --`, `'; DROP TABLE t; --`, "line\n' OR TRUE OR '", `"`, ``} {
		s, err := o.Statement("pinot", 10, v)
		if err != nil {
			t.Fatal(err)
		}
		outside, values := literals(t, s.Text)
		if want := `SELECT * FROM {table} WHERE "processBy" = L AND "company" = L LIMIT 10`; outside != want || len(values) != 2 || values[0] != v || values[1] != "c" {
			t.Errorf("value %q: %s reads as %s with literals %q; want %s with %q and \"c\"", v, s.Text, outside, values, want, v)
		}
	}
	// Numbers, booleans and null are written as SQL reads them.
	for _, tc := range []struct {
		v    any
		want string
	}{{int64(-42), "-42"}, {2.5, "2.5"}, {1e21, "1e+21"}, {true, "TRUE"}, {false, "FALSE"}, {nil, "NULL"}} {
		if s, _ := o.Statement("pinot", 10, tc.v); !strings.Contains(s.Text, `"processBy" = `+tc.want+` AND`) {
			t.Errorf("%#v: %s, want it written %s", tc.v, s.Text, tc.want)
		}
	}
}

// A search body takes each parameter as a JSON value, a number staying a
// number.
func TestSearchBody(t *testing.T) {
	o := own(map[string]string{"elasticsearch": `{"query": {"bool": {"filter": [{"term": {"a": "{{v}}"}}, {"range": {"n": {"gte": "{{ n }}"}}}]}}}`},
		Param{Name: "v", Field: "a"}, Param{Name: "n", Field: "n"})
	s, err := o.Statement("opensearch", 10, `x"y`, int64(42)) // opensearch takes elasticsearch's body
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
		_, err := tc.o.compile(tc.family, 10)
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
		args, _, ok := p.draw(c, 0)
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

// planner is a Querier of one family that records what CheckOwn sends
// and answers with err.
type planner struct {
	family string
	sent   []string
	err    error
}

func (p *planner) Name() string                                  { return p.family }
func (p *planner) SetupQueries(context.Context) error            { return nil }
func (p *planner) QueryText(q target.Query) string               { return q.Statement.Text }
func (p *planner) Sample(context.Context, int) ([][]byte, error) { return nil, nil }
func (p *planner) Query(_ context.Context, q target.Query) (int, error) {
	p.sent = append(p.sent, q.Statement.Text)
	return 0, p.err
}

// CheckOwn refuses a query in the mix with no text for the target's
// family, Druid and Pinot as the others; it asks Druid for the plan as
// Druid SQL writes it (EXPLAIN PLAN FOR), with null parameters as NULL,
// refuses SQL Druid cannot plan in Druid's words, and asks Pinot nothing
// (0.11 parses no NULL).
func TestCheckOwnDruidPinot(t *testing.T) {
	cfg := Config{Mix: Mix{{Kind: "q", Weight: 1}}, Own: []Own{*own(map[string]string{
		"druid": `SELECT * FROM {table} WHERE "processBy" = :v`,
		"pinot": `SELECT * FROM {table} WHERE "processBy" = :v`,
	}, Param{Name: "v", Field: "processBy"})}}
	for _, family := range []string{"druid", "pinot"} {
		other := Config{Mix: cfg.Mix, Own: []Own{*own(map[string]string{"postgres": "SELECT :v"}, Param{Name: "v", Field: "a"})}}
		err := CheckOwn(context.Background(), &planner{family: family}, other)
		if _, ok := invalid.As(err); !ok || !strings.Contains(err.Error(), "has no text for "+family+" (it has postgres); add a "+family+": text under it") {
			t.Errorf("%s, no text: %v; want it refused as bad input", family, err)
		}
	}
	d := &planner{family: "druid"}
	if err := CheckOwn(context.Background(), d, cfg); err != nil || len(d.sent) != 1 || d.sent[0] != `EXPLAIN PLAN FOR SELECT * FROM {table} WHERE "processBy" = NULL` {
		t.Errorf("druid: %v, sent %q; want one EXPLAIN PLAN FOR with the parameter NULL", err, d.sent)
	}
	d = &planner{family: "druid", err: errors.New("druid query q on t: invalidInput: Column 'processBy' not found in any table")}
	if err := CheckOwn(context.Background(), d, cfg); !strings.Contains(err.Error(), "query q: (w.yaml:7) druid cannot run it: druid query q on t: invalidInput: Column 'processBy' not found in any table; fix its druid text") {
		t.Errorf("druid, unknown column: %v; want it refused in Druid's words", err)
	}
	p := &planner{family: "pinot"}
	if err := CheckOwn(context.Background(), p, cfg); err != nil || len(p.sent) != 0 {
		t.Errorf("pinot: %v, sent %q; want nothing sent", err, p.sent)
	}
}

// limit is the run's limit, a constant every text can use where a
// parameter goes: written in as a number, in SQL and in a search body
// alike, never bound, so that LIMIT and size take it on every database.
func TestLimitConstant(t *testing.T) {
	o := own(map[string]string{
		"sqlite":        `SELECT doc FROM {table} WHERE a = :v LIMIT :limit`,
		"postgres":      `SELECT doc FROM {table} WHERE a = :v LIMIT :limit`,
		"druid":         `SELECT * FROM {table} WHERE "a" = :v LIMIT :limit`,
		"pinot":         `SELECT * FROM {table} WHERE "a" = :v LIMIT :limit`,
		"elasticsearch": `{"size": "{{limit}}", "query": {"term": {"a": "{{v}}"}}}`,
	}, Param{Name: "v", Field: "a"})
	for _, tc := range []struct {
		family, text string
		args         []any
	}{
		{"sqlite", `SELECT doc FROM {table} WHERE a = ?1 LIMIT 7`, []any{"x"}},
		{"postgres", `SELECT doc FROM {table} WHERE a = $1 LIMIT 7`, []any{"x"}},
		{"druid", `SELECT * FROM {table} WHERE "a" = ? LIMIT 7`, []any{"x"}},
		{"pinot", `SELECT * FROM {table} WHERE "a" = 'x' LIMIT 7`, nil},
		{"opensearch", `{"size": 7, "query": {"term": {"a": "x"}}}`, nil},
	} {
		cfg := Config{Mix: Mix{{Kind: "q", Weight: 1}}, Own: []Own{*o}, Limit: 7}
		c, err := compileOwn(cfg, tc.family, newPool(0, 1))
		if err != nil {
			t.Errorf("%s: %v", tc.family, err)
			continue
		}
		s := c["q"].statement([]any{"x"})
		if s.Text != tc.text || fmt.Sprint(s.Args) != fmt.Sprint(tc.args) {
			t.Errorf("%s: %s %v, want %s %v", tc.family, s.Text, s.Args, tc.text, tc.args)
		}
	}
	// A parameter cannot take the constant's name.
	bad := own(map[string]string{"sqlite": `SELECT 1 LIMIT :limit`}, Param{Name: "limit", Field: "a"})
	_, err := compileOwn(Config{Mix: Mix{{Kind: "q", Weight: 1}}, Own: []Own{*bad}, Limit: 7}, "sqlite", newPool(0, 1))
	if err == nil || !strings.Contains(err.Error(), "parameter limit takes the name of the run's limit") {
		t.Errorf("a parameter named limit: %v", err)
	}
}
