package noop

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// searchRequest is the part of a _search or _count body the server reads.
type searchRequest struct {
	Size           *int                       `json:"size"`
	Query          json.RawMessage            `json:"query"`
	Sort           json.RawMessage            `json:"sort"`
	SearchAfter    []json.Number              `json:"search_after"`
	Aggs           map[string]json.RawMessage `json:"aggs"`
	Aggregations   map[string]json.RawMessage `json:"aggregations"`
	TrackTotalHits json.RawMessage            `json:"track_total_hits"`
	Source         json.RawMessage            `json:"_source"`
}

// selection is what a query selects, in the terms the server keeps.
type selection struct {
	gen    string
	hasGen bool
	seq    int64
	hasSeq bool
	ids    []string
	hasIDs bool
	// none: the query has a condition on something the server keeps
	// nothing of (a field of the documents): no document matches it.
	none bool
}

// only reports whether the selection is one generator's events, whole.
func (s selection) only() bool { return s.hasGen && !s.hasSeq && !s.hasIDs && !s.none }

// all reports whether the selection is every document (match_all).
func (s selection) all() bool { return !s.hasGen && !s.hasSeq && !s.hasIDs && !s.none }

// readSearch decodes a search body; ok is false when the answer (an
// error, or nothing for a client that left) has been given.
func readSearch(w http.ResponseWriter, r *http.Request) (searchRequest, selection, bool) {
	var req searchRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxContentLength))
	if err != nil {
		return req, selection{}, false
	}
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			esError(w, http.StatusBadRequest, "parsing_exception", "search body: "+err.Error())
			return req, selection{}, false
		}
	}
	var sel selection
	if err := sel.add(req.Query); err != nil {
		esError(w, http.StatusBadRequest, "parsing_exception", err.Error())
		return req, selection{}, false
	}
	return req, sel, true
}

// add narrows the selection by the query q. Term, terms and ids queries
// on generator_identifier, _seq and _id, bool filter and must clauses
// and match_all are understood; any other condition selects nothing,
// since the server keeps no document to test it on.
func (s *selection) add(q json.RawMessage) error {
	if len(q) == 0 || string(q) == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(q, &m); err != nil {
		return errors.New("query: want an object")
	}
	for kind, body := range m {
		switch kind {
		case "match_all":
		case "bool":
			var b map[string]json.RawMessage
			if err := json.Unmarshal(body, &b); err != nil {
				return errors.New("bool query: want an object")
			}
			for occur, clauses := range b {
				switch occur {
				case "filter", "must":
					if err := s.addClauses(clauses); err != nil {
						return err
					}
				default:
					s.none = true
				}
			}
		case "term":
			field, v, err := single(body)
			if err != nil {
				return err
			}
			var t struct {
				Value json.RawMessage `json:"value"`
			}
			if json.Unmarshal(v, &t) == nil && t.Value != nil {
				v = t.Value
			}
			s.term(field, []json.RawMessage{v})
		case "terms":
			field, v, err := single(body)
			if err != nil {
				return err
			}
			var vs []json.RawMessage
			if err := json.Unmarshal(v, &vs); err != nil {
				return errors.New("terms query: want an array of values")
			}
			s.term(field, vs)
		case "ids":
			var ids struct {
				Values []string `json:"values"`
			}
			if err := json.Unmarshal(body, &ids); err != nil {
				return errors.New("ids query: want values, an array of strings")
			}
			s.setIDs(ids.Values)
		default:
			s.none = true
		}
	}
	return nil
}

func (s *selection) addClauses(clauses json.RawMessage) error {
	var list []json.RawMessage
	if json.Unmarshal(clauses, &list) != nil {
		list = []json.RawMessage{clauses}
	}
	for _, c := range list {
		if err := s.add(c); err != nil {
			return err
		}
	}
	return nil
}

// single returns the one field of a term-like query.
func single(body json.RawMessage) (string, json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || len(m) != 1 {
		return "", nil, errors.New("term query: want one field")
	}
	for f, v := range m {
		return f, v, nil
	}
	panic("unreachable")
}

func (s *selection) term(field string, vs []json.RawMessage) {
	text := func(v json.RawMessage) string {
		var str string
		if json.Unmarshal(v, &str) == nil {
			return str
		}
		return string(bytes.TrimSpace(v)) // a number, as its text
	}
	switch {
	case field == "generator_identifier" && len(vs) == 1:
		g := text(vs[0])
		if s.hasGen && s.gen != g {
			s.none = true
		}
		s.gen, s.hasGen = g, true
	case field == "_seq" && len(vs) == 1:
		n, err := strconv.ParseInt(text(vs[0]), 10, 64)
		if err != nil || s.hasSeq && s.seq != n {
			s.none = true
		}
		s.seq, s.hasSeq = n, true
	case field == "_id":
		ids := make([]string, len(vs))
		for i, v := range vs {
			ids[i] = text(v)
		}
		s.setIDs(ids)
	default:
		s.none = true
	}
}

func (s *selection) setIDs(ids []string) {
	if s.hasIDs {
		keep := map[string]bool{}
		for _, id := range ids {
			keep[id] = true
		}
		var both []string
		for _, id := range s.ids {
			if keep[id] {
				both = append(both, id)
			}
		}
		ids = both
	}
	s.ids, s.hasIDs = ids, true
}

// sortOn returns the field the first sort key names and whether it is
// descending.
func sortOn(raw json.RawMessage) (string, bool) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		list = []json.RawMessage{raw}
	}
	if len(list) == 0 {
		return "", false
	}
	var name string
	if json.Unmarshal(list[0], &name) == nil {
		return name, false
	}
	var key map[string]json.RawMessage
	if json.Unmarshal(list[0], &key) != nil {
		return "", false
	}
	for f, v := range key {
		var order string
		if json.Unmarshal(v, &order) != nil {
			var o struct {
				Order string `json:"order"`
			}
			_ = json.Unmarshal(v, &o)
			order = o.Order
		}
		return f, order == "desc"
	}
	return "", false
}

// hit is one search hit; the server keeps a document's _source only
// among its samples, and its _id only as the first of a write request.
type hit struct {
	Index  string          `json:"_index"`
	ID     string          `json:"_id,omitempty"`
	Score  *float64        `json:"_score"`
	Source json.RawMessage `json:"_source,omitempty"`
	Sort   []int64         `json:"sort,omitempty"`
}

// generic is h as its JSON encoding decodes into a map (filter.apply
// walks such maps), the source decoded too so that a filter can reach
// into it. TestSearchFilterIntoSource holds it to the JSON tags above.
func (h hit) generic() map[string]any {
	m := map[string]any{"_index": h.Index, "_score": h.Score}
	if h.ID != "" {
		m["_id"] = h.ID
	}
	if len(h.Source) > 0 {
		m["_source"] = generic(h.Source)
	}
	if len(h.Sort) > 0 {
		m["sort"] = h.Sort
	}
	return m
}

// search answers a _search with what the server keeps: the probe ids it
// knows, a generator's _seq values in _seq order, the newest
// _event_time as a max aggregation, its sample documents for match_all,
// and nothing for a query on a document's fields.
func (h *elastic) search(w http.ResponseWriter, r *http.Request, index string) {
	req, sel, ok := readSearch(w, r)
	if !ok {
		return
	}
	if strings.Contains(index, "*") {
		h.searchPattern(w, index)
		return
	}
	if !h.store.exists(index) {
		noSuchIndex(w, index)
		return
	}
	size := 10
	if req.Size != nil {
		size = max(*req.Size, 0)
	}
	hits := []hit{}
	field, desc := sortOn(req.Sort)
	switch {
	case sel.none || size == 0:
	case sel.hasIDs:
		for _, id := range h.store.visible(index, sel.gen, sel.ids) {
			if len(hits) < size {
				hits = append(hits, hit{Index: index, ID: id})
			}
		}
	case sel.hasGen && field == "_seq":
		var after *int64
		if len(req.SearchAfter) > 0 {
			a, err := req.SearchAfter[0].Int64()
			if err != nil {
				esError(w, http.StatusBadRequest, "parsing_exception", "search_after: want an integer _seq")
				return
			}
			after = &a
		}
		spans := h.store.seqs(index, sel.gen)
		if sel.hasSeq {
			spans = nil
			if h.store.hasSeq(index, sel.gen, sel.seq) {
				spans = []span{{sel.seq, sel.seq + 1}}
			}
		}
		for _, s := range page(spans, after, size, desc) {
			hits = append(hits, hit{Index: index, Sort: []int64{s}})
		}
	case sel.all():
		for _, s := range h.store.samples(index, size) {
			hits = append(hits, hit{Index: index, ID: s.id, Source: json.RawMessage(s.doc)})
		}
	}
	if string(req.Source) == "false" {
		for i := range hits {
			hits[i].Source = nil
		}
	}
	hitsObj := map[string]any{"max_score": nil, "hits": hits}
	if string(req.TrackTotalHits) != "false" {
		hitsObj["total"] = map[string]any{"value": h.total(index, sel), "relation": "eq"}
	}
	out := map[string]any{
		"took": 0, "timed_out": false,
		"_shards": map[string]any{"total": 1, "successful": 1, "skipped": 0, "failed": 0},
		"hits":    hitsObj,
	}
	aggs := req.Aggs
	if aggs == nil {
		aggs = req.Aggregations
	}
	if len(aggs) > 0 {
		out["aggregations"] = h.aggregations(index, sel, aggs)
	}
	if f := newFilter(r.URL.Query().Get("filter_path")); len(f) > 0 {
		writeJSON(w, http.StatusOK, f.apply(out))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// searchPattern answers a search of an index pattern, which freshbench
// never sends and Rally's telemetry does (.ml-anomalies-* when a race
// ends). A pattern that matches no index finds nothing, as the server's
// default allow_no_indices has it; the server reads no other pattern.
func (h *elastic) searchPattern(w http.ResponseWriter, pattern string) {
	if h.store.matchesAny(pattern) {
		esError(w, http.StatusBadRequest, "illegal_argument_exception",
			"freshbench noop searches one index at a time, not the pattern ["+pattern+"]")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"took": 0, "timed_out": false,
		"_shards": map[string]any{"total": 0, "successful": 0, "skipped": 0, "failed": 0},
		"hits":    map[string]any{"total": map[string]any{"value": 0, "relation": "eq"}, "max_score": nil, "hits": []any{}},
	})
}

// total is how many documents the selection matches.
func (h *elastic) total(index string, sel selection) int64 {
	switch {
	case sel.none:
		return 0
	case sel.hasIDs:
		return int64(len(h.store.visible(index, sel.gen, sel.ids)))
	case sel.hasSeq:
		if h.store.hasSeq(index, sel.gen, sel.seq) {
			return 1
		}
		return 0
	case sel.hasGen:
		return h.store.count(index, sel.gen)
	}
	return h.store.countAll(index)
}

// aggregations answers max(_event_time) over one generator's events with
// the newest it was written; every other metric sees no value and every
// bucket aggregation no bucket, since no document's fields are kept.
func (h *elastic) aggregations(index string, sel selection, aggs map[string]json.RawMessage) map[string]any {
	out := map[string]any{}
	for name, raw := range aggs {
		var def map[string]struct {
			Field string `json:"field"`
		}
		_ = json.Unmarshal(raw, &def)
		var res any = map[string]any{"value": nil}
		for kind, d := range def {
			switch kind {
			case "terms", "histogram", "date_histogram", "range", "filters", "composite":
				res = map[string]any{"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": []any{}}
			case "max":
				if d.Field == "_event_time" && sel.only() {
					if v, ok := h.store.newest(index, sel.gen); ok {
						res = map[string]any{"value": v}
					}
				}
			}
		}
		out[name] = res
	}
	return out
}

// count answers _count with the number of distinct events written.
func (h *elastic) count(w http.ResponseWriter, r *http.Request, index string) {
	_, sel, ok := readSearch(w, r)
	if !ok {
		return
	}
	if !h.store.exists(index) {
		noSuchIndex(w, index)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"count":   h.total(index, sel),
		"_shards": map[string]any{"total": 1, "successful": 1, "skipped": 0, "failed": 0},
	})
}
