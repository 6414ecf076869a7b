package questdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

const urlEnv = "FRESHBENCH_TEST_QUESTDB_URL"

// serverURL returns the test server's URL, or skips (fails when
// FRESHBENCH_REQUIRE_SERVERS=1) when none is configured.
func serverURL(tb testing.TB) string {
	tb.Helper()
	return testenv.URL(tb, urlEnv, "scripts/questdb.sh")
}

func randomHex(tb testing.TB, n int) string {
	tb.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// withTable returns raw with its table parameter replaced.
func withTable(tb testing.TB, raw, table string) *url.URL {
	tb.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("parse %s: %v", urlEnv, err)
	}
	q := u.Query()
	q.Set("table", table)
	u.RawQuery = q.Encode()
	return u
}

// openTarget opens the test server on a table of its own, as Open returns
// it; the caller sets it up and tears it down.
func openTarget(tb testing.TB, settings map[string]string) target.Target {
	tb.Helper()
	tg, err := Open(context.Background(), withTable(tb, serverURL(tb), "fbt_"+randomHex(tb, 6)), target.Options{Settings: settings})
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	return tg
}

// openStore is openTarget's store.
func openStore(tb testing.TB, settings map[string]string) *store {
	tb.Helper()
	return storeOf(tb, openTarget(tb, settings))
}

// storeOf is the store of a target Open returned: itself, or a WAL
// table's.
func storeOf(tb testing.TB, tg target.Target) *store {
	tb.Helper()
	switch s := tg.(type) {
	case *store:
		return s
	case walStore:
		return s.store
	}
	tb.Fatalf("Open returned a %T", tg)
	return nil
}

// openTest opens and sets up a table of its own, dropped at the end.
func openTest(tb testing.TB, settings map[string]string) *store {
	tb.Helper()
	s := openStore(tb, settings)
	tb.Cleanup(func() {
		if err := s.Teardown(context.Background()); err != nil {
			tb.Errorf("teardown: %v", err)
		}
		s.Close()
	})
	if err := s.Setup(context.Background()); err != nil {
		tb.Fatalf("setup: %v", err)
	}
	return s
}

// walTable reads the table's row of wal_tables() through ServerAccount,
// as the results file has it.
func walTable(ctx context.Context, s *store) (WALTable, error) {
	a, err := s.ServerAccount(ctx)
	if err != nil {
		return WALTable{}, err
	}
	var w []WALTable
	if err := results.ReadTable((&results.ServerAccount{Tables: a.AccountTables()}).Table(WALTablesTable), &w); err != nil {
		return WALTable{}, err
	}
	if len(w) != 1 {
		return WALTable{}, fmt.Errorf("wal_tables() has %d rows for %s, want 1", len(w), s.cfg.table)
	}
	return w[0], nil
}

// waitApplied waits until QuestDB says the table's WAL is applied up to
// its last commit: every acknowledged write is then visible.
func waitApplied(ctx context.Context, s *store, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		w, err := walTable(ctx, s)
		if err != nil {
			return err
		}
		if !w.Suspended && w.Backlog == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("WAL of %s not applied within %s: %+v", s.cfg.table, within, w)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
