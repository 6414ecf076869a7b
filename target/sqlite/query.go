package sqlite

import (
	"context"
	"database/sql"
	"strings"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*Target)(nil)

// SetupQueries indexes the JSON fields the point lookup and the
// aggregation filter on. The shipped kinds (query/kinds.yaml) use the
// indexed expression verbatim, which is what lets SQLite use the index. Array membership has no index
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

// Query runs q's statement and reads every row it returns.
func (t *Target) Query(ctx context.Context, q target.Query) (int, error) {
	op := "query " + string(q.Kind)
	rows, err := t.readers.QueryContext(ctx, strings.ReplaceAll(q.Statement.Text, "{table}", t.table), q.Statement.Args...)
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
	return target.StatementText(q.Statement, t.table)
}

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
