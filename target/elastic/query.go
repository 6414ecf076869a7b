package elastic

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*Target)(nil)

// queryFields are the fields the query workload filters, sorts or
// aggregates on, with the type each must have: a keyword matches a term
// exactly (a text field would match words of it), also inside an array.
var queryFields = map[string]string{
	"processBy":            "keyword",
	"emails":               "keyword",
	"company":              "keyword",
	"tags":                 "keyword",
	"generator_identifier": "keyword",
	"_event_time":          "long",
}

// SetupQueries checks that the index maps the query fields as Setup's
// mapping does. An index created otherwise (by a write to a missing index,
// or with mapping=dynamic) maps strings as text, and the queries would
// silently miss.
func (t *Target) SetupQueries(ctx context.Context) error {
	if t.cfg.mapping != MappingFreshbench {
		return fmt.Errorf("%w mapping=%s: the query workload needs freshbench's mapping (term queries on text fields miss); set mapping=%s and recreate the index",
			target.ErrBadSetting, t.cfg.mapping, MappingFreshbench)
	}
	names := slices.Sorted(maps.Keys(queryFields))
	indices, err := t.fieldTypes(ctx, names...)
	if err != nil {
		return fmt.Errorf("%s: %w", t.display, err)
	}
	for index, types := range indices {
		for _, f := range names {
			got := types[f]
			if got != queryFields[f] {
				if got == "" {
					got = "not mapped"
				}
				return fmt.Errorf("%s: index %s maps %s as %s, the queries need %s; create the index again with freshbench's mapping (recreate it)", t.display, index, f, got, queryFields[f])
			}
		}
	}
	return nil
}

// Query runs q's search body as one _search; its rows are the hits it
// returns plus the buckets of its top-level aggregations.
func (t *Target) Query(ctx context.Context, q target.Query) (int, error) {
	var out struct {
		Hits struct {
			Hits []json.RawMessage `json:"hits"`
		} `json:"hits"`
		Aggregations map[string]struct {
			Buckets []json.RawMessage `json:"buckets"`
		} `json:"aggregations"`
	}
	if err := t.searchRaw(ctx, "_search", t.searchParams(), []byte(q.Statement.Text), &out); err != nil {
		return 0, fmt.Errorf("%s: query %s: %w", t.display, q.Kind, err)
	}
	n := len(out.Hits.Hits)
	for _, a := range out.Aggregations {
		n += len(a.Buckets)
	}
	return n, nil
}

// QueryText is the request Query sends: method, path and JSON body.
func (t *Target) QueryText(q target.Query) string {
	path := "/" + t.ip + "/_search"
	if p := t.searchParams(); p != "" {
		path += "?" + p
	}
	return "POST " + path + "\n" + q.Statement.Text
}

// Sample returns the _source of up to n documents (at most a page).
func (t *Target) Sample(ctx context.Context, n int) ([][]byte, error) {
	var out struct {
		Hits struct {
			Hits []struct {
				Source json.RawMessage `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	body := map[string]any{"size": min(n, maxPage), "track_total_hits": false, "query": map[string]any{"match_all": map[string]any{}}}
	if err := t.search(ctx, "_search", body, &out); err != nil {
		return nil, fmt.Errorf("%s: sample documents: %w", t.display, err)
	}
	docs := make([][]byte, len(out.Hits.Hits))
	for i, h := range out.Hits.Hits {
		docs[i] = h.Source
	}
	return docs, nil
}
