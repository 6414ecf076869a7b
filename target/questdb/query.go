package questdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*store)(nil)

// SetupQueries has nothing to prepare: the filtered fields live in the
// JSON of doc, read with json_extract, which no index serves; each query
// scans the table (newest and bucket use the generator's symbol index
// and the designated timestamp's order).
// With columns=flat there is no doc: the shipped kinds read their
// fields from it and every query draws its parameters from the documents
// Sample returns, which a flattened row no longer is.
func (s *store) SetupQueries(context.Context) error {
	if s.cfg.flat {
		return fmt.Errorf("%w columns=%s: the query workload reads the events, and draws its parameters, from the column doc, which a flattened table lacks; set columns=%s and recreate the table",
			target.ErrBadSetting, columnsFlat, columnsDoc)
	}
	return nil
}

// Query runs q's statement and reads every row it returns.
func (s *store) Query(ctx context.Context, q target.Query) (int, error) {
	return s.conn.CountRows(ctx, "query "+string(q.Kind)+" on", strings.ReplaceAll(q.Statement.Text, "{table}", s.tbl), q.Statement.Args...)
}

// QueryText is the statement Query sends, with its parameters.
func (s *store) QueryText(q target.Query) string {
	return target.StatementText(q.Statement, s.tbl)
}

// Sample returns up to n documents in storage order.
func (s *store) Sample(ctx context.Context, n int) ([][]byte, error) {
	return s.conn.Docs(ctx, `SELECT doc FROM `+s.tbl+` LIMIT $1`, n)
}
