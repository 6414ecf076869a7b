package flat

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The columns of a sample: every event's fields by the rule, a field of
// more than one kind across the events a Text column, said to be mixed,
// each column with the path of its field.
func TestDerive(t *testing.T) {
	got, err := Derive([][]byte{
		[]byte(`{"_id":"x","_seq":1,"user":{"name":"ann","geo":{"lat":1.5}},"n":3,"v":1,"ok":true}`),
		[]byte(`{"user":{"name":"bob"},"v":"one","tags":["a"],"ok":false,"gone":null}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, d := range got {
		lines = append(lines, fmt.Sprintf("%s %d %v %q", d.Name, d.Kind, d.Mixed, d.Path))
	}
	want := []string{
		`n 1 false ["n"]`,
		`ok 2 false ["ok"]`,
		`tags 0 false ["tags"]`,
		`user_geo_lat 1 false ["user" "geo" "lat"]`,
		`user_name 0 false ["user" "name"]`,
		`v 0 true ["v"]`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("derived:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// A sample the rule cannot make columns of is refused, naming the event
// and the column: a field that flattens onto one of freshbench's columns,
// two fields of one event onto one column, two fields of different events
// onto one column, an event that is not an object.
func TestDeriveRefused(t *testing.T) {
	for _, c := range []struct {
		sample []string
		want   string
	}{
		{[]string{`{"a":1}`, `{"_event":{"time":5}}`}, "event 2 of the sample: two fields of the event flatten to the column _event_time"},
		{[]string{`{"a_b":1,"a":{"b":2}}`}, "event 1 of the sample: two fields of the event flatten to the column a_b"},
		{[]string{`{"a_b":1}`, `{"x":1}`, `{"a":{"b":2}}`}, "events 1 and 3 of the sample: the fields a_b and a.b flatten to one column a_b"},
		{[]string{`{"a":1}`, `[1]`}, "event 2 of the sample: the event is not a JSON object"},
	} {
		sample := make([][]byte, len(c.sample))
		for i, s := range c.sample {
			sample[i] = []byte(s)
		}
		_, err := Derive(sample)
		var fe *Error
		if err == nil || err.Error() != c.want || !errors.As(err, &fe) {
			t.Errorf("derive %s: %v; want %q, of the rule's kinds", c.sample, err, c.want)
		}
	}
}
