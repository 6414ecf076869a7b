package pinot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*store)(nil)

// SetupQueries has nothing to prepare: the table's inverted indexes on
// the columns the queries filter on are made with it.
func (s *store) SetupQueries(context.Context) error { return nil }

// statement is the SQL of q, its value and limit written in (Pinot's SQL
// API takes no parameters).
func (s *store) statement(q target.Query) string {
	v, limit := lit(q.Value), " LIMIT "+strconv.Itoa(q.Limit)
	switch q.Kind {
	case target.QueryPoint:
		return `SELECT * FROM ` + s.tbl + ` WHERE "processBy" = ` + v + limit
	case target.QueryArray:
		// A multi-valued column equals a value when one of its values does.
		return `SELECT * FROM ` + s.tbl + ` WHERE "emails" = ` + v + limit
	case target.QueryAggregate:
		// Grouped by a multi-valued column, a row counts in the group of
		// each of its values.
		return `SELECT "tags", COUNT(*) FROM ` + s.tbl + ` WHERE "company" = ` + v +
			` GROUP BY "tags" ORDER BY COUNT(*) DESC, "tags"` + limit
	case target.QueryNewest:
		return `SELECT * FROM ` + s.tbl + ` WHERE "generator_identifier" = ` + v + ` ORDER BY "_event_time" DESC` + limit
	case target.QueryBucket:
		const sec = `DIV("_event_time", 1000000)`
		return `SELECT FLOOR(` + sec + `), COUNT(*) FROM ` + s.tbl + ` WHERE "generator_identifier" = ` + v +
			` GROUP BY FLOOR(` + sec + `) ORDER BY FLOOR(` + sec + `) DESC` + limit
	}
	return ""
}

// Query runs q and reads every row it returns.
// A query of one's own comes with its parameters written in as literals
// (package query: Pinot binds none).
func (s *store) Query(ctx context.Context, q target.Query) (int, error) {
	what, stmt := string(q.Kind)+" query on", s.statement(q)
	if q.Own != nil {
		what, stmt = "query "+string(q.Kind)+" on", strings.ReplaceAll(q.Own.Text, "{table}", s.tbl)
	}
	if stmt == "" {
		return 0, fmt.Errorf("pinot: unknown query kind %q", q.Kind)
	}
	rows, err := s.rows(ctx, what, stmt)
	return len(rows), err
}

// QueryText is the statement Query sends.
func (s *store) QueryText(q target.Query) string {
	if q.Own != nil {
		return target.OwnText(q.Own, s.tbl)
	}
	return s.statement(q)
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
