package noop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/target"
)

// httpBase is the server's HTTP address as a URL.
func httpBase(s *Server) string { return "http://" + s.httpLn.Addr().String() }

func do(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

func countOf(t *testing.T, base, index, gen string) int64 {
	t.Helper()
	status, body := do(t, http.MethodPost, base+"/"+index+"/_count", `{"query":{"bool":{"filter":[{"term":{"generator_identifier":"`+gen+`"}}]}}}`)
	if status != http.StatusOK {
		t.Fatalf("count: status %d: %s", status, body)
	}
	var c struct{ Count int64 }
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	return c.Count
}

// A _bulk body the server cannot frame fails as a whole with 400 and an
// error in Elasticsearch's shape, and books nothing, not even the valid
// actions before the bad line.
func TestBulkMalformed(t *testing.T) {
	srv := start(t)
	base := httpBase(srv)
	if status, body := do(t, http.MethodPut, base+"/idx", ""); status != http.StatusOK {
		t.Fatalf("create index: %d %s", status, body)
	}
	valid := `{"create":{"_id":"a"}}` + "\n" + `{"generator_identifier":"g","_event_time":5,"_seq":0}` + "\n"
	for _, c := range []struct {
		name, path, body, errType string
	}{
		{"empty body", "/idx/_bulk", "", "action_request_validation_exception"},
		{"no final newline", "/idx/_bulk", strings.TrimSuffix(valid, "\n"), "illegal_argument_exception"},
		{"action not JSON", "/idx/_bulk", valid + "{create\n{}\n", "illegal_argument_exception"},
		{"unknown action", "/idx/_bulk", valid + `{"upsert":{}}` + "\n{}\n", "illegal_argument_exception"},
		{"two actions on a line", "/idx/_bulk", valid + `{"create":{},"index":{}}` + "\n{}\n", "illegal_argument_exception"},
		{"metadata not an object", "/idx/_bulk", valid + `{"create":"x"}` + "\n{}\n", "illegal_argument_exception"},
		{"no source after create", "/idx/_bulk", valid + `{"create":{"_id":"b"}}` + "\n", "illegal_argument_exception"},
		{"no index anywhere", "/_bulk", valid, "action_request_validation_exception"},
		{"delete without id", "/idx/_bulk", valid + `{"delete":{}}` + "\n", "action_request_validation_exception"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := do(t, http.MethodPost, base+c.path, c.body)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", status, body)
			}
			var e struct {
				Error struct {
					Type   string
					Reason string
				}
				Status int
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error.Type != c.errType || e.Error.Reason == "" || e.Status != 400 {
				t.Errorf("body %s: want an error of type %s with a reason (%v)", body, c.errType, err)
			}
			if n := countOf(t, base, "idx", "g"); n != 0 {
				t.Errorf("%d events booked from a refused request", n)
			}
		})
	}
}

// Every action gets one item, in order, with Elasticsearch's status and
// result; filter_path trims the response as the server would.
func TestBulkItems(t *testing.T) {
	srv := start(t)
	base := httpBase(srv)
	body := `{"create":{"_id":"a1"}}` + "\n" + `{"generator_identifier":"g","_event_time":7,"_seq":3}` + "\n" +
		`{"index":{}}` + "\n" + `{"generator_identifier":"g","_event_time":9,"_seq":4}` + "\n" +
		`{"delete":{"_id":"zz"}}` + "\n" +
		`{"create":{"_index":"other","_id":"q\"uote"}}` + "\n" + `{}` + "\n"
	status, out := do(t, http.MethodPost, base+"/idx/_bulk", body)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	var full struct {
		Errors bool
		Items  []map[string]struct {
			Index  string `json:"_index"`
			ID     string `json:"_id"`
			Result string
			Status int
		}
	}
	if err := json.Unmarshal(out, &full); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := []struct{ op, index, id, result string }{
		{"create", "idx", "a1", "created"}, {"index", "idx", "", "created"}, {"delete", "idx", "zz", "deleted"}, {"create", "other", `q"uote`, "created"},
	}
	if full.Errors || len(full.Items) != len(want) {
		t.Fatalf("errors %v, %d items; want no errors and %d items: %s", full.Errors, len(full.Items), len(want), out)
	}
	for i, w := range want {
		it, ok := full.Items[i][w.op]
		status := map[string]int{"created": 201, "deleted": 200}[w.result]
		if !ok || it.Index != w.index || (w.id != "" && it.ID != w.id) || it.ID == "" || it.Result != w.result || it.Status != status {
			t.Errorf("item %d: %+v, want %s on %s id %q result %s status %d", i, full.Items[i], w.op, w.index, w.id, w.result, status)
		}
	}
	if n := countOf(t, base, "idx", "g"); n != 2 {
		t.Errorf("count %d, want 2", n)
	}
	if n := countOf(t, base, "other", "g"); n != 0 {
		t.Errorf("count in the other index %d, want 0", n)
	}

	_, out = do(t, http.MethodPost, base+"/idx/_bulk?filter_path=errors,items.*.status,items.*.error.type", body)
	if want := `{"errors":false,"items":[{"create":{"status":201}},{"index":{"status":201}},{"delete":{"status":200}},{"create":{"status":201}}]}`; string(out) != want {
		t.Errorf("filtered response\n%s\nwant\n%s", out, want)
	}
	_, out = do(t, http.MethodPost, base+"/idx/_bulk?filter_path=took", body)
	if want := `{"took":0}`; string(out) != want {
		t.Errorf("filtered response %s, want %s", out, want)
	}
}

// filter_path trims a search response as the server would: the audit's
// pages ask for the sort values alone, and a filter that keeps nothing
// leaves {}.
func TestSearchFilterPath(t *testing.T) {
	srv := start(t)
	base := httpBase(srv)
	body := `{"create":{"_id":"a1"}}` + "\n" + `{"generator_identifier":"g","_event_time":7,"_seq":3}` + "\n" +
		`{"create":{"_id":"a2"}}` + "\n" + `{"generator_identifier":"g","_event_time":9,"_seq":4}` + "\n"
	if status, out := do(t, http.MethodPost, base+"/idx/_bulk", body); status != http.StatusOK {
		t.Fatalf("bulk: status %d: %s", status, out)
	}
	page := `{"size":10,"_source":false,"query":{"bool":{"filter":[{"term":{"generator_identifier":"g"}}]}},"sort":[{"_seq":{"order":"asc"}}]}`
	for _, c := range []struct{ filter, want string }{
		{"hits.hits.sort", `{"hits":{"hits":[{"sort":[3]},{"sort":[4]}]}}`},
		{"took,hits.hits.sort", `{"hits":{"hits":[{"sort":[3]},{"sort":[4]}]},"took":0}`},
		{"nothing", `{}`},
	} {
		status, out := do(t, http.MethodPost, base+"/idx/_search?filter_path="+c.filter, page)
		if status != http.StatusOK || string(out) != c.want {
			t.Errorf("filter_path=%s: status %d, %s; want %s", c.filter, status, out, c.want)
		}
	}
}

// The probes' view: a generator's newest _event_time, its count and
// _seq values, and the first _id of each write request, visible once
// the write is acknowledged and not before; an _id the server was never
// sent is not visible.
func TestElasticReadsWhatWasWritten(t *testing.T) {
	srv := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tgt := open(t, ctx, srv.ElasticsearchURL("probe"), nil)
	if _, ok, err := tgt.Freshness(ctx, "g"); err != nil || ok {
		t.Fatalf("freshness before any write: %v, %v; want nothing", ok, err)
	}
	var docs []target.Document
	for seq := int64(10); seq < 15; seq++ {
		id := fmt.Sprintf("id-%d", seq)
		docs = append(docs, target.Document{ID: id, Generator: "g", Seq: seq, EventTime: 1000 + seq,
			JSON: fmt.Appendf(nil, `{"_id":"%s","_event_time":%d,"generator_identifier":"g","_seq":%d,"x":1}`, id, 1000+seq, seq)})
	}
	if seen, err := tgt.Visible(ctx, "g", []string{"id-10"}); err != nil || seen["id-10"] {
		t.Fatalf("probe visible before its write: %v, %v", seen, err)
	}
	// Written out of order, as concurrent batches arrive: 13–14, then 10–12.
	for _, b := range [][]target.Document{docs[3:], docs[:3]} {
		if res, err := tgt.Write(ctx, target.Batch{Generator: "g", Docs: b}); err != nil || res.Acknowledged != len(b) {
			t.Fatalf("write: %+v, %v", res, err)
		}
	}
	if v, ok, err := tgt.Freshness(ctx, "g"); err != nil || !ok || v != 1014 {
		t.Errorf("freshness %d, %v, %v; want 1014", v, ok, err)
	}
	seen, err := tgt.Visible(ctx, "g", []string{"id-10", "id-13", "never-sent"})
	if err != nil || !seen["id-10"] || !seen["id-13"] || seen["never-sent"] {
		t.Errorf("visible %v, %v; want id-10 and id-13 (first of their requests) and not never-sent", seen, err)
	}
	if seen, _ := tgt.Visible(ctx, "other", []string{"id-10"}); seen["id-10"] {
		t.Errorf("id-10 visible as an event of another generator")
	}
	if n, err := tgt.Count(ctx, "g"); err != nil || n != 5 {
		t.Errorf("count %d, %v; want 5", n, err)
	}
	var seqs []int64
	if err := tgt.Seqs(ctx, "g", func(s int64) { seqs = append(seqs, s) }); err != nil || fmt.Sprint(seqs) != "[10 11 12 13 14]" {
		t.Errorf("seqs %v, %v; want 10..14", seqs, err)
	}
	// A re-sent event is acknowledged again and kept once.
	if _, err := tgt.Write(ctx, target.Batch{Generator: "g", Docs: docs[:1]}); err != nil {
		t.Fatal(err)
	}
	if n, _ := tgt.Count(ctx, "g"); n != 5 {
		t.Errorf("count after a re-send %d, want 5", n)
	}
	if err := tgt.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tgt.Count(ctx, "g"); err == nil || !strings.Contains(err.Error(), "index_not_found_exception") {
		t.Errorf("count after teardown: %v, want index_not_found_exception", err)
	}
}

// A client that drops its connection in the middle of a request leaves
// the server serving everyone else, and books nothing of the half sent.
func TestElasticDroppedConnection(t *testing.T) {
	srv := start(t)
	base := httpBase(srv)
	if status, _ := do(t, http.MethodPut, base+"/idx", ""); status != http.StatusOK {
		t.Fatal("create index")
	}
	for range 3 {
		nc, err := net.Dial("tcp", srv.httpLn.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		half := `{"create":{"_id":"a"}}` + "\n" + `{"generator_identifier":"g","_seq":0,`
		fmt.Fprintf(nc, "POST /idx/_bulk HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100000\r\n\r\n%s", half)
		nc.Close()
	}
	status, body := do(t, http.MethodGet, base+"/", "")
	if status != http.StatusOK || !strings.Contains(string(body), "freshbench-noop") {
		t.Fatalf("after dropped connections: %d %s", status, body)
	}
	if n := countOf(t, base, "idx", "g"); n != 0 {
		t.Errorf("%d events booked from requests cut short", n)
	}
}

// Rally waits for a green cluster before a race and reads the nodes info
// and stats when it starts and ends, and fails the race on an error: the
// server answers green and with no node, and a call it has no handler
// for still gets Elasticsearch's 400.
func TestRallyCalls(t *testing.T) {
	base := httpBase(start(t))
	for _, path := range []string{"/_cluster/health?wait_for_nodes=%3E%3D1", "/_cluster/health/idx"} {
		status, body := do(t, http.MethodGet, base+path, "")
		var h struct{ Status string }
		if err := json.Unmarshal(body, &h); err != nil || status != http.StatusOK || h.Status != "green" {
			t.Errorf("GET %s: %d %s (%v): want 200 and status green", path, status, body, err)
		}
	}
	for _, path := range []string{"/_nodes/_all", "/_nodes/stats/jvm", "/_nodes/stats/_all"} {
		status, body := do(t, http.MethodGet, base+path, "")
		var n struct{ Nodes map[string]any }
		if err := json.Unmarshal(body, &n); err != nil || status != http.StatusOK || n.Nodes == nil || len(n.Nodes) != 0 {
			t.Errorf("GET %s: %d %s (%v): want 200 and no node", path, status, body, err)
		}
	}
	if status, body := do(t, http.MethodGet, base+"/_cluster/settings", ""); status != http.StatusBadRequest {
		t.Errorf("GET /_cluster/settings: %d %s: want 400, no handler", status, body)
	}
}

// A search of an index pattern that matches no index finds nothing, as
// Elasticsearch's default allow_no_indices has it (Rally searches
// .ml-anomalies-* when a race ends); one that matches an index is
// refused, since the server searches one index at a time.
func TestSearchPattern(t *testing.T) {
	base := httpBase(start(t))
	if status, body := do(t, http.MethodPut, base+"/logs-a", ""); status != http.StatusOK {
		t.Fatalf("create index: %d %s", status, body)
	}
	status, body := do(t, http.MethodPost, base+"/.ml-anomalies-*/_search", `{"size":0}`)
	var r struct {
		Hits struct {
			Total struct{ Value int }
			Hits  []any
		}
	}
	if err := json.Unmarshal(body, &r); err != nil || status != http.StatusOK || r.Hits.Total.Value != 0 || r.Hits.Hits == nil {
		t.Errorf("search of a pattern matching nothing: %d %s (%v): want 200 and no hit", status, body, err)
	}
	if status, body := do(t, http.MethodPost, base+"/logs-*/_search", `{}`); status != http.StatusBadRequest {
		t.Errorf("search of a pattern matching logs-a: %d %s: want 400", status, body)
	}
}

// BenchmarkBulk serves one _bulk request of 500 documents of 1 KB with
// the filter_path the driver sends: the no-op's cost per request, which
// shares the machine with the driver that calibrate measures.
func BenchmarkBulk(b *testing.B) {
	g, err := docgen.New(docgen.Config{DocSize: 1000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	var body, doc []byte
	for range 500 {
		var d target.Document
		d, doc = g.Next(doc[:0], time.Now().UnixMicro())
		body = fmt.Appendf(body, `{"create":{"_id":%q}}`+"\n", d.ID)
		body = append(append(body, d.JSON...), '\n')
	}
	h := newElastic("noop")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/bench/_bulk?filter_path=errors,items.*.status,items.*.error.type", bytes.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkAuditPage answers one page of the completeness audit: 10,000
// _seq sort values of a generator, filtered to the sort values alone.
func BenchmarkAuditPage(b *testing.B) {
	h := newElastic("noop")
	var body []byte
	for seq := range 10_000 {
		body = fmt.Appendf(body, `{"create":{"_id":"id-%d"}}`+"\n"+`{"generator_identifier":"g","_event_time":%d,"_seq":%d}`+"\n", seq, seq, seq)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/bench/_bulk", bytes.NewReader(body)))
	if w.Code != http.StatusOK {
		b.Fatalf("bulk: status %d: %s", w.Code, w.Body)
	}
	page := []byte(`{"size":10000,"_source":false,"track_total_hits":false,"query":{"bool":{"filter":[{"term":{"generator_identifier":"g"}}]}},"sort":[{"_seq":{"order":"asc"}}]}`)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/bench/_search?filter_path=hits.hits.sort", bytes.NewReader(page)))
		if w.Code != http.StatusOK || w.Body.Len() < 10_000*len(`{"sort":[1]},`) {
			b.Fatalf("search: status %d, %d bytes", w.Code, w.Body.Len())
		}
	}
}

// A filter_path reaches into a hit's _source as into any member, and a
// hit converted for the filter reads as its JSON encoding does.
func TestSearchFilterIntoSource(t *testing.T) {
	srv := start(t)
	base := httpBase(srv)
	if status, out := do(t, http.MethodPost, base+"/idx/_bulk", `{"create":{"_id":"a1"}}`+"\n"+`{"generator_identifier":"g","_seq":3,"name":"Ann"}`+"\n"); status != http.StatusOK {
		t.Fatalf("bulk: status %d: %s", status, out)
	}
	status, out := do(t, http.MethodPost, base+"/idx/_search?filter_path=hits.hits._source.name", `{"query":{"match_all":{}}}`)
	if want := `{"hits":{"hits":[{"_source":{"name":"Ann"}}]}}`; status != http.StatusOK || string(out) != want {
		t.Errorf("status %d, %s; want %s", status, out, want)
	}
	score := 1.5
	for _, h := range []hit{{Index: "i"}, {Index: "i", ID: "x", Score: &score, Source: json.RawMessage(`{"a":[1,{"b":2}]}`), Sort: []int64{7}}} {
		direct, err := json.Marshal(generic([]hit{h}))
		if err != nil {
			t.Fatal(err)
		}
		encoded, _ := json.Marshal([]hit{h})
		var viaJSON any
		if err := json.Unmarshal(encoded, &viaJSON); err != nil {
			t.Fatal(err)
		}
		if want, _ := json.Marshal(viaJSON); string(direct) != string(want) {
			t.Errorf("hit %+v converted to %s, its JSON reads %s", h, direct, want)
		}
	}
}
