package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*store)(nil)

// queryIndexes are the indexes SetupQueries creates, by name suffix: a
// b-tree on each field an equality filters on, and a GIN index on the
// emails array for containment (jsonb_path_ops: smaller, serves only @>,
// the one operator used). The shipped kinds (query/kinds.yaml) use the
// indexed expressions verbatim, which is what lets the planner use them. Suffixes stay within
// what maxTableLen leaves of PostgreSQL's 63-byte identifiers.
var queryIndexes = []struct{ suffix, def string }{
	{"_procby_idx", `((doc->>'processBy'))`},
	{"_company_idx", `((doc->>'company'))`},
	{"_emails_idx", `USING gin ((doc->'emails') jsonb_path_ops)`},
}

// SetupQueries creates the query workload's indexes, under the same
// advisory lock as Setup. It is not bounded by the request timeout:
// indexing a large table takes as long as it takes.
func (s *store) SetupQueries(ctx context.Context) error {
	tbl := pgx.Identifier{s.cfg.table}.Sanitize()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "freshbench:"+s.cfg.table); err != nil {
			return err
		}
		for _, ix := range queryIndexes {
			name := pgx.Identifier{s.cfg.table + ix.suffix}.Sanitize()
			if _, err := tx.Exec(ctx, `CREATE INDEX IF NOT EXISTS `+name+` ON `+tbl+` `+ix.def); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.conn.Fail(ctx, "setup queries on", err)
	}
	return nil
}

// Query runs q's statement and reads every row it returns.
func (s *store) Query(ctx context.Context, q target.Query) (int, error) {
	return s.conn.CountRows(ctx, "query "+string(q.Kind)+" on", strings.ReplaceAll(q.Statement.Text, "{table}", s.table()), q.Statement.Args...)
}

// QueryText is the statement Query sends, with its parameters.
func (s *store) QueryText(q target.Query) string {
	return target.StatementText(q.Statement, s.table())
}

// Sample returns up to n documents in storage order.
func (s *store) Sample(ctx context.Context, n int) ([][]byte, error) {
	return s.conn.Docs(ctx, `SELECT doc FROM `+pgx.Identifier{s.cfg.table}.Sanitize()+` LIMIT $1`, n)
}

// table is the table's name as SQL takes it.
func (s *store) table() string { return pgx.Identifier{s.cfg.table}.Sanitize() }
