package elastic

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

var dynamic = map[string]string{"mapping": MappingDynamic, "refresh_interval": "200ms"}

// fieldTypes returns the type the index maps each of fields as ("" when
// unmapped).
func fieldTypes(t *testing.T, tg *Target, fields ...string) map[string]string {
	t.Helper()
	indices, err := tg.fieldTypes(context.Background(), fields...)
	if err != nil || len(indices) != 1 {
		t.Fatalf("field types of %d indices: %v", len(indices), err)
	}
	for _, types := range indices {
		return types
	}
	return nil
}

// With mapping=dynamic the index is created without mappings, and the
// probes still find a generator whose identifier the standard analyzer
// would split into words (a term query on the text field misses it).
func TestServerDynamicMappingProbes(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		ctx := context.Background()
		tg := openTest(t, s, target.Options{Settings: dynamic})
		for i := range 2 { // idempotent on an index without mappings yet
			if err := tg.Setup(ctx); err != nil {
				t.Fatalf("setup #%d: %v", i+1, err)
			}
		}
		if got := fieldTypes(t, tg, "generator_identifier", "processBy"); got["generator_identifier"] != "" || got["processBy"] != "" {
			t.Fatalf("new index maps %v, want nothing mapped", got)
		}

		const n = 30
		gen := "Gen-A b"
		var docs []target.Document
		for i := range n {
			docs = append(docs, doc(fmt.Sprintf("dyn-%d", i), gen, int64(i), ""))
		}
		if res, err := tg.Write(ctx, target.Batch{Generator: gen, Docs: docs}); err != nil || res.Acknowledged != n {
			t.Fatalf("write: %+v %v", res, err)
		}
		// A generator that shares a word with gen must not match it.
		if res, err := tg.Write(ctx, target.Batch{Generator: "gen", Docs: []target.Document{doc("other", "gen", 0, "")}}); err != nil || res.Acknowledged != 1 {
			t.Fatalf("write other generator: %+v %v", res, err)
		}

		want := map[string]string{"generator_identifier": "text", "generator_identifier.keyword": "keyword", "_event_time": "long", "_seq": "long"}
		if got := fieldTypes(t, tg, "generator_identifier", "generator_identifier.keyword", "_event_time", "_seq"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("dynamic mapping gave %v, want %v", got, want)
		}

		eventually(t, "every event visible", func() (bool, string) {
			c, err := tg.Count(ctx, gen)
			if err != nil {
				t.Fatal(err)
			}
			return c == n, fmt.Sprintf("count %d of %d", c, n)
		})
		newest, ok, err := tg.Freshness(ctx, gen)
		if err != nil || !ok || newest != docs[n-1].EventTime {
			t.Errorf("freshness = %d %v %v, want %d", newest, ok, err, docs[n-1].EventTime)
		}
		vis, err := tg.Visible(ctx, gen, []string{"dyn-0", "dyn-29", "other"})
		if err != nil || len(vis) != 2 || !vis["dyn-0"] || !vis["dyn-29"] {
			t.Errorf("visible = %v %v, want dyn-0 and dyn-29", vis, err)
		}
		var seqs []int64
		if err := tg.seqs(ctx, gen, 7, func(s int64) { seqs = append(seqs, s) }); err != nil {
			t.Fatal(err)
		}
		if len(seqs) != n || seqs[0] != 0 || seqs[n-1] != n-1 {
			t.Errorf("seqs = %v, want 0…%d", seqs, n-1)
		}

		err = tg.SetupQueries(ctx)
		if !errors.Is(err, target.ErrBadSetting) || !strings.Contains(err.Error(), "mapping=freshbench") {
			t.Errorf("setup queries with mapping=dynamic: %v, want a bad setting that names mapping=freshbench", err)
		}
	})
}

// A short measured run on a dynamically mapped index measures freshness
// and visibility and audits clean. A starved server may take the whole
// short run to map the first batch's fields (seen in a busy round on
// OpenSearch 3: nothing acknowledged, nothing failed in 6 s), or keep no
// schedule at all (seen: nothing acknowledged of 4 s measured after a
// 20 s warm-up): the test then tries again on a new index after a longer
// warm-up, which such a mapping falls in, and at a lower rate
// (testenv.LowerRate), and fails, saying so, if no run measured anything.
func TestServerDynamicMappingRun(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		ctx := context.Background()
		warmup := time.Second
		rate, unmet := testenv.LowerRate(t, 500, 60, func(rate float64) string {
			tg := openTest(t, s, target.Options{Settings: dynamic})
			if err := tg.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			cfg := bench.Config{
				Ingest: ingest.Config{
					Rate: pace.Rate{PerSecond: rate, Unit: pace.Events}, BatchSize: 50, Duration: warmup + 4*time.Second, Warmup: warmup,
					Generators: 1, MaxInflight: 8, DocSize: 1000, Seed: 3, ProbeRate: 20,
					// A busy machine may be slow; the accounting is what is tested.
					WriteTimeout: 30 * time.Second,
				},
				PollInterval: 100 * time.Millisecond, Drain: 20 * time.Second,
			}
			res, err := bench.Run(ctx, tg, cfg)
			if err != nil {
				t.Fatal(err)
			}
			sum := res.Summary
			t.Logf("warm-up %s: achieved %.0f events/s, %d acknowledged, %d unsent; freshness lag p50 %.0f ms (%d polls); visibility p50 %.0f ms (%d probes)",
				warmup, sum.AchievedEventsPerSec, sum.EventsAcked, sum.EventsUnsent, sum.FreshnessLag.P50Ms, sum.FreshnessLag.Count, sum.VisibilityLatency.P50Ms, sum.VisibilityLatency.Count)
			if unmet := dynamicRunUnmet(sum, warmup); unmet != "" {
				warmup = 20 * time.Second
				return unmet
			}
			if sum.FreshnessLag.Count == 0 || sum.VisibilityLatency.Count == 0 {
				t.Errorf("freshness lag %d samples, visibility %d probes; want both measured", sum.FreshnessLag.Count, sum.VisibilityLatency.Count)
			}
			if !sum.Audited || sum.EventsAcked == 0 || sum.Missing != 0 || sum.Unexpected != 0 || sum.Duplicates != 0 || sum.EventsFailed != 0 {
				t.Errorf("audited %v, acknowledged %d, missing %d, unexpected %d, duplicates %d, failed %d; want an audited run with none lost",
					sum.Audited, sum.EventsAcked, sum.Missing, sum.Unexpected, sum.Duplicates, sum.EventsFailed)
			}
			return ""
		})
		if unmet != "" {
			t.Errorf("at %.0f events/s, the lowest tried, %s: the premise of this test (a run that measures something) was never met, so nothing was checked", rate, unmet)
		}
	})
}

// dynamicRunUnmet says why a run after a warm-up of warmup could not
// show what TestServerDynamicMappingRun checks, "" when it could: nothing
// acknowledged and nothing failed is a server that kept no schedule, not
// a verdict on the run (writes that fail are one).
func dynamicRunUnmet(s results.Summary, warmup time.Duration) string {
	if s.EventsAcked == 0 && s.EventsFailed == 0 {
		return fmt.Sprintf("nothing acknowledged and nothing failed in the measured phase after a warm-up of %s (%d of %d events due unsent): the server is still mapping or starved",
			warmup, s.EventsUnsent, s.EventsDue)
	}
	return ""
}

// An existing index made with the other mapping is refused at Setup, as a
// bad setting that says how to fix it, and reused with its own.
func TestServerMappingMismatch(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		ctx := context.Background()
		for _, c := range []struct{ made, asked string }{
			{MappingFreshbench, MappingDynamic},
			{MappingDynamic, MappingFreshbench},
		} {
			t.Run(c.made+"-as-"+c.asked, func(t *testing.T) {
				tg := openTest(t, s, target.Options{Settings: map[string]string{"mapping": c.made}})
				if err := tg.Setup(ctx); err != nil {
					t.Fatal(err)
				}
				// Map the fields, as a run would.
				if res, err := tg.Write(ctx, target.Batch{Generator: "7", Docs: []target.Document{doc("m", "7", 0, "")}}); err != nil || res.Acknowledged != 1 {
					t.Fatalf("write: %+v %v", res, err)
				}
				reopen := func(mapping string) *Target {
					u := &url.URL{Scheme: s.product, Host: tg.cfg.host, Path: "/" + tg.Index()}
					again, err := open(ctx, u, target.Options{Settings: map[string]string{"mapping": mapping}}, os.Getenv)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { again.Close() })
					return again
				}
				err := reopen(c.asked).Setup(ctx)
				if !errors.Is(err, target.ErrBadSetting) || !strings.Contains(err.Error(), "mapping="+c.made) {
					t.Fatalf("setup with mapping=%s on an index made with %s: %v, want a bad setting that names mapping=%s", c.asked, c.made, err, c.made)
				}
				t.Logf("refused: %v", err)
				if err := reopen(c.made).Setup(ctx); err != nil {
					t.Errorf("setup with the mapping the index was made with: %v", err)
				}
			})
		}
	})
}

// A starved server may acknowledge nothing of a short measured phase even
// after a long warm-up (seen in a busy round on OpenSearch 3: warm-up 20 s,
// 0 acknowledged, 2000 unsent, freshness lag p50 11.5 s): that is a premise
// not met, not a defect. Writes that all fail, or a run that loses events,
// are checked, however long the warm-up.
func TestDynamicRunUnmet(t *testing.T) {
	starved := results.Summary{EventsUnsent: 2000}
	for _, warmup := range []time.Duration{time.Second, 20 * time.Second, time.Minute} {
		if dynamicRunUnmet(starved, warmup) == "" {
			t.Errorf("warm-up %s: nothing acknowledged, nothing failed, all unsent: want the premise unmet", warmup)
		}
	}
	for _, s := range []results.Summary{
		{EventsFailed: 2000},
		{EventsAcked: 850, EventsUnsent: 1150, Missing: 3},
		{EventsAcked: 2000},
	} {
		if unmet := dynamicRunUnmet(s, time.Second); unmet != "" {
			t.Errorf("%d acknowledged, %d failed: premise unmet (%s); want the run checked", s.EventsAcked, s.EventsFailed, unmet)
		}
	}
}
