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

// queryBody is the _search body of q. Every filter is in filter context:
// no score is computed, as a SQL WHERE computes none.
func queryBody(q target.Query) map[string]any {
	term := func(field string) map[string]any {
		return map[string]any{"bool": map[string]any{"filter": []any{map[string]any{"term": map[string]any{field: q.Value}}}}}
	}
	switch q.Kind {
	case target.QueryPoint:
		return map[string]any{"size": q.Limit, "track_total_hits": false, "query": term("processBy")}
	case target.QueryArray:
		// A term query on an array field matches any of its elements.
		return map[string]any{"size": q.Limit, "track_total_hits": false, "query": term("emails")}
	case target.QueryAggregate:
		return map[string]any{
			"size": 0, "track_total_hits": false, "query": term("company"),
			// Ordered by count, ties by key: the SQL targets' order.
			"aggs": map[string]any{"tags": map[string]any{"terms": map[string]any{
				"field": "tags", "size": q.Limit, "order": []any{map[string]any{"_count": "desc"}, map[string]any{"_key": "asc"}},
			}}},
		}
	case target.QueryNewest:
		return map[string]any{
			"size": q.Limit, "track_total_hits": false, "query": term("generator_identifier"),
			"sort": []any{map[string]any{"_event_time": map[string]any{"order": "desc"}}},
		}
	case target.QueryBucket:
		// A histogram of the long _event_time (µs) by whole seconds, as
		// the source of a composite aggregation: that returns only
		// buckets that hold documents, newest first, and at most size of
		// them, keeping no more than that many per shard, where a plain
		// histogram builds every second of the generator's history (and
		// fails past search.max_buckets) before any can be cut.
		return map[string]any{
			"size": 0, "track_total_hits": false, "query": term("generator_identifier"),
			"aggs": map[string]any{"seconds": map[string]any{"composite": map[string]any{
				"size": q.Limit,
				"sources": []any{map[string]any{"second": map[string]any{"histogram": map[string]any{
					"field": "_event_time", "interval": 1_000_000, "order": "desc",
				}}}},
			}}},
		}
	}
	return nil
}

// Query runs q as one _search and counts the hits, or the buckets of an
// aggregation.
func (t *Target) Query(ctx context.Context, q target.Query) (int, error) {
	if q.Own != nil {
		return t.own(ctx, q)
	}
	body := queryBody(q)
	if body == nil {
		return 0, fmt.Errorf("%s: unknown query kind %q", t.display, q.Kind)
	}
	var out struct {
		Hits struct {
			Hits []json.RawMessage `json:"hits"`
		} `json:"hits"`
		Aggregations struct {
			Tags struct {
				Buckets []json.RawMessage `json:"buckets"`
			} `json:"tags"`
			Seconds struct {
				Buckets []json.RawMessage `json:"buckets"`
			} `json:"seconds"`
		} `json:"aggregations"`
	}
	if err := t.search(ctx, "_search", body, &out); err != nil {
		return 0, fmt.Errorf("%s: %s query: %w", t.display, q.Kind, err)
	}
	switch q.Kind {
	case target.QueryAggregate:
		return len(out.Aggregations.Tags.Buckets), nil
	case target.QueryBucket:
		return len(out.Aggregations.Seconds.Buckets), nil
	}
	return len(out.Hits.Hits), nil
}

// QueryText is the request Query sends: method, path and JSON body.
func (t *Target) QueryText(q target.Query) string {
	if q.Own != nil {
		return "POST /" + t.ip + "/_search\n" + q.Own.Text
	}
	b, _ := json.MarshalIndent(queryBody(q), "", "  ") // cannot fail: maps of strings and numbers
	path := "/" + t.ip + "/_search"
	if p := t.searchParams(); p != "" {
		path += "?" + p
	}
	return "POST " + path + "\n" + string(b)
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

// own runs a search body of the user's own; its rows are the hits it
// returns plus the buckets of its top-level aggregations.
func (t *Target) own(ctx context.Context, q target.Query) (int, error) {
	var out struct {
		Hits struct {
			Hits []json.RawMessage `json:"hits"`
		} `json:"hits"`
		Aggregations map[string]struct {
			Buckets []json.RawMessage `json:"buckets"`
		} `json:"aggregations"`
	}
	if err := t.searchRaw(ctx, "_search", t.searchParams(), []byte(q.Own.Text), &out); err != nil {
		return 0, fmt.Errorf("%s: query %s: %w", t.display, q.Kind, err)
	}
	n := len(out.Hits.Hits)
	for _, a := range out.Aggregations {
		n += len(a.Buckets)
	}
	return n, nil
}
