package druid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// param is one dynamic parameter of a Druid SQL query.
type param struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

func str(v string) param { return param{Type: "VARCHAR", Value: v} }

// paramOf is a parameter of a query of one's own, typed by its value:
// Druid takes each parameter with its SQL type.
func paramOf(v any) param {
	switch v.(type) {
	case int64:
		return param{Type: "BIGINT", Value: v}
	case float64:
		return param{Type: "DOUBLE", Value: v}
	case bool:
		return param{Type: "BOOLEAN", Value: v}
	}
	return str(fmt.Sprint(v))
}

// errNoDatasource: SQL does not know the datasource yet (no event was
// ingested into it) or any more.
var errNoDatasource = errors.New("datasource not found")

// sql runs one Druid SQL query and calls fn with each row's columns, in
// order, as the broker streams them. The query's own timeout is the
// request timeout, so that Druid gives up when freshbench does. Arrays
// come back as arrays, not as the strings Druid makes of them by default.
func (s *store) sql(ctx context.Context, what, query string, params []param, fn func(row []json.RawMessage) error) error {
	return s.rows(ctx, what, query, params, false, fn)
}

// rows is sql, with the column names as a first row when header is true.
func (s *store) rows(ctx context.Context, what, query string, params []param, header bool, fn func(row []json.RawMessage) error) error {
	ctx, cancel := s.api.Request(ctx)
	defer cancel()
	body := map[string]any{
		"query":        query,
		"resultFormat": "array",
		"header":       header,
		"context": map[string]any{
			"timeout":            s.api.Timeout.Milliseconds(),
			"sqlStringifyArrays": false,
		},
	}
	if len(params) > 0 {
		body["parameters"] = params
	}
	resp, err := s.api.Send(ctx, http.MethodPost, s.cfg.broker+"/druid/v2/sql", body)
	if err != nil {
		return s.api.Fail(ctx, what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := s.api.Failed(resp)
		var e *druidError
		if errors.As(err, &e) && e.ErrorCode == "invalidInput" && strings.Contains(e.ErrorMessage, "Object '"+s.cfg.datasource+"' not found") {
			return errNoDatasource
		}
		return fmt.Errorf("druid %s %s: %w", what, s.cfg.datasource, err)
	}
	dec := json.NewDecoder(resp.Body)
	if _, err := dec.Token(); err != nil { // [
		return s.api.Fail(ctx, what, err)
	}
	for dec.More() {
		var row []json.RawMessage
		if err := dec.Decode(&row); err != nil {
			return s.api.Fail(ctx, what, err)
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	// A query that fails after its first rows ends the array early and
	// sends no closing bracket: the answer is incomplete.
	if _, err := dec.Token(); err != nil {
		return s.api.Fail(ctx, what, fmt.Errorf("the answer ended early: %w", err))
	}
	return nil
}

// one runs a query of one row and one column and decodes it into v; ok is
// false when the value is null or the datasource is unknown.
func (s *store) one(ctx context.Context, what, query string, params []param, v any) (ok bool, err error) {
	err = s.sql(ctx, what, query, params, func(row []json.RawMessage) error {
		if len(row) != 1 || string(row[0]) == "null" {
			return nil
		}
		ok = true
		return json.Unmarshal(row[0], v)
	})
	if errors.Is(err, errNoDatasource) {
		return false, nil
	}
	return ok, err
}

// Freshness is the newest _event_time of the generator's events.
func (s *store) Freshness(ctx context.Context, generator string) (int64, bool, error) {
	var t int64
	ok, err := s.one(ctx, "freshness query on",
		`SELECT MAX("_event_time") FROM `+s.ds+` WHERE "generator_identifier" = ?`, []param{str(generator)}, &t)
	return t, ok, err
}

// Count counts the generator's events (rows: an event ingested twice
// counts twice).
func (s *store) Count(ctx context.Context, generator string) (int64, error) {
	var n int64
	_, err := s.one(ctx, "count of",
		`SELECT COUNT(*) FROM `+s.ds+` WHERE "generator_identifier" = ?`, []param{str(generator)}, &n)
	return n, err
}

// Visible says which of ids a query sees.
func (s *store) Visible(ctx context.Context, generator string, ids []string) (map[string]bool, error) {
	seen := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return seen, nil
	}
	params := make([]param, 0, len(ids)+1)
	params = append(params, str(generator))
	for _, id := range ids {
		params = append(params, str(id))
	}
	q := `SELECT DISTINCT "_id" FROM ` + s.ds + ` WHERE "generator_identifier" = ? AND "_id" IN (?` + strings.Repeat(",?", len(ids)-1) + `)`
	err := s.sql(ctx, "visibility probe on", q, params, func(row []json.RawMessage) error {
		var id string
		if err := json.Unmarshal(row[0], &id); err != nil {
			return err
		}
		seen[id] = true
		return nil
	})
	if errors.Is(err, errNoDatasource) {
		return seen, nil
	}
	return seen, err
}

// Seqs calls fn with the _seq of every row of the generator.
func (s *store) Seqs(ctx context.Context, generator string, fn func(seq int64)) error {
	err := s.sql(ctx, "audit of", `SELECT "_seq" FROM `+s.ds+` WHERE "generator_identifier" = ?`, []param{str(generator)},
		func(row []json.RawMessage) error {
			seq, err := strconv.ParseInt(string(row[0]), 10, 64)
			if err != nil {
				return fmt.Errorf("druid audit of %s: _seq %s: %w", s.cfg.datasource, row[0], err)
			}
			fn(seq)
			return nil
		})
	if errors.Is(err, errNoDatasource) {
		return nil
	}
	return err
}
