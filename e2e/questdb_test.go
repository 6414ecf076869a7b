package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/results"
)

const questdbEnv = "FRESHBENCH_TEST_QUESTDB_URL"

// questdbURL returns the test server's URL, or skips (fails when
// FRESHBENCH_REQUIRE_SERVERS=1).
func questdbURL(t *testing.T) *url.URL {
	t.Helper()
	raw := testenv.URL(t, questdbEnv, "scripts/questdb.sh")
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// questdbSQL runs one statement through QuestDB's HTTP API (/exec, on the
// URL's http_port) and returns the rows of its answer.
func questdbSQL(ctx context.Context, u *url.URL, sql string) ([][]any, error) {
	api := url.URL{Scheme: "http", Host: net.JoinHostPort(u.Hostname(), u.Query().Get("http_port")), Path: "/exec",
		RawQuery: url.Values{"query": {sql}}.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api.String(), nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var out struct {
		Dataset [][]any `json:"dataset"`
		Error   string  `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("%s: %w", sql, err)
	}
	if out.Error != "" {
		return nil, fmt.Errorf("%s: %s", sql, out.Error)
	}
	return out.Dataset, nil
}

// walRow is the table's row of wal_tables(): suspended, sequencerTxn,
// writerTxn; ok is false while the table does not exist.
func walRow(ctx context.Context, u *url.URL, table string) (suspended bool, seq, writer int64, ok bool, err error) {
	rows, err := questdbSQL(ctx, u, "SELECT suspended, sequencerTxn, writerTxn FROM wal_tables() WHERE name = '"+table+"'")
	if err != nil || len(rows) != 1 {
		return false, 0, 0, false, err
	}
	r := rows[0]
	return r[0].(bool), int64(r[1].(float64)), int64(r[2].(float64)), true, nil
}

// `freshbench run` against QuestDB, with the table's WAL apply suspended
// for a few seconds in the middle of the measured phase: every event due
// is accounted for, the audit finds every acknowledged event once, the
// probes written during the suspension show it in their visibility
// latency (the longest is about the suspension, most are far shorter),
// and QuestDB's own account agrees: a backlog of commits while suspended,
// and one commit per batch over the measured phase.
//
// The premise is a suspension that holds for its 3 s, which the test
// checks throughout the hold: QuestDB lifts one sent while its apply job
// is busy with the table, which holdSuspended sends again; a QuestDB on
// a busy machine was seen once never to show it in the 15 s after the
// ALTER returned. A run whose suspension did not hold is stopped and
// tried again on a fresh table, saying why, before the test fails.
func TestQuestDBRunWithSuspendedApply(t *testing.T) {
	u := questdbURL(t)
	const attempts = 3
	for i := 1; ; i++ {
		lifted := runWithSuspendedApply(t, *u)
		if lifted == "" || t.Failed() {
			return
		}
		if i == attempts {
			t.Fatalf("in %d runs, the server never held the suspension for %s: %s", attempts, suspendedFor, lifted)
		}
		t.Logf("run %d: %s: not the %s suspension this test is about; trying again on a fresh table", i, lifted, suspendedFor)
	}
}

// suspendedFor is how long the test holds the WAL apply suspended.
const suspendedFor = 3 * time.Second

// runWithSuspendedApply runs freshbench against a fresh table of u with
// its WAL apply suspended mid-run, and checks what the run and the server
// report. When the server lifts the suspension before the hold ends, it
// stops the run, drops the table and says how the suspension ended.
func runWithSuspendedApply(t *testing.T, base url.URL) (lifted string) {
	t.Helper()
	u := &base
	table := fmt.Sprintf("fb_e2e_qdb_%d", time.Now().UnixNano()%1e9)
	q := u.Query()
	q.Set("table", table)
	u.RawQuery = q.Encode()

	const (
		rate       = 1000
		batch      = 50
		duration   = 14 * time.Second
		warmup     = 2 * time.Second
		suspension = suspendedFor
	)
	out := filepath.Join(t.TempDir(), "run.json")
	cmd := exec.Command(freshbenchBinary(t), "run", "--quiet", "--metrics-addr=", "--target", u.String(),
		"--rate", fmt.Sprint(rate), "--batch-size", fmt.Sprint(batch), "--duration", duration.String(), "--warmup", warmup.String(),
		"--poll-interval", "100ms", "--probe-rate", "20", "--drain", "30s", "--recreate", "--teardown", "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Suspend the apply once the run has created its table and is well
	// into its measured phase.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		if _, _, _, ok, err := walRow(ctx, u, table); err != nil {
			t.Fatal(err)
		} else if ok {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("freshbench run ended before creating %s: %v\n%s", table, err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	time.Sleep(warmup + 3*time.Second)
	// The hold must end before the schedule does, 1 s spare.
	h, lifted := holdSuspended(ctx, t, u, table, suspension, time.Now().Add(duration-warmup-3*time.Second-suspension-time.Second))
	if lifted != "" {
		abandon(t, cmd, done, u, table)
		return lifted
	}
	held, heldAtMost := time.Since(h.seen), time.Since(h.altered)
	if _, err := questdbSQL(ctx, u, "ALTER TABLE "+table+" RESUME WAL"); err != nil {
		t.Fatal(err)
	}
	if err := heldBacklog(h.first, h.last); err != nil {
		t.Errorf("wal_tables() over the %s suspension: %v", held, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("freshbench run: %v\n%s", err, stderr.String())
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	t.Logf("backlog %d transactions after %s suspended; visibility p50 %.0f ms p99 %.0f ms max %.0f ms (%d probes); freshness lag p50 %.0f ms max %.0f ms",
		h.last.seq-h.last.writer, held.Round(time.Millisecond), s.VisibilityLatency.P50Ms, s.VisibilityLatency.P99Ms, s.VisibilityLatency.MaxMs,
		s.VisibilityLatency.Count, s.FreshnessLag.P50Ms, s.FreshnessLag.MaxMs)

	var due, acked, failed, unsent int64
	for _, p := range res.Phases {
		due += p.Due
		acked += p.Acked
		failed += p.Failed
		unsent += p.Unsent
	}
	if want := int64(rate * duration.Seconds()); due != want || acked+failed+unsent != due || failed != 0 {
		t.Errorf("accounting: %d due = %d acknowledged + %d failed + %d unsent; want %d due, none failed", due, acked, failed, unsent, want)
	}
	var visible int64
	for _, c := range res.Target().Completeness {
		visible += c.Visible
	}
	if !s.Audited || s.Missing != 0 || s.Unexpected != 0 || s.Duplicates != 0 || visible != acked {
		t.Errorf("audit: audited %v, %d visible of %d acknowledged, missing %d, unexpected %d, duplicates %d; want every acknowledged event once",
			s.Audited, visible, acked, s.Missing, s.Unexpected, s.Duplicates)
	}

	// A probe written just after the suspension began waited for all of
	// it; the resolution (the gap between the polls that missed and saw
	// it) and the write's own latency bound what it may add.
	heldMs, mostMs := float64(held.Milliseconds()), float64(heldAtMost.Milliseconds())
	if v := s.VisibilityLatency; v.MaxMs < 0.9*heldMs || v.MaxMs > mostMs+s.VisibilityResolution+s.WriteLatency.MaxMs+1000 || v.P50Ms > heldMs/2 {
		t.Errorf("visibility latency p50 %.0f ms, max %.0f ms; want the max about the suspension of %.0f–%.0f ms (at least 90%% of the shorter, at most the longer plus the resolution %.0f ms, the longest write %.0f ms and 1 s) and the p50 under half of it",
			v.P50Ms, v.MaxMs, heldMs, mostMs, s.VisibilityResolution, s.WriteLatency.MaxMs)
	}

	a := res.ServerAccount
	if a == nil || a.Error != "" || len(walApplyOf(t, a)) != 1 {
		t.Fatalf("server account %+v, want the table's WAL over the measured phase", a)
	}
	w := walApplyOf(t, a)[0]
	// One commit per batch of the measured phase. The two ends are taken
	// while writes are in flight, so at each edge the batches of the
	// longest write latency, and of the account's own request, may fall
	// on either side (a busy round: 235 commits for 240 batches, the
	// longest write 94 ms, the account's requests slower).
	firstEdge, lastEdge := a.EdgeBatches(res)
	if d := w.Committed - s.Batches; w.Table != table || d < -(firstEdge+lastEdge) || d > firstEdge+lastEdge {
		t.Errorf("wal_apply %+v: %d commits over the measured phase, want the %d batches it wrote (± %d at the edges: the longest write %.0f ms and the account's requests)",
			w, w.Committed, s.Batches, firstEdge+lastEdge, s.WriteLatency.MaxMs)
	}
	// The target's own check of its account says the same.
	if f := a.Findings; len(f) != 1 || f[0].Verdict != results.Agrees {
		t.Errorf("findings %+v: want QuestDB's check of its commits against the batches written, agreeing", f)
	}
	return ""
}

// applyHold is how a hold of the WAL apply went: the readings of
// wal_tables() when it was first seen suspended and at its end, when it
// was first seen, and when the ALTER that began it was sent.
type applyHold struct {
	first, last   walTxns
	seen, altered time.Time
}

// holdSuspended suspends table's WAL apply and checks that it stays
// suspended for d, reading wal_tables() throughout. QuestDB 9.3.4 lifts
// a suspension sent while its apply job is busy with the table once that
// job ends (its log: "job ejected", then the next transactions applied;
// on a quiet machine in 3 of 3 runs, 109–317 ms into the hold), so a
// suspension lifted so is sent again, until retryUntil; the hold counts
// from the last. It returns why the premise failed, or "".
func holdSuspended(ctx context.Context, t *testing.T, u *url.URL, table string, d time.Duration, retryUntil time.Time) (h applyHold, lifted string) {
	t.Helper()
	for sent := 1; ; sent++ {
		h, lifted = suspendOnce(ctx, t, u, table, d)
		if lifted == "" || time.Now().After(retryUntil) {
			if lifted != "" {
				lifted = fmt.Sprintf("%s (ALTER TABLE … SUSPEND WAL sent %d time(s))", lifted, sent)
			}
			return h, lifted
		}
		t.Logf("%s: sending ALTER TABLE … SUSPEND WAL again", lifted)
	}
}

// suspendOnce sends one ALTER TABLE … SUSPEND WAL and watches the hold
// for d.
func suspendOnce(ctx context.Context, t *testing.T, u *url.URL, table string, d time.Duration) (h applyHold, lifted string) {
	t.Helper()
	h.altered = time.Now()
	if _, err := questdbSQL(ctx, u, "ALTER TABLE "+table+" SUSPEND WAL"); err != nil {
		t.Fatal(err)
	}
	// The suspension began between the ALTER and the first wal_tables()
	// that shows it; the hold is counted from there.
	for {
		stopped, seq, writer, _, err := walRow(ctx, u, table)
		if err != nil {
			t.Fatal(err)
		}
		if stopped {
			h.first = walTxns{seq, writer}
			break
		}
		if time.Since(h.altered) > 15*time.Second {
			// Seen in a busy round: the ALTER returned and no poll in 15 s
			// showed the suspension (lifted before the first one saw it,
			// or never taken): not the premise either.
			return h, fmt.Sprintf("wal_tables() did not show %s suspended %s after ALTER TABLE … SUSPEND WAL returned", table, time.Since(h.altered).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Held: wal_tables() shows it suspended throughout.
	h.seen = time.Now()
	for stopped := true; time.Since(h.seen) < d; {
		time.Sleep(100 * time.Millisecond)
		var err error
		if stopped, h.last.seq, h.last.writer, _, err = walRow(ctx, u, table); err != nil {
			t.Fatal(err)
		}
		if !stopped {
			return h, fmt.Sprintf("wal_tables() showed %s no longer suspended %s into the hold (sequencerTxn %d, writerTxn %d)",
				table, time.Since(h.seen).Round(time.Millisecond), h.last.seq, h.last.writer)
		}
	}
	return h, ""
}

// abandon stops a run whose premise did not hold and drops its table.
func abandon(t *testing.T, cmd *exec.Cmd, done <-chan error, u *url.URL, table string) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Logf("stopping freshbench run: %v", err)
	}
	<-done
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := questdbSQL(ctx, u, "DROP TABLE "+table); err != nil {
		t.Logf("dropping %s: %v", table, err)
	}
}

// walTxns is a reading of a table's row of wal_tables().
type walTxns struct{ seq, writer int64 }

// heldBacklog checks the readings of wal_tables() at the start and the
// end of a suspension of the apply: the run committed meanwhile (the
// sequencer counts its commits) and none was applied (the writer stood
// still), so the backlog holds at least the commits made meanwhile. How
// many the run made is its own business: a driver slowed by a busy
// machine commits fewer batches, each still one commit.
func heldBacklog(start, end walTxns) error {
	committed := end.seq - start.seq
	if committed <= 0 || end.writer != start.writer || end.seq-end.writer < committed {
		return fmt.Errorf("sequencerTxn %d → %d, writerTxn %d → %d: want commits made, none applied, all of them in the backlog (%d)",
			start.seq, end.seq, start.writer, end.writer, end.seq-end.writer)
	}
	return nil
}

// The backlog of a suspension is held against the commits made while it
// held: a run slowed to 9 batches a second in the 3 s passes; an apply
// that went on (the writer moving) fails.
func TestHeldBacklogSlowDriver(t *testing.T) {
	start := walTxns{seq: 100, writer: 98}
	if err := heldBacklog(start, walTxns{seq: 127, writer: 98}); err != nil {
		t.Errorf("27 commits while suspended, none applied: %v", err)
	}
	if err := heldBacklog(start, walTxns{seq: 160, writer: 120}); err == nil {
		t.Error("the writer applied 22 commits while suspended: want an error")
	}
	if err := heldBacklog(start, start); err == nil {
		t.Error("no commit while suspended: want an error")
	}
}
