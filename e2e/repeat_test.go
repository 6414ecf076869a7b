package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
)

// Two runs with the same seed on one reused index or table: the second
// writes ids of its own, so its probes are not seen at once through the
// first run's copies and its audit counts nothing unexpected. Asked to
// repeat the seed's ids, the second run is refused.
func TestRepeatedRunsOnOneIndex(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			raw := withName(t, serverURL(t, s.name), "repeat")
			settings := map[string]string{}
			if s.name != "postgres" {
				settings["refresh_interval"] = "1s"
			}
			open(t, raw, settings) // created once, dropped at the end
			reuse := func() target.Target {
				tgt, err := all.Registry().Open(context.Background(), raw, target.Options{Settings: settings, RequestTimeout: requestTimeout})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tgt.Close() })
				return tgt
			}
			cfg := config(500, 3*time.Second, 100*time.Millisecond)
			first := run(t, reuse(), cfg)
			second := run(t, reuse(), cfg)
			if first.Generators[0] == second.Generators[0] {
				t.Fatalf("both runs wrote generator %s", first.Generators[0])
			}
			sum := second.Summary
			if !sum.Audited || sum.Unexpected != 0 || sum.Missing != 0 || sum.Duplicates != 0 || sum.EventsFailed != 0 {
				t.Fatalf("second run: audited %v, unexpected %d, missing %d, duplicates %d, failed %d; want a clean audit of its own events",
					sum.Audited, sum.Unexpected, sum.Missing, sum.Duplicates, sum.EventsFailed)
			}
			// On a search engine a probe waits for a refresh: about half
			// the interval on average, in both runs alike. One seen
			// through the first run's copy reads far less (an earlier
			// freshbench: p50 112 ms against 636 ms in the first run).
			if s.name != "postgres" {
				v1, v2 := first.Summary.VisibilityLatency, sum.VisibilityLatency
				if v2.Count == 0 || v2.P50Ms < v1.P50Ms/2 {
					t.Fatalf("second run: visibility latency p50 %.0f ms (%d probes), the first run's %.0f ms: want at least half of it; probes seen through older copies", v2.P50Ms, v2.Count, v1.P50Ms)
				}
			}
			cfg.RepeatIDs = true
			cfg.Ingest.Duration, cfg.Ingest.Warmup = time.Second, 0
			if _, err := bench.Run(context.Background(), reuse(), cfg); err != nil {
				t.Fatalf("first run with the seed's own ids: %v", err)
			}
			if _, err := bench.Run(context.Background(), reuse(), cfg); !errors.Is(err, bench.ErrGeneratorInUse) {
				t.Fatalf("second run with the seed's own ids: %v, want bench.ErrGeneratorInUse", err)
			}
		})
	}
}
