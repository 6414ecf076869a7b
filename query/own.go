package query

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/target"
)

// Own is a named query of the user's own, written per database family,
// with parameters drawn from the events the run has written.
//
// SQL (sqlite, postgres, questdb, druid, pinot) names a parameter :name
// and the table {table}, as does the simulator's text (sim: see
// target/sim); a search body (elasticsearch, which opensearch
// also takes unless it has a text of its own) writes a parameter as the
// whole JSON string "{{name}}", which becomes the value drawn, a number
// staying a number.
//
// limit is not a parameter but the run's limit (rows a query returns at
// most), a constant every text can use where a parameter goes: :limit in
// SQL, "{{limit}}" in a search body. It is written into the text as a
// number, never bound, so that LIMIT and size take it on every database;
// no parameter may take its name.
type Own struct {
	Name   string
	Texts  map[string]string // by family
	Params []Param
	Where  string // FILE:LINE of its definition, for errors
}

// Param is one parameter: the field of the written events its values
// come from (a dotted path; an array along it gives one of its elements),
// drawn uniformly from what was written or from the newest values.
type Param struct {
	Name   string
	Field  string
	Recent bool
}

// Families are the database families a query of one's own is written
// for: the target names that run them (sim is the simulated database).
var Families = []string{"sqlite", "postgres", "questdb", "druid", "pinot", "elasticsearch", "opensearch", "sim"}

// explain is the statement that asks family for a query's plan without
// running it, put before the query. Pinot has none that CheckOwn can
// use: 0.11 parses no NULL literal (its parser fails on one), so a query
// with null parameters cannot be planned there, and its SQL is first
// checked when it runs. The simulator reads a text it is asked to explain
// without answering it.
var explain = map[string]string{"sqlite": "EXPLAIN ", "postgres": "EXPLAIN ", "questdb": "EXPLAIN ", "druid": "EXPLAIN PLAN FOR ", "sim": "explain "}

// compiled is an Own ready for one family.
type compiled struct {
	own    *Own
	family string
	dsl    bool
	parts  []string // the text around its parameters
	slots  []int    // the parameter after each part but the last
	fields []int    // the pool field of each parameter
	// text, when not "", is the statement's text whatever the values:
	// numbered placeholders bound to the values, built once rather than
	// for every query drawn.
	text string
}

// ownError is a bad query of one's own: where it is defined, what is
// wrong and the fix.
func ownError(o *Own, format string, args ...any) error {
	return invalid.Wrap(invalid.Query, o.Name, fmt.Errorf("(%s) %s", o.Where, fmt.Sprintf(format, args...)))
}

// text is o's text for family.
func (o *Own) text(family string) (string, bool) {
	if t, ok := o.Texts[family]; ok {
		return t, true
	}
	if family == "opensearch" {
		t, ok := o.Texts["elasticsearch"]
		return t, ok
	}
	return "", false
}

// limitName is the name of the run's limit in a text (see Own).
const limitName = "limit"

// compile readies o for family with the run's limit written in, checking
// that its parameters and its placeholders match.
func (o *Own) compile(family string, limit int) (*compiled, error) {
	text, ok := o.text(family)
	if !ok {
		have := slices.Sorted(func(yield func(string) bool) {
			for f := range o.Texts {
				if !yield(f) {
					return
				}
			}
		})
		return nil, ownError(o, "has no text for %s (it has %s); add a %s: text under it, or leave it out of the mix on this target", family, strings.Join(have, ", "), family)
	}
	c := &compiled{own: o, family: family, dsl: family == "elasticsearch" || family == "opensearch"}
	index := map[string]int{}
	for i, p := range o.Params {
		if p.Name == limitName {
			return nil, ownError(o, "parameter %s takes the name of the run's limit, a constant its texts use as :%s or \"{{%s}}\"; name the parameter otherwise", p.Name, limitName, limitName)
		}
		index[p.Name] = i
	}
	used := make([]bool, len(o.Params))
	lookup := func(name string) (int, error) {
		i, ok := index[name]
		if !ok {
			return 0, ownError(o, "%s text uses the parameter %s, which params does not define; add %s: FIELD under params", family, name, name)
		}
		used[i] = true
		return i, nil
	}
	if c.dsl {
		rest := text
		for {
			i := strings.Index(rest, `"{{`)
			if i < 0 {
				break
			}
			j := strings.Index(rest[i:], `}}"`)
			if j < 0 {
				return nil, ownError(o, "%s body: a parameter is not closed; write it as the whole JSON string \"{{name}}\"", family)
			}
			name := strings.TrimSpace(rest[i+3 : i+j])
			if name == limitName {
				rest = rest[:i] + strconv.Itoa(limit) + rest[i+j+3:]
				continue
			}
			p, err := lookup(name)
			if err != nil {
				return nil, err
			}
			c.parts, c.slots = append(c.parts, rest[:i]), append(c.slots, p)
			rest = rest[i+j+3:]
		}
		c.parts = append(c.parts, rest)
		if strings.Contains(rest, "{{") || slices.ContainsFunc(c.parts, func(s string) bool { return strings.Contains(s, "{{") }) {
			return nil, ownError(o, "%s body: a parameter must be the whole JSON string \"{{name}}\", not part of one", family)
		}
		if probe := strings.Join(c.parts, "null"); !json.Valid([]byte(probe)) {
			var v any
			err := json.Unmarshal([]byte(probe), &v)
			return nil, ownError(o, "%s body is not valid JSON (%v); fix its %s text", family, err, family)
		}
	} else {
		parts, slots, err := placeholders(text, strconv.Itoa(limit), lookup)
		if _, ok := invalid.As(err); err != nil && !ok {
			return nil, ownError(o, "%s text: %v", family, err)
		} else if err != nil {
			return nil, err
		}
		c.parts, c.slots = parts, slots
		if numbered(family) {
			c.text = c.statement(make([]any, len(o.Params))).Text
		}
	}
	for i, u := range used {
		if !u {
			return nil, ownError(o, "parameter %s is not used by its %s text; use it, or remove it from params", o.Params[i].Name, family)
		}
	}
	return c, nil
}

// placeholders splits an SQL text at its :name parameters: the text
// around them and the parameter of each, with :limit written as limit,
// leaving quoted text, identifiers and :: casts alone.
func placeholders(text, limit string, lookup func(string) (int, error)) (parts []string, slots []int, err error) {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case ch == '\'' || ch == '"':
			j := strings.IndexByte(text[i+1:], ch)
			if j < 0 {
				return nil, nil, fmt.Errorf("a quote %c is not closed", ch)
			}
			b.WriteString(text[i : i+j+2])
			i += j + 1
		case ch == ':' && i+1 < len(text) && text[i+1] == ':':
			b.WriteString("::")
			i++
		case ch == ':' && i+1 < len(text) && isIdentStart(text[i+1]):
			j := i + 1
			for j < len(text) && isIdent(text[j]) {
				j++
			}
			name := text[i+1 : j]
			i = j - 1
			if name == limitName {
				b.WriteString(limit)
				continue
			}
			p, err := lookup(name)
			if err != nil {
				return nil, nil, err
			}
			parts, slots = append(parts, b.String()), append(slots, p)
			b.Reset()
		default:
			b.WriteByte(ch)
		}
	}
	return append(parts, b.String()), slots, nil
}

func isIdentStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || '0' <= c && c <= '9' }

// Statement is o as it runs on family, with the run's limit written in
// and args (one per parameter) bound: for tests that hold its rows
// against another query's.
func (o *Own) Statement(family string, limit int, args ...any) (target.Statement, error) {
	c, err := o.compile(family, limit)
	if err != nil {
		return target.Statement{}, err
	}
	if len(args) != len(o.Params) {
		return target.Statement{}, fmt.Errorf("query %s takes %d parameters, not %d", o.Name, len(o.Params), len(args))
	}
	return c.statement(args), nil
}

// numbered reports whether family binds numbered placeholders to the
// values, so that a statement's text does not depend on them.
func numbered(family string) bool {
	switch family {
	case "druid", "pinot", "elasticsearch", "opensearch":
		return false
	}
	return true
}

// statement binds args (one per parameter) into c as its family takes
// them: numbered placeholders ($1, or ?1 for sqlite) bound to args;
// Druid's positional ? bound to the args in the order they appear (a
// null one written as NULL: Druid binds no null parameter); Pinot's
// literals written in (see target.SQLLiteral); a search body's JSON
// values written in.
func (c *compiled) statement(args []any) target.Statement {
	if c.text != "" {
		return target.Statement{Text: c.text, Args: args}
	}
	var s target.Statement
	var b strings.Builder
	for i, part := range c.parts {
		b.WriteString(part)
		if i == len(c.slots) {
			break
		}
		v := args[c.slots[i]]
		switch {
		case c.dsl:
			j, _ := json.Marshal(v)
			b.Write(j)
		case c.family == "pinot":
			b.WriteString(target.SQLLiteral(v))
		case c.family == "druid" && v == nil:
			b.WriteString("NULL")
		case c.family == "druid":
			b.WriteByte('?')
			s.Args = append(s.Args, v)
		case c.family == "sqlite":
			b.WriteString("?" + strconv.Itoa(c.slots[i]+1))
		default:
			b.WriteString("$" + strconv.Itoa(c.slots[i]+1))
		}
	}
	s.Text = b.String()
	if numbered(c.family) {
		s.Args = args
	}
	return s
}

// query is the query of kind with args drawn for c.
func (c *compiled) query(kind target.QueryKind, args []any) target.Query {
	return target.Query{Kind: kind, Statement: c.statement(args)}
}

// CheckOwnTexts refuses, before anything is sent to a database of
// family, a query in cfg's mix that it cannot run: no text
// for family, parameters that do not match, or a search body that is not
// JSON. CheckOwn checks that and asks the database too.
func CheckOwnTexts(family string, cfg Config) error {
	_, err := compileOwn(cfg, family, newPool(0, 1))
	return err
}

// CheckOwn refuses, before a run, a query in cfg's mix (one's own or a
// shipped kind) that q cannot run: no text for q's family, parameters
// that do not match, a search body that is not JSON, or SQL the database
// cannot plan (EXPLAIN, with null parameters; not on Pinot, see explain),
// or a text the simulator cannot run. Its error
// names where the query is defined and the fix. A search body is checked
// as JSON only: a search with null parameters is not one the user wrote.
func CheckOwn(ctx context.Context, q target.Querier, cfg Config) error {
	own, err := compileOwn(cfg, q.Name(), newPool(0, 1))
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(own)) {
		c := own[k]
		ex, ok := explain[c.family]
		if c.dsl || !ok {
			continue
		}
		s := c.statement(make([]any, len(c.own.Params)))
		s.Text = ex + s.Text
		if _, err := q.Query(ctx, target.Query{Kind: k, Statement: s}); err != nil {
			if ctx.Err() != nil {
				return err
			}
			return ownError(c.own, "%s cannot run it: %v; fix its %s text", c.family, err, c.family)
		}
	}
	return nil
}

// value is a parameter's value from a decoded event: the field at path,
// one element of each array along it (drawn by pick), nil when the
// event has none or it is an object. A whole number becomes an int64,
// as SQL compares it.
func value(v any, path []string, pick func(int) int) any {
	for i := 0; ; {
		if a, ok := v.([]any); ok {
			if len(a) == 0 {
				return nil
			}
			v = a[pick(len(a))]
			continue
		}
		if i == len(path) {
			break
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[path[i]]
		i++
	}
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case string, bool:
		return x
	}
	return nil
}
