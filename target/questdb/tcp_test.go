package questdb

import (
	"context"
	"slices"
	"testing"
	"time"
)

// waitCount waits until QuestDB holds n events of gen.
func waitCount(t *testing.T, s *store, gen string, n int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, err := s.Count(context.Background(), gen)
		if err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events of %s stored after %s, want %d", got, gen, within, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Over TCP, into a table without WAL, rows arrive and become visible once
// the server commits them, and a row QuestDB rejects (it logs "could not
// write line protocol measurement" and drops it) is still counted
// acknowledged: TCP has no answer. Only the audit finds it, missing. A
// table without WAL has no row in wal_tables(), so no account.
func TestTCPRejectionsOnlyInAudit(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, map[string]string{"ilp_transport": "tcp", "wal": "false"})
	good, bad := "tcp"+randomHex(t, 4), "tcp"+randomHex(t, 4)
	res, err := s.Write(ctx, docs(good, 20, time.Now().UnixMicro()))
	if err != nil || res.Acknowledged != 20 {
		t.Fatalf("write: %+v, %v; want 20 acknowledged", res, err)
	}
	waitCount(t, s, good, 20, 30*time.Second)

	b := docs(bad, 20, time.Now().UnixMicro())
	b.Docs[5].EventTime = -1
	res, err = s.Write(ctx, b)
	if err != nil || res.Acknowledged != 20 || res.Failed != 0 {
		t.Fatalf("write with a bad row: %+v, %v; want 20 acknowledged, as TCP cannot tell", res, err)
	}
	// What the server kept of the batch shows within its ILP/TCP commit
	// interval (line.tcp.commit.interval.default, 2 s) and the apply of
	// the commit; the good rows of the first batch took the same path.
	time.Sleep(3 * time.Second)
	seqs := stored(t, s, bad)
	if slices.Contains(seqs, 5) || len(seqs) >= 20 {
		t.Errorf("stored %v of the batch with a bad row 5; want it missing", seqs)
	}
	t.Logf("acknowledged 20, stored %d: the audit finds %d missing", len(seqs), 20-len(seqs))

	a, err := s.ServerAccount(ctx)
	if err != nil || len(a.WALTables) != 0 {
		t.Errorf("account of a table without WAL: %+v, %v; want no WAL table", a, err)
	}
}
