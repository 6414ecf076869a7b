package via

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// Kafka's account goes through the results file as tables and reads back
// whole; over a window, the partitions' tables give the records appended
// and the groups' their lag at each end.
func TestAccountThroughResults(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	start := &Account{Topic: "t", EndOffsets: map[int32]int64{0: 100, 1: 50},
		Groups: []GroupLag{{Group: "sink", Committed: map[int32]int64{0: 100, 1: 20}, Lag: 30}, {Group: "idle", Committed: map[int32]int64{}, Lag: 150}}}
	end := &Account{Topic: "t", EndOffsets: map[int32]int64{0: 1000, 1: 900},
		Groups: []GroupLag{{Group: "sink", Committed: map[int32]int64{0: 1000, 1: 900}}, {Group: "idle", Committed: map[int32]int64{}, Lag: 1900}}}
	file := func(d time.Duration, a *Account) *results.ServerAccount {
		b, err := json.Marshal(results.ServerAccount{At: t0.Add(d), Tables: results.AccountSnapshots{a}.AccountTables()})
		if err != nil {
			t.Fatal(err)
		}
		var s results.ServerAccount
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	s, e := file(0, start), file(10*time.Second, end)
	for _, c := range []struct{ in, out *Account }{{start, mustAccount(t, s)}, {end, mustAccount(t, e)}} {
		want := *c.in
		want.Groups = []GroupLag{c.in.Groups[1], c.in.Groups[0]} // by name
		if !reflect.DeepEqual(c.out, &want) {
			t.Errorf("read back %+v, want %+v", c.out, &want)
		}
	}
	w := results.NewAccount(s, e)
	var appended []partitionRow
	var lags []struct {
		Group string `account:"group"`
		Start int64  `account:"lag_start"`
		End   int64  `account:"lag_end"`
	}
	if err := results.ReadTable(w.WindowTable(PartitionsTable), &appended); err != nil {
		t.Fatal(err)
	}
	if err := results.ReadTable(w.WindowTable(GroupsTable), &lags); err != nil {
		t.Fatal(err)
	}
	if len(appended) != 2 || appended[0].EndOffset != 900 || appended[1].EndOffset != 850 {
		t.Errorf("records appended %+v, want 900 and 850", appended)
	}
	if len(lags) != 2 || lags[0].Group != "sink" || lags[0].Start != 30 || lags[0].End != 0 || lags[1].End != 1900 {
		t.Errorf("lags %+v, want sink 30 → 0, idle 150 → 1900", lags)
	}
	if a, err := AccountOf(&results.ServerAccount{}); a != nil || err != nil {
		t.Errorf("an account without Kafka's: %+v, %v; want none", a, err)
	}
}

func mustAccount(t *testing.T, s *results.ServerAccount) *Account {
	t.Helper()
	a, err := AccountOf(s)
	if err != nil || a == nil {
		t.Fatalf("Kafka's account of %+v: %v", s, err)
	}
	return a
}

// The records appended over the measured phase are held against the
// events acknowledged in it, within the whole batches the longest write
// may move across each edge (here 10 s, 100 batches of 100, longest write
// 50 ms, the account read at the boundaries: one batch), and one more
// per failed event and per event of a retried batch; the other instances
// of an experiment write to the topic too.
func TestCheckAppended(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	window := func(appended int64) *results.Account {
		at := func(d time.Duration, end int64) *results.ServerAccount {
			a := &Account{Topic: "t", EndOffsets: map[int32]int64{0: end / 2, 1: end - end/2}}
			return &results.ServerAccount{At: t0.Add(d), Tables: a.AccountTables()}
		}
		return results.NewAccount(at(0, 500), at(10*time.Second, 500+appended))
	}
	run := func(retries, failed int64) *results.Result {
		r := &results.Result{StartedAt: t0, Summary: results.Summary{MeasuredS: 10, EventsAcked: 10000 - failed, EventsFailed: failed,
			Batches: 100, Retries: retries, WriteLatency: stats.Summary{MaxMs: 50}}}
		r.Config.BatchSize = 100
		return r
	}
	experiment := run(0, 0)
	experiment.Experiment = &results.Experiment{Name: "x", Instances: 2}
	for _, c := range []struct {
		name     string
		appended int64
		res      *results.Result
		want     results.Verdict
	}{
		{"one per event", 10000, run(0, 0), results.Agrees},
		{"two edges fewer", 10000 - 200, run(0, 0), results.Agrees},
		{"fewer than the edges allow", 10000 - 201, run(0, 0), results.Disagrees},
		{"more than the edges allow", 10000 + 201, run(0, 0), results.Disagrees},
		{"more, by a retried batch", 10000 + 200, run(1, 0), results.Agrees},
		{"more, by failed events", 10000 + 102, run(0, 10), results.Agrees},
		{"other instances write too", 20000, experiment, results.NotYetKnown},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := checkAppended(window(c.appended), c.res)
			if f.Verdict != c.want || f.Check != checkRecords || f.Detail == "" {
				t.Errorf("%+v, want %q", f, c.want)
			}
		})
	}
	// Seen in a busy round (1,000 events/s in batches of 50, longest
	// write 18 ms): 5,950 records for 6,000 events, a whole batch at an
	// edge, against 19 events allowed there. A batch is appended whole,
	// and the account is read over a request of its own after each
	// boundary (dated halfway through it): the edge is the batches
	// intended from the longest write before the boundary to the end of
	// the request after it.
	busy := func(appended int64, late time.Duration) results.Verdict {
		started := t0.Add(-time.Second)
		at := func(d time.Duration, end int64) *results.ServerAccount {
			a := &Account{Topic: "t", EndOffsets: map[int32]int64{0: end}}
			return &results.ServerAccount{At: t0.Add(d), Tables: a.AccountTables()}
		}
		acc := results.NewAccount(at(late, 100), at(6*time.Second+late, 100+appended))
		r := &results.Result{StartedAt: started, Summary: results.Summary{MeasuredS: 6, EventsAcked: 6000, Batches: 120,
			WriteLatency: stats.Summary{MaxMs: 18}}}
		r.Config.BatchSize, r.Config.WarmupS = 50, 1
		return checkAppended(acc, r).Verdict
	}
	for _, c := range []struct {
		appended int64
		late     time.Duration
		want     results.Verdict
	}{
		{5950, 20 * time.Millisecond, results.Agrees},    // a batch at one edge
		{5900, 20 * time.Millisecond, results.Agrees},    // one at each: 18 + 40 ms spans two batches
		{5800, 20 * time.Millisecond, results.Agrees},    // two at each
		{5750, 20 * time.Millisecond, results.Disagrees}, // more than the edges hold
		{5750, 60 * time.Millisecond, results.Agrees},    // a slower request: three at each
		{6300, 20 * time.Millisecond, results.Disagrees},
	} {
		if got := busy(c.appended, c.late); got != c.want {
			t.Errorf("%d records for 6,000 events, the account read %s after each boundary: %s, want %s", c.appended, c.late, got, c.want)
		}
	}
	if f := checkAppended(&results.Account{}, run(0, 0)); f.Verdict != results.NotYetKnown {
		t.Errorf("no window: %+v, want not yet known", f)
	}
}
