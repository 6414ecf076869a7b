package questdb

import (
	"testing"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// windowOf is the account of table over a window in which the log
// committed committed transactions.
func windowOf(table string, committed int64) *results.Account {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration, w WALTable) *results.ServerAccount {
		w.Backlog = w.SequencerTxn - w.WriterTxn
		return &results.ServerAccount{At: t0.Add(d), Tables: Account{WALTables: []WALTable{w}}.AccountTables()}
	}
	return results.NewAccount(at(0, WALTable{Table: table, SequencerTxn: 50, WriterTxn: 48}),
		at(10*time.Second, WALTable{Table: "events", SequencerTxn: 50 + committed, WriterTxn: 40 + committed}))
}

// The log's commits over the measured phase are held against the batches
// written in it, within the batches the longest write may move across
// each edge (here 10 s, 200 batches, longest write 100 ms: 3), and one
// more per retry and failed event: a count outside is a disagreement,
// and what the figures cannot decide is not yet known.
func TestCheckWALCommits(t *testing.T) {
	run := func(retries int64) *results.Result {
		return &results.Result{StartedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Summary: results.Summary{MeasuredS: 10, Batches: 200, Retries: retries,
			WriteLatency: stats.Summary{MaxMs: 100}}}
	}
	updates := run(0)
	updates.Target().Updates = &results.Updates{}
	for _, c := range []struct {
		name      string
		table     string
		committed int64
		res       *results.Result
		want      results.Verdict
	}{
		{"one per batch", "events", 200, run(0), results.Agrees},
		{"an edge's worth fewer", "events", 194, run(0), results.Agrees},
		{"fewer than the edges allow", "events", 193, run(0), results.Disagrees},
		{"more than the edges allow", "events", 207, run(0), results.Disagrees},
		{"more, by the retries", "events", 210, run(4), results.Agrees},
		{"updates commit too", "events", 400, updates, results.NotYetKnown},
		{"absent at the start", "other", 200, run(0), results.NotYetKnown},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := checkWALCommits(windowOf(c.table, c.committed), c.res, "events")
			if f.Verdict != c.want || f.Check != checkCommits || f.Detail == "" {
				t.Errorf("%+v, want %q", f, c.want)
			}
		})
	}
	for _, cfg := range []config{{wal: true, transport: transportTCP, table: "events"}, {wal: false, transport: transportHTTP, table: "events"}} {
		s := &store{cfg: &cfg}
		if f := s.CheckAccount(windowOf("events", 200), run(0)); f != nil {
			t.Errorf("%+v: %+v; want no check where QuestDB commits on its own schedule", cfg, f)
		}
	}
	s := &store{cfg: &config{wal: true, transport: transportHTTP, table: "events"}}
	if f := s.CheckAccount(windowOf("events", 200), run(0)); len(f) != 1 || f[0].Verdict != results.Agrees {
		t.Errorf("over HTTP to a WAL table: %+v, want the check, agreeing", f)
	}
}
