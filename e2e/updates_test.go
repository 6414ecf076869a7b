package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

// An update stream on PostgreSQL whose table has a BEFORE UPDATE trigger
// that skips some updates: for events with _seq % 7 = 0 it returns NULL
// (the update is not stored, and the server says so: a failed item), for
// _seq % 7 = 1 it returns OLD (the server says "updated" but keeps the
// old row: a lost update). The trigger logs every skip in a table of its
// own; freshbench must count exactly those, under every write method.
func TestPostgresUpdatesSkippedByTrigger(t *testing.T) {
	base := serverURL(t, "postgres")
	for _, method := range []string{"insert", "copy", "pipeline"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel() // each on a table of its own
			raw := withName(t, base, "upd_"+method)
			tgt := open(t, raw, map[string]string{"write_method": method})
			skips, log := addSkippingTrigger(t, raw)
			cfg := config(1000, 3*time.Second, 100*time.Millisecond)
			cfg.Ingest.UpdateShare = 0.5
			cfg.Ingest.UpdateKeys = ingest.KeyChoice{Kind: ingest.KeysRecent, Recent: 700}
			// The probes of lost updates are never seen: the drain waits
			// its whole length, and 2 s is plenty on this server.
			cfg.Drain = 2 * time.Second
			res := run(t, tgt, cfg)

			ctx := context.Background()
			var refused, keptOld int64
			if err := skips.QueryRow(ctx, `SELECT count(*) FILTER (WHERE kind = 'null'), count(DISTINCT id) FILTER (WHERE kind = 'old') FROM `+log).Scan(&refused, &keptOld); err != nil {
				t.Fatal(err)
			}
			var failed, notStored, acked int64
			for _, p := range res.Phases {
				failed += p.UpdatesFailed
				acked += p.UpdatesAcked
				if e := p.Errors[target.ErrorNotStored]; e != nil {
					notStored += e.Count
				}
			}
			audit := results.UpdateAudit{}
			for _, a := range res.Target().Updates.Audit {
				audit.Events += a.Events
				audit.Lost += a.Lost
				audit.Unacknowledged += a.Unacknowledged
			}
			t.Logf("%d updates acknowledged, %d failed (the trigger refused %d); %d events updated, %d lost updates (the trigger kept the old row of %d events)",
				acked, failed, refused, audit.Events, audit.Lost, keptOld)
			if refused == 0 || keptOld == 0 {
				t.Fatalf("the trigger skipped %d and kept %d: the run sent too few updates to test anything", refused, keptOld)
			}
			if failed != refused || notStored != refused {
				t.Errorf("updates failed %d (not_stored %d), want the %d the trigger refused", failed, notStored, refused)
			}
			if audit.Lost != keptOld || audit.Unacknowledged != 0 {
				t.Errorf("audit: %d lost updates, %d unacknowledged; want the %d events whose old row the trigger kept, and none", audit.Lost, audit.Unacknowledged, keptOld)
			}
			if s := res.Summary; s.Missing != 0 || s.Unexpected != 0 || !s.Audited {
				t.Errorf("inserts: missing %d, unexpected %d, audited %v; want a clean audit", s.Missing, s.Unexpected, s.Audited)
			}
		})
	}
}

// addSkippingTrigger installs the trigger of TestPostgresUpdatesSkippedByTrigger
// on the table of the target URL raw and returns a connection to read
// its log, and the log table's name.
func addSkippingTrigger(t *testing.T, raw string) (*pgx.Conn, string) {
	t.Helper()
	ctx := context.Background()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	table := u.Query().Get("table")
	u.RawQuery = ""
	conn, err := pgx.Connect(ctx, strings.Replace(u.String(), "postgresql://", "postgres://", 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	tbl, fn, log := pgx.Identifier{table}.Sanitize(), pgx.Identifier{table + "_skip"}.Sanitize(), pgx.Identifier{table + "_skips"}.Sanitize()
	for _, q := range []string{
		`CREATE UNLOGGED TABLE ` + log + ` (id text, rev bigint, kind text)`,
		`CREATE FUNCTION ` + fn + `() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW._seq % 7 = 0 THEN
		INSERT INTO ` + log + ` VALUES (NEW._id, NEW._revision, 'null');
		RETURN NULL;
	END IF;
	IF NEW._seq % 7 = 1 THEN
		INSERT INTO ` + log + ` VALUES (NEW._id, NEW._revision, 'old');
		RETURN OLD;
	END IF;
	RETURN NEW;
END $$`,
		`CREATE TRIGGER ` + fn + ` BEFORE UPDATE ON ` + tbl + ` FOR EACH ROW EXECUTE FUNCTION ` + fn + `()`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		ctx := context.Background()
		conn.Exec(ctx, `DROP FUNCTION IF EXISTS `+fn+`() CASCADE`)
		conn.Exec(ctx, `DROP TABLE IF EXISTS `+log)
	})
	return conn, log
}

// On Elasticsearch with a 1 s refresh, an update's revision becomes
// searchable at a refresh, as an insert does: the visibility of updates
// follows the inserts' (both wait for the same refreshes), far above the
// poll interval that a check of the event rather than of its revision
// would show (the updated event was visible long before), and every
// updated event ends at the revision acknowledged last.
func TestElasticsearchUpdatesWaitForRefresh(t *testing.T) {
	raw := withName(t, serverURL(t, "elasticsearch"), "upd")
	tgt := open(t, raw, map[string]string{"refresh_interval": "1s"})
	cfg := config(1000, 8*time.Second, 100*time.Millisecond)
	cfg.Ingest.Warmup = 2 * time.Second
	cfg.Ingest.UpdateShare = 0.5
	cfg.Ingest.UpdateKeys = ingest.KeyChoice{Kind: ingest.KeysUniform}
	// A write that outlasts config's 5 s counts as failed although the
	// server stores it later (a busy round: Elasticsearch write latency
	// p99 3.4 s at 500 events/s); the audit holds none failed.
	cfg.Ingest.WriteTimeout = requestTimeout
	// A starved server keeps no schedule (seen: none of 1,000 events/s
	// achieved, no update probe): that is tried again at a lower rate.
	var res *results.Result
	testenv.LowerRate(t, cfg.Ingest.Rate.PerSecond, 250, func(rate float64) string {
		cfg.Ingest.Rate.PerSecond = rate
		res = run(t, tgt, cfg)
		return offSchedule(tgt.Name(), res.Summary)
	})
	ins, upd := res.Summary.VisibilityLatency, res.Summary.Updates.VisibilityLatency
	t.Logf("visibility p50: inserts %.0f ms, updates %.0f ms (%d update probes); update freshness lag p50 %.0f ms",
		ins.P50Ms, upd.P50Ms, upd.Count, res.Summary.Updates.FreshnessLag.P50Ms)
	if upd.Count < 20 || res.Target().Updates.Visibility.NeverSeen != 0 {
		t.Fatalf("%d update probes measured, %d never seen", upd.Count, res.Target().Updates.Visibility.NeverSeen)
	}
	// A revision written at a uniform instant of a 1 s refresh cycle
	// waits half a cycle on average: well above the 100 ms poll.
	if upd.P50Ms < 300 {
		t.Errorf("update visibility p50 %.0f ms: below half a refresh period, as if the event, not its revision, had been looked for", upd.P50Ms)
	}
	if r := upd.P50Ms / ins.P50Ms; r < 0.75 || r > 1.33 {
		t.Errorf("update visibility p50 %.0f ms against the inserts' %.0f ms: both wait for the same refreshes", upd.P50Ms, ins.P50Ms)
	}
	if u := res.Summary.Updates; !u.Audited || u.Lost != 0 || u.Unacknowledged != 0 || u.Events == 0 || u.Failed != 0 {
		t.Errorf("update audit %+v: want every updated event at the revision acknowledged last", u)
	}
}
