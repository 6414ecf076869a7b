package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/freshbench/freshbench/seed"
	"github.com/freshbench/freshbench/target"
)

// Seeding a real server twice, the second time to a larger data set right
// after the first (so that a search engine has not yet made the last writes
// visible), leaves every event of the data set there exactly once.
func TestSeedResumesWithoutDoubling(t *testing.T) {
	for _, name := range []string{"elasticsearch", "postgres"} {
		t.Run(name, func(t *testing.T) {
			tgt := open(t, withName(t, serverURL(t, name), "seed"), nil)
			ctx := context.Background()
			// The write timeout and the wait for the data set to show are
			// what a JVM on a busy machine needs (seen: bulk requests of 50
			// events answered in 9.5 s at the median), not a quiet one's:
			// what is tested is what the data set holds at the end.
			cfg := seed.Config{
				Events: 1300, DocSize: 1000, StreamEvents: 1000, BatchSize: 100, MaxInflight: 4, Parallel: 2,
				WriteTimeout: requestTimeout, WriteRetries: 2,
			}
			first := loadSeed(t, tgt, cfg)
			if first.Written != 1300 {
				t.Fatalf("first seed wrote %d of 1300", first.Written)
			}
			cfg.Events = 2500
			p, err := seed.Survey(ctx, tgt, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("second survey: %d present, %d missing", p.Present, p.Missing)
			res, err := seed.Load(ctx, tgt, p)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("second seed: %d written, %d already there", res.Written, res.Duplicates)
			visible, err := seed.WaitVisible(ctx, tgt, p, 2*time.Minute, 200*time.Millisecond)
			if err != nil || visible != 2500 {
				t.Fatalf("visible %d (%v), want 2500", visible, err)
			}
			for _, s := range p.Streams {
				seqs := map[int64]int{}
				if err := tgt.Seqs(ctx, s.Generator, func(seq int64) { seqs[seq]++ }); err != nil {
					t.Fatal(err)
				}
				for seq, n := range seqs {
					if n != 1 || seq < 0 || seq >= s.Events {
						t.Errorf("stream %d: _seq %d stored %d times", s.Index, seq, n)
					}
				}
				if int64(len(seqs)) != s.Events {
					t.Errorf("stream %d: %d distinct events, want %d", s.Index, len(seqs), s.Events)
				}
			}
			if again, err := seed.Survey(ctx, tgt, cfg); err != nil || again.Missing != 0 {
				t.Errorf("third survey: %v, %d missing; want the data set complete", err, again.Missing)
			}
		})
	}
}

func loadSeed(t *testing.T, tgt target.Target, cfg seed.Config) *seed.Result {
	t.Helper()
	p, err := seed.Survey(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := seed.Load(context.Background(), tgt, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
