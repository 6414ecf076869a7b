package druid

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/freshbench/freshbench/target/targettest"
)

// A user's nested event is stored as the layout says: schema discovery
// makes a column of each top-level field, typed from its value, a nested
// object one JSON column whose leaves JSON_VALUE reads, an array of
// strings an array; Druid's own catalogue (INFORMATION_SCHEMA) shows it.
func TestLayoutOfNestedEvent(t *testing.T) {
	// A datasource and topic of its own; it waits on Druid (its supervisor
	// and task start), which runs four tasks at once.
	t.Parallel()
	s, kc := server(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	targettest.SetupTwice(t, ctx, s, "g")
	now := time.Now().UnixMicro()
	doc := fmt.Sprintf(`{"_id":"n1","_event_time":%d,"generator_identifier":"g","_seq":0,"user":{"name":"ann","geo":{"city":"Oslo"}},"tags":["a","b"],"n":12,"f":1.5,"note":"hi"}`, now)
	if err := kc.ProduceSync(ctx, &kgo.Record{Key: []byte("n1"), Value: []byte(doc)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	targettest.WaitFresh(t, ctx, s, "g", now)

	// The broker plans SQL on the columns its segment metadata cache
	// knows, refreshed apart from the ingestion (druid.sql.planner.
	// metadataRefreshPeriod, a minute by default): a column can be
	// queryable a while after its event is visible (seen on a busy
	// machine: the event visible, its fields not yet columns).
	want := map[string]string{"user": "COMPLEX<json>", "tags": "ARRAY", "n": "BIGINT", "f": "DOUBLE", "note": "VARCHAR"}
	var types map[string]string
	visible := time.Now()
	for deadline := visible.Add(2 * time.Minute); ; time.Sleep(time.Second) {
		types = columnTypes(t, ctx, s)
		if _, ok := types["user"]; ok || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("the event's fields were columns %s after it was visible", time.Since(visible).Round(time.Second))
	t.Logf("columns: %v", types)
	var city string
	err := s.sql(ctx, "nested field of", `SELECT JSON_VALUE("user", '$.geo.city') FROM "`+s.cfg.datasource+`"`, nil,
		func(row []json.RawMessage) error { return json.Unmarshal(row[0], &city) })
	if err != nil || city != "Oslo" {
		t.Errorf("JSON_VALUE(user, '$.geo.city') = %q, %v; want Oslo", city, err)
	}
	layout := s.Layout()
	for c, typ := range types {
		if strings.HasPrefix(c, "_") || c == "generator_identifier" {
			continue
		}
		if !strings.Contains(layout, typ) {
			t.Errorf("column %s is %s, which the layout %q does not name", c, typ, layout)
		}
	}
	for c, typ := range want {
		if types[c] != typ {
			t.Errorf("column %s is %q, want %s (columns %v)", c, types[c], typ, types)
		}
	}
}

// columnTypes returns the datasource's columns and their SQL types, as
// Druid's catalogue (INFORMATION_SCHEMA) has them.
func columnTypes(t *testing.T, ctx context.Context, s *store) map[string]string {
	t.Helper()
	types := map[string]string{}
	err := s.sql(ctx, "columns of", `SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = '`+s.cfg.datasource+`'`, nil,
		func(row []json.RawMessage) error {
			var c, typ string
			if err := json.Unmarshal(row[0], &c); err != nil {
				return err
			}
			if err := json.Unmarshal(row[1], &typ); err != nil {
				return err
			}
			types[c] = typ
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return types
}
