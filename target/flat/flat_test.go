package flat

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/docgen"
)

// The flat rule: a nested field's path joined with _, characters a column
// name may not hold replaced, an array kept as its JSON, null left out,
// freshbench's stamped fields left to its own columns.
func TestFlatten(t *testing.T) {
	doc := `{"_id":"x","_event_time":1,"generator_identifier":"g","_seq":3,
		"user":{"name":"ann","geo":{"city":"Oslo","lat":59.9}},
		"tags":["a", {"b": [1, 2]}],
		"ok":true,"gone":null,"user-agent":"ua","n":12,"empty":{}}`
	cols, err := Flatten([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cols {
		switch c.Kind {
		case Text:
			got = append(got, fmt.Sprintf("%s VARCHAR %s", c.Name, c.Str))
		case Double:
			got = append(got, fmt.Sprintf("%s DOUBLE %g", c.Name, c.Num))
		case Boolean:
			got = append(got, fmt.Sprintf("%s BOOLEAN %v", c.Name, c.Bool))
		}
	}
	want := []string{
		"n DOUBLE 12",
		"ok BOOLEAN true",
		`tags VARCHAR ["a",{"b":[1,2]}]`,
		"user_geo_city VARCHAR Oslo",
		"user_geo_lat DOUBLE 59.9",
		"user_name VARCHAR ann",
		"user_agent VARCHAR ua",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("flattened:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An event the rule cannot write is refused, never sent, with a kind
// that says why: fields that flatten onto one column (QuestDB's names
// ignore case) or onto one of freshbench's, or not an object.
func TestFlattenRefused(t *testing.T) {
	for doc, kind := range map[string]string{
		`{"a_b":1,"a":{"b":2}}`:                 ErrorColumnClash,
		`{"A":1,"a":2}`:                         ErrorColumnClash,
		`{"_event":{"time":5}}`:                 ErrorColumnClash,
		`{"user.name":"x","user":{"name":"y"}}`: ErrorColumnClash,
		`[1,2]`:                                 ErrorNotObject,
		`"text"`:                                ErrorNotObject,
		`{"big":1e400}`:                         ErrorBadValue,
	} {
		_, err := Flatten([]byte(doc), nil)
		var fe *Error
		if !errors.As(err, &fe) || fe.Kind != kind {
			t.Errorf("flatten %s: %v, want kind %s", doc, err, kind)
		}
	}
}

// BenchmarkFlatten: the cost columns=flat adds to each event, for the
// shipped RockBench template's events (nested address, arrays).
func BenchmarkFlatten(b *testing.B) {
	tm, err := docgen.ShippedTemplate("rockbench")
	if err != nil {
		b.Fatal(err)
	}
	g, err := docgen.New(docgen.Config{Template: tm, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	const n = 256
	docs := make([][]byte, n)
	var size int
	for i := range docs {
		d, _ := g.Next(nil, int64(i))
		docs[i] = d.JSON
		size += len(d.JSON)
	}
	b.SetBytes(int64(size / n))
	var cols []Column
	for i := 0; b.Loop(); i++ {
		if cols, err = Flatten(docs[i%n], cols[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
