package questdb

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*store)(nil)

// The array kinds read array elements by position: QuestDB has no
// function that unnests a JSON array of strings. docgen writes at most 2
// emails and 12 tags (10 ± 2); the bounds leave room and must stay above
// what any document holds, or a member beyond them is missed.
const (
	maxEmails = 4
	maxTags   = 16
)

// SetupQueries has nothing to prepare: the filtered fields live in the
// JSON of doc, read with json_extract, which no index serves; each query
// scans the table (newest and bucket use the generator's symbol index
// and the designated timestamp's order).
// With columns=flat there is no doc: the built-in kinds read their
// fields from it and every query draws its parameters from the documents
// Sample returns, which a flattened row no longer is.
func (s *store) SetupQueries(context.Context) error {
	if s.cfg.flat {
		return fmt.Errorf("%w columns=%s: the query workload reads the events, and draws its parameters, from the column doc, which a flattened table lacks; set columns=%s and recreate the table",
			target.ErrBadSetting, columnsFlat, columnsDoc)
	}
	return nil
}

// statement is the SQL of a kind; $1 is the parameter, $2 the limit.
func (s *store) statement(kind target.QueryKind) string {
	switch kind {
	case target.QueryPoint:
		return `SELECT doc FROM ` + s.tbl + ` WHERE json_extract(doc, '$.processBy') = $1 LIMIT $2`
	case target.QueryArray:
		return `SELECT doc FROM ` + s.tbl + ` WHERE ` + positions("json_extract(doc, '$.emails[%d]') = $1", maxEmails, " OR ") + ` LIMIT $2`
	case target.QueryAggregate:
		// The company's documents once, then one column per tag position.
		return `WITH d AS (SELECT doc FROM ` + s.tbl + ` WHERE json_extract(doc, '$.company') = $1)` +
			` SELECT tag, count() AS n FROM (` + positions("SELECT json_extract(doc, '$.tags[%d]') AS tag FROM d", maxTags, " UNION ALL ") + `)` +
			` WHERE tag IS NOT NULL ORDER BY n DESC, tag LIMIT $2`
	case target.QueryNewest:
		return `SELECT doc FROM ` + s.tbl + ` WHERE generator_identifier = $1 ORDER BY _event_time DESC LIMIT $2`
	case target.QueryBucket:
		// SAMPLE BY on the designated timestamp, with no FILL: only
		// seconds that hold rows. ALIGN TO CALENDAR (UTC, the default,
		// said so that a change of default cannot move the buckets)
		// starts each at a whole second, not at the first row.
		return `SELECT _event_time, count() AS n FROM ` + s.tbl + ` WHERE generator_identifier = $1` +
			` SAMPLE BY 1s ALIGN TO CALENDAR ORDER BY _event_time DESC LIMIT $2`
	}
	return ""
}

// positions joins format, given each position 0 … n-1, with sep.
func positions(format string, n int, sep string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(format, i)
	}
	return strings.Join(parts, sep)
}

// Query runs q and reads every row it returns.
func (s *store) Query(ctx context.Context, q target.Query) (int, error) {
	if q.Own != nil {
		return s.conn.CountRows(ctx, "query "+string(q.Kind)+" on", strings.ReplaceAll(q.Own.Text, "{table}", s.tbl), q.Own.Args...)
	}
	stmt := s.statement(q.Kind)
	if stmt == "" {
		return 0, fmt.Errorf("questdb: unknown query kind %q", q.Kind)
	}
	return s.conn.CountRows(ctx, string(q.Kind)+" query on", stmt, q.Value, q.Limit)
}

// QueryText is the statement Query sends, with its parameters.
func (s *store) QueryText(q target.Query) string {
	if q.Own != nil {
		return target.OwnText(q.Own, s.tbl)
	}
	return s.statement(q.Kind) + "\n-- $1 = " + quote(q.Value) + ", $2 = " + strconv.Itoa(q.Limit)
}

// Sample returns up to n documents in storage order.
func (s *store) Sample(ctx context.Context, n int) ([][]byte, error) {
	return s.conn.Docs(ctx, `SELECT doc FROM `+s.tbl+` LIMIT $1`, n)
}
