package pinot

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*store)(nil)

// SetupQueries has nothing to prepare: the table's inverted indexes on
// the columns the queries filter on are made with it.
func (s *store) SetupQueries(context.Context) error { return nil }

// Query runs q's statement, its parameters written in as literals
// (package query: Pinot binds none), and reads every row it returns.
func (s *store) Query(ctx context.Context, q target.Query) (int, error) {
	rows, err := s.rows(ctx, "query "+string(q.Kind)+" on", strings.ReplaceAll(q.Statement.Text, "{table}", s.tbl))
	return len(rows), err
}

// QueryText is the statement Query sends.
func (s *store) QueryText(q target.Query) string {
	return target.StatementText(q.Statement, s.tbl)
}

// Sample returns up to n rows as JSON objects of their columns (the
// fields of the events, multi-valued columns as arrays, JSON columns as
// strings).
func (s *store) Sample(ctx context.Context, n int) ([][]byte, error) {
	cols, rows, err := s.sql(ctx, "sample of", `SELECT * FROM `+s.tbl+` LIMIT `+strconv.Itoa(n))
	if err != nil && !errors.Is(err, errNoTable) {
		return nil, err
	}
	out := make([][]byte, 0, len(rows))
	for _, r := range rows {
		out = append(out, object(cols, r))
	}
	return out, nil
}
