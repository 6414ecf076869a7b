package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Value is one value of an account: null, text, true or false, a whole
// number or a real number. In the file it is the JSON value itself; a
// number without a fraction or exponent reads back as a whole number.
type Value struct{ x any }

// Values of each type; Null is the zero Value.
func Text(s string) Value   { return Value{s} }
func Bool(b bool) Value     { return Value{b} }
func Int(n int64) Value     { return Value{n} }
func Float(f float64) Value { return Value{f} }

// IsNull tells whether the server gave no value.
func (v Value) IsNull() bool { return v.x == nil }

// Int returns a whole number, false for any other value.
func (v Value) Int() (int64, bool) {
	n, ok := v.x.(int64)
	return n, ok
}

// Float returns a number, whole or not, false for any other value.
func (v Value) Float() (float64, bool) {
	switch x := v.x.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// Text returns a text value, "" for any other value.
func (v Value) Text() string {
	s, _ := v.x.(string)
	return s
}

// Bool returns a flag, false for any other value.
func (v Value) Bool() bool {
	b, _ := v.x.(bool)
	return b
}

// String shows the value: "-" for null, a real number to three decimals
// at most.
func (v Value) String() string {
	switch x := v.x.(type) {
	case nil:
		return "-"
	case float64:
		return strconv.FormatFloat(math.Round(x*1000)/1000, 'f', -1, 64)
	}
	return fmt.Sprint(v.x)
}

// Sub is the increase of a counter from b to v: null when either is
// null (the server gave none), false when either is not a number or v is
// less than b (the counter went back).
func (v Value) Sub(b Value) (Value, bool) {
	if v.IsNull() || b.IsNull() {
		return Value{}, true
	}
	if n, ok := v.Int(); ok {
		if m, ok := b.Int(); ok {
			return Int(n - m), n >= m
		}
	}
	f, ok1 := v.Float()
	g, ok2 := b.Float()
	return Float(f - g), ok1 && ok2 && f >= g
}

// MarshalJSON writes a real number with a fraction or an exponent, so
// that it reads back as one.
func (v Value) MarshalJSON() ([]byte, error) {
	f, ok := v.x.(float64)
	if !ok || math.IsInf(f, 0) || math.IsNaN(f) {
		return json.Marshal(v.x)
	}
	b := strconv.AppendFloat(nil, f, 'g', -1, 64)
	if !bytes.ContainsAny(b, ".e") {
		b = append(b, ".0"...)
	}
	return b, nil
}

func (v *Value) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return err
	}
	switch t := x.(type) {
	case nil, string, bool:
		v.x = t
	case json.Number:
		if n, err := t.Int64(); err == nil {
			v.x = n
			return nil
		}
		f, err := t.Float64()
		if err != nil {
			return fmt.Errorf("account value %s: %w", t, err)
		}
		v.x = f
	default:
		return fmt.Errorf("account value %s: want null, text, true, false or a number", b)
	}
	return nil
}

// A database declares its account's rows as a struct whose fields carry
// an account tag: the column's name, then optionally its role (key,
// counter, level) and unit=…, e.g. `account:"refresh_time,counter,unit=ms"`.
// Fields may be strings, bools, integers, floats, pointers to them (nil
// is null), or pointers to structs whose tagged fields are columns too
// (nil: all null). Untagged fields are not part of the account.

// TableOf makes the account table name of rows, a slice of such structs.
func TableOf(name, note string, rows any) AccountTable {
	rv := reflect.ValueOf(rows)
	t := AccountTable{Name: name, Note: note, Columns: columnsOf(rv.Type().Elem(), nil)}
	for i := range rv.Len() {
		var row []Value
		valuesOf(rv.Index(i), &row)
		t.Rows = append(t.Rows, row)
	}
	return t
}

// ReadTable fills out, a pointer to a slice of such structs, with the rows
// of t, by column name; a field t has no column for is left zero. A nil t
// reads as no rows.
func ReadTable(t *AccountTable, out any) error {
	slice := reflect.ValueOf(out).Elem()
	slice.SetLen(0)
	if t == nil {
		return nil
	}
	for _, row := range t.Rows {
		e := reflect.New(slice.Type().Elem()).Elem()
		if _, err := setValues(e, t, row); err != nil {
			return fmt.Errorf("account table %s: %w", t.Name, err)
		}
		slice.Set(reflect.Append(slice, e))
	}
	return nil
}

// tag parses a field's account tag; ok is false for a field outside the
// account.
func tag(f reflect.StructField) (c AccountColumn, ok bool) {
	s, ok := f.Tag.Lookup("account")
	if !ok || s == "-" {
		return c, false
	}
	parts := strings.Split(s, ",")
	c.Name = parts[0]
	for _, p := range parts[1:] {
		if u, ok := strings.CutPrefix(p, "unit="); ok {
			c.Unit = u
		} else {
			c.Role = Role(p)
		}
	}
	return c, true
}

// nested tells whether a field of type t is a struct whose fields are
// columns.
func nested(t reflect.Type) bool {
	return t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct
}

func columnsOf(t reflect.Type, cols []AccountColumn) []AccountColumn {
	for i := range t.NumField() {
		f := t.Field(i)
		if nested(f.Type) {
			cols = columnsOf(f.Type.Elem(), cols)
			continue
		}
		if c, ok := tag(f); ok {
			cols = append(cols, c)
		}
	}
	return cols
}

func valuesOf(v reflect.Value, row *[]Value) {
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		if nested(f.Type) {
			if fv.IsNil() {
				n := len(columnsOf(f.Type.Elem(), nil))
				*row = append(*row, make([]Value, n)...)
				continue
			}
			valuesOf(fv.Elem(), row)
			continue
		}
		if _, ok := tag(f); ok {
			*row = append(*row, valueOf(fv))
		}
	}
}

func valueOf(v reflect.Value) Value {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return Value{}
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		return Text(v.String())
	case reflect.Bool:
		return Bool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Int(v.Int())
	case reflect.Float32, reflect.Float64:
		return Float(v.Float())
	}
	panic(fmt.Sprintf("results: account field of type %s: want a string, bool, integer or float", v.Type()))
}

// setValues sets the fields of v from row, telling whether any column
// of v was not null.
func setValues(v reflect.Value, t *AccountTable, row []Value) (bool, error) {
	set := false
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		if nested(f.Type) {
			inner := reflect.New(f.Type.Elem())
			set, err := setValues(inner.Elem(), t, row)
			if err != nil {
				return false, err
			}
			if set {
				fv.Set(inner)
				set = true
			}
			continue
		}
		c, ok := tag(f)
		j := t.Column(c.Name)
		if !ok || j < 0 || j >= len(row) {
			continue
		}
		if err := setValue(fv, row[j]); err != nil {
			return false, fmt.Errorf("column %s: %w", c.Name, err)
		}
		set = set || !row[j].IsNull()
	}
	return set, nil
}

func setValue(f reflect.Value, v Value) error {
	if f.Kind() == reflect.Pointer {
		if v.IsNull() {
			return nil
		}
		f.Set(reflect.New(f.Type().Elem()))
		f = f.Elem()
	}
	var ok bool
	switch f.Kind() {
	case reflect.String:
		_, ok = v.x.(string)
		f.SetString(v.Text())
	case reflect.Bool:
		_, ok = v.x.(bool)
		f.SetBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var n int64
		n, ok = v.Int()
		f.SetInt(n)
	case reflect.Float32, reflect.Float64:
		var x float64
		x, ok = v.Float()
		f.SetFloat(x)
	}
	if !ok && !v.IsNull() {
		return fmt.Errorf("%s does not read as %s", v, f.Type())
	}
	return nil
}
