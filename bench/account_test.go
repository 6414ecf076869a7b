package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

// reporting is a sim target that gives an account: the number of the call,
// as the refresh count of one copy, and when it was asked (failing the
// calls in fail).
type reporting struct {
	target.Target
	mu    sync.Mutex
	asked []time.Time
	fail  map[int]bool
	slow  map[int]time.Duration // calls answered this late
}

func (r *reporting) ServerAccount(context.Context) (results.AccountSnapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, time.Now())
	time.Sleep(r.slow[len(r.asked)])
	if r.fail[len(r.asked)] {
		return nil, errors.New("no account now")
	}
	return refreshAccount{{Copy: "c", Refreshes: 10 * int64(len(r.asked))}}, nil
}

// refreshAccount is the reporting target's own account: one copy's
// refresh count.
type refreshAccount []struct {
	Copy      string `account:"copy,key"`
	Refreshes int64  `account:"refreshes,counter"`
}

func (a refreshAccount) AccountTables() []results.AccountTable {
	return []results.AccountTable{results.TableOf("copies", "", a)}
}

// refreshes reads the refresh count of a table of a refreshAccount.
func refreshes(t *testing.T, tb *results.AccountTable) int64 {
	t.Helper()
	var a refreshAccount
	if err := results.ReadTable(tb, &a); err != nil || len(a) != 1 {
		t.Fatalf("copies %+v (%v): want one copy", tb, err)
	}
	return a[0].Refreshes
}

// The run asks for the server's account at the start and at the end of
// its measured phase, and every second in between (the phase is short),
// and keeps them all with the figures of the two ends.
func TestServerAccountAtMeasuredPhase(t *testing.T) {
	synctest.Test(t, testServerAccountAtMeasuredPhase)
}

func testServerAccountAtMeasuredPhase(t *testing.T) {
	cfg := simConfig(4 * time.Second)
	cfg.Drain = time.Second
	tgt := &reporting{Target: sim.New(sim.Config{})}
	res, err := Run(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := res.ServerAccount
	if a == nil || a.Start == nil || a.End == nil || a.Error != "" {
		t.Fatalf("server account %+v, want both ends", a)
	}
	if len(tgt.asked) != 4 || len(a.Samples) != 2 {
		t.Fatalf("asked %d times, %d samples kept; want 4: the ends and 2 samples a second apart", len(tgt.asked), len(a.Samples))
	}
	warmupEnd := res.StartedAt.Add(cfg.Ingest.Warmup)
	end := res.StartedAt.Add(cfg.Ingest.Duration)
	// Asked when due: on virtual time no timer wakes late.
	for i, at := range []time.Time{warmupEnd, warmupEnd.Add(time.Second), warmupEnd.Add(2 * time.Second), end} {
		if d := tgt.asked[i].Sub(at); d != 0 {
			t.Errorf("account %d asked %s after it was due, want when due", i+1, d)
		}
	}
	for i, s := range a.Samples {
		if got := refreshes(t, s.Table("copies")); got != 10*int64(i+2) {
			t.Errorf("sample %d: refresh total %d, want the %d-th answer's", i, got, i+2)
		}
	}
	if r := refreshes(t, a.WindowTable("copies")); r != 30 {
		t.Errorf("%d refreshes between the accounts, want 30", r)
	}
}

// A failed request leaves the account's error, and what was taken, in the
// result; the run itself goes on. A target without an account has none.
func TestServerAccountErrors(t *testing.T) { synctest.Test(t, testServerAccountErrors) }

func testServerAccountErrors(t *testing.T) {
	// A 1.5 s phase: call 1 is its start, 2 a second in, 3 its end. (Call
	// 2 taking the start again, answered 2 s later, is dated after the
	// phase ended and is not a start.)
	cfg := simConfig(2500 * time.Millisecond)
	cfg.Drain = 0
	for _, tc := range []struct {
		fail      []int
		slow      map[int]time.Duration
		wantStart bool
	}{{[]int{1, 2}, nil, false}, {[]int{1}, map[int]time.Duration{2: 2 * time.Second}, false}, {[]int{3}, nil, true}} {
		tgt := &reporting{Target: sim.New(sim.Config{}), fail: map[int]bool{}, slow: tc.slow}
		for _, n := range tc.fail {
			tgt.fail[n] = true
		}
		res, err := Run(context.Background(), tgt, cfg)
		if err != nil {
			t.Fatal(err)
		}
		a := res.ServerAccount
		if a == nil || a.Error == "" || (a.Start != nil) != tc.wantStart || a.End != nil || res.Summary.EventsAcked == 0 {
			t.Errorf("calls %v failing: account %+v, acked %d; want the error and the start %v", tc.fail, a, res.Summary.EventsAcked, tc.wantStart)
		}
	}
	// A sample that fails in between is left out and named; both ends
	// and their figures stay.
	long := simConfig(3 * time.Second)
	long.Drain = 0
	tgt := &reporting{Target: sim.New(sim.Config{}), fail: map[int]bool{2: true}}
	res, err := Run(context.Background(), tgt, long)
	if err != nil {
		t.Fatal(err)
	}
	if a := res.ServerAccount; a == nil || a.Start == nil || a.End == nil || len(a.Samples) != 0 || len(a.Window) != 1 ||
		!strings.Contains(a.Error, "in the measured phase: no account now") {
		t.Errorf("a sample failing: account %+v, want both ends, no sample and the sample's error", a)
	}
	res, err = Run(context.Background(), sim.New(sim.Config{}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerAccount != nil {
		t.Errorf("a target without an account: %+v", res.ServerAccount)
	}
}

// A start that gets no answer (a cold broker's first query: stop 44's
// CI) is taken again at the next sample. The account then starts late,
// says why, and keeps its window and checks: its window is dated by its
// two readings, and EdgeBatches widens the start's edge by the delay.
func TestServerAccountStartTakenAgain(t *testing.T) {
	synctest.Test(t, testServerAccountStartTakenAgain)
}

func testServerAccountStartTakenAgain(t *testing.T) {
	cfg := simConfig(4 * time.Second)
	cfg.Drain = 0
	tgt := &reporting{Target: sim.New(sim.Config{}), fail: map[int]bool{1: true}}
	res, err := Run(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := res.ServerAccount
	if a == nil || a.Start == nil || a.End == nil || a.Error != "" || len(a.Window) != 1 {
		t.Fatalf("account %+v, want both ends, a window and no error", a)
	}
	if want := "at the start of the measured phase: no account now"; !strings.Contains(a.LateStart, want) {
		t.Errorf("late start %q, want it to name the failure %q", a.LateStart, want)
	}
	from := res.StartedAt.Add(time.Duration(res.Config.WarmupS * float64(time.Second)))
	if late := a.Start.At.Sub(from); late != time.Second || len(a.Samples) != 1 || refreshes(t, a.Start.Table("copies")) != 20 {
		t.Errorf("start taken %s into the phase, %d samples, refreshes %d; want the next sample's reading, a second in, as the start and one sample after it",
			late, len(a.Samples), refreshes(t, a.Start.Table("copies")))
	}
	first, _ := a.EdgeBatches(res)
	if on, _ := (&results.Account{Start: &results.ServerAccount{At: from}, End: a.End}).EdgeBatches(res); first <= on {
		t.Errorf("edge batches at the late start %d, at a start on time %d: want the late one wider", first, on)
	}
}

// A reading that answers late does not make the ones it held up go out
// back to back: the account skips the samples whose time has passed.
func TestServerAccountSkipsPassedSamples(t *testing.T) {
	synctest.Test(t, testServerAccountSkipsPassedSamples)
}

func testServerAccountSkipsPassedSamples(t *testing.T) {
	cfg := simConfig(7 * time.Second)
	cfg.Drain = 0
	tgt := &reporting{Target: sim.New(sim.Config{}), slow: map[int]time.Duration{2: 3500 * time.Millisecond}}
	res, err := Run(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a := res.ServerAccount; a == nil || a.Start == nil || a.End == nil || a.Error != "" {
		t.Fatalf("account %+v, want both ends", a)
	}
	from, _ := res.MeasuredWindow()
	var at []time.Duration
	for _, asked := range tgt.asked {
		at = append(at, asked.Sub(from))
	}
	// The phase is 6 s: the start, samples at 1 s (answered at 4.5 s),
	// 5 s, and the end at 6 s.
	if want := []time.Duration{0, time.Second, 5 * time.Second, 6 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("asked at %v into the phase, want %v", at, want)
	}
}

// An interrupted run takes the end of its account when it stops; one
// stopped during the warm-up has none.
func TestServerAccountInterrupted(t *testing.T) { synctest.Test(t, testServerAccountInterrupted) }

func testServerAccountInterrupted(t *testing.T) {
	cfg := simConfig(time.Minute)
	for _, tc := range []struct {
		after time.Duration
		want  bool
	}{{500 * time.Millisecond, false}, {2 * time.Second, true}} {
		tgt := &reporting{Target: sim.New(sim.Config{})}
		ctx, cancel := context.WithTimeout(context.Background(), tc.after)
		res, err := Run(ctx, tgt, cfg)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if got := res.ServerAccount != nil && res.ServerAccount.End != nil; got != tc.want {
			t.Errorf("interrupted after %s: account %+v, want one %v", tc.after, res.ServerAccount, tc.want)
		}
	}
}

// checking is a reporting target that checks its account against the
// run's figures: it records what it was given.
type checking struct {
	*reporting
	given []*results.Result
}

func (c *checking) CheckAccount(a *results.Account, r *results.Result) []results.Finding {
	c.given = append(c.given, r)
	return []results.Finding{{Check: "batches", Verdict: results.NotYetKnown, Detail: fmt.Sprint(r.Summary.Batches)}}
}

// A target that checks its account does so once, against the run's
// complete figures, and its findings are in the result; an account that
// failed is not checked. On virtual time: the sim holds no listener.
func TestServerAccountChecked(t *testing.T) { synctest.Test(t, testServerAccountChecked) }

func testServerAccountChecked(t *testing.T) {
	cfg := simConfig(1500 * time.Millisecond)
	cfg.Drain = 0
	for _, fail := range []bool{false, true} {
		tgt := &checking{reporting: &reporting{Target: sim.New(sim.Config{}), fail: map[int]bool{1: fail}}}
		res, err := Run(context.Background(), tgt, cfg)
		if err != nil {
			t.Fatal(err)
		}
		a := res.ServerAccount
		if fail {
			if len(tgt.given) != 0 || a == nil || len(a.Findings) != 0 {
				t.Errorf("a failed account: checked %d times, findings %+v; want none", len(tgt.given), a)
			}
			continue
		}
		want := []results.Finding{{Check: "batches", Verdict: results.NotYetKnown, Detail: fmt.Sprint(res.Summary.Batches)}}
		if len(tgt.given) != 1 || tgt.given[0] != res || res.Summary.Batches == 0 || !slices.Equal(a.Findings, want) {
			t.Errorf("checked %d times, findings %+v; want once, against the run's %d batches", len(tgt.given), a.Findings, res.Summary.Batches)
		}
	}
}
