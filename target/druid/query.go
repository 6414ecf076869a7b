package druid

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*store)(nil)

// SetupQueries has nothing to prepare: Druid indexes every string
// column (bitmap indexes), and arrays are filtered by ARRAY_CONTAINS.
func (s *store) SetupQueries(context.Context) error { return nil }

// statement is the SQL of a kind with its parameter as ? and its limit
// written in (a row count, not user text).
func (s *store) statement(q target.Query) string {
	limit := " LIMIT " + strconv.Itoa(q.Limit)
	switch q.Kind {
	case target.QueryPoint:
		return `SELECT * FROM ` + s.ds + ` WHERE "processBy" = ?` + limit
	case target.QueryArray:
		return `SELECT * FROM ` + s.ds + ` WHERE ARRAY_CONTAINS("emails", ?)` + limit
	case target.QueryAggregate:
		return `SELECT t.tag, COUNT(*) AS n FROM ` + s.ds + ` CROSS JOIN UNNEST("tags") AS t(tag)` +
			` WHERE "company" = ? GROUP BY t.tag ORDER BY n DESC, t.tag` + limit
	case target.QueryNewest:
		// A scan orders by __time only: _event_time to the millisecond,
		// so events of one millisecond come in no set order.
		return `SELECT * FROM ` + s.ds + ` WHERE "generator_identifier" = ? ORDER BY __time DESC` + limit
	case target.QueryBucket:
		return `SELECT TIME_FLOOR(__time, 'PT1S') AS s, COUNT(*) AS n FROM ` + s.ds +
			` WHERE "generator_identifier" = ? GROUP BY 1 ORDER BY 1 DESC` + limit
	}
	return ""
}

// Query runs q and reads every row it returns.
func (s *store) Query(ctx context.Context, q target.Query) (int, error) {
	what, stmt, params := string(q.Kind)+" query on", s.statement(q), []param{str(q.Value)}
	if q.Own != nil {
		what, stmt, params = "query "+string(q.Kind)+" on", strings.ReplaceAll(q.Own.Text, "{table}", s.ds), make([]param, len(q.Own.Args))
		for i, a := range q.Own.Args {
			params[i] = paramOf(a)
		}
	}
	if stmt == "" {
		return 0, fmt.Errorf("druid: unknown query kind %q", q.Kind)
	}
	var n int
	err := s.sql(ctx, what, stmt, params, func([]json.RawMessage) error {
		n++
		return nil
	})
	if errors.Is(err, errNoDatasource) {
		return 0, nil
	}
	return n, err
}

// QueryText is the statement Query sends, with its parameter.
func (s *store) QueryText(q target.Query) string {
	if q.Own != nil {
		return target.OwnText(q.Own, s.ds)
	}
	return s.statement(q) + "\n-- ? = " + strconv.Quote(q.Value)
}

// Sample returns up to n rows as JSON objects of their columns (the
// fields of the events, arrays as arrays), in storage order.
func (s *store) Sample(ctx context.Context, n int) ([][]byte, error) {
	var cols [][]byte // JSON strings
	var out [][]byte
	err := s.rows(ctx, "sample of", `SELECT * FROM `+s.ds+` LIMIT `+strconv.Itoa(n), nil, true, func(row []json.RawMessage) error {
		if cols == nil {
			for _, c := range row {
				cols = append(cols, c)
			}
			return nil
		}
		var b bytes.Buffer
		b.WriteByte('{')
		for i, v := range row[:min(len(row), len(cols))] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(cols[i])
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
		out = append(out, b.Bytes())
		return nil
	})
	if errors.Is(err, errNoDatasource) {
		return nil, nil
	}
	return out, err
}
