package elastic

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/target"
)

// These tests run against real servers:
//
//	scripts/elasticsearch.sh start && scripts/opensearch.sh start && scripts/opensearch3.sh start
//	FRESHBENCH_TEST_ELASTICSEARCH_URL=$(scripts/elasticsearch.sh url) \
//	FRESHBENCH_TEST_OPENSEARCH_URL=$(scripts/opensearch.sh url) \
//	FRESHBENCH_TEST_OPENSEARCH3_URL=$(scripts/opensearch3.sh url) \
//	go test ./target/elastic/
//
// Without the variables they are skipped, unless FRESHBENCH_REQUIRE_SERVERS=1.

// testServer is one of the real servers the tests run against.
type testServer struct {
	name    string // subtest name
	product string // Elasticsearch or OpenSearch
	env     string // variable that holds its URL
	script  string // script that runs it
	version string // what the version it reports starts with
}

var testServers = []testServer{
	{Elasticsearch, Elasticsearch, "FRESHBENCH_TEST_ELASTICSEARCH_URL", "scripts/elasticsearch.sh", "Elasticsearch 8."},
	{OpenSearch, OpenSearch, "FRESHBENCH_TEST_OPENSEARCH_URL", "scripts/opensearch.sh", "OpenSearch 2."},
	{"opensearch3", OpenSearch, "FRESHBENCH_TEST_OPENSEARCH3_URL", "scripts/opensearch3.sh", "OpenSearch 3."},
}

// serverURL returns the URL of a test server, or skips.
func serverURL(t testing.TB, s testServer) *url.URL {
	t.Helper()
	raw := testenv.URL(t, s.env, s.script)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", s.env, err)
	}
	return u
}

// openTest opens a test server on a fresh index that is torn down when the
// test ends. Unless opts bound them, its requests may take 2 minutes, not
// the default 30 s: a starved server took longer than that to answer a
// bulk write of one document (seen at load 48 on 2 cores), and no test
// of a server here is about its latency.
func openTest(t testing.TB, s testServer, opts target.Options) *Target {
	t.Helper()
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = busyRequestTimeout
	}
	u := *serverURL(t, s)
	u.Path = fmt.Sprintf("/freshbench-test-%s-%d", strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())), time.Now().UnixNano())
	tg, err := open(context.Background(), &u, opts, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), busyRequestTimeout)
		defer cancel()
		if err := tg.Teardown(ctx); err != nil {
			t.Errorf("teardown: %v", err)
		}
		tg.Close()
	})
	return tg
}

// busyRequestTimeout bounds a request to a test server that shares a busy
// machine.
const busyRequestTimeout = 2 * time.Minute

// eventually polls cond until it holds or the deadline passes; the index
// is never refreshed by the tests, so this waits for the refresh interval.
// A starved server refreshes late (seen in a busy round: a freshness lag
// of 11.5 s at the median on OpenSearch 3 at refresh_interval 200ms), so
// the deadline is a minute: a change never made visible still fails.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	const within = time.Minute
	if ok, state := poll(within, 100*time.Millisecond, cond); !ok {
		t.Fatalf("%s: not reached within %s; last state: %s", what, within, state)
	}
}

// poll calls cond every so often until it holds or within has passed,
// and returns its last answer: for a test that judges whatever it got by
// then rather than failing at the deadline.
func poll(within, every time.Duration, cond func() (bool, string)) (ok bool, state string) {
	deadline := time.Now().Add(within)
	for {
		if ok, state = cond(); ok || time.Now().After(deadline) {
			return ok, state
		}
		time.Sleep(every)
	}
}

// forEachServer runs fn against each test server at once, beside the
// other server tests: they are separate processes, and each test's index
// is its own.
func forEachServer(t *testing.T, fn func(t *testing.T, s testServer)) {
	t.Parallel()
	for _, s := range testServers {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			fn(t, s)
		})
	}
}

func TestServerLifecycle(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		ctx := context.Background()
		tg := openTest(t, s, target.Options{Settings: map[string]string{"refresh_interval": "500ms"}})

		v, err := tg.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(v, s.version) {
			t.Errorf("version %q, want %s…", v, s.version)
		}
		t.Logf("server: %s, index %s", v, tg.Index())

		for i := range 2 { // idempotent
			if err := tg.Setup(ctx); err != nil {
				t.Fatalf("setup #%d: %v", i+1, err)
			}
		}

		const n = 50
		gen, other := "1111111111111111111", "2222222222222222222"
		var docs []target.Document
		var ids []string
		for i := range n {
			d := doc(fmt.Sprintf("%s-%d", gen, i), gen, int64(i), fmt.Sprintf(`,"age":%d,"tags":["t%d"],"nested":{"a":[1,2]}`, 20+i, i%3))
			docs = append(docs, d)
			ids = append(ids, d.ID)
		}
		res, err := tg.Write(ctx, target.Batch{Generator: gen, Docs: docs})
		if err != nil {
			t.Fatal(err)
		}
		if res.Acknowledged != n || res.Failed != 0 || res.Retries != 0 {
			t.Fatalf("write result %+v, want %d acknowledged", res, n)
		}
		// Another generator's events must not leak into this one's answers.
		res, err = tg.Write(ctx, target.Batch{Generator: other, Docs: []target.Document{doc("o-1", other, 0, ""), doc("o-2", other, 1, "")}})
		if err != nil || res.Acknowledged != 2 {
			t.Fatalf("write other generator: %+v %v", res, err)
		}

		newest := docs[n-1].EventTime
		eventually(t, "freshness sees the newest event", func() (bool, string) {
			got, ok, err := tg.Freshness(ctx, gen)
			if err != nil {
				t.Fatal(err)
			}
			return ok && got == newest, fmt.Sprintf("freshness=%d ok=%v want %d", got, ok, newest)
		})
		if _, ok, err := tg.Freshness(ctx, "no-such-generator"); err != nil || ok {
			t.Errorf("freshness of an unknown generator: ok=%v err=%v", ok, err)
		}

		vis, err := tg.Visible(ctx, gen, append(slices.Clone(ids), "unknown-id", "o-1"))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if !vis[id] {
				t.Errorf("id %s not visible", id)
			}
		}
		if vis["unknown-id"] || vis["o-1"] || len(vis) != n {
			t.Errorf("visible: %d ids, unknown=%v other-generator=%v", len(vis), vis["unknown-id"], vis["o-1"])
		}

		c, err := tg.Count(ctx, gen)
		if err != nil || c != n {
			t.Errorf("count = %d, %v; want %d", c, err, n)
		}

		var seqs []int64
		if err := tg.Seqs(ctx, gen, func(s int64) { seqs = append(seqs, s) }); err != nil {
			t.Fatal(err)
		}
		if len(seqs) != n {
			t.Fatalf("seqs: %d values, want %d", len(seqs), n)
		}
		for i, s := range seqs {
			if s != int64(i) {
				t.Fatalf("seqs[%d] = %d", i, s)
			}
		}
	})
}

// Duplicates (same _seq under another _id) show up as repeats in Seqs,
// also where they straddle a page and where one _seq fills a page.
func TestServerSeqsDuplicates(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		ctx := context.Background()
		tg := openTest(t, s, target.Options{Settings: map[string]string{"refresh_interval": "200ms"}})
		if err := tg.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		gen := "33"
		want := map[int64]int{}
		var docs []target.Document
		add := func(seq int64, copies int) {
			for range copies {
				docs = append(docs, doc(fmt.Sprintf("d-%d", len(docs)), gen, seq, ""))
				want[seq]++
			}
		}
		for s := range int64(30) {
			add(s, 1)
		}
		add(6, 2)  // the page of 7 ends inside _seq 6
		add(13, 1) // and again at 13
		add(20, 9) // _seq 20 fills whole pages
		if res, err := tg.Write(ctx, target.Batch{Generator: gen, Docs: docs}); err != nil || res.Acknowledged != len(docs) {
			t.Fatalf("write: %+v %v", res, err)
		}
		eventually(t, "all documents counted", func() (bool, string) {
			c, err := tg.Count(ctx, gen)
			if err != nil {
				t.Fatal(err)
			}
			return c == int64(len(docs)), fmt.Sprintf("count %d of %d", c, len(docs))
		})
		for _, page := range []int{7, 5, 1000} {
			got := map[int64]int{}
			prev := int64(-1)
			err := tg.seqs(ctx, gen, page, func(s int64) {
				if s < prev {
					t.Errorf("page %d: seqs out of order: %d after %d", page, s, prev)
				}
				prev = s
				got[s]++
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("page %d: seq counts %v, want %v", page, got, want)
			}
		}
	})
}

// An item rejected by the mapping is counted as failed with its error
// kind, while the good items of the same bulk are acknowledged.
func TestServerItemFailures(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		ctx := context.Background()
		tg := openTest(t, s, target.Options{})
		if err := tg.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		gen := "44"
		badSeq := target.Document{ID: "bad-seq", Generator: gen, Seq: 1,
			JSON: []byte(`{"_id":"bad-seq","_event_time":1,"generator_identifier":"44","_seq":"not-a-number"}`)}
		badAge := target.Document{ID: "bad-age", Generator: gen, Seq: 3,
			JSON: []byte(`{"_id":"bad-age","_event_time":1,"generator_identifier":"44","_seq":3,"age":{"years":3}}`)}
		docs := []target.Document{doc("good-0", gen, 0, ""), badSeq, doc("good-2", gen, 2, ""), badAge, doc("good-4", gen, 4, "")}
		res, err := tg.Write(ctx, target.Batch{Generator: gen, Docs: docs})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("result: %+v", res)
		if res.Acknowledged != 3 || res.Failed != 2 || res.Retries != 0 {
			t.Errorf("result %+v, want 3 acknowledged and 2 failed", res)
		}
		if fmt.Sprint(res.FailedSeqs) != "[1 3]" {
			t.Errorf("failed seqs %v, want [1 3]", res.FailedSeqs)
		}
		// Elasticsearch ≥ 8.8 reports document_parsing_exception, OpenSearch
		// and older releases mapper_parsing_exception.
		kinds := 0
		for k, v := range res.ErrorKinds {
			if k != "mapper_parsing_exception" && k != "document_parsing_exception" {
				t.Errorf("unexpected error kind %q", k)
			}
			kinds += v
		}
		if kinds != 2 {
			t.Errorf("error kinds %v, want 2 parsing failures", res.ErrorKinds)
		}
	})
}

// A write never replaces a stored document: an _id already in the index
// is a failed item of kind duplicate_id with its _seq, so that a repeated
// run on a reused index cannot overwrite the last one's events (and have
// its probes "seen" through the old copies).
func TestServerRefusesStoredIDs(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		ctx := context.Background()
		tg := openTest(t, s, target.Options{Settings: map[string]string{"refresh_interval": "100ms"}})
		if err := tg.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		const n = 20
		gen := "66"
		var first []target.Document
		for i := range int64(n) {
			first = append(first, doc(fmt.Sprintf("dup-%d", i), gen, i, ""))
		}
		res, err := tg.Write(ctx, target.Batch{Generator: gen, Docs: first})
		if err != nil || res.Acknowledged != n || res.Failed != 0 {
			t.Fatalf("first write: %+v %v, want %d acknowledged", res, err, n)
		}

		// The same batch again: every item is refused, with its _seq.
		res, err = tg.Write(ctx, target.Batch{Generator: gen, Docs: first})
		if err != nil {
			t.Fatal(err)
		}
		if res.Acknowledged != 0 || res.Failed != n || res.Retries != 0 || res.ErrorKinds[target.ErrorDuplicateID] != n || len(res.ErrorKinds) != 1 {
			t.Errorf("same batch again: %d acknowledged, %d failed, %d retries, kinds %v; want 0 acknowledged and %d failed as %s, not retried",
				res.Acknowledged, res.Failed, res.Retries, res.ErrorKinds, n, target.ErrorDuplicateID)
		}
		if got, want := fmt.Sprint(res.FailedSeqs), fmt.Sprint(seqsOf(first)); got != want {
			t.Errorf("same batch again: failed seqs %s, want %s", got, want)
		}

		// Stored ids under new _seqs, mixed with new ids: the new ones are
		// written, the stored ones refused and left as they were.
		var mixed []target.Document
		var refused, added []int64
		for i := range int64(n) {
			mixed = append(mixed, doc(fmt.Sprintf("dup-%d", i), gen, 100+i, ""))
			refused = append(refused, 100+i)
			if i%4 == 0 {
				mixed = append(mixed, doc(fmt.Sprintf("new-%d", i), gen, 200+i, ""))
				added = append(added, 200+i)
			}
		}
		res, err = tg.Write(ctx, target.Batch{Generator: gen, Docs: mixed})
		if err != nil {
			t.Fatal(err)
		}
		if res.Acknowledged != len(added) || res.Failed != n || res.ErrorKinds[target.ErrorDuplicateID] != n {
			t.Errorf("stored ids mixed with new: %d acknowledged, %d failed, kinds %v; want %d acknowledged and %d failed as %s",
				res.Acknowledged, res.Failed, res.ErrorKinds, len(added), n, target.ErrorDuplicateID)
		}
		if got, want := fmt.Sprint(res.FailedSeqs), fmt.Sprint(refused); got != want {
			t.Errorf("stored ids mixed with new: failed seqs %s, want %s", got, want)
		}

		// Once the new documents are searchable, so would be any overwrite
		// (a refresh exposes every earlier operation): the count is the
		// first batch plus the new ids, and the first batch's _seqs stand.
		wantCount := int64(n + len(added))
		eventually(t, "the new documents counted", func() (bool, string) {
			c, err := tg.Count(ctx, gen)
			if err != nil {
				t.Fatal(err)
			}
			return c >= wantCount, fmt.Sprintf("count %d of %d", c, wantCount)
		})
		if c, err := tg.Count(ctx, gen); err != nil || c != wantCount {
			t.Errorf("count %d (err %v) after writing %d ids twice and %d new ids, want %d", c, err, n, len(added), wantCount)
		}
		var got []int64
		if err := tg.Seqs(ctx, gen, func(seq int64) { got = append(got, seq) }); err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if want := append(seqsOf(first), added...); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("stored _seqs %v, want %v (the refused writes must not replace the stored documents)", got, want)
		}
	})
}

func seqsOf(docs []target.Document) []int64 {
	seqs := make([]int64, len(docs))
	for i, d := range docs {
		seqs[i] = d.Seq
	}
	return seqs
}

func TestServerRecreate(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		ctx := context.Background()
		tg := openTest(t, s, target.Options{Settings: map[string]string{"refresh_interval": "100ms", "shards": "2"}})
		if err := tg.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		if res, err := tg.Write(ctx, target.Batch{Docs: []target.Document{doc("x", "55", 0, "")}}); err != nil || res.Acknowledged != 1 {
			t.Fatalf("write: %+v %v", res, err)
		}
		eventually(t, "document counted", func() (bool, string) {
			c, err := tg.Count(ctx, "55")
			return err == nil && c == 1, fmt.Sprintf("count %d err %v", c, err)
		})
		// Setup without Recreate keeps the data; with Recreate it is gone.
		if err := tg.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		if c, err := tg.Count(ctx, "55"); err != nil || c != 1 {
			t.Errorf("after setup: count %d err %v, want 1", c, err)
		}
		u, _ := url.Parse(tg.cfg.product + "://" + tg.cfg.host + "/" + tg.cfg.index)
		re, err := open(ctx, u, target.Options{Recreate: true}, os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		defer re.Close()
		if err := re.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		if c, err := re.Count(ctx, "55"); err != nil || c != 0 {
			t.Errorf("after recreate: count %d err %v, want 0", c, err)
		}
		if err := re.Teardown(ctx); err != nil {
			t.Fatal(err)
		}
		if err := re.Teardown(ctx); err != nil {
			t.Errorf("teardown of a missing index: %v", err)
		}
	})
}

// An elasticsearch:// URL that reaches OpenSearch fails with a hint.
func TestServerWrongProduct(t *testing.T) {
	for _, s := range testServers {
		if s.product != OpenSearch {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			u := *serverURL(t, s)
			u.Scheme = Elasticsearch
			tg, err := open(context.Background(), &u, target.Options{}, os.Getenv)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			// The client checks the product on its first successful response.
			_, err = tg.Version(context.Background())
			if err == nil || !strings.Contains(err.Error(), "opensearch://") {
				t.Errorf("err = %v, want a hint to use opensearch://", err)
			}
			t.Logf("error: %v", err)
		})
	}
}

// A URL where nothing listens fails the write quickly with a clear error.
// It needs no server.
func TestDeadServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, product := range []string{Elasticsearch, OpenSearch} {
		t.Run(product, func(t *testing.T) {
			r := target.NewRegistry()
			Register(r)
			tg, err := r.Open(context.Background(), product+"://"+addr+"/idx", target.Options{RequestTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			start := time.Now()
			res, err := tg.Write(context.Background(), target.Batch{Docs: []target.Document{doc("a", "g", 0, "")}})
			took := time.Since(start)
			if err == nil {
				t.Fatalf("write to a dead server succeeded: %+v", res)
			}
			t.Logf("error after %s: %v", took, err)
			if res.Acknowledged != 0 {
				t.Errorf("acknowledged %d", res.Acknowledged)
			}
			if !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), addr) {
				t.Errorf("error %q should name the address and say connection refused", err)
			}
			if took > 2*time.Second {
				t.Errorf("took %s, want a quick failure", took)
			}
		})
	}
}

// BenchmarkServerWrite measures Write end to end against the real servers:
// batches of 1000 documents of about 1.25 KB, one request at a time.
func BenchmarkServerWrite(b *testing.B) {
	for _, s := range testServers {
		b.Run(s.name, func(b *testing.B) {
			ctx := context.Background()
			tg := openTest(b, s, target.Options{})
			if err := tg.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			docs := benchDocs(1000, 1250)
			body, _ := appendBulkBody(nil, docs)
			b.SetBytes(int64(len(body)))
			batches := 0
			for b.Loop() {
				// Fresh ids per batch so that every batch indexes new documents.
				for i := range docs {
					docs[i].ID = fmt.Sprintf("%d-%d", batches, i)
					docs[i].JSON = fmt.Appendf(docs[i].JSON[:0], `{"_id":%q,"_event_time":%d,"generator_identifier":"b","_seq":%d,"processBy":"a","payload":%q}`,
						docs[i].ID, time.Now().UnixMicro(), batches*len(docs)+i, strings.Repeat("x", 1100))
				}
				res, err := tg.Write(ctx, target.Batch{Generator: "b", Docs: docs})
				if err != nil {
					b.Fatal(err)
				}
				if res.Acknowledged != len(docs) {
					b.Fatalf("result %+v", res)
				}
				batches++
			}
			b.ReportMetric(float64(batches*len(docs))/b.Elapsed().Seconds(), "docs/s")
		})
	}
}

// The server tests run at once, each against the three servers (see
// forEachServer) or the two clusters, and wait on them rather than on a
// CPU: two tests per server at a time.
func TestMain(m *testing.M) {
	testenv.WaitingTests(2 * len(testServers))
	os.Exit(m.Run())
}
