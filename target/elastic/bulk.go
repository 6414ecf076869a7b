package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/freshbench/freshbench/retry"
	"github.com/freshbench/freshbench/target"
)

// bulkQuery trims the _bulk response to what Write reads: without it every
// item carries _index, _id, _version, result, _shards, _seq_no and
// _primary_term, several times the bytes to send and parse. A batch with
// updates reads each item's result as well (see bulk).
const (
	bulkQuery        = "filter_path=errors,items.*.status,items.*.error.type"
	bulkQueryUpdates = bulkQuery + ",items.*.result"
)

// Error kinds that Write reports for items that never got an item status.
const (
	kindRequestError = "request_error" // a re-send failed as a whole
	kindCanceled     = "canceled"      // the context ended before a re-send
	kindBadDocument  = "invalid_document"
)

// Inserts are written with the bulk create action, not index: an _id
// that is already stored is refused (version_conflict_engine_exception)
// instead of silently replacing the stored document. A benchmark that
// replaced would have a repeated run overwrite the last one's events, its
// probes "seen" at once through the old copies and its audit count them
// as unexpected. An update (Revision > 0) is meant to replace: it is
// written with the index action on its _id, the servers' upsert.
const (
	actionPrefix       = `{"create":{"_id":"`
	updateActionPrefix = `{"index":{"_id":"`
	actionSuffix       = "\"}}\n"
	actionNoID         = "{\"create\":{}}\n"
	idPrefix           = `{"_id":"`
)

// resultNoop is the item result of a document that the server accepted but
// did not store: an ingest pipeline dropped it.
const resultNoop = "noop"

// errVersionConflict is the item error of a create whose _id is stored.
const errVersionConflict = "version_conflict_engine_exception"

// Write sends the batch as one _bulk request and accounts for every item.
// Items rejected for load (status 429) are re-sent, with exponential
// back-off, up to max_retries times. A failure of the first request as a
// whole is returned as an error (nothing is acknowledged); a failure of a
// later re-send is not, because earlier attempts did acknowledge items:
// the items still pending are then counted as failed instead.
func (t *Target) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	var res target.WriteResult
	pending := b.Docs
	backoff := retry.Default()
	for attempt := 0; len(pending) > 0; attempt++ {
		again, kinds, err := t.bulk(ctx, pending, &res)
		if err != nil {
			if attempt == 0 {
				return target.WriteResult{}, fmt.Errorf("%s: bulk write of %d documents: %w", t.display, len(pending), err)
			}
			failAll(&res, pending, kindRequestError)
			return res, nil
		}
		if len(again) == 0 {
			return res, nil
		}
		if attempt >= t.cfg.maxRetries {
			for i, d := range again {
				fail(&res, d, kinds[i])
			}
			return res, nil
		}
		if !backoff.Wait(ctx, attempt) {
			failAll(&res, again, kindCanceled)
			return res, nil
		}
		res.Retries += len(again)
		pending = again
	}
	return res, nil
}

func fail(res *target.WriteResult, d target.Document, kind string) {
	res.Failed++
	res.FailedSeqs = append(res.FailedSeqs, d.Seq)
	res.AddError(kind, 1)
}

func failAll(res *target.WriteResult, docs []target.Document, kind string) {
	for _, d := range docs {
		fail(res, d, kind)
	}
}

// retryable reports whether an item rejected with this status and error
// type may succeed if sent again: the node was overloaded (write queue full,
// circuit breaker), not the document wrong. OpenSearch names the rejection
// rejected_execution_exception, Elasticsearch es_rejected_execution_exception.
func retryable(status int, errType string) bool {
	return status == http.StatusTooManyRequests ||
		errType == "es_rejected_execution_exception" ||
		errType == "rejected_execution_exception"
}

// bulk sends docs in one request. Acknowledged and finally failed items go
// into res; items to re-send are returned with their error kinds. An error
// means no item got a status, and res is left as it was.
func (t *Target) bulk(ctx context.Context, docs []target.Document, res *target.WriteResult) (retry []target.Document, kinds []string, err error) {
	var part target.WriteResult // merged into res only when the response was understood
	defer func() {
		if err == nil {
			merge(res, &part)
		}
	}()
	body := t.bodies.get(bulkBodySize(docs))
	defer t.bodies.put(body) // deferred first: runs after the response is closed
	var bad []int
	body.b, bad = appendBulkBody(body.b, docs)
	if len(bad) > 0 {
		if docs = leaveOut(docs, bad, &part); len(docs) == 0 {
			return nil, nil, nil
		}
	}

	// An update is acknowledged only when the server stored it, which
	// its item result says (an ingest pipeline may drop it: result noop,
	// status 200). Inserts are not asked for it, so a batch of inserts
	// keeps the short response and the errors:false fast path.
	query, updates := bulkQuery, hasUpdates(docs)
	if updates {
		query = bulkQueryUpdates
	}
	hr, cancel, err := t.send(ctx, http.MethodPost, "/"+t.ip+"/_bulk", query, body, "application/x-ndjson")
	if err != nil {
		return nil, nil, err
	}
	defer cancel()
	defer func() {
		// Drain what the decoder left so the connection is reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(hr.Body, maxSmallBody))
		hr.Body.Close()
	}()

	if !is2xx(hr.StatusCode) {
		msg, _ := io.ReadAll(io.LimitReader(hr.Body, 64<<10))
		if hr.StatusCode == http.StatusTooManyRequests {
			// The whole request was rejected for load: re-send all of it.
			return docs, sameKind(len(docs), errorType(msg, "status_429")), nil
		}
		return nil, nil, serverError(hr.StatusCode, msg)
	}
	return readBulkItems(hr.Body, docs, updates, &part)
}

// leaveOut counts the documents at the indexes bad (ascending) as failed:
// not being a JSON object, they could not be framed and were left out of
// the body. It returns the rest, to which the response's items map.
func leaveOut(docs []target.Document, bad []int, part *target.WriteResult) []target.Document {
	sent := make([]target.Document, 0, len(docs)-len(bad))
	bi := 0
	for i, d := range docs {
		if bi < len(bad) && bad[bi] == i {
			fail(part, d, kindBadDocument)
			bi++
			continue
		}
		sent = append(sent, d)
	}
	return sent
}

// sameKind is n error kinds, all kind.
func sameKind(n int, kind string) []string {
	kinds := make([]string, n)
	for i := range kinds {
		kinds[i] = kind
	}
	return kinds
}

// readBulkItems reads a bulk response's item statuses: acknowledged and
// finally failed items go into part, items to re-send are returned with
// their error kinds.
func readBulkItems(body io.Reader, docs []target.Document, updates bool, part *target.WriteResult) (retry []target.Document, kinds []string, err error) {
	acked := 0
	decoded, err := decodeBulkResponse(body, len(docs), updates, func(i, status int, errType, result string) {
		switch {
		case is2xx(status) && docs[i].Revision > 0 && result == resultNoop:
			fail(part, docs[i], target.ErrorNotStored)
		case is2xx(status):
			acked++
		case retryable(status, errType):
			retry = append(retry, docs[i])
			kinds = append(kinds, kindOf(docs[i], status, errType))
		default:
			fail(part, docs[i], kindOf(docs[i], status, errType))
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("bulk response (after %d of %d items): %w", decoded, len(docs), err)
	}
	if decoded == 0 {
		// errors:false without items decoded: every item succeeded.
		acked = len(docs)
	}
	part.Acknowledged = acked
	return retry, kinds, nil
}

func merge(dst, src *target.WriteResult) {
	dst.Acknowledged += src.Acknowledged
	dst.Failed += src.Failed
	dst.Retries += src.Retries
	dst.FailedSeqs = append(dst.FailedSeqs, src.FailedSeqs...)
	for k, n := range src.ErrorKinds {
		dst.AddError(k, n)
	}
}

// hasUpdates reports whether any of docs is an update.
func hasUpdates(docs []target.Document) bool {
	for _, d := range docs {
		if d.Revision > 0 {
			return true
		}
	}
	return false
}

func kindOf(d target.Document, status int, errType string) string {
	if errType == errVersionConflict && d.Revision == 0 {
		// The one cause of a conflict on create: the _id is stored. Named
		// as every target names it, so the ingest and the seeding can
		// tell it from other failures. (An update replaces: its conflict
		// is no duplicate.)
		return target.ErrorDuplicateID
	}
	if errType != "" {
		return errType
	}
	return "status_" + strconv.Itoa(status)
}

// errorType extracts error.type from an error response body, or def.
func errorType(body []byte, def string) string {
	var e struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Type != "" {
		return e.Error.Type
	}
	return def
}

// bulkBodySize bounds the size of the body appendBulkBody produces for
// docs (it counts the _id member that is cut), so the body is allocated once.
func bulkBodySize(docs []target.Document) int {
	n := 0
	for _, d := range docs {
		n += len(actionPrefix) + len(d.ID) + len(actionSuffix) + len(d.JSON) + 1
	}
	return n
}

// appendBulkBody appends the NDJSON _bulk body for docs to dst: per document
// a create action (index for an update) with the _id, then the source without its _id member
// (a metadata field, which the server rejects inside the source). It
// returns the indexes of documents that are not JSON objects, which it
// leaves out.
func appendBulkBody(dst []byte, docs []target.Document) ([]byte, []int) {
	var bad []int
	for i, d := range docs {
		mark := len(dst)
		dst = appendAction(dst, d)
		var ok bool
		if dst, ok = appendSource(dst, d); !ok {
			dst = dst[:mark]
			bad = append(bad, i)
			continue
		}
		dst = append(dst, '\n')
	}
	return dst, bad
}

func appendAction(dst []byte, d target.Document) []byte {
	id := d.ID
	if id == "" {
		return append(dst, actionNoID...) // the server assigns an id
	}
	prefix := actionPrefix
	if d.Revision > 0 {
		prefix = updateActionPrefix
	}
	if d.Plain || plainID(id) {
		dst = append(dst, prefix...)
		dst = append(dst, id...)
		return append(dst, actionSuffix...)
	}
	q, _ := json.Marshal(id)                     // a string always marshals
	dst = append(dst, prefix[:len(prefix)-1]...) // without the opening quote
	dst = append(dst, q...)
	return append(dst, "}}\n"...)
}

// plainID reports whether id can be written between quotes as is (UUIDs
// and other printable ASCII without quote or backslash).
func plainID(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendSource appends the document's JSON without its leading _id member.
// Generated documents start with {"_id":"<ID>", (target.Document's
// contract), so the fast path only compares bytes and copies the rest once;
// anything else goes through a tokenizer. A raw newline would break the
// NDJSON framing (and shift every later item), so such documents are
// compacted first.
func appendSource(dst []byte, d target.Document) ([]byte, bool) {
	j := d.JSON
	if !d.Plain && bytes.IndexByte(j, '\n') >= 0 {
		var c bytes.Buffer
		if json.Compact(&c, j) != nil {
			return dst, false
		}
		j = c.Bytes()
	}
	if n := len(idPrefix) + len(d.ID); d.ID != "" && len(j) > n+1 &&
		string(j[:len(idPrefix)]) == idPrefix && string(j[len(idPrefix):n]) == d.ID && j[n] == '"' {
		switch j[n+1] {
		case ',':
			dst = append(dst, '{')
			return append(dst, j[n+2:]...), true
		case '}':
			return append(dst, "{}"...), true
		}
	}
	src, ok := stripIDSlow(j)
	if !ok {
		return dst, false
	}
	return append(dst, src...), true
}

// stripIDSlow removes a top-level "_id" member wherever it is, or returns
// the object unchanged when it has none.
func stripIDSlow(j []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(j))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		start := dec.InputOffset()
		key, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, false
		}
		if key != "_id" {
			continue
		}
		end := dec.InputOffset()
		// InputOffset before a key points before the separating comma, so
		// j[start:end] holds the comma when _id is not the first member;
		// when it is first, the comma after it goes instead.
		member := bytes.TrimLeft(j[start:end], " \t\r\n")
		before := j[:start]
		after := bytes.TrimLeft(j[end:], " \t\r\n")
		if !bytes.HasPrefix(member, []byte(",")) && bytes.HasPrefix(after, []byte(",")) {
			after = after[1:]
		}
		out := make([]byte, 0, len(j))
		out = append(append(out, before...), after...)
		return out, json.Valid(out)
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	return j, true
}

// bulkItem is one entry of the _bulk response's items, keyed by the
// action: "create" for an insert, "index" for an update.
type bulkItem struct {
	Create itemResult `json:"create"`
	Index  itemResult `json:"index"`
}

type itemResult struct {
	Status int    `json:"status"`
	Result string `json:"result"`
	Error  struct {
		Type string `json:"type"`
	} `json:"error"`
}

func (it *bulkItem) result() *itemResult {
	if it.Create.Status != 0 {
		return &it.Create
	}
	return &it.Index
}

var errNoErrorsField = errors.New(`no "errors" field`)

// decodeBulkResponse streams the (filter_path-trimmed) _bulk response. When
// "errors" is false and comes first, as servers write it, the items are not
// decoded at all (every item succeeded), unless all is set. Otherwise item
// is called for each item in order. It returns how many items it decoded.
func decodeBulkResponse(r io.Reader, want int, all bool, item func(i, status int, errType, result string)) (int, error) {
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil {
		return 0, err
	} else if tok != json.Delim('{') {
		return 0, fmt.Errorf("want an object, got %v", tok)
	}
	var (
		sawErrors bool
		hadErrors bool
		n         int
		sawItems  bool
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return n, err
		}
		switch tok {
		case "errors":
			if err := dec.Decode(&hadErrors); err != nil {
				return n, fmt.Errorf("errors: %w", err)
			}
			sawErrors = true
			if !hadErrors && !sawItems && !all {
				return 0, nil
			}
		case "items":
			if tok, err := dec.Token(); err != nil {
				return n, err
			} else if tok != json.Delim('[') {
				return n, fmt.Errorf("items: want an array, got %v", tok)
			}
			// One item value for all: decoding into a fresh one per item
			// would allocate it each time.
			var it bulkItem
			for dec.More() {
				if n >= want {
					return n, fmt.Errorf("more items than the %d documents sent", want)
				}
				it = bulkItem{}
				if err := dec.Decode(&it); err != nil {
					return n, fmt.Errorf("item %d: %w", n, err)
				}
				r := it.result()
				item(n, r.Status, r.Error.Type, r.Result)
				n++
			}
			if _, err := dec.Token(); err != nil {
				return n, err
			}
			sawItems = true
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return n, err
			}
		}
	}
	switch {
	case !sawErrors:
		return n, errNoErrorsField
	case !sawItems && hadErrors:
		return n, errors.New(`"errors" is true but there are no items`)
	case sawItems && n != want:
		return n, fmt.Errorf("%d items for %d documents sent", n, want)
	}
	return n, nil
}
