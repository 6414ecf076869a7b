package questdb

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

var (
	_ target.AccountReporter = (*store)(nil)
	_ target.AccountChecker  = (*store)(nil)
)

// WALTablesTable names the table of WAL tables in a server account.
const WALTablesTable = "wal_tables"

// qWALTable reads the target table's row of wal_tables(); a table with
// wal=false has none.
const qWALTable = `SELECT name, suspended, sequencerTxn, writerTxn, errorTag, errorMessage FROM wal_tables() WHERE name = $1`

// Account is QuestDB's account of the table's WAL apply: the last
// transaction committed to its log against the last applied to the table,
// the backlog that freshbench's visibility latency measures from the
// outside.
type Account struct {
	WALTables []WALTable
}

// AccountTables puts the account in the results' shape.
func (a Account) AccountTables() []results.AccountTable {
	return []results.AccountTable{results.TableOf(WALTablesTable,
		"the table's write-ahead log (wal_tables()): transactions committed to it (sequencer_txn), applied to the table and visible to queries (writer_txn), and the backlog in between",
		a.WALTables)}
}

// WALTable is one row of QuestDB's wal_tables(): a table whose writes are
// committed to a write-ahead log and applied to the table (made visible
// to queries) later, by a separate job.
type WALTable struct {
	Table     string `account:"table,key"`
	Suspended bool   `account:"suspended"` // the apply stopped (an error, or ALTER TABLE … SUSPEND WAL)
	// SequencerTxn is the last transaction committed to the log (each
	// acknowledged ILP request or INSERT is one); WriterTxn the last one
	// applied to the table. Their difference is the apply backlog.
	SequencerTxn int64  `account:"sequencer_txn,counter,unit=transactions"`
	WriterTxn    int64  `account:"writer_txn,counter,unit=transactions"`
	Backlog      int64  `account:"backlog,level,unit=transactions"`
	ErrorTag     string `account:"error_tag"`
	ErrorMessage string `account:"error_message"`
}

// WALApply is one WAL table's log over an account's window: the
// transactions committed and applied in it, and the backlog (committed,
// not yet applied) at each end.
type WALApply struct {
	Table        string `account:"table"`
	Committed    int64  `account:"sequencer_txn"`
	Applied      int64  `account:"writer_txn"`
	BacklogStart int64  `account:"backlog_start"`
	BacklogEnd   int64  `account:"backlog_end"`
}

// WALApplyOf reads, per WAL table present at both ends of a, its log in
// between.
func WALApplyOf(a *results.Account) ([]WALApply, error) {
	var out []WALApply
	return out, results.ReadTable(a.WindowTable(WALTablesTable), &out)
}

// ServerAccount reports the table's row of wal_tables().
func (s *store) ServerAccount(ctx context.Context) (results.AccountSnapshot, error) {
	w, err := s.walTables(ctx)
	return Account{WALTables: w}, err
}

// walTables reads the table's row of wal_tables(), none for a table
// without WAL.
func (s *store) walTables(ctx context.Context) ([]WALTable, error) {
	var out []WALTable
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qWALTable, s.cfg.table)
	if err != nil {
		return nil, s.conn.Fail(ctx, "server account of", err)
	}
	var w WALTable
	var tag, msg *string // null when the table has no error
	_, err = pgx.ForEachRow(rows, []any{&w.Table, &w.Suspended, &w.SequencerTxn, &w.WriterTxn, &tag, &msg}, func() error {
		if tag != nil {
			w.ErrorTag = *tag
		}
		if msg != nil {
			w.ErrorMessage = *msg
		}
		w.Backlog = w.SequencerTxn - w.WriterTxn
		out = append(out, w)
		w = WALTable{}
		return nil
	})
	if err != nil {
		return nil, s.conn.Fail(ctx, "server account of", err)
	}
	return out, nil
}

// checkCommits names the check CheckAccount makes.
const checkCommits = "WAL commits against batches written"

// CheckAccount holds the transactions the table's log committed over the
// measured phase against the batches freshbench wrote in it: over ILP
// and HTTP each acknowledged request is one commit. The two ends of the
// account are taken while writes are in flight, so at each the batches
// of the longest write latency may fall on either side; a batch that
// failed or was retried may have committed too. Over TCP, or to a table
// without WAL, QuestDB commits on its own schedule and there is no check.
func (s *store) CheckAccount(a *results.Account, r *results.Result) []results.Finding {
	if !s.cfg.wal || s.cfg.transport != transportHTTP {
		return nil
	}
	return []results.Finding{checkWALCommits(a, r, s.cfg.table)}
}

// checkWALCommits is CheckAccount's check of table.
func checkWALCommits(a *results.Account, r *results.Result, table string) results.Finding {
	f := results.Finding{Check: checkCommits, Verdict: results.NotYetKnown}
	wal, err := WALApplyOf(a)
	if err != nil {
		f.Detail = err.Error()
		return f
	}
	var w *WALApply
	for i := range wal {
		if wal[i].Table == table {
			w = &wal[i]
		}
	}
	s := r.Summary
	switch {
	case w == nil:
		f.Detail = fmt.Sprintf("the account has no window of table %s (absent at one end, or dropped and made again)", table)
		return f
	case r.Target().Updates != nil:
		f.Detail = fmt.Sprintf("%d commits; the updates commit too, so the batches written do not bound them", w.Committed)
		return f
	case s.MeasuredS <= 0:
		f.Detail = fmt.Sprintf("%d commits; no measured phase to hold them against", w.Committed)
		return f
	}
	first, last := a.EdgeBatches(r)
	low, high := s.Batches-first-last, s.Batches+first+last+s.Retries+s.EventsFailed
	f.Verdict = results.Agrees
	if w.Committed < low || w.Committed > high {
		f.Verdict = results.Disagrees
	}
	f.Detail = fmt.Sprintf("%d transactions committed to the log of %s over the measured phase, for %d batches written (%d to %d allowed: %d and %d at the edges, the batches of the longest write, %.0f ms, and of the account's request, and one more for each retry and failed event)",
		w.Committed, table, s.Batches, low, high, first, last, s.WriteLatency.MaxMs)
	return f
}
