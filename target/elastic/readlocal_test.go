package elastic

import (
	"context"
	"github.com/freshbench/freshbench/query/querytest"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/freshbench/freshbench/target"
)

// A target opened with ReadLocal asks every search for the node's own
// copies, so that a read endpoint measures the node it names; one opened
// without does not, and its writes never carry the preference.
func TestReadLocalSearchesAskForTheNodesCopies(t *testing.T) {
	for _, local := range []bool{true, false} {
		var mu sync.Mutex
		params := map[string]string{} // by path: the URL parameters last sent
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Elastic-Product", "Elasticsearch")
			w.Header().Set("Content-Type", "application/json")
			io.Copy(io.Discard, r.Body)
			mu.Lock()
			params[r.URL.Path] = r.URL.RawQuery
			mu.Unlock()
			switch {
			case strings.HasSuffix(r.URL.Path, "/_count"):
				io.WriteString(w, `{"count":0}`)
			case strings.HasSuffix(r.URL.Path, "/_bulk"):
				io.WriteString(w, `{"errors":false,"items":[{"create":{"status":201}}]}`)
			default:
				io.WriteString(w, `{"hits":{"hits":[]},"aggregations":{"newest":{"value":null},"tags":{"buckets":[]}}}`)
			}
		}))
		u, _ := url.Parse(strings.Replace(srv.URL, "http", Elasticsearch, 1) + "/idx")
		tg, err := open(context.Background(), u, target.Options{ReadLocal: local}, envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, _, err := tg.Freshness(ctx, "g"); err != nil {
			t.Fatalf("freshness: %v", err)
		}
		if _, err := tg.Count(ctx, "g"); err != nil {
			t.Fatalf("count: %v", err)
		}
		if _, err := tg.Query(ctx, querytest.KindQuery(t, "elasticsearch", target.QueryPoint, "v", 1)); err != nil {
			t.Fatalf("query: %v", err)
		}
		if _, err := tg.Write(ctx, target.Batch{Generator: "g", Docs: []target.Document{doc("a", "g", 0, "")}}); err != nil {
			t.Fatalf("write: %v", err)
		}
		want := ""
		if local {
			want = "preference=_local"
		}
		mu.Lock()
		for _, path := range []string{"/idx/_search", "/idx/_count"} {
			if got := params[path]; got != want {
				t.Errorf("ReadLocal %v: %s sent with %q, want %q", local, path, got, want)
			}
		}
		if got := params["/idx/_bulk"]; strings.Contains(got, "preference") {
			t.Errorf("ReadLocal %v: a write carries a search preference: %q", local, got)
		}
		mu.Unlock()
		if got := tg.QueryText(querytest.KindQuery(t, "elasticsearch", target.QueryPoint, "v", 1)); strings.Contains(got, "preference=_local") != local {
			t.Errorf("ReadLocal %v: the query text does not say what is sent: %s", local, got)
		}
		tg.Close()
		srv.Close()
	}
}
