package elastic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esutil"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

// doc builds a document the way the generator does: _id first.
func doc(id, gen string, seq int64, extra string) target.Document {
	j := fmt.Sprintf(`{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":%d,"processBy":"a"%s}`,
		id, 1_700_000_000_000_000+seq, gen, seq, extra)
	return target.Document{ID: id, Generator: gen, Seq: seq, EventTime: 1_700_000_000_000_000 + seq, JSON: []byte(j)}
}

func TestAppendBulkBody(t *testing.T) {
	docs := []target.Document{
		doc("a1", "g", 0, ""),
		{ID: "only", JSON: []byte(`{"_id":"only"}`)},
		{ID: "late", JSON: []byte(`{"x":1,"_id":"late","y":2}`)},
		{ID: "none", JSON: []byte(`{"x":1}`)},
		{ID: `q"uote`, JSON: []byte(`{"_id":"q\"uote","x":1}`)},
		{ID: "nl", JSON: []byte("{\"_id\":\"nl\",\n \"x\": 1}")},
		{ID: "bad", JSON: []byte(`[1,2]`)},
		{ID: "", JSON: []byte(`{"x":3}`)},
	}
	body, bad := appendBulkBody(nil, docs)
	if len(bad) != 1 || bad[0] != 6 {
		t.Fatalf("bad = %v, want [6]", bad)
	}
	want := `{"create":{"_id":"a1"}}
{"_event_time":1700000000000000,"generator_identifier":"g","_seq":0,"processBy":"a"}
{"create":{"_id":"only"}}
{}
{"create":{"_id":"late"}}
{"x":1,"y":2}
{"create":{"_id":"none"}}
{"x":1}
{"create":{"_id":"q\"uote"}}
{"x":1}
{"create":{"_id":"nl"}}
{"x":1}
{"create":{}}
{"x":3}
`
	if string(body) != want {
		t.Errorf("body:\n%s\nwant:\n%s", body, want)
	}
	// Every line is valid JSON.
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Errorf("invalid line %q", sc.Bytes())
		}
	}
	// The size estimate is an upper bound that is off only by the cut
	// `"_id":"<id>",` member (9 bytes plus the id) per document, so the
	// body is allocated once.
	gen := []target.Document{doc("a", "g", 1, ""), doc("bb", "g", 2, `,"age":3`)}
	b, _ := appendBulkBody(nil, gen)
	if want := bulkBodySize(gen) - (9 + 1) - (9 + 2); len(b) != want {
		t.Errorf("len = %d, want %d", len(b), want)
	}
}

// A Plain document skips the scans for raw newlines and for an ID that
// needs escaping, so generated documents, which are Plain, must frame to
// the bytes the checked path gives them.
func TestPlainDocumentsFramedAlike(t *testing.T) {
	for _, cfg := range []docgen.Config{{Seed: 1}, {Seed: 2, DocSize: 9000, Shape: docgen.ShapeNested}} {
		g, err := docgen.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var buf docgen.Buffer
		for range 200 {
			buf.Append(g, 1_700_000_000_000_000)
		}
		buf.Seal()
		checked := slices.Clone(buf.Docs)
		for i := range checked {
			if !checked[i].Plain {
				t.Fatal("a generated document is not Plain")
			}
			checked[i].Plain = false
		}
		plain, bad := appendBulkBody(nil, buf.Docs)
		want, _ := appendBulkBody(nil, checked)
		if len(bad) != 0 || string(plain) != string(want) {
			t.Fatalf("%+v: Plain documents framed differently (bad %v):\n%.300s\nwant:\n%.300s", cfg, bad, plain, want)
		}
	}
}

func TestStripIDSlow(t *testing.T) {
	for in, want := range map[string]string{
		`{"_id":"a"}`:                   `{}`,
		`{ "_id" : "a" , "x" : 1 }`:     `{ "x" : 1 }`,
		`{"x":1,"_id":"a"}`:             `{"x":1}`,
		`{"x":1, "_id":{"o":1}, "y":2}`: `{"x":1, "y":2}`,
		`{"x":{"_id":1}}`:               `{"x":{"_id":1}}`,
		`{}`:                            `{}`,
	} {
		got, ok := stripIDSlow([]byte(in))
		// Whitespace around the removed member may remain; compare compacted.
		var g, w bytes.Buffer
		if ok {
			ok = json.Compact(&g, got) == nil && json.Compact(&w, []byte(want)) == nil
		}
		if !ok || g.String() != w.String() {
			t.Errorf("stripIDSlow(%s) = %s, %v; want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{`[]`, `{"x":`, `"s"`, ``} {
		if _, ok := stripIDSlow([]byte(in)); ok {
			t.Errorf("stripIDSlow(%s) accepted", in)
		}
	}
}

func TestDecodeBulkResponse(t *testing.T) {
	type got struct {
		status int
		typ    string
		result string
	}
	runAll := func(body string, want int, all bool) ([]got, int, error) {
		var items []got
		n, err := decodeBulkResponse(strings.NewReader(body), want, all, func(i, status int, typ, result string) {
			items = append(items, got{status, typ, result})
		})
		return items, n, err
	}
	run := func(body string, want int) ([]got, int, error) { return runAll(body, want, false) }
	items, n, err := run(`{"errors":false,"items":[{"create":{"status":201}},{"create":{"status":201}}]}`, 2)
	if err != nil || n != 0 || items != nil {
		t.Errorf("errors:false fast path: n=%d items=%v err=%v", n, items, err)
	}
	// A batch with updates reads every item's result, errors or not.
	items, n, err = runAll(`{"errors":false,"items":[{"create":{"status":201,"result":"created"}},{"index":{"status":200,"result":"noop"}}]}`, 2, true)
	if err != nil || n != 2 || items[0] != (got{201, "", "created"}) || items[1] != (got{200, "", "noop"}) {
		t.Errorf("errors:false, all items: n=%d items=%v err=%v", n, items, err)
	}
	items, n, err = run(`{"errors":true,"items":[{"create":{"status":201}},{"create":{"status":400,"error":{"type":"mapper_parsing_exception"}}},{"create":{"status":429,"error":{"type":"es_rejected_execution_exception"}}}]}`, 3)
	if err != nil || n != 3 || items[1] != (got{400, "mapper_parsing_exception", ""}) || items[2].status != 429 {
		t.Errorf("errors:true: n=%d items=%v err=%v", n, items, err)
	}
	// items before errors still decode.
	_, n, err = run(`{"items":[{"index":{"status":200}}],"took":3,"errors":false}`, 1)
	if err != nil || n != 1 {
		t.Errorf("items first: n=%d err=%v", n, err)
	}
	for _, bad := range []string{
		`{"errors":true}`,
		`{"items":[]}`,
		`{"errors":true,"items":[{"index":{"status":201}}]}`,
		`{"errors":true,"items":[{"index":{"status":201}},{"index":{"status":201}},{"index":{"status":201}}]}`,
		`[]`,
		`{"errors":true,"items":[{"index":{"status":201}`,
	} {
		if _, _, err := run(bad, 2); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

// fakeServer answers _bulk requests from a script of item statuses, one
// entry per request; it records the ids, the actions, the sources and the
// query of every request.
type fakeServer struct {
	mu         sync.Mutex
	script     []func(ids []string) (int, string)
	reqIDs     [][]string
	reqActions [][]string
	reqSources [][]string
	reqQueries []string
	product    string
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.product == Elasticsearch {
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
	}
	if !strings.HasSuffix(r.URL.Path, "/_bulk") {
		http.NotFound(w, r)
		return
	}
	var ids, actions, sources []string
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for i := 0; sc.Scan(); i++ {
		if i%2 == 1 {
			sources = append(sources, sc.Text())
			continue
		}
		var a map[string]struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil || len(a) != 1 {
			http.Error(w, fmt.Sprintf("action line %q: %v", sc.Bytes(), err), 400)
			return
		}
		for action, meta := range a {
			actions = append(actions, action)
			ids = append(ids, meta.ID)
		}
	}
	f.mu.Lock()
	f.reqIDs = append(f.reqIDs, ids)
	f.reqActions = append(f.reqActions, actions)
	f.reqSources = append(f.reqSources, sources)
	f.reqQueries = append(f.reqQueries, r.URL.RawQuery)
	step := f.script[0]
	if len(f.script) > 1 {
		f.script = f.script[1:]
	}
	f.mu.Unlock()
	status, body := step(ids)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// items builds a bulk response with one status per id, from fn.
func items(fn func(id string) (int, string)) func(ids []string) (int, string) {
	return func(ids []string) (int, string) {
		var b strings.Builder
		errs := false
		b.WriteString(`"items":[`)
		for i, id := range ids {
			st, typ := fn(id)
			if i > 0 {
				b.WriteByte(',')
			}
			if typ == "" {
				fmt.Fprintf(&b, `{"create":{"status":%d}}`, st)
			} else {
				errs = true
				fmt.Fprintf(&b, `{"create":{"status":%d,"error":{"type":%q}}}`, st, typ)
			}
		}
		b.WriteString("]}")
		return 200, fmt.Sprintf(`{"errors":%v,`, errs) + b.String()
	}
}

func openFake(t *testing.T, product string, f *fakeServer, settings map[string]string) *Target {
	t.Helper()
	f.product = product
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(strings.Replace(srv.URL, "http", product, 1) + "/idx")
	tg, err := open(context.Background(), u, target.Options{Settings: settings}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

func TestWriteRetriesRejectedItems(t *testing.T) {
	for _, product := range []string{Elasticsearch, OpenSearch} {
		t.Run(product, func(t *testing.T) {
			f := &fakeServer{script: []func([]string) (int, string){
				items(func(id string) (int, string) {
					switch id {
					case "busy", "busy2":
						return 429, "es_rejected_execution_exception"
					case "broken":
						return 400, "mapper_parsing_exception"
					}
					return 201, ""
				}),
				items(func(id string) (int, string) {
					if id == "busy2" {
						return 429, "rejected_execution_exception"
					}
					return 201, ""
				}),
			}}
			tg := openFake(t, product, f, map[string]string{"max_retries": "1"})
			b := target.Batch{Generator: "g", Docs: []target.Document{
				doc("ok", "g", 0, ""), doc("busy", "g", 1, ""), doc("broken", "g", 2, ""), doc("busy2", "g", 3, ""),
			}}
			res, err := tg.Write(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			if res.Acknowledged != 2 || res.Failed != 2 || res.Retries != 2 {
				t.Errorf("result %+v, want 2 acknowledged, 2 failed, 2 retries", res)
			}
			if res.ErrorKinds["mapper_parsing_exception"] != 1 || res.ErrorKinds["rejected_execution_exception"] != 1 {
				t.Errorf("kinds %v", res.ErrorKinds)
			}
			if fmt.Sprint(res.FailedSeqs) != "[2 3]" {
				t.Errorf("failed seqs %v, want [2 3]", res.FailedSeqs)
			}
			if got := fmt.Sprint(f.reqIDs); got != "[[ok busy broken busy2] [busy busy2]]" {
				t.Errorf("requests %s", got)
			}
		})
	}
}

// outcome is one item's answer in a fake _bulk response.
type outcome struct {
	status  int
	errType string
	result  string
}

// itemsByID builds a bulk response that answers each id with its outcome
// under the action the request used (index for an update).
func itemsByID(f *fakeServer, out func(id string) outcome) func(ids []string) (int, string) {
	return func(ids []string) (int, string) {
		f.mu.Lock()
		actions := f.reqActions[len(f.reqActions)-1]
		f.mu.Unlock()
		var b strings.Builder
		errs := false
		for i, id := range ids {
			o := out(id)
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{%q:{"status":%d`, actions[i], o.status)
			if o.result != "" {
				fmt.Fprintf(&b, `,"result":%q`, o.result)
			}
			if o.errType != "" {
				errs = true
				fmt.Fprintf(&b, `,"error":{"type":%q}`, o.errType)
			}
			b.WriteString("}}")
		}
		return 200, fmt.Sprintf(`{"errors":%v,"items":[%s]}`, errs, b.String())
	}
}

// An update goes out as an index action with the whole document (less its
// _id) and is acknowledged only when stored: a failed update item, or one
// the server dropped (result noop), is a failed item with its _seq, and a
// rejected one is re-sent as an update. A batch of inserts is written as
// before, create actions and the short response.
func TestWriteUpdates(t *testing.T) {
	for _, product := range []string{Elasticsearch, OpenSearch} {
		t.Run(product, func(t *testing.T) {
			f := &fakeServer{}
			answer := func(busy outcome) func(ids []string) (int, string) {
				return itemsByID(f, func(id string) outcome {
					switch id {
					case "ins":
						return outcome{201, "", "created"}
					case "new":
						return outcome{201, "", "created"}
					case "conflict":
						return outcome{409, "version_conflict_engine_exception", ""}
					case "mapper":
						return outcome{400, "document_parsing_exception", ""}
					case "busy":
						return busy
					case "dropped":
						return outcome{200, "", "noop"}
					}
					return outcome{200, "", "updated"}
				})
			}
			f.script = []func([]string) (int, string){
				answer(outcome{429, "es_rejected_execution_exception", ""}),
				answer(outcome{200, "", "updated"}),
			}
			tg := openFake(t, product, f, map[string]string{"max_retries": "1"})
			upd := func(id string, seq int64) target.Document {
				return targettest.Revision(doc(id, "g", seq, ""), 1, 1_700_000_001_000_000+seq)
			}
			b := target.Batch{Generator: "g", Docs: []target.Document{
				doc("ins", "g", 0, ""), upd("ok", 1), upd("new", 2), upd("conflict", 3), upd("mapper", 4), upd("busy", 5), upd("dropped", 6),
			}}
			res, err := tg.Write(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			if res.Acknowledged != 4 || res.Failed != 3 || res.Retries != 1 {
				t.Errorf("result %+v, want 4 acknowledged (ins, ok, new, busy), 3 failed, 1 retry", res)
			}
			if fmt.Sprint(res.FailedSeqs) != "[3 4 6]" {
				t.Errorf("failed seqs %v, want [3 4 6]", res.FailedSeqs)
			}
			if res.ErrorKinds["version_conflict_engine_exception"] != 1 || res.ErrorKinds["document_parsing_exception"] != 1 || res.ErrorKinds[target.ErrorNotStored] != 1 {
				t.Errorf("kinds %v, want one version conflict (an update's is no duplicate), one parsing failure, one not stored", res.ErrorKinds)
			}
			if got := fmt.Sprint(f.reqActions); got != "[[create index index index index index index] [index]]" {
				t.Errorf("actions %s, want create for the insert and index for every update, the re-sent one too", got)
			}
			if got := fmt.Sprint(f.reqIDs); got != "[[ins ok new conflict mapper busy dropped] [busy]]" {
				t.Errorf("requests %s", got)
			}
			for i, d := range b.Docs {
				want := "{" + strings.TrimPrefix(string(d.JSON), fmt.Sprintf(`{"_id":%q,`, d.ID))
				if got := f.reqSources[0][i]; got != want {
					t.Errorf("source of %s = %s, want the document less its _id: %s", d.ID, got, want)
				}
			}
			if f.reqSources[1][0] != f.reqSources[0][5] {
				t.Errorf("re-sent source %s, want %s", f.reqSources[1][0], f.reqSources[0][5])
			}
			if !strings.Contains(f.reqQueries[0], "items.*.result") {
				t.Errorf("query %q of a batch with updates does not ask for the item results", f.reqQueries[0])
			}

			// Inserts alone: create actions and the short response, as before.
			f.script = []func([]string) (int, string){items(func(string) (int, string) { return 201, "" })}
			res, err = tg.Write(context.Background(), target.Batch{Generator: "g", Docs: []target.Document{doc("i1", "g", 7, ""), doc("i2", "g", 8, "")}})
			if err != nil || res.Acknowledged != 2 || res.Failed != 0 {
				t.Errorf("inserts: %+v %v", res, err)
			}
			if got, q := fmt.Sprint(f.reqActions[2]), f.reqQueries[2]; got != "[create create]" || q != bulkQuery {
				t.Errorf("inserts went out as %s with query %q, want create actions with %q", got, q, bulkQuery)
			}
		})
	}
}

func TestWriteWholeRequest(t *testing.T) {
	t.Parallel() // a fake server of its own that answers after 2 s
	docs := []target.Document{doc("a", "g", 0, ""), doc("b", "g", 1, "")}

	// A whole-request 429 re-sends everything.
	f := &fakeServer{script: []func([]string) (int, string){
		func([]string) (int, string) {
			return 429, `{"error":{"type":"circuit_breaking_exception","reason":"x"},"status":429}`
		},
		items(func(string) (int, string) { return 201, "" }),
	}}
	tg := openFake(t, Elasticsearch, f, nil)
	res, err := tg.Write(context.Background(), target.Batch{Docs: docs})
	if err != nil || res.Acknowledged != 2 || res.Retries != 2 || res.Failed != 0 {
		t.Errorf("429 then ok: %+v %v", res, err)
	}

	// A 5xx on the first request is an error, with the server's reason.
	f = &fakeServer{script: []func([]string) (int, string){
		func([]string) (int, string) {
			return 503, `{"error":{"type":"cluster_block_exception","reason":"blocked"},"status":503}`
		},
	}}
	tg = openFake(t, OpenSearch, f, nil)
	res, err = tg.Write(context.Background(), target.Batch{Docs: docs})
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "cluster_block_exception") || res.Acknowledged != 0 {
		t.Errorf("503: %+v %v", res, err)
	}

	// A failing re-send after a partial success is not an error: the
	// pending items count as failed and the acknowledged ones stay.
	f = &fakeServer{script: []func([]string) (int, string){
		items(func(id string) (int, string) {
			if id == "b" {
				return 429, "es_rejected_execution_exception"
			}
			return 201, ""
		}),
		func([]string) (int, string) { return 500, `{}` },
	}}
	tg = openFake(t, Elasticsearch, f, nil)
	res, err = tg.Write(context.Background(), target.Batch{Docs: docs})
	if err != nil || res.Acknowledged != 1 || res.Failed != 1 || res.ErrorKinds[kindRequestError] != 1 {
		t.Errorf("partial then 500: %+v %v", res, err)
	}

	// The per-request timeout applies.
	slow := &fakeServer{script: []func([]string) (int, string){
		func([]string) (int, string) { time.Sleep(2 * time.Second); return 200, `{"errors":false}` },
	}}
	slow.product = Elasticsearch
	srv := httptest.NewServer(slow)
	defer srv.Close()
	u, _ := url.Parse(strings.Replace(srv.URL, "http", "elasticsearch", 1) + "/idx")
	tg, err = open(context.Background(), u, target.Options{RequestTimeout: 200 * time.Millisecond}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	start := time.Now()
	_, err = tg.Write(context.Background(), target.Batch{Docs: docs})
	if err == nil || !strings.Contains(err.Error(), "no response within 200ms") || time.Since(start) > time.Second {
		t.Errorf("timeout: %v after %s", err, time.Since(start))
	}
}

// benchDocs makes n generator-shaped documents of about size bytes.
func benchDocs(n, size int) []target.Document {
	docs := make([]target.Document, n)
	pad := strings.Repeat("x", max(0, size-200))
	for i := range docs {
		docs[i] = doc(fmt.Sprintf("%08x-1111-4222-8333-%012x", i, i), "1234567890123456789", int64(i),
			fmt.Sprintf(`,"company":"c%d","tags":["a","b"],"payload":{"text":%q}`, i%97, pad))
	}
	return docs
}

// discardTransport stands in for a server: it reads the request body and
// answers a minimal successful bulk response.
type discardTransport struct{}

func (discardTransport) Perform(req *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, req.Body)
	req.Body.Close()
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(strings.NewReader(`{"took":1,"errors":false,"items":[]}`)),
	}, nil
}

// BenchmarkBulkBody compares ways of turning a batch of 1000 documents of
// about 1.25 KB into a _bulk body. MB/s counts body bytes.
//
//	handbuilt:         appendBulkBody into a new buffer
//	pooled:            appendBulkBody into a recycled buffer (what Write does)
//	json-roundtrip:    decode each document, delete _id, re-encode, with a
//	                   json-encoded action line: the obvious generic way
//	esutil-indexer:    go-elasticsearch's esutil.BulkIndexer fed the
//	                   already stripped sources (its best case), with a
//	                   transport that discards the body
func BenchmarkBulkBody(b *testing.B) {
	docs := benchDocs(1000, 1250)
	body, _ := appendBulkBody(nil, docs)
	size := int64(len(body))

	b.Run("handbuilt", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			out, _ := appendBulkBody(make([]byte, 0, bulkBodySize(docs)), docs)
			if len(out) != int(size) {
				b.Fatal("size changed")
			}
		}
	})

	// plain: the documents say they need no scan (target.Document.Plain),
	// as generated ones do.
	plain := slices.Clone(docs)
	for i := range plain {
		plain[i].Plain = true
	}
	for name, docs := range map[string][]target.Document{"pooled": docs, "pooled-plain": plain} {
		b.Run(name, func(b *testing.B) {
			var bodies bodyPool
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				body := bodies.get(bulkBodySize(docs))
				body.b, _ = appendBulkBody(body.b, docs)
				if len(body.b) != int(size) {
					b.Fatal("size changed")
				}
				bodies.put(body)
			}
		})
	}

	b.Run("json-roundtrip", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			for _, d := range docs {
				var m map[string]any
				if err := json.Unmarshal(d.JSON, &m); err != nil {
					b.Fatal(err)
				}
				delete(m, "_id")
				meta, _ := json.Marshal(map[string]any{"create": map[string]any{"_id": d.ID}})
				src, _ := json.Marshal(m)
				buf.Write(meta)
				buf.WriteByte('\n')
				buf.Write(src)
				buf.WriteByte('\n')
			}
		}
	})

	b.Run("esutil-indexer", func(b *testing.B) {
		sources := make([][]byte, len(docs))
		for i, d := range docs {
			sources[i], _ = appendSource(nil, d)
		}
		bi, err := esutil.NewBulkIndexer(esutil.BulkIndexerConfig{
			Client:        discardTransport{},
			Index:         "idx",
			NumWorkers:    1,
			FlushBytes:    int(size) + 1<<20,
			FlushInterval: time.Hour,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		b.ReportAllocs()
		ctx := context.Background()
		for b.Loop() {
			for i, d := range docs {
				if err := bi.Add(ctx, esutil.BulkIndexerItem{
					Action: "create", DocumentID: d.ID, Body: bytes.NewReader(sources[i]),
				}); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := bi.Close(ctx); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkDecodeBulkResponse measures reading a 1000-item response, with
// and without item errors.
func BenchmarkDecodeBulkResponse(b *testing.B) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	_, clean := items(func(string) (int, string) { return 201, "" })(ids)
	_, dirty := items(func(id string) (int, string) {
		if id == "7" {
			return 400, "mapper_parsing_exception"
		}
		return 201, ""
	})(ids)
	for name, body := range map[string]string{"errors-false": clean, "errors-true": dirty} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := decodeBulkResponse(strings.NewReader(body), 1000, false, func(int, int, string, string) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSortPage measures decoding one audit page of 10,000 hits, as
// the server answers it with the page filter (filtered) and without it
// (full: _index, _id and _score beside each sort value).
func BenchmarkSortPage(b *testing.B) {
	var full, filtered strings.Builder
	full.WriteString(`{"took":3,"timed_out":false,"hits":{"max_score":null,"hits":[`)
	filtered.WriteString(`{"hits":{"hits":[`)
	for i := range maxPage {
		if i > 0 {
			full.WriteByte(',')
			filtered.WriteByte(',')
		}
		fmt.Fprintf(&full, `{"_index":"freshbench","_id":"%08x-1111-4222-8333-%012x","_score":null,"sort":[%d]}`, i, i, 1_000_000+i)
		fmt.Fprintf(&filtered, `{"sort":[%d]}`, 1_000_000+i)
	}
	full.WriteString(`]}}`)
	filtered.WriteString(`]}}`)
	for _, c := range []struct{ name, body string }{{"full", full.String()}, {"filtered", filtered.String()}} {
		b.Run(c.name, func(b *testing.B) {
			body := []byte(c.body)
			b.ReportAllocs()
			for b.Loop() {
				var p sortPage
				if err := json.Unmarshal(body, &p); err != nil {
					b.Fatal(err)
				}
				keys, err := p.keys(1)
				if err != nil || len(keys) != maxPage {
					b.Fatal(len(keys), err)
				}
			}
		})
	}
}
