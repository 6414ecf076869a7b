package noop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxContentLength is Elasticsearch's default http.max_content_length: a
// larger request is refused with 413, as the server would.
const maxContentLength = 100 << 20

// elastic answers the REST calls of freshbench's elasticsearch and
// opensearch targets: the root info, index create, exists, delete and
// field mapping, _bulk, _search and _count; and cluster health and an
// empty nodes info and stats, which Rally's races read. One handler serves both
// products: the calls are the same, and the Elasticsearch client's
// product check is met by the X-Elastic-Product header, which the
// OpenSearch client ignores.
type elastic struct {
	store   *store
	version string
	started time.Time
	bulks   sync.Pool // *bulkRequest
}

func newElastic(version string) *elastic {
	return &elastic{store: newStore(), version: version, started: time.Now(),
		bulks: sync.Pool{New: func() any { return new(bulkRequest) }}}
}

func (h *elastic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	m := r.Method
	switch {
	case r.URL.Path == "/" && (m == http.MethodGet || m == http.MethodHead):
		h.root(w)
	case len(parts) == 1 && parts[0] == "_bulk" && (m == http.MethodPost || m == http.MethodPut):
		h.bulk(w, r, "")
	case len(parts) == 1 && !strings.HasPrefix(parts[0], "_"):
		h.index(w, r, parts[0])
	case len(parts) == 2 && parts[1] == "_bulk" && (m == http.MethodPost || m == http.MethodPut):
		h.bulk(w, r, parts[0])
	case len(parts) == 2 && parts[1] == "_search" && (m == http.MethodPost || m == http.MethodGet):
		h.search(w, r, parts[0])
	case len(parts) == 2 && parts[1] == "_count" && (m == http.MethodPost || m == http.MethodGet):
		h.count(w, r, parts[0])
	case len(parts) == 4 && parts[1] == "_mapping" && parts[2] == "field" && m == http.MethodGet:
		h.fieldMapping(w, parts[0], strings.Split(parts[3], ","))
	case len(parts) >= 2 && len(parts) <= 3 && parts[0] == "_cluster" && parts[1] == "health" && m == http.MethodGet:
		h.clusterHealth(w)
	case parts[0] == "_nodes" && m == http.MethodGet:
		h.nodes(w)
	default:
		// Elasticsearch's own answer to a call it has no handler for.
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"error":  fmt.Sprintf("no handler found for uri [%s] and method [%s]", r.URL.RequestURI(), m),
			"status": http.StatusBadRequest,
		})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Every value here is maps, slices, strings and numbers.
		panic(fmt.Sprintf("noop: encode response: %v", err))
	}
	writeBody(w, status, b)
}

func writeBody(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b) // a client that left is not the server's failure
}

// esError answers with an error in Elasticsearch's shape.
func esError(w http.ResponseWriter, status int, typ, reason string) {
	cause := map[string]any{"type": typ, "reason": reason}
	writeJSON(w, status, map[string]any{
		"error":  map[string]any{"root_cause": []any{cause}, "type": typ, "reason": reason},
		"status": status,
	})
}

func noSuchIndex(w http.ResponseWriter, index string) {
	esError(w, http.StatusNotFound, "index_not_found_exception", "no such index ["+index+"]")
}

func (h *elastic) root(w http.ResponseWriter) {
	writeJSON(w, http.StatusOK, map[string]any{
		"name": "freshbench-noop", "cluster_name": "freshbench-noop",
		"version": map[string]any{"number": h.version, "build_flavor": "noop"},
		"tagline": "freshbench noop: acknowledges every write, keeps no document",
	})
}

// clusterHealth answers green at once: the server is ready as soon as it
// listens. Rally asks before a race, to wait for the REST layer.
func (h *elastic) clusterHealth(w http.ResponseWriter) {
	writeJSON(w, http.StatusOK, map[string]any{
		"cluster_name": "freshbench-noop", "status": "green", "timed_out": false,
		"number_of_nodes": 1, "number_of_data_nodes": 1,
		"relocating_shards": 0, "initializing_shards": 0, "unassigned_shards": 0,
	})
}

// nodes answers the nodes info and stats calls with no node: the server
// runs no JVM and has no figures of its own. Rally's telemetry reads
// them at the start and end of a race, and fails the race on an error.
func (h *elastic) nodes(w http.ResponseWriter) {
	writeJSON(w, http.StatusOK, map[string]any{
		"_nodes":       map[string]any{"total": 0, "successful": 0, "failed": 0},
		"cluster_name": "freshbench-noop", "nodes": map[string]any{},
	})
}

// index serves the calls on an index itself: exists, create, delete.
func (h *elastic) index(w http.ResponseWriter, r *http.Request, name string) {
	switch r.Method {
	case http.MethodHead, http.MethodGet:
		if !h.store.exists(name) {
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			noSuchIndex(w, name)
			return
		}
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusOK)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{name: map[string]any{}})
	case http.MethodPut:
		var def struct {
			Mappings struct {
				Properties map[string]struct {
					Type string `json:"type"`
				} `json:"properties"`
			} `json:"mappings"`
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxContentLength))
		if err != nil {
			return // the client left
		}
		if len(bytes.TrimSpace(body)) > 0 {
			if err := json.Unmarshal(body, &def); err != nil {
				esError(w, http.StatusBadRequest, "x_content_parse_exception", "index definition: "+err.Error())
				return
			}
		}
		fields := map[string]string{}
		for f, p := range def.Mappings.Properties {
			fields[f] = p.Type
		}
		if !h.store.create(name, fields) {
			esError(w, http.StatusBadRequest, "resource_already_exists_exception", "index ["+name+"] already exists")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"acknowledged": true, "shards_acknowledged": true, "index": name})
	case http.MethodDelete:
		if !h.store.drop(name) {
			noSuchIndex(w, name)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"acknowledged": true})
	default:
		esError(w, http.StatusMethodNotAllowed, "illegal_argument_exception", "method "+r.Method+" is not allowed on an index")
	}
}

// fieldMapping answers GET /index/_mapping/field/a,b with the types the
// create request gave those fields.
func (h *elastic) fieldMapping(w http.ResponseWriter, index string, names []string) {
	fields, ok := h.store.fields(index)
	if !ok {
		noSuchIndex(w, index)
		return
	}
	mappings := map[string]any{}
	for _, f := range names {
		if t, ok := fields[f]; ok {
			mappings[f] = map[string]any{"full_name": f, "mapping": map[string]any{f: map[string]any{"type": t}}}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{index: map[string]any{"mappings": mappings}})
}

// bulkRequest is one _bulk call's working memory, pooled.
type bulkRequest struct {
	body    []byte
	actions []bulkAction
	writes  []indexWrite
	out     []byte
}

type bulkAction struct {
	op    string // create, index, update or delete
	index string
	id    []byte // as JSON text, quoted; nil when the request gave none
	w     int    // which of writes it is booked in
	seqNo int64
}

// indexWrite gathers what one bulk request writes to one index.
type indexWrite struct {
	index string
	write write
	items int
}

var errBodyTooLarge = errors.New("body too large")

// readBody reads the whole request body into buf.
func readBody(r *http.Request, buf []byte) ([]byte, error) {
	b := bytes.NewBuffer(buf[:0])
	if _, err := b.ReadFrom(io.LimitReader(r.Body, maxContentLength+1)); err != nil {
		return nil, err
	}
	if b.Len() > maxContentLength {
		return nil, errBodyTooLarge
	}
	return b.Bytes(), nil
}

// bulk serves _bulk: every action is acknowledged, create and index with
// 201 "created", as one item each. The body is read whole and checked
// before anything is booked: a malformed action line fails the request
// with 400, as Elasticsearch fails it, and books nothing. Document
// sources are not parsed (that would cost this shared machine more than
// the driver it calibrates), only scanned for what the probes read.
func (h *elastic) bulk(w http.ResponseWriter, r *http.Request, pathIndex string) {
	req := h.bulks.Get().(*bulkRequest)
	defer h.bulks.Put(req)
	body, err := readBody(r, req.body)
	if errors.Is(err, errBodyTooLarge) {
		esError(w, http.StatusRequestEntityTooLarge, "content_too_long_exception", "request body is larger than "+strconv.Itoa(maxContentLength)+" bytes")
		return
	}
	if err != nil {
		return // the client left mid-request: there is no one to answer
	}
	req.body = body
	if err := req.parse(body, pathIndex, h.store); err != nil {
		var v *validationError
		if errors.As(err, &v) {
			esError(w, http.StatusBadRequest, "action_request_validation_exception", err.Error())
			return
		}
		esError(w, http.StatusBadRequest, "illegal_argument_exception", err.Error())
		return
	}
	for i := range req.writes {
		iw := &req.writes[i]
		first := h.store.record(iw.index, &iw.write, iw.items)
		for j := range req.actions {
			if a := &req.actions[j]; a.w == i {
				a.seqNo = first
				first++
			}
		}
	}
	req.out = appendBulkResponse(req.out[:0], req.actions, newFilter(r.URL.Query().Get("filter_path")))
	writeBody(w, http.StatusOK, req.out)
}

type validationError struct{ msg string }

func (e *validationError) Error() string { return "Validation Failed: 1: " + e.msg + ";" }

// parse reads the NDJSON body into actions and, per index, the events its
// sources carry.
func (req *bulkRequest) parse(body []byte, pathIndex string, st *store) error {
	req.actions, req.writes = req.actions[:0], req.writes[:0]
	if len(bytes.TrimSpace(body)) == 0 {
		return &validationError{"no requests added"}
	}
	if body[len(body)-1] != '\n' {
		return errors.New(`The bulk request must be terminated by a newline [\n]`)
	}
	line := 0
	for len(body) > 0 {
		var l []byte
		l, body = nextLine(body)
		line++
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		a, err := parseAction(l, line)
		if err != nil {
			return err
		}
		if a.index == "" {
			a.index = pathIndex
		}
		if a.index == "" {
			return &validationError{"index is missing"}
		}
		a.w = req.writeFor(a.index, st)
		iw := &req.writes[a.w]
		iw.items++
		if a.op != "delete" {
			if len(body) == 0 {
				return fmt.Errorf("Malformed action/metadata line [%d]: no document source follows it", line)
			}
			var src []byte
			src, body = nextLine(body)
			line++
			if a.op != "update" {
				req.book(iw, a, src)
			}
		}
		req.actions = append(req.actions, a)
	}
	return nil
}

// book notes the events of one source in its index's write.
func (req *bulkRequest) book(iw *indexWrite, a bulkAction, src []byte) {
	wr := &iw.write
	e := scanEvent(src)
	if len(wr.events) == 0 && a.id != nil {
		wr.firstID = a.id[1 : len(a.id)-1] // ids that need escaping are not freshbench's
	}
	wr.events = append(wr.events, e)
	if wr.samples != nil && len(wr.samples) < keptSamples {
		id := ""
		if a.id != nil {
			_ = json.Unmarshal(a.id, &id)
		}
		wr.samples = append(wr.samples, sample{id: id, doc: src})
	}
}

// writeFor returns the index of index's write in req.writes, added if new.
func (req *bulkRequest) writeFor(index string, st *store) int {
	for i := range req.writes {
		if req.writes[i].index == index {
			return i
		}
	}
	if len(req.writes) < cap(req.writes) {
		req.writes = req.writes[:len(req.writes)+1]
	} else {
		req.writes = append(req.writes, indexWrite{})
	}
	iw := &req.writes[len(req.writes)-1]
	iw.index, iw.items = index, 0
	iw.write.reset()
	iw.write.samples = nil
	if st.wantsSamples(index) {
		iw.write.samples = make([]sample, 0, 8)
	}
	return len(req.writes) - 1
}

func nextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// parseAction reads one action line: {"create":{"_id":"…"}} and the like.
func parseAction(l []byte, line int) (bulkAction, error) {
	if a, ok := fastAction(l); ok {
		return a, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(l, &m); err != nil {
		return bulkAction{}, fmt.Errorf("Malformed action/metadata line [%d], expected a JSON object: %v", line, err)
	}
	if len(m) != 1 {
		return bulkAction{}, fmt.Errorf("Malformed action/metadata line [%d], expected one field, [create], [delete], [index] or [update], but found %d", line, len(m))
	}
	var a bulkAction
	var meta json.RawMessage
	for op, v := range m {
		a.op, meta = op, v
	}
	switch a.op {
	case "create", "index", "update", "delete":
	default:
		return bulkAction{}, fmt.Errorf("Malformed action/metadata line [%d], expected field [create], [delete], [index] or [update] but found [%s]", line, a.op)
	}
	var md struct {
		Index string           `json:"_index"`
		ID    *json.RawMessage `json:"_id"`
	}
	if err := json.Unmarshal(meta, &md); err != nil {
		return bulkAction{}, fmt.Errorf("Malformed action/metadata line [%d], expected an object of metadata under [%s]: %v", line, a.op, err)
	}
	a.index = md.Index
	if md.ID != nil {
		var id string
		if err := json.Unmarshal(*md.ID, &id); err != nil {
			return bulkAction{}, fmt.Errorf("Malformed action/metadata line [%d], [_id] must be a string", line)
		}
		a.id, _ = json.Marshal(id) // a string always marshals
	}
	if a.op != "create" && a.op != "index" && a.id == nil {
		return bulkAction{}, &validationError{"id is missing"}
	}
	return a, nil
}

var fastOps = []string{"create", "index", "update", "delete"}

// fastAction reads the action lines freshbench writes without a JSON
// decoder: {"<op>":{"_id":"<plain id>"}} or {"<op>":{}}.
func fastAction(l []byte) (bulkAction, bool) {
	for _, op := range fastOps {
		rest, ok := bytes.CutPrefix(l, []byte(`{"`+op+`":{`))
		if !ok {
			continue
		}
		if string(rest) == "}}" && (op == "create" || op == "index") {
			return bulkAction{op: op}, true
		}
		id, ok := bytes.CutPrefix(rest, []byte(`"_id":"`))
		if !ok {
			return bulkAction{}, false
		}
		id, ok = bytes.CutSuffix(id, []byte(`"}}`))
		if !ok || len(id) == 0 || bytes.ContainsAny(id, "\"\\") {
			return bulkAction{}, false
		}
		for _, c := range id {
			if c < 0x20 {
				return bulkAction{}, false
			}
		}
		// The quotes around the id are kept: items echo it as JSON.
		start := len(l) - len(id) - len(`"}}`) - 1
		return bulkAction{op: op, id: l[start : start+len(id)+2]}, true
	}
	return bulkAction{}, false
}

// results of each action, as Elasticsearch names them.
var (
	actionResult = map[string]string{"create": "created", "index": "created", "update": "updated", "delete": "deleted"}
	actionStatus = map[string]int{"create": 201, "index": 201, "update": 200, "delete": 200}
)

// appendBulkResponse writes the _bulk response, one item per action,
// keeping what the filter keeps.
func appendBulkResponse(out []byte, actions []bulkAction, f filter) []byte {
	out = append(out, '{')
	sep := func() {
		if out[len(out)-1] != '{' {
			out = append(out, ',')
		}
	}
	if f.keep("took") {
		out = append(out, `"took":0`...)
	}
	if f.keep("errors") {
		sep()
		out = append(out, `"errors":false`...)
	}
	if f.keepUnder("items") {
		sep()
		out = append(out, `"items":[`...)
		// The filter's answer depends on the action alone: it is asked
		// once per action kind, not once per item and field (matching
		// every item's paths took most of this server's CPU at batch 500).
		var kept []itemMask
		for i, a := range actions {
			if i > 0 {
				out = append(out, ',')
			}
			j := slices.IndexFunc(kept, func(m itemMask) bool { return m.op == a.op })
			if j < 0 {
				kept = append(kept, newItemMask(a.op, f))
				j = len(kept) - 1
			}
			out = appendItem(out, a, kept[j].fields)
		}
		out = append(out, ']')
	}
	return append(out, '}')
}

// itemFields are the members of a bulk item, in Elasticsearch's order.
var itemFields = [...]string{"_index", "_id", "_version", "result", "_shards", "_seq_no", "_primary_term", "status"}

// itemMask is which of itemFields a filter keeps in the items of op.
type itemMask struct {
	op     string
	fields [len(itemFields)]bool
}

func newItemMask(op string, f filter) itemMask {
	m := itemMask{op: op}
	for i, name := range itemFields {
		m.fields[i] = f.keep("items." + op + "." + name)
	}
	return m
}

// appendItem writes the item of a with the members that kept marks, one
// flag for each of itemFields.
func appendItem(out []byte, a bulkAction, kept [len(itemFields)]bool) []byte {
	out = append(out, `{"`...)
	out = append(out, a.op...)
	out = append(out, `":{`...)
	n := 0
	for i, name := range itemFields {
		if !kept[i] {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(out, '"')
		out = append(out, name...)
		out = append(out, `":`...)
		switch name {
		case "_index":
			out = strconv.AppendQuote(out, a.index)
		case "_id":
			if a.id != nil {
				out = append(out, a.id...)
			} else {
				out = append(out, `"noop-`...)
				out = strconv.AppendInt(out, a.seqNo, 10)
				out = append(out, '"')
			}
		case "_version", "_primary_term":
			out = append(out, '1')
		case "result":
			out = append(out, '"')
			out = append(out, actionResult[a.op]...)
			out = append(out, '"')
		case "_shards":
			out = append(out, `{"total":1,"successful":1,"failed":0}`...)
		case "_seq_no":
			out = strconv.AppendInt(out, a.seqNo, 10)
		case "status":
			out = strconv.AppendInt(out, int64(actionStatus[a.op]), 10)
		}
	}
	return append(out, "}}"...)
}

// filter is a response's filter_path: which members of the response it
// keeps. Patterns are dotted paths whose segments may hold * wildcards;
// a pattern keeps the member it names and everything under it.
type filter [][]segment

// segment is one segment of a pattern; wild says it holds a wildcard and
// needs path.Match, which costs an order of magnitude more than ==.
type segment struct {
	text string
	wild bool
}

func newFilter(s string) filter {
	var f filter
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			var pat []segment
			for seg := range strings.SplitSeq(p, ".") {
				pat = append(pat, segment{seg, strings.ContainsAny(seg, `*?[\`)})
			}
			f = append(f, pat)
		}
	}
	return f
}

// keep reports whether the member at the dotted path p is kept.
func (f filter) keep(p string) bool { return f.keepSegs(strings.Split(p, ".")) }

// keepUnder reports whether anything at or under the path p is kept.
func (f filter) keepUnder(p string) bool { return f.keepUnderSegs(strings.Split(p, ".")) }

// keepSegs is keep of a path given as its segments.
func (f filter) keepSegs(segs []string) bool {
	if len(f) == 0 {
		return true
	}
	for _, pat := range f {
		if len(pat) <= len(segs) && matchSegments(pat, segs[:len(pat)]) {
			return true
		}
	}
	return false
}

// keepUnderSegs is keepUnder of a path given as its segments.
func (f filter) keepUnderSegs(segs []string) bool {
	if len(f) == 0 {
		return true
	}
	for _, pat := range f {
		n := min(len(pat), len(segs))
		if matchSegments(pat[:n], segs[:n]) {
			return true
		}
	}
	return false
}

// apply returns the members of the response v that f keeps, as the
// server does: arrays are filtered element by element, and an object or
// array left empty is left out (the whole response becomes {}).
func (f filter) apply(v any) any {
	kept, ok := f.prune(generic(v), nil)
	if !ok {
		return map[string]any{}
	}
	return kept
}

// generic returns v as the JSON decoder would give it, maps and slices of
// any, so that prune can walk it. Search hits, an audit page's 10,000 of
// them, are converted directly; anything else goes through encoding/json.
func generic(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, m := range v {
			out[k] = generic(m)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = generic(e)
		}
		return out
	case []hit:
		out := make([]any, len(v))
		for i := range v {
			out[i] = v[i].generic()
		}
		return out
	case nil, bool, string, int, int64:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("noop: encode response: %v", err)) // maps, slices, strings and numbers
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		panic(fmt.Sprintf("noop: decode response: %v", err))
	}
	return out
}

// prune keeps what f keeps of v, found at the path whose segments are
// segs, and reports whether anything is left. The path is passed as its
// segments, not dotted, so that the elements of a long array (an audit
// page's 10,000 hits) neither join nor split it again.
func (f filter) prune(v any, segs []string) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, m := range v {
			child := append(segs[:len(segs):len(segs)], k)
			switch {
			case f.keepSegs(child):
				out[k] = m
			case f.keepUnderSegs(child):
				if kept, ok := f.prune(m, child); ok {
					out[k] = kept
				}
			}
		}
		return out, len(out) > 0
	case []any:
		var out []any
		for _, e := range v {
			if kept, ok := f.prune(e, segs); ok {
				out = append(out, kept)
			}
		}
		return out, len(out) > 0
	default:
		return nil, false // a leaf that no pattern reached
	}
}

// matchSegments reports whether each segment matches its pattern.
func matchSegments(pat []segment, segs []string) bool {
	for i, p := range pat {
		if !p.wild {
			if p.text != segs[i] {
				return false
			}
			continue
		}
		if ok, err := path.Match(p.text, segs[i]); err != nil || !ok {
			return false
		}
	}
	return true
}
