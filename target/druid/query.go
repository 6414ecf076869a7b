package druid

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*store)(nil)

// SetupQueries has nothing to prepare: Druid indexes every string
// column (bitmap indexes), and arrays are filtered by ARRAY_CONTAINS.
func (s *store) SetupQueries(context.Context) error { return nil }

// Query runs q's statement and reads every row it returns.
func (s *store) Query(ctx context.Context, q target.Query) (int, error) {
	params := make([]param, len(q.Statement.Args))
	for i, a := range q.Statement.Args {
		params[i] = paramOf(a)
	}
	var n int
	err := s.sql(ctx, "query "+string(q.Kind)+" on", strings.ReplaceAll(q.Statement.Text, "{table}", s.ds), params, func([]json.RawMessage) error {
		n++
		return nil
	})
	if errors.Is(err, errNoDatasource) {
		return 0, nil
	}
	return n, err
}

// QueryText is the statement Query sends, with its parameters.
func (s *store) QueryText(q target.Query) string {
	return target.StatementText(q.Statement, s.ds)
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
