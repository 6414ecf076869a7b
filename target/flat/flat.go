// Package flat is the flat rule: how a JSON event's fields become the
// columns of a table, for the stores that take columns rather than
// documents (QuestDB with columns=flat, Pinot from a corpus or a
// template). It is stated once, in Rule, and applied by Flatten to one
// event and by Derive to a sample of them.
package flat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Rule states the flat rule in the words of a layout and the docs; text
// is the database's name of its string type (VARCHAR, STRING).
func Rule(text string) string {
	return "a nested field's column is its path joined with _ (user.geo.city: user_geo_city; a character a column name may not hold, such as . - : / ( ), becomes _); " +
		"a string is a " + text + ", a number a DOUBLE, true/false a BOOLEAN, an array the " + text + " of its JSON, null no value"
}

// Error kinds of an event the rule cannot flatten.
const (
	// ErrorColumnClash: two of its fields, or one of its fields and one
	// of freshbench's columns, make the same column name (compared
	// ignoring case, as QuestDB's names are).
	ErrorColumnClash = "column_clash"
	// ErrorNotObject: the event is not a JSON object; it has no fields.
	ErrorNotObject = "not_json_object"
	// ErrorBadValue: a value no column type takes (1e400).
	ErrorBadValue = "bad_value"
)

// OwnColumns are the columns freshbench writes itself, in lower case: a
// user's field may not flatten onto one of them.
var OwnColumns = []string{"_id", "generator_identifier", "_seq", "_event_time", "_revision", "_update_time"}

// stamped are the top-level fields freshbench stamps into an event: their
// values go to its own columns, not flattened.
var stamped = map[string]bool{"_id": true, "generator_identifier": true, "_seq": true, "_event_time": true, "_revision": true, "_update_time": true}

// Kind is a flattened column's type.
type Kind byte

// The kinds of the rule.
const (
	Text Kind = iota
	Double
	Boolean
)

// Column is one column of a flattened event and its value.
type Column struct {
	Name string
	Kind Kind
	// Path is the field's keys from the top, when asked for (Derive).
	Path []string
	Str  string
	Num  float64
	Bool bool
}

// Error is an event the rule cannot flatten, of an error kind.
type Error struct {
	Kind string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Flatten returns the columns of the JSON object doc by the rule,
// appended to cols, with its fields in sorted order at each level. The
// stamped fields at the top level are left out.
func Flatten(doc []byte, cols []Column) ([]Column, error) {
	return flatten(doc, cols, false)
}

// flatten is Flatten, with each column's Path when paths says so.
func flatten(doc []byte, cols []Column, paths bool) ([]Column, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil || top == nil {
		return cols, &Error{ErrorNotObject, "the event is not a JSON object"}
	}
	for k := range stamped {
		delete(top, k)
	}
	start := len(cols)
	var path []string
	if paths {
		path = []string{}
	}
	cols, err := flattenObject("", path, top, cols)
	if err != nil {
		return cols, err
	}
	// Few columns, so a sort beats a map.
	names := make([]string, 0, len(cols)-start+len(OwnColumns))
	names = append(names, OwnColumns...)
	for _, c := range cols[start:] {
		names = append(names, strings.ToLower(c.Name))
	}
	slices.Sort(names)
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			return cols, &Error{ErrorColumnClash, fmt.Sprintf("two fields of the event flatten to the column %s", names[i])}
		}
	}
	return cols, nil
}

// flattenObject appends the columns of obj, whose columns' names start
// with prefix; path, when not nil, is obj's own.
func flattenObject(prefix string, path []string, obj map[string]json.RawMessage, cols []Column) ([]Column, error) {
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		name := prefix + ColumnName(k)
		var p []string
		if path != nil {
			p = append(slices.Clip(path), k)
		}
		v := bytes.TrimSpace(obj[k])
		if len(v) == 0 {
			continue
		}
		var err error
		switch v[0] {
		case '{':
			var sub map[string]json.RawMessage
			if err = json.Unmarshal(v, &sub); err == nil {
				cols, err = flattenObject(name+"_", p, sub, cols)
			}
		case '[':
			var b bytes.Buffer
			if err = json.Compact(&b, v); err == nil {
				cols = append(cols, Column{Name: name, Path: p, Kind: Text, Str: b.String()})
			}
		case '"':
			s := string(v[1 : len(v)-1])
			if bytes.IndexByte(v, '\\') >= 0 {
				// Escaped: decoded by the JSON package, as it is rare.
				err = json.Unmarshal(v, &s)
			}
			if err == nil {
				cols = append(cols, Column{Name: name, Path: p, Kind: Text, Str: s})
			}
		case 't', 'f':
			cols = append(cols, Column{Name: name, Path: p, Kind: Boolean, Bool: v[0] == 't'})
		case 'n':
			// null: no value in this row.
		default:
			var f float64
			if f, err = strconv.ParseFloat(string(v), 64); err == nil {
				cols = append(cols, Column{Name: name, Path: p, Kind: Double, Num: f})
			}
		}
		if err != nil {
			return cols, &Error{ErrorBadValue, fmt.Sprintf("field %s: %v", name, err)}
		}
	}
	return cols, nil
}

// ColumnName is a field's name with every character a column name may not
// hold (QuestDB's list, which Pinot's SQL also needs quoted) replaced by _.
func ColumnName(field string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`?.,'"\/:)(+-*%~`, r) {
			return '_'
		}
		return r
	}, field)
}
