package results

import (
	"testing"
	"time"
)

// The figures of an account are the differences of the server's counters
// over the time between its two ends: per copy, the refreshes that opened
// a new reader for searches (on a segment-replication replica, every
// reader refresh: its replication rounds).
func TestNewAccount(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	start := &ServerAccount{At: t0, Copies: []CopyAccount{
		{Index: "i", Shard: 0, Primary: true, Node: "n1", RefreshTotal: 10, ExternalRefreshTotal: 5, RefreshTimeMS: 100},
		{Index: "i", Shard: 0, Node: "n2", RefreshTotal: 9, ExternalRefreshTotal: 5, RefreshTimeMS: 50},
		{Index: "s", Shard: 0, Primary: true, Node: "n2", Replication: "segment", RefreshTotal: 4, ExternalRefreshTotal: 2},
		{Index: "s", Shard: 0, Node: "n1", Replication: "segment", RefreshTotal: 3},
		{Index: "r", Shard: 0, Node: "n2", RefreshTotal: 50, ExternalRefreshTotal: 40}, // restarts below
		{Index: "g", Shard: 0, Node: "n1", RefreshTotal: 7, ExternalRefreshTotal: 7},   // gone below
	}}
	end := &ServerAccount{At: t0.Add(10 * time.Second), Copies: []CopyAccount{
		{Index: "i", Shard: 0, Primary: true, Node: "n1", RefreshTotal: 30, ExternalRefreshTotal: 25, RefreshTimeMS: 400},
		{Index: "i", Shard: 0, Node: "n2", RefreshTotal: 9, ExternalRefreshTotal: 5, RefreshTimeMS: 50},
		{Index: "s", Shard: 0, Primary: true, Node: "n2", Replication: "segment", RefreshTotal: 14, ExternalRefreshTotal: 12},
		{Index: "s", Shard: 0, Node: "n1", Replication: "segment", RefreshTotal: 8},
		{Index: "r", Shard: 0, Node: "n2", RefreshTotal: 3, ExternalRefreshTotal: 2},
		{Index: "new", Shard: 0, Node: "n1", RefreshTotal: 3, ExternalRefreshTotal: 2},
	}}
	a := NewAccount(start, end)
	want := []CopyRefreshes{
		{Index: "i", Shard: 0, Primary: true, Node: "n1", Refreshes: 20, PeriodMS: 500, RefreshTimeMS: 300},
		{Index: "i", Shard: 0, Node: "n2"},
		{Index: "s", Shard: 0, Primary: true, Node: "n2", Refreshes: 10, PeriodMS: 1000},
		{Index: "s", Shard: 0, Node: "n1", Refreshes: 5, PeriodMS: 2000},
	}
	if len(a.Refreshes) != len(want) {
		t.Fatalf("refreshes %+v, want %+v", a.Refreshes, want)
	}
	for i, w := range want {
		if a.Refreshes[i] != w {
			t.Errorf("copy %d: %+v, want %+v", i, a.Refreshes[i], w)
		}
	}
	if a.Start != start || a.End != end || a.Error != "" {
		t.Errorf("account %+v does not keep its two ends", a)
	}
}

// A WAL table's window is its commits and applies between the two ends,
// with the backlog at each; a table dropped and created again in between
// (its counters went back) or present at one end only has none.
func TestNewAccountWALApply(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	start := &ServerAccount{At: t0, WALTables: []WALTableAccount{
		{Table: "a", SequencerTxn: 10, WriterTxn: 8},
		{Table: "re", SequencerTxn: 50, WriterTxn: 50},
		{Table: "gone", SequencerTxn: 1, WriterTxn: 1},
	}}
	end := &ServerAccount{At: t0.Add(time.Minute), WALTables: []WALTableAccount{
		{Table: "a", SequencerTxn: 110, WriterTxn: 95, Suspended: true},
		{Table: "re", SequencerTxn: 3, WriterTxn: 3},
		{Table: "new", SequencerTxn: 4, WriterTxn: 2},
	}}
	got := NewAccount(start, end).WALApply
	want := TableWALApply{Table: "a", Committed: 100, Applied: 87, BacklogStart: 2, BacklogEnd: 15}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("wal apply %+v, want [%+v]", got, want)
	}
}
