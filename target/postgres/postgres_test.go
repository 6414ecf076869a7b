package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/target"
)

const urlEnv = "FRESHBENCH_TEST_POSTGRES_URL"

// serverURL returns the test server's URL, or skips (fails when
// FRESHBENCH_REQUIRE_SERVERS=1) when none is configured.
func serverURL(tb testing.TB) string {
	tb.Helper()
	return testenv.URL(tb, urlEnv, "scripts/postgres.sh")
}

func randomHex(tb testing.TB, n int) string {
	tb.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// withTable returns raw with its table parameter replaced.
func withTable(tb testing.TB, raw, table string) *url.URL {
	tb.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("parse %s: %v", urlEnv, err)
	}
	q := u.Query()
	q.Set("table", table)
	u.RawQuery = q.Encode()
	return u
}

// openTest opens the test server on a table of its own, dropped at the end.
func openTest(tb testing.TB, settings map[string]string, opts target.Options) (*store, string) {
	tb.Helper()
	raw := serverURL(tb)
	table := "fbt_" + randomHex(tb, 6)
	opts.Settings = settings
	tg, err := Open(context.Background(), withTable(tb, raw, table), opts)
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	s := tg.(*store)
	tb.Cleanup(func() {
		if err := s.Teardown(context.Background()); err != nil {
			tb.Errorf("teardown: %v", err)
		}
		s.Close()
	})
	return s, table
}

// padding makes documents about 1 KB, the size of a RockBench event.
var padding = strings.Repeat("x", 860)

// makeDocs builds n documents of generator gen with _seq from, from+1, …
// by hand (the generator package is developed separately).
func makeDocs(gen string, from, n int, pad string) []target.Document {
	docs := make([]target.Document, n)
	now := time.Now().UnixMicro()
	for i := range docs {
		seq := int64(from + i)
		id := fmt.Sprintf("%s-%08d", gen, seq)
		et := now + seq // strictly increasing, so the newest is known
		docs[i] = target.Document{
			ID:        id,
			Generator: gen,
			Seq:       seq,
			EventTime: et,
			JSON: fmt.Appendf(nil, `{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":%d,"processBy":"a","tags":["x","y"],"geo":{"lat":1.5,"lon":-2},"pad":%q}`,
				id, et, gen, seq, pad),
		}
	}
	return docs
}

func write(tb testing.TB, s *store, docs []target.Document) target.WriteResult {
	tb.Helper()
	res, err := s.Write(context.Background(), target.Batch{Generator: docs[0].Generator, Docs: docs})
	if err != nil {
		tb.Fatalf("write: %v", err)
	}
	return res
}

func TestWriteMethods(t *testing.T) {
	serverURL(t)
	for _, method := range WriteMethods() {
		t.Run(method, func(t *testing.T) {
			ctx := context.Background()
			s, table := openTest(t, map[string]string{"write_method": method}, target.Options{})
			for range 2 { // idempotent
				if err := s.Setup(ctx); err != nil {
					t.Fatalf("setup: %v", err)
				}
			}
			gen := "g" + randomHex(t, 4)
			other := "o" + randomHex(t, 4)
			if _, ok, err := s.Freshness(ctx, gen); err != nil || ok {
				t.Fatalf("freshness of empty table = %v, %v; want not found", ok, err)
			}

			docs := makeDocs(gen, 0, 120, "p")
			for _, batch := range [][]target.Document{docs[:50], docs[50:]} {
				res := write(t, s, batch)
				if res.Acknowledged != len(batch) || res.Failed != 0 {
					t.Fatalf("write %d docs: %+v", len(batch), res)
				}
			}
			if res := write(t, s, makeDocs(other, 0, 7, "p")); res.Acknowledged != 7 {
				t.Fatalf("write other generator: %+v", res)
			}

			newest, ok, err := s.Freshness(ctx, gen)
			if err != nil || !ok || newest != docs[len(docs)-1].EventTime {
				t.Fatalf("freshness = %d, %v, %v; want %d", newest, ok, err, docs[len(docs)-1].EventTime)
			}
			ids := []string{docs[0].ID, docs[77].ID, "unknown-id", makeDocs(other, 0, 1, "")[0].ID}
			vis, err := s.Visible(ctx, gen, ids)
			if err != nil {
				t.Fatalf("visible: %v", err)
			}
			want := map[string]bool{ids[0]: true, ids[1]: true, ids[2]: false, ids[3]: false}
			if fmt.Sprint(vis) != fmt.Sprint(want) {
				t.Fatalf("visible = %v, want %v", vis, want)
			}
			if n, err := s.Count(ctx, gen); err != nil || n != 120 {
				t.Fatalf("count = %d, %v; want 120", n, err)
			}
			checkSeqs(t, s, gen, 120)

			// doc must hold the JSON object itself, whatever the method's
			// encoding path (text[] cast, binary COPY, jsonb parameter).
			var objects int64
			err = s.pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()+
				` WHERE jsonb_typeof(doc) = 'object' AND doc->>'processBy' = 'a' AND doc @> '{"tags":["x"]}'
				AND doc->>'_id' = _id AND (doc->>'_seq')::bigint = _seq`).Scan(&objects)
			if err != nil || objects != 127 {
				t.Fatalf("documents stored as JSON objects: %d, %v; want 127", objects, err)
			}

			// A batch with two already stored _ids and three new ones.
			dup := append(makeDocs(gen, 10, 2, "p"), makeDocs(gen, 120, 3, "p")...)
			res, err := s.Write(ctx, target.Batch{Generator: gen, Docs: dup})
			if err != nil {
				t.Fatalf("write with duplicates: %v", err)
			}
			// Every method names the duplicates and stores the rest (COPY,
			// which has no ON CONFLICT, by writing the batch again with
			// INSERT).
			if res.Acknowledged != 3 || res.Failed != 2 || res.ErrorKinds["duplicate_id"] != 2 ||
				!slices.Equal(res.FailedSeqs, []int64{10, 11}) {
				t.Fatalf("%s with duplicates: %+v", method, res)
			}
			checkSeqs(t, s, gen, 123)
		})
	}
}

func checkSeqs(t *testing.T, s *store, gen string, n int) {
	t.Helper()
	var got []int64
	if err := s.Seqs(context.Background(), gen, func(seq int64) { got = append(got, seq) }); err != nil {
		t.Fatalf("seqs: %v", err)
	}
	slices.Sort(got)
	if len(got) != n {
		t.Fatalf("seqs: got %d, want %d", len(got), n)
	}
	for i, seq := range got {
		if seq != int64(i) {
			t.Fatalf("seqs: position %d holds %d", i, seq)
		}
	}
}

// TestLargeBatch writes more rows in one batch than a placeholder-per-value
// INSERT could (65535 parameters / 5 columns = 13107 rows).
func TestLargeBatch(t *testing.T) {
	serverURL(t)
	for _, method := range WriteMethods() {
		t.Run(method, func(t *testing.T) {
			s, _ := openTest(t, map[string]string{"write_method": method}, target.Options{})
			if err := s.Setup(context.Background()); err != nil {
				t.Fatal(err)
			}
			docs := makeDocs("big", 0, 14000, "")
			if res := write(t, s, docs); res.Acknowledged != len(docs) {
				t.Fatalf("write: %+v", res)
			}
			if n, err := s.Count(context.Background(), "big"); err != nil || n != int64(len(docs)) {
				t.Fatalf("count = %d, %v", n, err)
			}
		})
	}
}

// TestRejectedData checks that a document the server refuses (invalid
// JSON) fails the whole batch as items of a named kind, without an error.
func TestRejectedData(t *testing.T) {
	serverURL(t)
	for _, method := range WriteMethods() {
		t.Run(method, func(t *testing.T) {
			s, _ := openTest(t, map[string]string{"write_method": method}, target.Options{})
			if err := s.Setup(context.Background()); err != nil {
				t.Fatal(err)
			}
			docs := makeDocs("bad", 0, 3, "")
			docs[1].JSON = []byte(`{"_id": broken`)
			res, err := s.Write(context.Background(), target.Batch{Generator: "bad", Docs: docs})
			if err != nil {
				t.Fatalf("write: %v", err)
			}
			if res.Acknowledged != 0 || res.Failed != 3 || res.ErrorKinds["invalid_text_representation"] != 3 {
				t.Fatalf("write: %+v", res)
			}
			if n, _ := s.Count(context.Background(), "bad"); n != 0 {
				t.Fatalf("count = %d after a rejected batch, want 0", n)
			}
		})
	}
}

// TestRejectedMixedBatch checks that a batch of inserts and updates is
// one transaction with every method: a document the server refuses, an
// insert's or an update's, fails every item, and neither the batch's
// inserts nor its updates are stored.
func TestRejectedMixedBatch(t *testing.T) {
	serverURL(t)
	for _, method := range WriteMethods() {
		t.Run(method, func(t *testing.T) {
			ctx := context.Background()
			s, _ := openTest(t, map[string]string{"write_method": method}, target.Options{})
			if err := s.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			gen := "mix"
			docs := makeDocs(gen, 0, 8, "")
			if res := write(t, s, docs[:4]); res.Acknowledged != 4 {
				t.Fatalf("write 4 inserts: %+v", res)
			}
			for _, bad := range []string{"update", "insert"} {
				mixed := append(revise(docs[:4], 1, func(seq int64) int64 { return seq }), docs[4:]...)
				if bad == "update" {
					mixed[1].JSON = []byte(`{"_id": broken`)
				} else {
					mixed[5].JSON = []byte(`{"_id": broken`)
				}
				res, err := s.Write(ctx, target.Batch{Generator: gen, Docs: mixed})
				if err != nil {
					t.Fatalf("bad %s: write: %v", bad, err)
				}
				if res.Acknowledged != 0 || res.Failed != len(mixed) || res.ErrorKinds["invalid_text_representation"] != len(mixed) {
					t.Fatalf("bad %s: %+v; want all %d items failed", bad, res, len(mixed))
				}
				if n, err := s.Count(ctx, gen); err != nil || n != 4 {
					t.Fatalf("bad %s: count = %d, %v; want the 4 inserted before", bad, n, err)
				}
				updated := 0
				if err := s.Updated(ctx, gen, func(int64, int64) { updated++ }); err != nil || updated != 0 {
					t.Fatalf("bad %s: %d updated rows, %v; want none", bad, updated, err)
				}
			}
		})
	}
}

func TestSetupRecreateAndGIN(t *testing.T) {
	ctx := context.Background()
	s, table := openTest(t, map[string]string{"gin": "true"}, target.Options{})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, s, makeDocs("r", 0, 5, ""))
	var indexes []string
	rows, err := s.pool.Query(ctx, `SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY 1`, table)
	if err != nil {
		t.Fatal(err)
	}
	indexes, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{table + "_doc_gin_idx", table + "_gen_seq_idx", table + "_gen_time_idx", table + "_gen_upd_idx", table + "_pkey"}
	if !slices.Equal(indexes, want) {
		t.Fatalf("indexes = %v, want %v", indexes, want)
	}

	// Setup again with Recreate through a second target on the same table.
	r, err := Open(ctx, withTable(t, serverURL(t), table), target.Options{Recreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx, "r"); err != nil || n != 0 {
		t.Fatalf("count after recreate = %d, %v; want 0", n, err)
	}
}

func TestVersion(t *testing.T) {
	s, _ := openTest(t, nil, target.Options{})
	v, err := s.Version(context.Background())
	if err != nil || !strings.HasPrefix(v, "PostgreSQL ") {
		t.Fatalf("version = %q, %v", v, err)
	}
	t.Log(v)
}

// TestRequestTimeout holds a lock on the table so that a count waits, and
// checks that the request timeout ends it.
func TestRequestTimeout(t *testing.T) {
	ctx := context.Background()
	s, table := openTest(t, nil, target.Options{RequestTimeout: 500 * time.Millisecond})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE `+pgx.Identifier{table}.Sanitize()+` IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Count(ctx, "g")
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("count under lock: %v; want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("timeout took %s", d)
	}
	t.Log(err)
}

func TestWrongPassword(t *testing.T) {
	const secret = "not-the-Secret-42"
	u := withTable(t, serverURL(t), "events")
	if u.User == nil {
		t.Skip("the test URL has no user to try a wrong password with")
	}
	u.User = url.UserPassword(u.User.Username(), secret)
	tg, err := Open(context.Background(), u, target.Options{})
	if err == nil {
		tg.Close()
		t.Skip("the server accepted a wrong password (trust authentication?)")
	}
	msg := err.Error()
	t.Log(msg)
	if !strings.Contains(msg, "password authentication failed") || !strings.HasPrefix(msg, "connect to postgres") {
		t.Errorf("error %q does not say that the password was refused", msg)
	}
	if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
		t.Errorf("error %q contains the password or several lines", msg)
	}
}

// TestConnectionRefused needs no server: a port nothing listens on.
func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	const secret = "s3cret-pw"
	raw := "postgres://bench:" + secret + "@" + addr + "/db?table=events"
	u, _ := url.Parse(raw)
	start := time.Now()
	_, err = Open(context.Background(), u, target.Options{})
	if err == nil {
		t.Fatal("open succeeded against a closed port")
	}
	msg := err.Error()
	t.Log(msg)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to fail", d)
	}
	if !strings.Contains(msg, "connection refused") || !strings.Contains(msg, "bench:xxxxx@"+addr) {
		t.Errorf("error %q does not name the address and the refusal", msg)
	}
	if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
		t.Errorf("error %q contains the password or several lines", msg)
	}
}

func TestBadOptions(t *testing.T) {
	const secret = "s3cret-pw"
	reg := target.NewRegistry()
	Register(reg)
	if got := reg.Schemes(); !slices.Equal(got, []string{"postgres", "postgresql"}) {
		t.Fatalf("schemes = %v", got)
	}
	cases := []struct {
		name, url string
		settings  map[string]string
		want      string
	}{
		{"table", "postgres://u:" + secret + "@127.0.0.1:1/db?table=bad-name", nil, `table="bad-name"`},
		{"table quote", "postgresql://u:" + secret + "@127.0.0.1:1/db?table=a%22b", nil, `table="a\"b"`},
		{"table empty", "postgres://u:" + secret + "@127.0.0.1:1/db?table=", nil, `table=""`},
		{"write_method", "postgres://u:" + secret + "@127.0.0.1:1/db", map[string]string{"write_method": "bulk"},
			`write_method="bulk": want one of insert, copy, pipeline`},
		{"gin", "postgres://u:" + secret + "@127.0.0.1:1/db", map[string]string{"gin": "maybe"}, `gin="maybe"`},
		{"max_conns", "postgres://u:" + secret + "@127.0.0.1:1/db", map[string]string{"max_conns": "0"}, `max_conns="0"`},
		{"pgx parameter", "postgres://u:" + secret + "@127.0.0.1:1/db?sslmode=bogus&password=" + secret, nil, "sslmode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := reg.Open(context.Background(), c.url, target.Options{Settings: c.settings})
			if err == nil {
				t.Fatal("open succeeded")
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not contain %q", msg, c.want)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("error %q contains the password", msg)
			}
			if time.Since(start) > time.Second {
				t.Errorf("bad options should fail before connecting")
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	u, _ := url.Parse("postgresql://u:pw@127.0.0.1:5432/db?table=Events_1&sslmode=disable&application_name=fb")
	cfg, err := parseConfig(u, target.Options{RequestTimeout: 2500 * time.Millisecond, Settings: map[string]string{"synchronous_commit": "off"}})
	if err != nil {
		t.Fatal(err)
	}
	cc := cfg.pool.ConnConfig
	if cfg.table != "Events_1" || cfg.method != methodInsert || cfg.timeout != 2500*time.Millisecond {
		t.Errorf("table %q method %q timeout %s", cfg.table, cfg.method, cfg.timeout)
	}
	if _, ok := cc.RuntimeParams["table"]; ok {
		t.Error("table was passed to the server as a run-time parameter")
	}
	if cc.RuntimeParams["application_name"] != "fb" || cc.RuntimeParams["synchronous_commit"] != "off" {
		t.Errorf("runtime params = %v", cc.RuntimeParams)
	}
	if cc.User != "u" || cc.Password != "pw" || cc.Database != "db" || cc.Port != 5432 {
		t.Errorf("conn config = %s@%s:%d/%s", cc.User, cc.Host, cc.Port, cc.Database)
	}
	if cfg.pool.MaxConns != defaultMaxConns || cc.ConnectTimeout != 2500*time.Millisecond {
		t.Errorf("max conns %d connect timeout %s", cfg.pool.MaxConns, cc.ConnectTimeout)
	}
	if strings.Contains(cfg.redacted, "pw@") {
		t.Errorf("redacted URL %q", cfg.redacted)
	}

	u, _ = url.Parse("postgres://u@h/db?pool_max_conns=3&password=topsecret")
	cfg, err = parseConfig(u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.table != DefaultTable || cfg.pool.MaxConns != 3 || cfg.timeout != defaultTimeout {
		t.Errorf("table %q max conns %d timeout %s", cfg.table, cfg.pool.MaxConns, cfg.timeout)
	}
	if strings.Contains(cfg.redacted, "topsecret") {
		t.Errorf("redacted URL %q shows the password parameter", cfg.redacted)
	}
}

// TestServerRestart stops and starts the cluster of scripts/postgres.sh
// while a writer runs: writes must fail while it is down and succeed again
// once the pool has reconnected, and every acknowledged event must be
// stored. It only runs with FRESHBENCH_TEST_POSTGRES_RESTART=1 because it
// disturbs whatever else uses that server.
func TestServerRestart(t *testing.T) {
	serverURL(t)
	if os.Getenv("FRESHBENCH_TEST_POSTGRES_RESTART") != "1" {
		t.Skip("set FRESHBENCH_TEST_POSTGRES_RESTART=1 to stop and start the scripts/postgres.sh cluster during writes")
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "postgres.sh")
	ctl := func(cmd string) {
		t.Helper()
		out, err := exec.Command(script, cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", script, cmd, err, out)
		}
	}

	ctx := context.Background()
	s, _ := openTest(t, nil, target.Options{RequestTimeout: 5 * time.Second})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	var (
		mu           sync.Mutex
		acked        []int64
		failedWrites atomic.Int64
		next         int
		stop         = make(chan struct{})
		done         = make(chan struct{})
	)
	writeOnce := func() error {
		mu.Lock()
		from := next
		next += 10
		mu.Unlock()
		docs := makeDocs("restart", from, 10, "")
		res, err := s.Write(ctx, target.Batch{Generator: "restart", Docs: docs})
		if err != nil {
			failedWrites.Add(1)
			return err
		}
		mu.Lock()
		for _, d := range docs[:res.Acknowledged] {
			acked = append(acked, d.Seq)
		}
		mu.Unlock()
		return nil
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				_ = writeOnce()
			}
		}
	}()
	defer func() {
		select {
		case <-done:
		default:
			close(stop)
			<-done
		}
	}()

	time.Sleep(200 * time.Millisecond)
	ctl("stop")
	err := writeOnce()
	if err == nil {
		ctl("start")
		t.Fatal("a write succeeded while the server was stopped")
	}
	t.Logf("while down: %v", err)
	ctl("start")

	deadline := time.Now().Add(30 * time.Second)
	for {
		err := writeOnce()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes still fail 30 s after the restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	<-done
	t.Logf("failed writes: %d, acknowledged events: %d", failedWrites.Load(), len(acked))

	stored := make(map[int64]bool)
	if err := s.Seqs(ctx, "restart", func(seq int64) { stored[seq] = true }); err != nil {
		t.Fatal(err)
	}
	for _, seq := range acked {
		if !stored[seq] {
			t.Fatalf("acknowledged _seq %d is not stored", seq)
		}
	}
}

// BenchmarkWrite writes ~1 KB documents one batch at a time (service-time
// bound) and with 4×GOMAXPROCS concurrent writers, per write method.
//
//	FRESHBENCH_TEST_POSTGRES_URL=$(scripts/postgres.sh url) \
//	  go test -run '^$' -bench Write -benchtime 5s ./target/postgres/
func BenchmarkWrite(b *testing.B) {
	serverURL(b)
	for _, method := range WriteMethods() {
		for _, size := range []int{50, 500} {
			b.Run(fmt.Sprintf("%s/batch=%d", method, size), func(b *testing.B) {
				s, _ := openTest(b, map[string]string{"write_method": method}, target.Options{})
				if err := s.Setup(context.Background()); err != nil {
					b.Fatal(err)
				}
				gen := "bench" + randomHex(b, 4)
				b.SetBytes(int64(len(makeDocs(gen, 0, 1, padding)[0].JSON) * size))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					docs := makeDocs(gen, i*size, size, padding)
					b.StartTimer()
					write(b, s, docs)
				}
				b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "docs/s")
			})
			b.Run(fmt.Sprintf("%s/batch=%d/parallel", method, size), func(b *testing.B) {
				s, _ := openTest(b, map[string]string{"write_method": method}, target.Options{})
				if err := s.Setup(context.Background()); err != nil {
					b.Fatal(err)
				}
				var writers atomic.Int64
				b.SetParallelism(4)
				start := time.Now()
				b.RunParallel(func(pb *testing.PB) {
					gen := fmt.Sprintf("bench%s-%d", randomHex(b, 4), writers.Add(1))
					for i := 0; pb.Next(); i++ {
						docs := makeDocs(gen, i*size, size, padding)
						if _, err := s.Write(context.Background(), target.Batch{Generator: gen, Docs: docs}); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N*size)/time.Since(start).Seconds(), "docs/s")
			})
		}
	}
}

// A timeout names the bound that fired: a caller's deadline shorter than
// the request timeout is not called the request timeout.
func TestTimeoutNamesTheBound(t *testing.T) {
	s, _ := openTest(t, nil, target.Options{})
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := s.Count(ctx, "g")
	if err == nil || strings.Contains(err.Error(), "timed out (request timeout") || !strings.Contains(err.Error(), "the caller's deadline") {
		t.Fatalf("count past the caller's deadline: %v, want it to name the caller's deadline", err)
	}
}
