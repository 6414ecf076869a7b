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
// events acknowledged in it, within the events the longest write may move
// across each edge (here 10 s, 10,000 events, longest write 50 ms: 51),
// and one more per failed event and per event of a retried batch; the
// other instances of an experiment write to the topic too.
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
		r := &results.Result{Summary: results.Summary{MeasuredS: 10, EventsAcked: 10000 - failed, EventsFailed: failed,
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
		{"two edges fewer", 10000 - 102, run(0, 0), results.Agrees},
		{"fewer than the edges allow", 10000 - 103, run(0, 0), results.Disagrees},
		{"more than the edges allow", 10000 + 103, run(0, 0), results.Disagrees},
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
	if f := checkAppended(&results.Account{}, run(0, 0)); f.Verdict != results.NotYetKnown {
		t.Errorf("no window: %+v, want not yet known", f)
	}
}
