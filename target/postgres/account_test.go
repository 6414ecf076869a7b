package postgres

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/target"
)

// These tests run against the primary and the streaming standby of
// scripts/postgres-replica.sh:
//
//	FRESHBENCH_TEST_PG_PRIMARY_URL=$(scripts/postgres-replica.sh url primary) \
//	FRESHBENCH_TEST_PG_STANDBY_URL=$(scripts/postgres-replica.sh url standby) \
//	go test -run Pair ./target/postgres/
//
// With FRESHBENCH_TEST_REPLICA_OUTAGE=1 they also stop and start the
// standby.

// standbyName is the application_name the script's standby streams with.
const standbyName = "freshbench_standby"

// pairURLs returns the URLs of the primary and the standby, or skips.
func pairURLs(t *testing.T) (primary, standby string) {
	t.Helper()
	primary = testenv.URL(t, "FRESHBENCH_TEST_PG_PRIMARY_URL", "scripts/postgres-replica.sh", "primary")
	standby = testenv.URL(t, "FRESHBENCH_TEST_PG_STANDBY_URL", "scripts/postgres-replica.sh", "standby")
	return primary, standby
}

// openOn opens raw on table with the settings; it is closed when the test
// ends.
func openOn(t *testing.T, raw, table string, settings map[string]string) *store {
	t.Helper()
	tg, err := Open(context.Background(), withTable(t, raw, table), target.Options{Settings: settings, RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := tg.(*store)
	t.Cleanup(func() { s.Close() })
	return s
}

// openPair sets up a table of its own on the primary, dropped at the end,
// and returns the primary and the standby opened on it.
func openPair(t *testing.T) (primary, standby *store, table string) {
	t.Helper()
	p, sb := pairURLs(t)
	table = "fbt_" + randomHex(t, 6)
	primary = openOn(t, p, table, nil)
	if err := primary.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := primary.Teardown(context.Background()); err != nil {
			t.Errorf("teardown: %v", err)
		}
	})
	return primary, openOn(t, sb, table, nil), table
}

// replica runs a command of scripts/postgres-replica.sh.
func replica(t *testing.T, cmd string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "postgres-replica.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "bash", script, cmd).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", script, cmd, err, out)
	}
}

// standbyRow returns the account's row of the script's standby, or nil.
func standbyRow(t *testing.T, s *store) *Standby {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := s.standbys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, sb := range a {
		if sb.ApplicationName == standbyName {
			return &a[i]
		}
	}
	return nil
}

// waitRow polls until the standby's row is present, streaming as the
// synchronous standby (or absent), for at most 30 s, and returns the last
// one read.
func waitRow(t *testing.T, s *store, present bool) *Standby {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		row := standbyRow(t, s)
		if (row != nil && row.State == "streaming" && row.SyncState == "sync") == present {
			return row
		}
		if time.Now().After(deadline) {
			t.Fatalf("standby %s streaming as the synchronous standby: want %v within 30s, last row %+v", standbyName, present, row)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The primary's account has a row for the standby, streaming and named as
// synchronous; the standby, which nothing streams from, has none. With
// the standby stopped, the row goes; started again, it comes back.
func TestPairServerAccount(t *testing.T) {
	primary, standby, _ := openPair(t)
	row := waitRow(t, primary, true)
	if row.ReplayLagBytes == nil || *row.ReplayLagBytes < 0 {
		t.Errorf("standby row %+v, want a replay lag in bytes", row)
	}
	a, err := standby.standbys(context.Background())
	if err != nil || len(a) != 0 {
		t.Errorf("the standby's own account: %+v, %v; want no rows", a, err)
	}

	if os.Getenv("FRESHBENCH_TEST_REPLICA_OUTAGE") != "1" {
		t.Skip("set FRESHBENCH_TEST_REPLICA_OUTAGE=1 to stop and start the standby of scripts/postgres-replica.sh")
	}
	replica(t, "stop-standby")
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			replica(t, "start-standby")
		}
	})
	waitRow(t, primary, false)
	replica(t, "start-standby")
	restarted = true
	waitRow(t, primary, true)
}

// synchronous_commit=remote_apply makes a commit wait until the standby
// has applied it: a row written so is visible on the standby as soon as
// the write returns, and with the standby's replay paused the write does
// not return, while one with synchronous_commit=local does.
func TestPairSynchronousCommit(t *testing.T) {
	primary, standby, table := openPair(t)
	p, _ := pairURLs(t)
	sync := openOn(t, p, table, map[string]string{"synchronous_commit": "remote_apply"})
	async := openOn(t, p, table, map[string]string{"synchronous_commit": "local"})
	ctx := context.Background()
	waitRow(t, primary, true)

	for i := range 20 {
		docs := makeDocs("sync", i*5, 5, "")
		if _, err := sync.Write(ctx, target.Batch{Generator: "sync", Docs: docs}); err != nil {
			t.Fatal(err)
		}
		seen, err := standby.Visible(ctx, "sync", []string{docs[4].ID})
		if err != nil {
			t.Fatal(err)
		}
		if !seen[docs[4].ID] {
			t.Fatalf("batch %d written with remote_apply: not visible on the standby when the write returned", i)
		}
	}

	if os.Getenv("FRESHBENCH_TEST_REPLICA_OUTAGE") != "1" {
		// scripts/test.sh sets it where this test runs alone: its resume
		// would cut short another test's pause of the shared standby.
		t.Skip("set FRESHBENCH_TEST_REPLICA_OUTAGE=1 to pause the replay of scripts/postgres-replica.sh's standby")
	}
	if _, err := standby.pool.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := standby.pool.Exec(context.Background(), "SELECT pg_wal_replay_resume()"); err != nil {
			t.Errorf("resume replay on the standby: %v", err)
		}
	})
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	docs := makeDocs("paused", 0, 5, "")
	if _, err := async.Write(wctx, target.Batch{Generator: "paused", Docs: docs}); err != nil {
		t.Fatalf("write with synchronous_commit=local while the standby's replay is paused: %v", err)
	}
	if seen, err := standby.Visible(ctx, "paused", []string{docs[0].ID}); err != nil || seen[docs[0].ID] {
		t.Errorf("row written while replay is paused: visible on the standby %v (%v); want not yet", seen, err)
	}
	const bound = 2 * time.Second
	wctx, cancel = context.WithTimeout(ctx, bound)
	defer cancel()
	began := time.Now()
	_, err := sync.Write(wctx, target.Batch{Generator: "paused", Docs: makeDocs("paused", 5, 5, "")})
	if err == nil {
		t.Fatalf("a write with synchronous_commit=remote_apply returned after %s with the standby's replay paused; want it to wait", time.Since(began))
	}
	t.Logf("remote_apply write with replay paused: %v after %s", err, time.Since(began).Round(time.Millisecond))
}
