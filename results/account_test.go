package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// copyRow is a database's own row type, as a target declares it.
type copyRow struct {
	Index   string   `account:"index,key"`
	Node    string   `account:"node,key"`
	Primary bool     `account:"primary"`
	Total   int64    `account:"refreshes,counter"`
	TimeMS  int64    `account:"refresh_time,counter,unit=ms"`
	LagMS   *float64 `account:"lag,level,unit=ms"`
	Lag     *lagRow
	Skipped string
}

type lagRow struct {
	Behind int64 `account:"checkpoints_behind,level"`
}

// The figures of an account are, per row present at both ends, the
// increase of its counters and its levels at each end; a row whose
// counters went back (the thing restarted) or present at one end only has
// none.
func TestNewAccount(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	lag := func(f float64) *float64 { return &f }
	start := &ServerAccount{At: t0, Tables: []AccountTable{TableOf("copies", "", []copyRow{
		{Index: "i", Node: "n1", Primary: true, Total: 10, TimeMS: 100, LagMS: lag(1)},
		{Index: "i", Node: "n2", Total: 9, TimeMS: 50},
		{Index: "r", Node: "n2", Total: 50}, // restarts below
		{Index: "g", Node: "n1", Total: 7},  // gone below
	})}}
	end := &ServerAccount{At: t0.Add(10 * time.Second), Tables: []AccountTable{TableOf("copies", "", []copyRow{
		{Index: "i", Node: "n1", Primary: true, Total: 30, TimeMS: 400, LagMS: lag(2.5)},
		{Index: "i", Node: "n2", Total: 9, TimeMS: 50},
		{Index: "r", Node: "n2", Total: 3},
		{Index: "new", Node: "n1", Total: 3},
	}), TableOf("only at the end", "", []copyRow{{Index: "x"}})}}
	a := NewAccount(start, end)
	if a.Start != start || a.End != end || a.Error != "" || len(a.Window) != 1 {
		t.Fatalf("account %+v: want its two ends and one window table", a)
	}
	type windowRow struct {
		Index    string   `account:"index"`
		Node     string   `account:"node"`
		Primary  bool     `account:"primary"`
		Total    int64    `account:"refreshes"`
		TimeMS   int64    `account:"refresh_time"`
		LagStart *float64 `account:"lag_start"`
		LagEnd   *float64 `account:"lag_end"`
	}
	var got []windowRow
	if err := ReadTable(a.WindowTable("copies"), &got); err != nil {
		t.Fatal(err)
	}
	want := []windowRow{
		{Index: "i", Node: "n1", Primary: true, Total: 20, TimeMS: 300, LagStart: lag(1), LagEnd: lag(2.5)},
		{Index: "i", Node: "n2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("window %+v, want %+v", got, want)
	}
	if c := a.Window[0].Columns[a.Window[0].Column("refresh_time")]; c.Unit != "ms" || c.Role != RoleCounter {
		t.Errorf("refresh_time column %+v: want its unit and role kept", c)
	}
}

// An account goes through the results file and back unchanged: the same
// tables, columns and typed values (a whole number stays whole, a null
// stays null), and reads back into the database's own rows.
func TestAccountRoundTrips(t *testing.T) {
	behind := &lagRow{Behind: 0}
	rows := []copyRow{
		{Index: "i", Node: "n1", Primary: true, Total: 1 << 60, TimeMS: 3, Lag: behind},
		{Index: "i", Node: "n2", LagMS: new(float64)},
	}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	a := &Account{Start: &ServerAccount{At: at, Tables: []AccountTable{TableOf("copies", "shard copies", rows)}},
		Findings: []Finding{{Check: "c", Verdict: NotYetKnown, Detail: "d"}}}
	a.End = a.Start
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back Account
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, a) {
		t.Fatalf("read back %+v\nwant %+v\nfile %s", &back, a, b)
	}
	var got []copyRow
	if err := ReadTable(back.End.Table("copies"), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Fatalf("rows %+v, want %+v", got, rows)
	}
}

// A value of the wrong type for the row's field is an error naming the
// table and column, not a zero.
func TestReadTableWrongType(t *testing.T) {
	tb := AccountTable{Name: "copies", Columns: []AccountColumn{{Name: "refreshes"}}, Rows: [][]Value{{Text("many")}}}
	var got []copyRow
	if err := ReadTable(&tb, &got); err == nil {
		t.Fatalf("read %+v without error", got)
	}
}

// A version 3 file's account, written in each database's own fields,
// reads as tables of those fields with the values as written, at each
// end and over the window; its report needs no database's code.
func TestReadVersion3Account(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v3.json")
	v3 := `{"schema_version":3,"kind":"run","server_account":{
	"start":{"at":"2025-01-01T00:00:00Z","copies":[{"index":"i","shard":0,"primary":true,"node":"n1","refresh_total":10,
		"segment_replication":{"checkpoints_behind":2}}],
		"kafka":{"topic":"t","end_offsets":{"0":100},"groups":[{"group":"g","committed":{"0":70},"lag":30}]}},
	"end":{"at":"2025-01-01T00:00:10Z","wal_tables":[{"table":"e","suspended":false,"sequencer_txn":9,"writer_txn":7}]},
	"refreshes":[{"index":"i","shard":0,"primary":true,"node":"n1","refreshes":20,"period_ms":500.5,"refresh_time_ms":300}]}}`
	if err := os.WriteFile(path, []byte(v3), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := res.ServerAccount
	if res.MigratedFrom != 3 || a == nil {
		t.Fatalf("migrated from %d, account %+v", res.MigratedFrom, a)
	}
	cell := func(tb *AccountTable, col string) Value {
		t.Helper()
		if tb == nil || len(tb.Rows) != 1 || tb.Column(col) < 0 {
			t.Fatalf("table %+v: want one row with %s", tb, col)
		}
		return tb.Rows[0][tb.Column(col)]
	}
	for _, c := range []struct {
		tb   *AccountTable
		col  string
		want Value
	}{
		{a.Start.Table("copies"), "refresh_total", Int(10)},
		{a.Start.Table("copies"), "segment_replication.checkpoints_behind", Int(2)},
		{a.Start.Table("kafka"), "end_offsets.0", Int(100)},
		{a.Start.Table("kafka.groups"), "lag", Int(30)},
		{a.Start.Table("kafka.groups"), "committed.0", Int(70)},
		{a.End.Table("wal_tables"), "writer_txn", Int(7)},
		{a.End.Table("wal_tables"), "suspended", Bool(false)},
		{a.WindowTable("refreshes"), "period_ms", Float(500.5)},
		{a.WindowTable("refreshes"), "node", Text("n1")},
	} {
		if got := cell(c.tb, c.col); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.tb.Name, c.col, got, c.want)
		}
	}
}
