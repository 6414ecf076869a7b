package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*Target)(nil)

// SetupQueries indexes the JSON fields the point lookup and the
// aggregation filter on. The queries use the indexed expression verbatim,
// which is what lets SQLite use the index. Array membership has no index
// in SQLite: that query reads every row.
func (t *Target) SetupQueries(ctx context.Context) error {
	for _, field := range []string{"processBy", "company"} {
		stmt := `CREATE INDEX IF NOT EXISTS ` + t.table + `_` + strings.ToLower(field) +
			` ON ` + t.table + `(json_extract(doc, '$.` + field + `'))`
		if _, err := t.writer.ExecContext(ctx, stmt); err != nil {
			return t.wrap("setup queries", err)
		}
	}
	return nil
}

// statement is q's SQL; the parameters are q.Value and q.Limit.
func (t *Target) statement(kind target.QueryKind) string {
	switch kind {
	case target.QueryPoint:
		return `SELECT doc FROM ` + t.table + ` WHERE json_extract(doc, '$.processBy') = ? LIMIT ?`
	case target.QueryArray:
		return `SELECT doc FROM ` + t.table + ` WHERE EXISTS (SELECT 1 FROM json_each(doc, '$.emails') WHERE value = ?) LIMIT ?`
	case target.QueryAggregate:
		return `SELECT tag.value, count(*) AS n FROM ` + t.table + `, json_each(doc, '$.tags') AS tag` +
			` WHERE json_extract(doc, '$.company') = ? GROUP BY tag.value ORDER BY n DESC, tag.value LIMIT ?`
	case target.QueryNewest:
		return `SELECT doc FROM ` + t.table + ` WHERE generator_identifier = ? ORDER BY _event_time DESC LIMIT ?`
	case target.QueryBucket:
		// _event_time is an INTEGER of µs: integer division floors it to
		// its second (it is never negative). The (generator, _event_time)
		// index covers the query.
		return `SELECT _event_time / 1000000 AS second, count(*) AS n FROM ` + t.table +
			` WHERE generator_identifier = ? GROUP BY second ORDER BY second DESC LIMIT ?`
	}
	return ""
}

// Query runs q and reads every row it returns.
func (t *Target) Query(ctx context.Context, q target.Query) (int, error) {
	if q.Own != nil {
		return t.own(ctx, q)
	}
	stmt := t.statement(q.Kind)
	if stmt == "" {
		return 0, fmt.Errorf("sqlite %s: unknown query kind %q", t.path, q.Kind)
	}
	rows, err := t.readers.QueryContext(ctx, stmt, q.Value, q.Limit)
	if err != nil {
		return 0, t.wrap(string(q.Kind)+" query", err)
	}
	defer rows.Close()
	n := 0
	cols := 1
	if q.Kind == target.QueryAggregate || q.Kind == target.QueryBucket {
		cols = 2
	}
	dest := make([]any, cols)
	for i := range dest {
		dest[i] = new(sql.RawBytes)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, t.wrap(string(q.Kind)+" query", err)
		}
		n++
	}
	return n, t.wrapNil(string(q.Kind)+" query", rows.Err())
}

// own runs a query of the user's own and reads every row it returns.
func (t *Target) own(ctx context.Context, q target.Query) (int, error) {
	op := "query " + string(q.Kind)
	rows, err := t.readers.QueryContext(ctx, strings.ReplaceAll(q.Own.Text, "{table}", t.table), q.Own.Args...)
	if err != nil {
		return 0, t.wrap(op, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, t.wrap(op, err)
	}
	dest := make([]any, len(cols))
	for i := range dest {
		dest[i] = new(sql.RawBytes)
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, t.wrap(op, err)
		}
		n++
	}
	return n, t.wrapNil(op, rows.Err())
}

// QueryText is the statement Query sends, with its parameters.
func (t *Target) QueryText(q target.Query) string {
	if q.Own != nil {
		return target.OwnText(q.Own, t.table)
	}
	return t.statement(q.Kind) + "\n-- parameters: " + quote(q.Value) + ", " + strconv.Itoa(q.Limit)
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Sample returns up to n documents in storage order.
func (t *Target) Sample(ctx context.Context, n int) ([][]byte, error) {
	rows, err := t.readers.QueryContext(ctx, `SELECT doc FROM `+t.table+` LIMIT ?`, n)
	if err != nil {
		return nil, t.wrap("sample", err)
	}
	defer rows.Close()
	var docs [][]byte
	for rows.Next() {
		var d []byte
		if err := rows.Scan(&d); err != nil {
			return nil, t.wrap("sample", err)
		}
		docs = append(docs, d)
	}
	return docs, t.wrapNil("sample", rows.Err())
}
