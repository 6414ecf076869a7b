package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Files before version 4 wrote each database's account in fields of its
// own (copies, standbys, wal_tables, kafka at each end; refreshes and
// wal_apply over the window). Read, each such field becomes a table of
// the same name, each of its objects a row, each value a column named by
// its key (nested objects' keys joined with "."; a list of objects inside
// an object a table of its own, named parent.field). The values are as
// written; their roles and units were not, and the window's figures are
// those the file recorded.

func (a *ServerAccount) UnmarshalJSON(b []byte) error {
	type plain ServerAccount // without this method
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	legacy, err := legacyTables(b, jsonFields(p))
	if err != nil {
		return fmt.Errorf("server account: %w", err)
	}
	p.Tables = append(p.Tables, legacy...)
	*a = ServerAccount(p)
	return nil
}

func (a *Account) UnmarshalJSON(b []byte) error {
	type plain Account
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	legacy, err := legacyTables(b, jsonFields(p))
	if err != nil {
		return fmt.Errorf("server account: %w", err)
	}
	p.Window = append(p.Window, legacy...)
	*a = Account(p)
	return nil
}

// jsonFields names the JSON fields of v, a struct: those the current
// schema knows, never read as legacy tables.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v)
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

// legacyTables makes a table of each field of the JSON object b but the
// known ones.
func legacyTables(b []byte, known []string) ([]AccountTable, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	var out []AccountTable
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if slices.Contains(known, name) {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(fields[name]))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = appendLegacy(out, name, v)
	}
	return out, nil
}

// appendLegacy appends the table name of v, an object or a list of
// objects, and the tables nested in it; anything else is no table.
func appendLegacy(out []AccountTable, name string, v any) []AccountTable {
	var objs []map[string]any
	switch x := v.(type) {
	case map[string]any:
		objs = []map[string]any{x}
	case []any:
		for _, e := range x {
			if o, ok := e.(map[string]any); ok {
				objs = append(objs, o)
			}
		}
	}
	if len(objs) == 0 {
		return out
	}
	t := AccountTable{Name: name}
	var nested []AccountTable
	rows := make([]map[string]Value, len(objs))
	for i, o := range objs {
		rows[i] = map[string]Value{}
		flattenLegacy(&t, rows[i], "", o, func(field string, v any) {
			nested = appendLegacy(nested, name+"."+field, v)
		})
	}
	for _, r := range rows {
		row := make([]Value, len(t.Columns))
		for j, c := range t.Columns {
			row[j] = r[c.Name]
		}
		t.Rows = append(t.Rows, row)
	}
	return append(append(out, t), nested...)
}

// flattenLegacy puts the scalar values of o in row, adding their columns
// to t in the order first met, and hands each list to list.
func flattenLegacy(t *AccountTable, row map[string]Value, prefix string, o map[string]any, list func(string, any)) {
	for _, k := range slices.Sorted(maps.Keys(o)) {
		name := prefix + k
		switch x := o[k].(type) {
		case map[string]any:
			flattenLegacy(t, row, name+".", x, list)
			continue
		case []any:
			list(name, x)
			continue
		}
		if t.Column(name) < 0 {
			t.Columns = append(t.Columns, AccountColumn{Name: name})
		}
		row[name] = legacyValue(o[k])
	}
}

func legacyValue(x any) Value {
	if n, ok := x.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return Int(i)
		}
		f, _ := n.Float64()
		return Float(f)
	}
	return Value{x}
}
