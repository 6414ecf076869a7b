package bench

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/target/sim"
)

// refreshing is a read endpoint whose freshness query sees what the sim
// held at its last refresh, one every period: its lag is a sawtooth of
// that period, as a replica that refreshes seldom shows.
type refreshing struct {
	*sim.Target
	period time.Duration
	mu     sync.Mutex
	at     time.Time
	newest int64
	seen   bool
}

func (r *refreshing) Freshness(ctx context.Context, gen string) (int64, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.at) >= r.period {
		v, ok, err := r.Target.Freshness(ctx, gen)
		if err != nil {
			return 0, false, err
		}
		r.at, r.newest, r.seen = now, v, ok
	}
	return r.newest, r.seen, nil
}

// A step held until its verdict is known must not end at a look that
// has not judged what its final verdict judges: a read endpoint whose
// lag is a 15 s sawtooth cannot be judged after 10 s, so the step holds
// on. Seen failing before (the look judged the target alone and ended
// the step, whose final verdict then asked for a longer hold than the
// search had allowed): "step ended after 11 s of the 180 s it could
// hold, not yet known: on read endpoint read1: freshness lag grows …
// a hold of at least 40 s is needed".
func TestPeakLookJudgesReadEndpoints(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := peakConfig(500, add(500), time.Second, 10*time.Second)
		cfg.MaxSteps, cfg.MaxHold = 1, 3*time.Minute
		cfg.Run.PollInterval = 200 * time.Millisecond
		tgt := sim.New(sim.Config{VisibilityDelay: 100 * time.Millisecond})
		cfg.Run.ReadEndpoints = []ReadEndpoint{{Name: "read1", URL: "sim://", Reader: &refreshing{Target: tgt, period: 15 * time.Second}}}
		res, err := SearchPeak(context.Background(), tgt, cfg)
		if err != nil {
			t.Fatal(err)
		}
		logSteps(t, res)
		v := res.Steps[0].Verdict
		if v == nil {
			t.Fatal("no verdict")
		}
		held := v.DecidedAtS
		if v.Undecided && held < cfg.MaxHold.Seconds()-1 && !strings.Contains(v.Reason(), "the step ended at look") {
			t.Errorf("step ended after %.0f s of the %.0f s it could hold, %s", held, cfg.MaxHold.Seconds(), v)
		}
		if !v.Sustainable {
			t.Errorf("a steady target with a read endpoint refreshing every 15 s judged %s", v)
		}
	})
}
