package pinot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/target/targettest"
)

// Told no sample (freshbench's generated events), the schema is the
// generated shape's: an event of another shape keeps only the fields the
// schema names, as the layout says: the columns Pinot answers with are the
// layout's, the user's nested field is not among them, and a field the
// schema shares is stored.
func TestLayoutOfAnotherShape(t *testing.T) {
	s, kc := server(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	targettest.SetupTwice(t, ctx, s, "g")
	now := time.Now().UnixMicro()
	produce(t, ctx, kc, fmt.Sprintf(`{"_id":"a1","_event_time":%d,"generator_identifier":"g","_seq":0,"processBy":"p","user":{"name":"ann"}}`, now))
	targettest.WaitFresh(t, ctx, s, "g", now)
	header, rows, err := s.sql(ctx, "columns of", `SELECT * FROM `+s.cfg.table+` WHERE generator_identifier = 'g' LIMIT 1`)
	if err != nil || len(rows) != 1 {
		t.Fatalf("select *: %d rows, %v", len(rows), err)
	}
	t.Logf("columns: %v", header)
	layout := s.Layout()
	if !strings.Contains(layout, fmt.Sprintf("%d columns", len(header))) || !strings.Contains(layout, "not stored") {
		t.Errorf("Pinot answers with %d columns; the layout %q says otherwise", len(header), layout)
	}
	for _, c := range header {
		if !strings.Contains(layout, c) {
			t.Errorf("column %s is not in the layout %q", c, layout)
		}
	}
	if slices.Contains(header, "user") {
		t.Errorf("the user's field is a column: %v", header)
	}
	i := slices.Index(header, "processBy")
	if i < 0 || string(rows[0][i]) != `"p"` {
		t.Errorf("processBy, a field the schema shares, reads %s", rows[0])
	}
}
