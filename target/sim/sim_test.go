package sim

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

const contractDelay = time.Second

func TestTargetContract(t *testing.T) {
	targettest.Run(t, targettest.Harness{
		Open: func(t *testing.T) target.Target {
			u, _ := url.Parse("sim://?visibility_delay=" + contractDelay.String())
			tgt, err := Open(context.Background(), u, target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return tgt
		},
		FailItem: func(b *target.Batch, i int) { b.Docs[i].JSON = nil },
		// What was acknowledged is visible visibility_delay later.
		Searchable: func(ctx context.Context, _ target.Target) error {
			if !sleepUntil(ctx, time.Now().Add(contractDelay)) {
				return ctx.Err()
			}
			return nil
		},
		Register: Register,
		BadURLs: []string{
			"sim://?visibility_delay=soon", "sim://?capacity=-1", "sim://?drop_every=x",
			"sim://?visiblity_delay=1s", "discard://?capacity=10",
		},
	})
}

func sleepUntil(ctx context.Context, at time.Time) bool { return sleep(ctx, time.Until(at)) == nil }

// TestSettings checks that a knob is read from the URL or the settings,
// never both differently, and that the effective settings list every knob.
func TestSettings(t *testing.T) {
	r := target.NewRegistry()
	Register(r)
	tgt, err := r.Open(context.Background(), "sim://?visibility_delay=250ms", target.Options{Settings: map[string]string{"capacity": "500"}})
	if err != nil {
		t.Fatal(err)
	}
	s := tgt.(*Target)
	if s.cfg.VisibilityDelay != 250*time.Millisecond || s.cfg.Capacity != 500 {
		t.Errorf("config = %+v", s.cfg)
	}
	want := map[string]string{"visibility_delay": "250ms", "capacity": "500", "write_delay": "0s", "query_delay": "0s", "drop_every": "0"}
	got := s.Settings()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("effective %s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("effective settings %v, want %v", got, want)
	}
	if _, err := r.Open(context.Background(), "sim://?capacity=10", target.Options{Settings: map[string]string{"capacity": "20"}}); err == nil {
		t.Error("capacity 10 in the URL and 20 in the settings: opened")
	}
}

// A replica sees what the target sees, lag later: not before, and every
// reader role agrees.
func TestReplicaLagsBehind(t *testing.T) {
	const lag = 300 * time.Millisecond
	tgt := New(Config{})
	rep := tgt.Replica(lag)
	ctx := context.Background()
	written := time.Now()
	if _, err := tgt.Write(ctx, target.Batch{Generator: "g", Docs: []target.Document{{ID: "a", Generator: "g", EventTime: 7, JSON: []byte("{}")}}}); err != nil {
		t.Fatal(err)
	}
	seen := func(r target.Reader) bool {
		n, _ := r.Count(ctx, "g")
		_, fresh, _ := r.Freshness(ctx, "g")
		vis, _ := r.Visible(ctx, "g", []string{"a"})
		var seqs int
		r.Seqs(ctx, "g", func(int64) { seqs++ })
		if all := n == 1 && fresh && vis["a"] && seqs == 1; all || n+int64(seqs) == 0 && !fresh && !vis["a"] {
			return all
		}
		t.Fatalf("the reader roles disagree: count %d, freshness %v, visible %v, seqs %d", n, fresh, vis["a"], seqs)
		return false
	}
	if !seen(tgt) {
		t.Fatal("the target does not see its own write")
	}
	if seen(rep) && time.Since(written) < lag {
		t.Fatalf("the replica saw the write %s after it, before its lag of %s", time.Since(written), lag)
	}
	time.Sleep(lag)
	if !seen(rep) {
		t.Fatalf("the replica does not see the write %s after it", time.Since(written))
	}
}
