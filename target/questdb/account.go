package questdb

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

var _ target.AccountReporter = (*store)(nil)

// qWALTable reads the target table's row of wal_tables(); a table with
// wal=false has none.
const qWALTable = `SELECT name, suspended, sequencerTxn, writerTxn, errorTag, errorMessage FROM wal_tables() WHERE name = $1`

// ServerAccount reports QuestDB's account of the table's WAL apply: the
// last transaction committed to its log against the last applied to the
// table, the backlog that freshbench's visibility latency measures from
// the outside.
func (s *store) ServerAccount(ctx context.Context) (results.ServerAccount, error) {
	var acct results.ServerAccount
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qWALTable, s.cfg.table)
	if err != nil {
		return acct, s.conn.Fail(ctx, "server account of", err)
	}
	var w results.WALTableAccount
	var tag, msg *string // null when the table has no error
	_, err = pgx.ForEachRow(rows, []any{&w.Table, &w.Suspended, &w.SequencerTxn, &w.WriterTxn, &tag, &msg}, func() error {
		if tag != nil {
			w.ErrorTag = *tag
		}
		if msg != nil {
			w.ErrorMessage = *msg
		}
		acct.WALTables = append(acct.WALTables, w)
		w = results.WALTableAccount{}
		return nil
	})
	if err != nil {
		return acct, s.conn.Fail(ctx, "server account of", err)
	}
	return acct, nil
}
