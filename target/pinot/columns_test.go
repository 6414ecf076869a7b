package pinot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/flat"
	"github.com/freshbench/freshbench/target/targettest"
)

// Events of a user's own shape, told to the target before its setup, make
// the schema: each nested field is a column by the flat rule, and what
// Pinot stores in it reads back as the value the event had (the flat
// rule's reading of the event sent, not a figure of the test's); a field
// of mixed types is a STRING of each value's text; a field whose name the
// rule changes (user-agent: user_agent) is stored in the rule's column;
// a top-level field whose name holds a '.' is left out, as the layout says.
func TestUserColumns(t *testing.T) {
	s, kc := server(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	now := time.Now().UnixMicro()
	events := []string{
		fmt.Sprintf(`{"_id":"a1","_event_time":%d,"generator_identifier":"g","_seq":0,"user":{"name":"ann","geo":{"city":"Oslo","lat":59.9}},"tags":["x","y"],"ok":true,"n":3,"mixed":7,"a.b":1}`, now),
		fmt.Sprintf(`{"_id":"a2","_event_time":%d,"generator_identifier":"g","_seq":1,"user":{"name":"bob \"b\"","geo":{"city":"Rome","lat":41.9}},"tags":[],"ok":false,"n":4.5,"mixed":"seven","user-agent":"ua","q\"t":"x"}`, now+1),
	}
	sample := make([][]byte, len(events))
	for i, e := range events {
		sample[i] = []byte(e)
	}
	if err := s.ShapeEvents(sample); err != nil {
		t.Fatal(err)
	}
	targettest.SetupTwice(t, ctx, s, "g")
	for _, e := range events {
		produce(t, ctx, kc, e)
	}
	waitFor(t, "both events", func() (bool, error) {
		n, err := s.Count(ctx, "g")
		return n == int64(len(events)), err
	})

	cols := []string{"user_name", "user_geo_city", "user_geo_lat", "tags", "ok", "n", "mixed", "user_agent", "q_t"}
	header, rows, err := s.sql(ctx, "columns of", `SELECT `+strings.Join(cols, ", ")+` FROM `+s.tbl+` WHERE generator_identifier = 'g' ORDER BY _seq LIMIT 10`)
	if err != nil {
		t.Fatalf("the user's columns: %v", err)
	}
	if len(rows) != len(events) {
		t.Fatalf("%d rows, want %d", len(rows), len(events))
	}
	for i, e := range events {
		flattened, err := flat.Flatten([]byte(e), nil)
		if err != nil {
			t.Fatal(err)
		}
		for j, name := range header {
			k := slices.IndexFunc(flattened, func(c flat.Column) bool { return c.Name == name })
			if k < 0 {
				continue // not in this event: Pinot's default value
			}
			c := flattened[k]
			var want any
			switch {
			case name == "mixed" && c.Kind == flat.Double:
				want = strconv.FormatFloat(c.Num, 'g', -1, 64) // a STRING: the number's text
			case c.Kind == flat.Text && c.Str == "[]":
				want = "null" // Pinot reads an empty array as no value: a STRING's default
			case c.Kind == flat.Text:
				want = c.Str
			case c.Kind == flat.Double:
				want = c.Num
			case c.Kind == flat.Boolean:
				want = c.Bool
			}
			var got any
			if err := json.Unmarshal(rows[i][j], &got); err != nil || got != want {
				t.Errorf("event %d, column %s reads %s (%v); want %#v", i, name, rows[i][j], err, want)
			}
		}
	}

	header, _, err = s.sql(ctx, "columns of", `SELECT * FROM `+s.tbl+` LIMIT 1`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("columns: %v", header)
	layout := s.Layout()
	t.Logf("layout: %s", layout)
	if !strings.Contains(layout, fmt.Sprintf("%d columns", len(header))) || !strings.Contains(layout, "joined with _") ||
		!strings.Contains(layout, "a STRING of each value's text: mixed") || !strings.Contains(layout, "holds a '.', which Pinot's flattening cannot read (rename the field): a_b") {
		t.Errorf("Pinot answers with %d columns; the layout %q does not say so, or not the rule, the mixed field, the field left out", len(header), layout)
	}
	for _, c := range header {
		if !strings.Contains(layout, c) {
			t.Errorf("column %s is not in the layout %q", c, layout)
		}
	}
	if slices.Contains(header, "a_b") {
		t.Errorf("a top-level field with a '.' in its name is a column: %v", header)
	}

	// Another run on the table, told other events, keeps it as it is, and
	// its layout names the table's columns, not those of its events.
	again, _ := server(t, nil)
	again.cfg = s.cfg
	again.ConsumeTopic(s.Source())
	if err := again.ShapeEvents([][]byte{[]byte(`{"other":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := again.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	kept := again.Layout()
	if !strings.Contains(kept, fmt.Sprintf("kept as it was (recreate it to make it from these events), its schema's %d columns", len(header))) ||
		!strings.Contains(kept, "user_geo_city") || strings.Contains(kept, "other") {
		t.Errorf("layout of the table kept: %q; want its %d columns", kept, len(header))
	}
}

// The table of freshbench's generated events is as it was without a
// sample: no ingestion transform, the generated shape's indexes. With a
// sample, Pinot flattens each event and a transform fills each column
// whose flattened key is not its name, from that key, quoted.
func TestShapedTableConfig(t *testing.T) {
	u, _ := url.Parse("pinot://127.0.0.1:1/x?controller=127.0.0.1:2")
	tgt, err := Open(context.Background(), u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := tgt.(*store)
	generated := s.tableConfig("b", "x")
	if _, ok := generated["ingestionConfig"]; ok || !slices.Contains(generated["tableIndexConfig"].(map[string]any)["invertedIndexColumns"].([]string), "processBy") {
		t.Errorf("generated shape's table %v: want no ingestion config, the shape's indexes", generated)
	}
	if err := s.ShapeEvents([][]byte{[]byte(`{"n":1,"user":{"geo":{"city":"Oslo"}},"user-agent":"ua","q\"t":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s.tableConfig("b", "x")["ingestionConfig"])
	want := `{"complexTypeConfig":{"collectionNotUnnestedToJson":"ALL","delimiter":"."},"transformConfigs":[` +
		`{"columnName":"q_t","transformFunction":"\"q\"\"t\""},` +
		`{"columnName":"user_agent","transformFunction":"\"user-agent\""},` +
		`{"columnName":"user_geo_city","transformFunction":"\"user.geo.city\""}]}`
	if string(got) != want {
		t.Errorf("ingestion config\n%s\nwant\n%s", got, want)
	}
	if err := s.ShapeEvents(nil); err != nil || s.user != nil || !strings.Contains(s.Layout(), "generated event shape") {
		t.Errorf("no sample: %v, %s; want the generated shape again", err, s.Layout())
	}
}

// A value after the sample of another type than its column's (a string in
// a DOUBLE column) makes Pinot 0.11 drop the whole event, as the layout
// says: the next event, of the column's type, is stored, and the dropped
// one never shows.
func TestRetypedAfterTheSample(t *testing.T) {
	s, kc := server(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := s.ShapeEvents([][]byte{[]byte(`{"n":1,"u":{"z":2}}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if l := s.Layout(); !strings.Contains(l, "does not fit its column (a string in a DOUBLE column) is dropped by Pinot whole") {
		t.Errorf("layout %q does not say what becomes of a value of another type", l)
	}
	now := time.Now().UnixMicro()
	produce(t, ctx, kc, fmt.Sprintf(`{"_id":"a1","_event_time":%d,"generator_identifier":"g","_seq":0,"n":"text","u":{"z":3}}`, now))
	produce(t, ctx, kc, fmt.Sprintf(`{"_id":"a2","_event_time":%d,"generator_identifier":"g","_seq":1,"n":5,"u":{"z":4}}`, now+1))
	// Pinot consumes a partition in order: once the second event shows,
	// the first was consumed too.
	targettest.WaitFresh(t, ctx, s, "g", now+1)
	_, rows, err := s.sql(ctx, "rows of", `SELECT _id, n, u_z FROM `+s.tbl+` WHERE generator_identifier = 'g'`)
	if err != nil || len(rows) != 1 || string(rows[0][0]) != `"a2"` || string(rows[0][2]) != "4.0" {
		t.Errorf("rows %s, %v; want a2 alone, its u_z 4", rows, err)
	}
}
