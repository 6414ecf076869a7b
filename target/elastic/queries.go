package elastic

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
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
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode query: %w", err)
	}
	res, err := t.do(ctx, http.MethodPost, "/"+t.ip+"/"+endpoint, t.searchParams(), b)
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
		"aggs":             map[string]any{"newest": map[string]any{"max": map[string]any{"field": "_event_time"}}},
	}, &out)
	if err != nil {
		return 0, false, fmt.Errorf("%s: freshness of generator %s: %w", t.display, generator, err)
	}
	v := out.Aggregations.Newest.Value
	if v == nil || math.IsInf(*v, 0) || math.IsNaN(*v) {
		return 0, false, nil // no document of the generator is visible yet
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

// Seqs calls fn with the _seq of every document of the generator that a
// search sees, in _seq order, once per stored document.
//
// Pages are sorted by _seq and read from the sort values (no _source, no
// stored fields). Duplicates share a _seq and no cheap unique tie-breaker
// exists (sorting on _id is disabled in Elasticsearch 8), so a page never
// ends inside a _seq: the documents of the page's last _seq are held back
// and read again at the start of the next page, which search_after with
// (last _seq - 1) does. If one _seq fills a whole page, its copies are
// counted with _count instead.
func (t *Target) Seqs(ctx context.Context, generator string, fn func(seq int64)) error {
	return t.seqs(ctx, generator, maxPage, fn)
}

func (t *Target) seqs(ctx context.Context, generator string, page int, fn func(seq int64)) error {
	var after *int64
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: seqs of generator %s: %w", t.display, generator, err)
		}
		body := map[string]any{
			"size":             page,
			"_source":          false,
			"stored_fields":    "_none_",
			"track_total_hits": false,
			"query":            t.generatorFilter(generator),
			// An index without mappings maps _seq with its first document;
			// before that, sorting on it would fail the search.
			"sort": []any{map[string]any{"_seq": map[string]any{"order": "asc", "unmapped_type": "long"}}},
		}
		if after != nil {
			body["search_after"] = []int64{*after}
		}
		var out struct {
			Hits struct {
				Hits []struct {
					Sort []json.Number `json:"sort"`
				} `json:"hits"`
			} `json:"hits"`
		}
		if err := t.search(ctx, "_search", body, &out); err != nil {
			return fmt.Errorf("%s: seqs of generator %s: %w", t.display, generator, err)
		}
		hits := out.Hits.Hits
		seqs := make([]int64, len(hits))
		for i, h := range hits {
			if len(h.Sort) == 0 {
				// Documents without a _seq sort last with a sentinel; a
				// missing sort value means the response is not understood.
				return fmt.Errorf("%s: seqs of generator %s: hit without sort value", t.display, generator)
			}
			s, err := h.Sort[0].Int64()
			if err != nil {
				return fmt.Errorf("%s: seqs of generator %s: sort value %q: %w", t.display, generator, h.Sort[0], err)
			}
			seqs[i] = s
		}
		if len(seqs) < page {
			for _, s := range seqs {
				if s == math.MaxInt64 {
					continue // a document without _seq (missing values sort last as MaxInt64)
				}
				fn(s)
			}
			return nil
		}

		last := seqs[len(seqs)-1]
		if seqs[0] == last {
			// One _seq fills the page: count its copies instead.
			var c struct {
				Count int64 `json:"count"`
			}
			q := t.generatorFilter(generator, map[string]any{"term": map[string]any{"_seq": last}})
			if err := t.search(ctx, "_count", map[string]any{"query": q}, &c); err != nil {
				return fmt.Errorf("%s: seqs of generator %s: count of _seq %d: %w", t.display, generator, last, err)
			}
			if last == math.MaxInt64 {
				return nil
			}
			for range c.Count {
				fn(last)
			}
			after = &last
			continue
		}
		for _, s := range seqs {
			if s == last {
				break
			}
			fn(s)
		}
		next := last - 1
		after = &next
	}
}
