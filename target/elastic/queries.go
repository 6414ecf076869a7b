package elastic

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
)

// maxPage is the largest page a search returns by default
// (index.max_result_window).
const maxPage = 10000

// generatorFilter is the filter every probe query starts from: a term on
// the generator's keyword field, in filter context so that no score is
// computed.
func (t *Target) generatorFilter(generator string, more ...any) map[string]any {
	filter := append([]any{map[string]any{"term": map[string]any{t.cfg.generatorField(): generator}}}, more...)
	return map[string]any{"bool": map[string]any{"filter": filter}}
}

// search runs one _search (or _count) with a JSON body and decodes the
// response into out. A target opened with ReadLocal asks for the copies
// on the node it talks to.
func (t *Target) search(ctx context.Context, endpoint string, body map[string]any, out any) error {
	return t.searchWith(ctx, endpoint, t.searchParams(), body, out)
}

// searchWith is search with the URL parameters given.
func (t *Target) searchWith(ctx context.Context, endpoint, params string, body map[string]any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode query: %w", err)
	}
	return t.searchRaw(ctx, endpoint, params, b, out)
}

// searchRaw is searchWith with the body encoded already.
func (t *Target) searchRaw(ctx context.Context, endpoint, params string, b []byte, out any) error {
	res, err := t.do(ctx, http.MethodPost, "/"+t.ip+"/"+endpoint, params, b)
	if err != nil {
		return err
	}
	if !is2xx(res.status) {
		return serverError(res.status, res.body)
	}
	if err := json.Unmarshal(res.body, out); err != nil {
		return fmt.Errorf("decode %s response: %w", endpoint, err)
	}
	return nil
}

// searchParams are the URL parameters of every search: the node's own
// copies with ReadLocal.
func (t *Target) searchParams() string {
	if t.cfg.readLocal {
		return "preference=_local"
	}
	return ""
}

// Freshness returns the newest _event_time of the generator that a search
// sees (a max aggregation; the index is not refreshed).
func (t *Target) Freshness(ctx context.Context, generator string) (int64, bool, error) {
	v, ok, err := t.newest(ctx, generator, "_event_time")
	if err != nil {
		return 0, false, fmt.Errorf("%s: freshness of generator %s: %w", t.display, generator, err)
	}
	return v, ok, nil
}

// UpdateFreshness returns the newest _update_time of the generator that a
// search sees; events never updated have none.
func (t *Target) UpdateFreshness(ctx context.Context, generator string) (int64, bool, error) {
	v, ok, err := t.newest(ctx, generator, "_update_time")
	if err != nil {
		return 0, false, fmt.Errorf("%s: update freshness of generator %s: %w", t.display, generator, err)
	}
	return v, ok, nil
}

// newest is the max aggregation of a long field over the generator's
// documents, and false when no visible document has the field.
func (t *Target) newest(ctx context.Context, generator, field string) (int64, bool, error) {
	var out struct {
		Aggregations struct {
			Newest struct {
				Value *float64 `json:"value"`
			} `json:"newest"`
		} `json:"aggregations"`
	}
	err := t.search(ctx, "_search", map[string]any{
		"size":             0,
		"track_total_hits": false,
		"query":            t.generatorFilter(generator),
		"aggs":             map[string]any{"newest": map[string]any{"max": map[string]any{"field": field}}},
	}, &out)
	if err != nil {
		return 0, false, err
	}
	v := out.Aggregations.Newest.Value
	if v == nil || math.IsInf(*v, 0) || math.IsNaN(*v) {
		return 0, false, nil // no such document is visible yet
	}
	// The aggregation answers in a double; microsecond timestamps stay far
	// below 2^53, so the conversion is exact.
	return int64(math.Round(*v)), true, nil
}

// Visible returns which of ids a search sees: an ids query (not a real-time
// GET), with _source off so that only the ids come back.
func (t *Target) Visible(ctx context.Context, generator string, ids []string) (map[string]bool, error) {
	seen := make(map[string]bool, len(ids))
	for start := 0; start < len(ids); start += maxPage {
		chunk := ids[start:min(start+maxPage, len(ids))]
		var out struct {
			Hits struct {
				Hits []struct {
					ID string `json:"_id"`
				} `json:"hits"`
			} `json:"hits"`
		}
		err := t.search(ctx, "_search", map[string]any{
			"size":             len(chunk),
			"_source":          false,
			"track_total_hits": false,
			"query":            t.generatorFilter(generator, map[string]any{"ids": map[string]any{"values": chunk}}),
		}, &out)
		if err != nil {
			return nil, fmt.Errorf("%s: visibility of %d ids of generator %s: %w", t.display, len(chunk), generator, err)
		}
		for _, h := range out.Hits.Hits {
			seen[h.ID] = true
		}
	}
	return seen, nil
}

// Count returns how many documents of the generator a search sees.
func (t *Target) Count(ctx context.Context, generator string) (int64, error) {
	var out struct {
		Count int64 `json:"count"`
	}
	if err := t.search(ctx, "_count", map[string]any{"query": t.generatorFilter(generator)}, &out); err != nil {
		return 0, fmt.Errorf("%s: count of generator %s: %w", t.display, generator, err)
	}
	return out.Count, nil
}

// Revisions returns the _revision that a search sees for each of ids it
// sees: an ids query (not a real-time GET) that reads the revision from
// its sort value, so no _source is fetched. A document without _revision
// is the event as inserted, revision 0.
func (t *Target) Revisions(ctx context.Context, generator string, ids []string) (map[string]int64, error) {
	revs := make(map[string]int64, len(ids))
	for start := 0; start < len(ids); start += maxPage {
		chunk := ids[start:min(start+maxPage, len(ids))]
		var out struct {
			Hits struct {
				Hits []struct {
					ID   string        `json:"_id"`
					Sort []json.Number `json:"sort"`
				} `json:"hits"`
			} `json:"hits"`
		}
		err := t.search(ctx, "_search", map[string]any{
			"size":             len(chunk),
			"_source":          false,
			"track_total_hits": false,
			"query":            t.generatorFilter(generator, map[string]any{"ids": map[string]any{"values": chunk}}),
			"sort":             []any{longSort("_revision")},
		}, &out)
		if err != nil {
			return nil, fmt.Errorf("%s: revisions of %d ids of generator %s: %w", t.display, len(chunk), generator, err)
		}
		for _, h := range out.Hits.Hits {
			if len(h.Sort) != 1 {
				return nil, fmt.Errorf("%s: revisions of generator %s: hit %s without its sort value", t.display, generator, h.ID)
			}
			r, err := h.Sort[0].Int64()
			if err != nil {
				return nil, fmt.Errorf("%s: revisions of generator %s: sort value %q: %w", t.display, generator, h.Sort[0], err)
			}
			revs[h.ID] = revision(r)
		}
	}
	return revs, nil
}

// revision is the revision of a document whose _revision sorts as r: a
// document without one (the event as inserted) sorts last, as MaxInt64.
func revision(r int64) int64 {
	if r == math.MaxInt64 {
		return 0
	}
	return r
}

// longSort sorts ascending on a long field, which an index without
// mappings has not mapped before its first document with the field
// (sorting on it would fail the search). A document without the field
// sorts last, with the value MaxInt64.
func longSort(field string) map[string]any {
	return map[string]any{field: map[string]any{"order": "asc", "unmapped_type": "long"}}
}

// Updated calls fn with the _seq and revision of every document of the
// generator that a search sees with an _update_time, paged as Seqs pages.
func (t *Target) Updated(ctx context.Context, generator string, fn func(seq, revision int64)) error {
	return t.updated(ctx, generator, maxPage, fn)
}

func (t *Target) updated(ctx context.Context, generator string, page int, fn func(seq, revision int64)) error {
	err := t.scan(ctx, generator, page, []any{map[string]any{"exists": map[string]any{"field": "_update_time"}}},
		[]string{"_seq", "_revision"}, func(key []int64) { fn(key[0], revision(key[1])) })
	if err != nil {
		return fmt.Errorf("%s: updated events of generator %s: %w", t.display, generator, err)
	}
	return nil
}

// Seqs calls fn with the _seq of every document of the generator that a
// search sees, in _seq order, once per stored document.
func (t *Target) Seqs(ctx context.Context, generator string, fn func(seq int64)) error {
	return t.seqs(ctx, generator, maxPage, fn)
}

func (t *Target) seqs(ctx context.Context, generator string, page int, fn func(seq int64)) error {
	if err := t.scan(ctx, generator, page, nil, []string{"_seq"}, func(key []int64) { fn(key[0]) }); err != nil {
		return fmt.Errorf("%s: seqs of generator %s: %w", t.display, generator, err)
	}
	return nil
}

// scan calls fn with the key (the values of fields, the first of them
// _seq) of every document of the generator that a search sees and that
// matches filter, in key order, once per stored document. A document
// without _seq is left out.
//
// Pages are sorted by the key and read from the sort values (no _source,
// no stored fields). Duplicates share a key and no cheap unique
// tie-breaker exists (sorting on _id is disabled in Elasticsearch 8), so a
// page never ends inside a key: the documents of the page's last key are
// held back and read again at the start of the next page, which
// search_after with the last key, its last value less one, does. If one
// key fills a whole page, its copies are counted with _count instead.
func (t *Target) scan(ctx context.Context, generator string, page int, filter []any, fields []string, fn func(key []int64)) error {
	sort := make([]any, len(fields))
	for i, f := range fields {
		sort[i] = longSort(f)
	}
	var after []int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		body := map[string]any{
			"size":             page,
			"_source":          false,
			"stored_fields":    "_none_",
			"track_total_hits": false,
			"query":            t.generatorFilter(generator, filter...),
			"sort":             sort,
		}
		if after != nil {
			body["search_after"] = after
		}
		var out sortPage
		if err := t.searchWith(ctx, "_search", sortPageParams(t.searchParams()), body, &out); err != nil {
			return err
		}
		keys, err := out.keys(len(fields))
		if err != nil {
			return err
		}
		// Documents without _seq sort last, as MaxInt64.
		emit := func(key []int64) {
			if key[0] != math.MaxInt64 {
				fn(key)
			}
		}
		if len(keys) < page {
			for _, k := range keys {
				emit(k)
			}
			return nil
		}
		if keys[0][0] == math.MaxInt64 {
			return nil // only documents without _seq are left
		}

		last := keys[len(keys)-1]
		if slices.Equal(keys[0], last) {
			// One key fills the page: count its copies instead.
			var c struct {
				Count int64 `json:"count"`
			}
			q := t.generatorFilter(generator, append(slices.Clip(filter), keyFilter(fields, last)...)...)
			if err := t.search(ctx, "_count", map[string]any{"query": q}, &c); err != nil {
				return fmt.Errorf("count of key %v: %w", last, err)
			}
			for range c.Count {
				fn(last)
			}
			after = last
			continue
		}
		for _, k := range keys {
			if slices.Equal(k, last) {
				break
			}
			emit(k)
		}
		after = slices.Clone(last)
		after[len(after)-1]--
	}
}

// sortPageFilter trims a scan page to the sort values: the audit reads
// every stored event once, and each hit's _index, _id and _score would
// otherwise be most of the bytes to send and decode.
const sortPageFilter = "filter_path=hits.hits.sort"

// sortPageParams adds sortPageFilter to a search's URL parameters.
func sortPageParams(params string) string {
	if params == "" {
		return sortPageFilter
	}
	return params + "&" + sortPageFilter
}

// sortPage is a scan page: per hit, its sort values. They are decoded
// as int64 directly (sort values of long fields are JSON integers, a
// missing one ±MaxInt64), which spares a string per value.
type sortPage struct {
	Hits struct {
		Hits []struct {
			Sort []int64 `json:"sort"`
		} `json:"hits"`
	} `json:"hits"`
}

// keys returns the sort values of the page's hits, n per hit.
func (p *sortPage) keys(n int) ([][]int64, error) {
	hits := p.Hits.Hits
	keys := make([][]int64, len(hits))
	for i, h := range hits {
		if len(h.Sort) != n {
			// Documents without a field sort last with a sentinel; a
			// missing sort value means the response is not understood.
			return nil, fmt.Errorf("hit with %d sort values, want %d", len(h.Sort), n)
		}
		keys[i] = h.Sort
	}
	return keys, nil
}

// keyFilter matches the documents whose fields have the values of key; a
// MaxInt64 value (the sort value of a missing field) matches the
// documents without the field.
func keyFilter(fields []string, key []int64) []any {
	out := make([]any, len(fields))
	for i, f := range fields {
		if key[i] == math.MaxInt64 {
			out[i] = map[string]any{"bool": map[string]any{"must_not": map[string]any{"exists": map[string]any{"field": f}}}}
			continue
		}
		out[i] = map[string]any{"term": map[string]any{f: key[i]}}
	}
	return out
}
