package questdb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The values of the columns setting.
const (
	// columnsDoc keeps each event whole, as JSON, in the column doc.
	columnsDoc = "doc"
	// columnsFlat flattens each event into columns by the flat rule.
	columnsFlat = "flat"
)

// flatRule states the flat rule in the words of the layout and the docs.
const flatRule = "a nested field's column is its path joined with _ (user.geo.city: user_geo_city; a character QuestDB refuses in a column name, such as . - : / ( ), becomes _); " +
	"a string is a VARCHAR, a number a DOUBLE, true/false a BOOLEAN, an array the VARCHAR of its JSON, null no value; " +
	"a column is created, by ILP, with the first event that has the field"

// ErrorKind of an event whose flattened columns clash: two of its fields,
// or one of its fields and one of freshbench's columns, make the same
// column name (QuestDB's names ignore case). It is never sent.
const errorColumnClash = "column_clash"

// ErrorKinds of an event that is not a JSON object (it has no fields to
// flatten), or that holds a number no DOUBLE takes (1e400). Neither is
// sent.
const (
	errorNotObject = "not_json_object"
	errorBadValue  = "bad_value"
)

// ownColumns are the columns freshbench writes itself, in lower case:
// a user's field may not flatten onto one of them.
var ownColumns = []string{"_id", "generator_identifier", "_seq", "_event_time", "_revision", "_update_time"}

// stampedFields are the top-level fields freshbench stamps into an
// event: their values are written to its own columns, not flattened.
var stampedFields = map[string]bool{"_id": true, "generator_identifier": true, "_seq": true, "_event_time": true, "_revision": true, "_update_time": true}

// flatKind is a flattened column's type.
type flatKind byte

const (
	flatVarchar flatKind = iota
	flatDouble
	flatBoolean
)

// flatColumn is one column of a flattened event and its value.
type flatColumn struct {
	name string
	kind flatKind
	str  string
	num  float64
	bool bool
}

// flatError is an event the flat rule cannot write, of an ErrorKind.
type flatError struct {
	kind string
	msg  string
}

func (e *flatError) Error() string { return e.msg }

// flatten returns the columns of the JSON object doc by the flat rule,
// appended to cols, with its fields in sorted order at each level. The
// stamped fields at the top level are left out.
func flatten(doc []byte, cols []flatColumn) ([]flatColumn, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil || top == nil {
		return cols, &flatError{errorNotObject, "the event is not a JSON object"}
	}
	for k := range stampedFields {
		delete(top, k)
	}
	cols, err := flattenObject("", top, cols)
	if err != nil {
		return cols, err
	}
	// Names ignore case in QuestDB; few columns, so a sort beats a map.
	names := make([]string, 0, len(cols)+len(ownColumns))
	names = append(names, ownColumns...)
	for _, c := range cols {
		names = append(names, strings.ToLower(c.name))
	}
	slices.Sort(names)
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			return cols, &flatError{errorColumnClash, fmt.Sprintf("two fields of the event flatten to the column %s", names[i])}
		}
	}
	return cols, nil
}

func flattenObject(prefix string, obj map[string]json.RawMessage, cols []flatColumn) ([]flatColumn, error) {
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		name := prefix + columnName(k)
		v := bytes.TrimSpace(obj[k])
		if len(v) == 0 {
			continue
		}
		var err error
		switch v[0] {
		case '{':
			var sub map[string]json.RawMessage
			if err = json.Unmarshal(v, &sub); err == nil {
				cols, err = flattenObject(name+"_", sub, cols)
			}
		case '[':
			var b bytes.Buffer
			if err = json.Compact(&b, v); err == nil {
				cols = append(cols, flatColumn{name: name, kind: flatVarchar, str: b.String()})
			}
		case '"':
			s := string(v[1 : len(v)-1])
			if bytes.IndexByte(v, '\\') >= 0 {
				// Escaped: decoded by the JSON package, as it is rare.
				err = json.Unmarshal(v, &s)
			}
			if err == nil {
				cols = append(cols, flatColumn{name: name, kind: flatVarchar, str: s})
			}
		case 't', 'f':
			cols = append(cols, flatColumn{name: name, kind: flatBoolean, bool: v[0] == 't'})
		case 'n':
			// null: no value in this row.
		default:
			var f float64
			if f, err = strconv.ParseFloat(string(v), 64); err == nil {
				cols = append(cols, flatColumn{name: name, kind: flatDouble, num: f})
			}
		}
		if err != nil {
			return cols, &flatError{errorBadValue, fmt.Sprintf("field %s: %v", name, err)}
		}
	}
	return cols, nil
}

// columnName is a field's name with every character QuestDB refuses in a
// column name replaced by _.
func columnName(field string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`?.,'"\/:)(+-*%~`, r) {
			return '_'
		}
		return r
	}, field)
}

// flatColumns counts the distinct columns the events written so far
// flattened to, for the layout.
type flatColumns struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (c *flatColumns) add(cols []flatColumn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = make(map[string]bool)
	}
	for _, col := range cols {
		c.seen[strings.ToLower(col.name)] = true
	}
}

func (c *flatColumns) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}
