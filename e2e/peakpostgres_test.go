package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/stats"
	"github.com/jackc/pgx/v5"
)

// On PostgreSQL, the refined peak contains a capacity injected into the
// server: a statement trigger on the table takes a lock of the table's
// own and sleeps d, so batches are written one at a time, each holding
// the lock for at least d. The capacity C is then at most batch/d (the
// sleep alone) and, measured at a fifth of that rate, at least batch
// over the mean write latency (which holds the whole round trip, more
// than the lock). A search from 0.6·batch/d, doubling, refined to 10 %
// with steps held until decided, must give an interval whose sustainable
// end is at most batch/d and whose failing end is at least the measured
// bound less the precision.
func TestPeakPostgresInjectedCapacity(t *testing.T) {
	raw := withName(t, serverURL(t, "postgres"), "peak2cap")
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	table := u.Query().Get("table")
	tgt := open(t, raw, nil)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, strings.Split(raw, "?")[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	fn := pgx.Identifier{table + "_capacity"}.Sanitize()
	t.Cleanup(func() { conn.Exec(context.Background(), `DROP FUNCTION IF EXISTS `+fn+`() CASCADE`) })
	inject := func(d time.Duration) {
		for _, q := range []string{
			fmt.Sprintf(`CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock(hashtext(%s));
	PERFORM pg_sleep(%g);
	RETURN NULL;
END $$`, fn, "'"+table+"'", d.Seconds()),
			`DROP TRIGGER IF EXISTS capacity ON ` + pgx.Identifier{table}.Sanitize(),
			`CREATE TRIGGER capacity AFTER INSERT ON ` + pgx.Identifier{table}.Sanitize() + ` FOR EACH STATEMENT EXECUTE FUNCTION ` + fn + `()`,
		} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}

	const batch = 50
	run := config(0, 7*time.Second, 100*time.Millisecond)
	run.Ingest.BatchSize, run.Ingest.Warmup, run.Drain = batch, 2*time.Second, 5*time.Second
	// The premise: at a fifth of the capacity, a batch takes little more
	// than the sleep, so that the bounds on C are close. A busy server
	// adds to every batch; a longer sleep (a lower capacity) makes that
	// a smaller share.
	var hi, lo float64 // bounds on the capacity, events/s
	for _, d := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond} {
		inject(d)
		hi = batch / d.Seconds()
		low := run
		low.Ingest.Rate = pace.Rate{PerSecond: hi / 5, Unit: pace.Events}
		low.Ingest.Warmup, low.Ingest.Duration = time.Second, 5*time.Second
		res, err := bench.Run(ctx, tgt, low)
		if err != nil {
			t.Fatal(err)
		}
		mean := res.Summary.WriteLatency.MeanMs
		lo = batch / (mean / 1000)
		t.Logf("sleep %s: capacity at most %.0f events/s; at %.0f events/s a batch took %.1f ms on average: at least %.0f events/s", d, hi, hi/5, mean, lo)
		if mean <= 1.25*float64(d.Milliseconds()) && res.Summary.EventsFailed == 0 {
			break
		}
		t.Logf("a batch took more than 1.25 × the sleep: the server is too busy for bounds this close; a longer sleep")
		hi = 0
	}
	if hi == 0 {
		t.Fatal("even with a 200 ms sleep a batch took more than 1.25 × the sleep: the server is too busy to inject a known capacity")
	}

	run.Ingest.Rate = pace.Rate{PerSecond: 0.6 * hi, Unit: pace.Events}
	run.Ingest.Duration = run.Ingest.Warmup + 5*time.Second
	// A step the rule cannot yet decide is held on, up to a minute (seen
	// on a busy machine: 0.6 of the capacity "not yet known: a hold of at
	// least 1m0s is needed" after 20 s, and no peak found).
	cfg := bench.PeakConfig{Run: run, Increase: bench.RateStep{Factor: 2}, MaxSteps: 2, Rule: stats.DefaultRule(),
		Precision: 0.1, MaxHold: time.Minute}
	res, err := bench.SearchPeak(ctx, tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range res.Steps {
		t.Logf("step %d: %s, achieved %.0f events/s, write mean %.1f ms: %s", i+1, s.Config.Rate, s.Summary.AchievedEventsPerSec, s.Summary.WriteLatency.MeanMs, s.Verdict)
	}
	pk := res.Peak
	t.Logf("capacity in [%.0f, %.0f] events/s; peak %s: %s (%.0f s)", lo, hi, pk.Interval, pk.Reason, pk.ElapsedS)
	if !pk.Found || pk.NotSustainable == 0 || res.EndedEarly {
		t.Fatalf("peak %+v (ended early %v): want an interval", *pk, res.EndedEarly)
	}
	if pk.Sustainable > hi {
		t.Errorf("peak %s: %.0f events/s judged sustainable, above the capacity's bound %.0f", pk.Interval, pk.Sustainable, hi)
	}
	if pk.NotSustainable < lo*(1-cfg.Precision) {
		t.Errorf("peak %s: %.0f events/s judged not sustainable, below the capacity's bound %.0f less %.0f %%", pk.Interval, pk.NotSustainable, lo, 100*cfg.Precision)
	}
}
