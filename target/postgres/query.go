package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*store)(nil)

// queryIndexes are the indexes SetupQueries creates, by name suffix: a
// b-tree on each field an equality filters on, and a GIN index on the
// emails array for containment (jsonb_path_ops: smaller, serves only @>,
// the one operator used). The queries use the indexed expressions
// verbatim, which is what lets the planner use them. Suffixes stay within
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

// statement is the SQL of a kind; $1 is the parameter, $2 the limit.
func (s *store) statement(kind target.QueryKind) string {
	tbl := pgx.Identifier{s.cfg.table}.Sanitize()
	switch kind {
	case target.QueryPoint:
		return `SELECT doc FROM ` + tbl + ` WHERE doc->>'processBy' = $1 LIMIT $2`
	case target.QueryArray:
		return `SELECT doc FROM ` + tbl + ` WHERE doc->'emails' @> $1::jsonb LIMIT $2`
	case target.QueryAggregate:
		return `SELECT tag, count(*) AS n FROM ` + tbl + ` CROSS JOIN LATERAL jsonb_array_elements_text(doc->'tags') AS tag` +
			` WHERE doc->>'company' = $1 GROUP BY tag ORDER BY n DESC, tag LIMIT $2`
	case target.QueryNewest:
		return `SELECT doc FROM ` + tbl + ` WHERE generator_identifier = $1 ORDER BY _event_time DESC LIMIT $2`
	case target.QueryBucket:
		// _event_time is a bigint of µs: integer division floors it to
		// its second (it is never negative). The (generator, _event_time)
		// index covers the query.
		return `SELECT _event_time / 1000000 AS second, count(*) AS n FROM ` + tbl +
			` WHERE generator_identifier = $1 GROUP BY second ORDER BY second DESC LIMIT $2`
	}
	return ""
}

// param is the value bound to $1: containment takes a JSON array.
func param(q target.Query) string {
	if q.Kind == target.QueryArray {
		b, _ := json.Marshal([]string{q.Value}) // cannot fail: a slice of strings
		return string(b)
	}
	return q.Value
}

// Query runs q and reads every row it returns.
func (s *store) Query(ctx context.Context, q target.Query) (int, error) {
	if q.Own != nil {
		return s.conn.CountRows(ctx, "query "+string(q.Kind)+" on", strings.ReplaceAll(q.Own.Text, "{table}", s.table()), q.Own.Args...)
	}
	stmt := s.statement(q.Kind)
	if stmt == "" {
		return 0, fmt.Errorf("postgres: unknown query kind %q", q.Kind)
	}
	return s.conn.CountRows(ctx, string(q.Kind)+" query on", stmt, param(q), q.Limit)
}

// QueryText is the statement Query sends, with its parameters.
func (s *store) QueryText(q target.Query) string {
	if q.Own != nil {
		return target.OwnText(q.Own, s.table())
	}
	return s.statement(q.Kind) + "\n-- $1 = '" + strings.ReplaceAll(param(q), "'", "''") + "', $2 = " + strconv.Itoa(q.Limit)
}

// Sample returns up to n documents in storage order.
func (s *store) Sample(ctx context.Context, n int) ([][]byte, error) {
	return s.conn.Docs(ctx, `SELECT doc FROM `+pgx.Identifier{s.cfg.table}.Sanitize()+` LIMIT $1`, n)
}

// table is the table's name as SQL takes it.
func (s *store) table() string { return pgx.Identifier{s.cfg.table}.Sanitize() }
