package pinot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/freshbench/freshbench/target"
)

// lit is v as a Pinot SQL string literal. Pinot's SQL API takes no
// parameters: values are written in, their quotes doubled.
func lit(v string) string { return target.SQLLiteral(v) }

// list is vs as a list of literals, for IN (…).
func list(vs []string) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(lit(v))
	}
	return b.String()
}

// answer is the broker's answer to a query.
type answer struct {
	ResultTable *struct {
		DataSchema struct {
			ColumnNames []string `json:"columnNames"`
		} `json:"dataSchema"`
		Rows [][]json.RawMessage `json:"rows"`
	} `json:"resultTable"`
	Exceptions []struct {
		ErrorCode int    `json:"errorCode"`
		Message   string `json:"message"`
	} `json:"exceptions"`
	NumServersQueried   int `json:"numServersQueried"`
	NumServersResponded int `json:"numServersResponded"`
}

// errNoTable: the broker does not know the table (yet, or any more).
var errNoTable = errors.New("table not found")

// Pinot's error code of a query on a table the broker has no routing for.
const brokerResourceMissing = 410

// sql runs one query and returns its column names and rows. The query's
// own timeout is the request timeout, so that Pinot gives up when
// freshbench does. An answer with exceptions, or from fewer servers
// than were queried, is an error in Pinot's words: its rows would be
// a part of the answer.
func (s *store) sql(ctx context.Context, what, query string) ([]string, [][]json.RawMessage, error) {
	ctx, cancel := s.api.Request(ctx)
	defer cancel()
	body := map[string]any{"sql": query, "queryOptions": "timeoutMs=" + strconv.FormatInt(s.api.Timeout.Milliseconds(), 10)}
	resp, err := s.api.Send(ctx, http.MethodPost, s.cfg.broker+"/query/sql", body)
	if err != nil {
		return nil, nil, s.api.Fail(ctx, what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("pinot %s %s: %w", what, s.cfg.table, s.api.Failed(resp))
	}
	var a answer
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil {
		return nil, nil, s.api.Fail(ctx, what, err)
	}
	if len(a.Exceptions) > 0 {
		e := a.Exceptions[0]
		if e.ErrorCode == brokerResourceMissing {
			return nil, nil, errNoTable
		}
		msgs := make([]string, len(a.Exceptions))
		for i, e := range a.Exceptions {
			msgs[i] = fmt.Sprintf("error %d: %s", e.ErrorCode, message(e.Message))
		}
		return nil, nil, fmt.Errorf("pinot %s %s: %s", what, s.cfg.table, strings.Join(msgs, "; "))
	}
	if a.NumServersResponded < a.NumServersQueried {
		return nil, nil, fmt.Errorf("pinot %s %s: %d of %d servers answered", what, s.cfg.table, a.NumServersResponded, a.NumServersQueried)
	}
	if a.ResultTable == nil {
		return nil, nil, nil
	}
	return a.ResultTable.DataSchema.ColumnNames, a.ResultTable.Rows, nil
}

// message is Pinot's message without the Java stack trace after it, on
// one line.
func message(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "at ") || strings.HasPrefix(l, "...") {
			break
		}
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, " ")
}

// rows is sql without the column names; an unknown table has none.
func (s *store) rows(ctx context.Context, what, query string) ([][]json.RawMessage, error) {
	_, rows, err := s.sql(ctx, what, query)
	if errors.Is(err, errNoTable) {
		return nil, nil
	}
	return rows, err
}

// int64Of reads a whole number Pinot wrote as a JSON number.
func int64Of(v json.RawMessage) (int64, error) {
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0, fmt.Errorf("%s: not a number", v)
	}
	return int64(f), nil
}

func stringOf(v json.RawMessage) (string, error) {
	var s string
	err := json.Unmarshal(v, &s)
	return s, err
}

// one runs a query of one long column and returns its value in the
// first row; ok is false when there is no row.
func (s *store) one(ctx context.Context, what, query string) (v int64, ok bool, err error) {
	rows, err := s.rows(ctx, what, query)
	if err != nil || len(rows) == 0 || len(rows[0]) == 0 {
		return 0, false, err
	}
	v, err = int64Of(rows[0][0])
	if err != nil {
		return 0, false, fmt.Errorf("pinot %s %s: %w", what, s.cfg.table, err)
	}
	return v, true, nil
}

func (s *store) byGenerator(generator string) string {
	return ` FROM ` + s.tbl + ` WHERE "generator_identifier" = ` + lit(generator)
}

// Freshness is the newest _event_time of the generator's events (a
// selection, not MAX: Pinot's aggregates are doubles).
func (s *store) Freshness(ctx context.Context, generator string) (int64, bool, error) {
	return s.one(ctx, "freshness query on", `SELECT "_event_time"`+s.byGenerator(generator)+` ORDER BY "_event_time" DESC LIMIT 1`)
}

// Count counts the generator's rows (an event ingested twice into an
// append-only table counts twice).
func (s *store) Count(ctx context.Context, generator string) (int64, error) {
	n, _, err := s.one(ctx, "count of", `SELECT COUNT(*)`+s.byGenerator(generator))
	return n, err
}

// Visible says which of ids a query sees.
func (s *store) Visible(ctx context.Context, generator string, ids []string) (map[string]bool, error) {
	seen := make(map[string]bool, len(ids))
	rows, err := s.byIDs(ctx, "visibility probe on", `SELECT DISTINCT "_id"`, generator, ids)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		id, err := stringOf(r[0])
		if err != nil {
			return nil, fmt.Errorf("pinot visibility probe on %s: _id %s: %w", s.cfg.table, r[0], err)
		}
		seen[id] = true
	}
	return seen, nil
}

// byIDs runs `sel FROM table WHERE generator = g AND _id IN ids`, a
// probe that returns at most one row an id; no ids, no rows, nothing
// sent.
func (s *store) byIDs(ctx context.Context, what, sel, generator string, ids []string) ([][]json.RawMessage, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return s.rows(ctx, what, sel+s.byGenerator(generator)+` AND "_id" IN (`+list(ids)+`) LIMIT `+strconv.Itoa(len(ids)))
}

// selectAll runs `SELECT cols FROM table WHERE generator = g AND where`
// with a limit above every row of the generator (counted first): an
// answer as long as the limit is an error, not a cut-off audit.
func (s *store) selectAll(ctx context.Context, what, generator, cols, where string) ([][]json.RawMessage, error) {
	n, err := s.Count(ctx, generator)
	if err != nil {
		return nil, err
	}
	limit := n + n/4 + 1000
	rows, err := s.rows(ctx, what, `SELECT `+cols+s.byGenerator(generator)+where+` LIMIT `+strconv.FormatInt(limit, 10))
	if err != nil {
		return nil, err
	}
	if int64(len(rows)) >= limit {
		return nil, fmt.Errorf("pinot %s %s: %d rows or more, %d counted just before: the table grew during the read", what, s.cfg.table, len(rows), n)
	}
	return rows, nil
}

// Seqs calls fn with the _seq of every row of the generator.
func (s *store) Seqs(ctx context.Context, generator string, fn func(seq int64)) error {
	rows, err := s.selectAll(ctx, "audit of", generator, `"_seq"`, "")
	if err != nil {
		return err
	}
	for _, r := range rows {
		seq, err := int64Of(r[0])
		if err != nil {
			return fmt.Errorf("pinot audit of %s: _seq: %w", s.cfg.table, err)
		}
		fn(seq)
	}
	return nil
}

// UpdateFreshness is the newest _update_time of the generator's updated
// events.
func (u upsertStore) UpdateFreshness(ctx context.Context, generator string) (int64, bool, error) {
	return u.one(ctx, "update freshness query on", `SELECT "_update_time"`+u.byGenerator(generator)+
		` AND "_revision" > 0 ORDER BY "_update_time" DESC LIMIT 1`)
}

// Revisions says which revision a query sees of each of ids it sees.
func (u upsertStore) Revisions(ctx context.Context, generator string, ids []string) (map[string]int64, error) {
	revs := make(map[string]int64, len(ids))
	rows, err := u.byIDs(ctx, "revision probe on", `SELECT "_id", "_revision"`, generator, ids)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		id, err := stringOf(r[0])
		if err != nil {
			return nil, fmt.Errorf("pinot revision probe on %s: _id %s: %w", u.cfg.table, r[0], err)
		}
		rev, err := int64Of(r[1])
		if err != nil {
			return nil, fmt.Errorf("pinot revision probe on %s: _revision: %w", u.cfg.table, err)
		}
		revs[id] = max(revs[id], rev)
	}
	return revs, nil
}

// Updated calls fn with the _seq and revision of every updated event of
// the generator that a query sees.
func (u upsertStore) Updated(ctx context.Context, generator string, fn func(seq, revision int64)) error {
	rows, err := u.selectAll(ctx, "update audit of", generator, `"_seq", "_revision"`, ` AND "_revision" > 0`)
	if err != nil {
		return err
	}
	for _, r := range rows {
		seq, err1 := int64Of(r[0])
		rev, err2 := int64Of(r[1])
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("pinot update audit of %s: %w", u.cfg.table, err)
		}
		fn(seq, rev)
	}
	return nil
}

// object writes one row as a JSON object of its columns.
func object(cols []string, row []json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, v := range row[:min(len(row), len(cols))] {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(cols[i])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}
