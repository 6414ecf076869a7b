package bench

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/sim"
)

// Updates that become visible a known delay later than inserts must read
// back so: the visibility of updates is the inserts' plus the injected
// delay (within the poll resolution), the freshness of updates likewise,
// and the lost-update audit counts exactly the events the sim left at an
// older revision than it acknowledged last, by its own account.
func TestUpdateVisibility(t *testing.T) { synctest.Test(t, testUpdateVisibility) }

func testUpdateVisibility(t *testing.T) {
	const (
		insertDelay = 100 * time.Millisecond
		updateDelay = 300 * time.Millisecond
	)
	cfg := simConfig(4 * time.Second)
	cfg.Ingest.UpdateShare = 0.5
	cfg.Ingest.UpdateKeys = ingest.KeyChoice{Kind: ingest.KeysRecent, Recent: 200}
	tgt := sim.New(sim.Config{VisibilityDelay: insertDelay, UpdateDelay: updateDelay})
	res, err := Run(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := res.Target().Updates
	if u == nil {
		t.Fatal("no update figures")
	}
	m := res.Phase("measured")
	if m.UpdatesDispatched < m.Dispatched/3 || m.UpdatesDispatched != m.UpdatesAcked+m.UpdatesFailed || m.UpdatesFailed != 0 {
		t.Errorf("measured phase: %d updates of %d events dispatched, %d acknowledged, %d failed; want about half, all acknowledged",
			m.UpdatesDispatched, m.Dispatched, m.UpdatesAcked, m.UpdatesFailed)
	}
	poll := float64(cfg.PollInterval.Milliseconds())
	ins, upd := res.Target().Visibility.Latency.Summarize(), u.Visibility.Latency.Summarize()
	if upd.Count < 50 || u.Visibility.NeverSeen != 0 {
		t.Fatalf("update probes: %d measured, %d never seen", upd.Count, u.Visibility.NeverSeen)
	}
	want := float64((insertDelay + updateDelay).Milliseconds())
	if upd.MinMs < want*0.999 || upd.P50Ms > want+poll {
		t.Errorf("update visibility p50 %v ms (min %v), want within [%v, %v] (inserts: p50 %v ms)", upd.P50Ms, upd.MinMs, want, want+poll, ins.P50Ms)
	}
	if ins.P50Ms > float64(insertDelay.Milliseconds())+poll {
		t.Errorf("insert visibility p50 %v ms: the updates' delay leaked into the inserts'", ins.P50Ms)
	}
	if f := u.Freshness.Lag.Summarize(); f.Count == 0 || f.P50Ms < want*0.999 || f.P50Ms > want+poll {
		t.Errorf("update freshness lag p50 %v ms over %d samples, want within [%v, %v]", f.P50Ms, f.Count, want, want+poll)
	}
	for _, a := range u.Audit {
		if a.Lost != 0 || a.Unacknowledged != 0 || a.Current != a.Events || a.Events == 0 {
			t.Errorf("audit %+v: want every updated event current", a)
		}
	}
	if s := res.Summary; s.Missing != 0 || !s.Audited {
		t.Errorf("inserts: audited %v, missing %d; want a clean audit (updates replace, they add no events)", s.Audited, s.Missing)
	}
}

// A target that loses every 7th acknowledged update: the audit counts
// exactly the events the sim left at an older revision than it
// acknowledged last, by the sim's own account, whichever keys the
// updates chose.
func TestLostUpdatesCountedExactly(t *testing.T) {
	for _, keys := range []ingest.KeyChoice{{Kind: ingest.KeysUniform}, {Kind: ingest.KeysZipf, ZipfS: 1.2}} {
		t.Run(keys.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := simConfig(3 * time.Second)
				cfg.Ingest.UpdateShare, cfg.Ingest.UpdateKeys = 0.5, keys
				cfg.Drain = time.Second // the probes of lost updates are never seen
				tgt := sim.New(sim.Config{VisibilityDelay: 20 * time.Millisecond, LoseUpdateEvery: 7})
				res, err := Run(context.Background(), tgt, cfg)
				if err != nil {
					t.Fatal(err)
				}
				checkLostUpdates(t, res.Target().Updates.Audit, tgt)
			})
		})
	}
}

func checkLostUpdates(t *testing.T, audit []results.UpdateAudit, tgt *sim.Target) {
	t.Helper()
	var lost, acked int64
	for i, a := range audit {
		if wantLost := tgt.LostUpdates(a.Generator); a.Lost != wantLost {
			t.Errorf("generator %d: audit counts %d lost updates, the sim lost %d", i, a.Lost, wantLost)
		}
		if a.Current+a.Lost+a.Unacknowledged != a.Events {
			t.Errorf("generator %d: %d current + %d lost + %d unacknowledged != %d updated events", i, a.Current, a.Lost, a.Unacknowledged, a.Events)
		}
		lost += a.Lost
		acked += a.Acknowledged
	}
	if lost == 0 || len(audit) != 2 {
		t.Errorf("audit of %d generators found %d lost updates of %d acknowledged; want some (every 7th is lost)", len(audit), lost, acked)
	}
	t.Logf("%d lost updates of %d acknowledged", lost, acked)
}

// A target that takes no updates refuses an update stream before it
// starts, naming the share.
func TestUpdatesRefusedByTargetWithoutThem(t *testing.T) {
	synctest.Test(t, testUpdatesRefusedByTargetWithoutThem)
}

func testUpdatesRefusedByTargetWithoutThem(t *testing.T) {
	cfg := simConfig(2 * time.Second)
	cfg.Ingest.UpdateShare = 0.2
	_, err := Run(context.Background(), noUpdates{sim.New(sim.Config{})}, cfg)
	if err == nil {
		t.Fatal("a run with updates on a target without them started")
	}
	t.Log(err)
}

// noUpdates hides the sim's update role.
type noUpdates struct{ *sim.Target }

func (noUpdates) UpdateFreshness() {}

// A write that fails as a whole after the database stored it (a timeout
// after the commit): its updates are failed, exactly those, their events
// are free to be updated again, none is a lost update, and the revisions
// it stored show in the audit as unacknowledged.
func TestUpdatesStoredByAFailedWrite(t *testing.T) { synctest.Test(t, testUpdatesStoredByAFailedWrite) }

func testUpdatesStoredByAFailedWrite(t *testing.T) {
	cfg := simConfig(3 * time.Second)
	// Few keys: were the events of a failed write never freed, the pool
	// would soon hold only events in flight and updates would stop.
	cfg.Ingest.UpdateShare, cfg.Ingest.UpdateKeys = 0.5, ingest.KeyChoice{Kind: ingest.KeysRecent, Recent: 50}
	cfg.Drain = time.Second
	tgt := &failAfterStoring{Target: sim.New(sim.Config{VisibilityDelay: 20 * time.Millisecond})}
	res, err := Run(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var dispatched, failed, events int64
	for _, p := range res.Phases {
		dispatched += p.UpdatesDispatched
		failed += p.UpdatesFailed
		events += p.Dispatched
	}
	var lost, unacked int64
	for _, a := range res.Target().Updates.Audit {
		lost += a.Lost
		unacked += a.Unacknowledged
	}
	tgt.mu.Lock()
	want := tgt.failedUpdates
	tgt.mu.Unlock()
	t.Logf("%d updates dispatched, %d failed (%d in the writes that failed after storing); %d unacknowledged revisions shown, %d lost", dispatched, failed, want, unacked, lost)
	if want == 0 || failed != want {
		t.Errorf("%d updates failed, want the %d of the writes that failed after storing", failed, want)
	}
	if dispatched < events*4/10 {
		t.Errorf("%d updates of %d events dispatched, want about half: the events of the failed writes were not freed for later updates", dispatched, events)
	}
	if lost != 0 || unacked == 0 || unacked > want {
		t.Errorf("audit: %d lost, %d unacknowledged; want none lost and some (at most %d) unacknowledged", lost, unacked, want)
	}
}

// failAfterStoring stores every write but answers every 5th one that
// holds updates with an error, as a client timeout after the commit.
type failAfterStoring struct {
	*sim.Target
	mu            sync.Mutex
	withUpdates   int
	failedUpdates int64
}

func (f *failAfterStoring) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	res, err := f.Target.Write(ctx, b)
	updates := 0
	for _, d := range b.Docs {
		if d.Revision > 0 {
			updates++
		}
	}
	if err != nil || updates == 0 {
		return res, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.withUpdates++; f.withUpdates%5 == 0 {
		f.failedUpdates += int64(updates)
		return target.WriteResult{}, context.DeadlineExceeded
	}
	return res, nil
}

// piped is a target whose writes pass through an intermediary (Piped).
type piped struct{ *sim.Target }

func (piped) Via() (string, map[string]string) { return "kafka://127.0.0.1:9/t", nil }

// pipedInserts is piped without the update role: a sink that writes
// inserts only.
type pipedInserts struct{ piped }

func (pipedInserts) UpdateFreshness() {}

// Updates through an intermediary are measured when the target behind it
// takes them (a database that consumes the topic itself, as the via says
// by being an Updater), and refused when it does not.
func TestUpdatesThroughAnIntermediary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := simConfig(3 * time.Second)
		cfg.Ingest.UpdateShare = 0.3
		res, err := Run(context.Background(), piped{sim.New(sim.Config{VisibilityDelay: 50 * time.Millisecond})}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Target().Updates == nil || res.Target().Updates.Visibility.Latency.Summarize().Count == 0 {
			t.Errorf("updates %+v; want update visibility measured", res.Target().Updates)
		}
		if _, err := Run(context.Background(), pipedInserts{piped{sim.New(sim.Config{})}}, cfg); err == nil {
			t.Error("a run with updates through a sink of inserts started")
		}
	})
}
