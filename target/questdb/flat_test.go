package questdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/flat"
)

// Into a real QuestDB with columns=flat, events from a nested template
// are stored as columns by the rule: a flattened value reads back with
// SQL as the event had it, the column types are the rule's, the layout
// counts the columns the events made, and an event the rule refuses is
// failed alone, of its kind, never stored.
func TestFlatColumnsServer(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, map[string]string{"columns": columnsFlat})
	tm, err := docgen.ParseTemplate([]byte(`{
		"user": {"name": "{{name}}", "geo": {"city": "{{choice Oslo Rome}}", "zip": "{{int 1000 9999}}"}},
		"tags": {"$array": "1..3", "of": "{{word}}"},
		"ok": "{{bool 0.5}}",
		"maybe": "{{int 1 1 | null 0.5}}"}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := docgen.New(docgen.Config{Template: tm, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	gen := g.ID()
	const n = 20
	b := target.Batch{Generator: gen}
	var buf []byte
	base := time.Now().UnixMicro()
	for i := range n {
		var d target.Document
		d, buf = g.Next(buf, base+int64(i))
		b.Docs = append(b.Docs, d)
	}
	// One event whose fields clash: failed alone, of its kind.
	clash := b.Docs[7]
	clash.JSON = fmt.Appendf(nil, `{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":%d,"user_name":"x","user":{"name":"y"}}`,
		clash.ID, clash.EventTime, gen, clash.Seq)
	b.Docs[7] = clash
	res, err := s.Write(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Acknowledged != n-1 || res.Failed != 1 || len(res.FailedSeqs) != 1 || res.FailedSeqs[0] != 7 || res.ErrorKinds[flat.ErrorColumnClash] != 1 {
		t.Fatalf("write: %+v; want %d acknowledged and _seq 7 failed as %s", res, n-1, flat.ErrorColumnClash)
	}
	waitCount(t, s, gen, n-1, 30*time.Second)

	// The value each event had, read back from its column.
	for _, i := range []int{0, n - 1} {
		d := b.Docs[i]
		cols, err := flat.Flatten(d.JSON, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]flat.Column{}
		for _, c := range cols {
			want[c.Name] = c
		}
		var city, tags string
		var zip float64
		var ok bool
		err = s.pool.QueryRow(ctx, `SELECT user_geo_city, user_geo_zip, tags, ok FROM `+s.tbl+` WHERE _id = $1`, d.ID).Scan(&city, &zip, &tags, &ok)
		if err != nil {
			t.Fatalf("read back %s: %v", d.JSON, err)
		}
		if city != want["user_geo_city"].Str || zip != want["user_geo_zip"].Num || tags != want["tags"].Str || ok != want["ok"].Bool {
			t.Errorf("event %s reads back city %q zip %g tags %s ok %v", d.JSON, city, zip, tags, ok)
		}
		if !strings.HasPrefix(tags, "[") {
			t.Errorf("tags %q, want the array's JSON", tags)
		}
	}

	types := map[string]string{}
	rows, err := s.pool.Query(ctx, `SELECT "column", type FROM table_columns('`+s.cfg.table+`')`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c, typ string
		if err := rows.Scan(&c, &typ); err != nil {
			t.Fatal(err)
		}
		types[c] = typ
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for c, typ := range map[string]string{"user_name": "VARCHAR", "user_geo_city": "VARCHAR", "user_geo_zip": "DOUBLE", "tags": "VARCHAR", "ok": "BOOLEAN", "maybe": "DOUBLE"} {
		if types[c] != typ {
			t.Errorf("column %s is %q, want %s (columns: %v)", c, types[c], typ, types)
		}
	}
	if _, ok := types["doc"]; ok {
		t.Errorf("columns=flat table has a doc column: %v", types)
	}
	// A later value of another type than its column's is the server's to
	// refuse: that event alone is failed, with the server's kind.
	again := b.Docs[0]
	again.ID, again.Seq, again.EventTime = gen+"-retyped", n, base+n
	again.JSON = fmt.Appendf(nil, `{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":%d,"user":{"geo":{"zip":"not a number"}}}`,
		again.ID, again.EventTime, gen, again.Seq)
	ok := b.Docs[1]
	ok.ID, ok.Seq, ok.EventTime = gen+"-fine", n+1, base+n+1
	ok.JSON = fmt.Appendf(nil, `{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":%d,"user":{"geo":{"zip":1234}}}`,
		ok.ID, ok.EventTime, gen, ok.Seq)
	res, err = s.Write(ctx, target.Batch{Generator: gen, Docs: []target.Document{again, ok}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a string into the DOUBLE column: %+v", res)
	if res.Acknowledged != 1 || res.Failed != 1 || len(res.FailedSeqs) != 1 || res.FailedSeqs[0] != n {
		t.Errorf("write of a retyped value beside a fine one: %+v; want _seq %d failed, the other acknowledged", res, n)
	}
	waitCount(t, s, gen, n, 30*time.Second)

	// Six from the template; the refused event made none.
	if l := s.Layout(); !strings.Contains(l, "flattened into columns, 6 of them") || !strings.Contains(l, "joined with _") {
		t.Errorf("layout %q, want the rule and 6 columns", l)
	}
	if err := s.SetupQueries(ctx); !errors.Is(err, target.ErrBadSetting) || !strings.Contains(err.Error(), "columns=doc") {
		t.Errorf("setup queries with columns=flat: %v, want a bad setting that names columns=doc", err)
	}
}
