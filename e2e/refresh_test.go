package e2e

import (
	"testing"
	"time"
)

// On an index with refreshes disabled (refresh_interval=-1) no search
// shows an acknowledged event until a refresh, though the server has
// stored it: the drain sees the count of visible events still and takes
// the target as caught up, and without a forced refresh every event was
// booked lost. settle forces one refresh before it books an event lost:
// every acknowledged event turns up, late, shown only by that refresh.
// The assertions are on the run's own ledger and audits, not on timing.
func TestForcedRefreshShowsStoredEventsLateNotLost(t *testing.T) {
	for _, name := range []string{"elasticsearch", "opensearch", "opensearch3"} {
		t.Run(name, func(t *testing.T) {
			tgt := open(t, withName(t, serverURL(t, name), "refresh"), map[string]string{"refresh_interval": "-1"})
			cfg := config(300, 3*time.Second, 200*time.Millisecond)
			// The drain ends once the count has been still for its stall
			// window; a busy machine's slow counts must not run it into
			// its maximum, where the target would not be caught up.
			cfg.Drain, cfg.DrainMax = 2*time.Second, 2*time.Minute
			// A starved server's slow writes are not failures here.
			cfg.Ingest.WriteTimeout = requestTimeout
			res := run(t, tgt, cfg)
			var acked int64
			for _, c := range res.Target().Completeness {
				acked += c.Acknowledged
			}
			s := res.Summary
			t.Logf("drain %+v; %d acknowledged: %d late (%d shown by the forced refresh), %d missing, %d unexpected", res.Drain, acked, s.Late, s.ShownByRefresh, s.Missing, s.Unexpected)
			if acked == 0 {
				t.Fatal("no event acknowledged")
			}
			if !res.Drain.CaughtUp {
				t.Fatalf("the drain did not take the target as caught up (%+v): the forced refresh is not reached", res.Drain)
			}
			if s.Missing != 0 || s.Late != acked || s.ShownByRefresh != s.Late {
				t.Errorf("%d acknowledged events: %d missing, %d late, %d shown by the forced refresh; want 0 missing, all late, all shown by the refresh", acked, s.Missing, s.Late, s.ShownByRefresh)
			}
		})
	}
}
