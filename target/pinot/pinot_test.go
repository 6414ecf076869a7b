package pinot

import (
	"context"
	"fmt"
	"github.com/freshbench/freshbench/query/querytest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

func TestParseConfig(t *testing.T) {
	targettest.CheckURLs(t, func(u *url.URL) (*config, error) { return parseConfig(u, target.Options{}) }, map[string]string{
		"pinot://127.0.0.1:8099/events?controller=127.0.0.1:9000&flush_rows=5000": "",
		"pinot://127.0.0.1:8099?controller=127.0.0.1:9000":                        "",
		"pinot://127.0.0.1:8099/events":                                           "give the controller, controller=host:port",
		"pinot://127.0.0.1/events?controller=127.0.0.1:9000":                      "want pinot://host:port/table",
		"pinot://127.0.0.1:8099/a/b?controller=127.0.0.1:9000":                    "the path must be a table name",
		`pinot://127.0.0.1:8099/x'y?controller=127.0.0.1:9000`:                    "the path must be a table name",
		"pinot://127.0.0.1:8099/x?controller=host":                                "want host:port",
		"pinot://127.0.0.1:8099/x?controller=127.0.0.1:9000&upsert=maybe":         "upsert",
		"pinot://127.0.0.1:8099/x?controler=127.0.0.1:9000":                       `query parameter "controler"`,
	})
	u, _ := url.Parse("pinot://127.0.0.1:8099?controller=127.0.0.1:9000")
	cfg, err := parseConfig(u, target.Options{})
	if err != nil || cfg.table != DefaultTable || cfg.controller != "http://127.0.0.1:9000" || cfg.broker != "http://127.0.0.1:8099" || cfg.upsert {
		t.Errorf("%+v, %v: want the default table, append-only, the controller given", cfg, err)
	}
}

// An append-only table takes no updates; an upsert table does.
func TestUpsertTakesUpdates(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want bool
	}{{"pinot://127.0.0.1:1/x?controller=127.0.0.1:2", false}, {"pinot://127.0.0.1:1/x?controller=127.0.0.1:2&upsert=true", true}} {
		u, _ := url.Parse(c.raw)
		tgt, err := Open(context.Background(), u, target.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := tgt.(target.Updater); ok != c.want {
			t.Errorf("%s: an Updater: %v; want %v", c.raw, ok, c.want)
		}
	}
}

// A pinot target without a topic refuses to write and to set up, saying
// what to give.
func TestNoVia(t *testing.T) {
	u, _ := url.Parse("pinot://127.0.0.1:1/x?controller=127.0.0.1:2")
	tgt, err := Open(context.Background(), u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	targettest.NoStream(t, tgt, errNoVia)
}

// server opens a target on a table of the test's own, consuming a topic
// of the same name, and produces nothing; the topic's records are the
// test's to write.
func server(t *testing.T, settings map[string]string) (*store, *kgo.Client) {
	t.Helper()
	st := targettest.OpenStream(t, "FRESHBENCH_TEST_PINOT_URL", "scripts/pinot.sh", "fb_pinot", settings, Open)
	s, ok := st.Target.(*store)
	if !ok {
		s = st.Target.(upsertStore).store
	}
	// Pinot asks Kafka for the topic's partitions when the table is made:
	// the topic must exist first (the via makes it before setup).
	if err := st.Kafka.ProduceSync(context.Background(), &kgo.Record{Key: []byte("x"), Value: []byte(`{"_id":"x","generator_identifier":"setup","_seq":0,"_event_time":1}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return s, st.Kafka
}

// produce writes one event of generator g to the topic.
func produce(t *testing.T, ctx context.Context, kc *kgo.Client, doc string) {
	t.Helper()
	if err := kc.ProduceSync(ctx, &kgo.Record{Key: []byte("a1"), Value: []byte(doc)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or a minute passes.
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
	}
}

// Setup is idempotent and makes the table consume the topic: an event
// produced to it is read back over SQL, exactly, by every read, and the
// account has Pinot's consumed offset at Kafka's end. A table of another
// topic is refused; teardown removes the table and the schema.
func TestSetupReadsTheTopic(t *testing.T) {
	s, kc := server(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	targettest.SetupTwice(t, ctx, s, "g")
	now := time.Now().UnixMicro()
	produce(t, ctx, kc, fmt.Sprintf(`{"_id":"a1","_event_time":%d,"generator_identifier":"g","_seq":7,"processBy":"p","name":"it's \\ p","company":"c","emails":["e1","e2"],"tags":["t1","t2"],"address":{"city":"x"}}`, now))
	targettest.WaitFresh(t, ctx, s, "g", now)
	targettest.SeesOneEvent(t, ctx, s, "g")
	if n, err := s.Query(ctx, querytest.KindQuery(t, "pinot", target.QueryPoint, "p'; DROP", 10)); n != 0 || err != nil {
		t.Errorf("a value with a quote: %d rows, %v; want none, no error", n, err)
	}
	// A query of one's own comes with its values written in as literals
	// (target.SQLLiteral): a string holding a quote and a backslash, and
	// a number, each find the event as its own value.
	mine := func(where string) int {
		t.Helper()
		q := target.Query{Kind: "mine", Statement: target.Statement{Text: `SELECT "_id" FROM {table} WHERE ` + where + ` LIMIT 10`}}
		n, err := s.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", s.QueryText(q), err)
		}
		return n
	}
	for where, want := range map[string]int{
		`"name" = ` + target.SQLLiteral(`it's \ p`): 1, `"name" = ` + target.SQLLiteral(`it's \\ p`): 0,
		`"_seq" = ` + target.SQLLiteral(int64(7)): 1, `"_seq" = ` + target.SQLLiteral(int64(8)): 0,
	} {
		if n := mine(where); n != want {
			t.Errorf("own query where %s: %d rows, want %d", where, n, want)
		}
	}
	sample, err := s.Sample(ctx, 5)
	if err != nil || len(sample) != 2 || !strings.Contains(string(sample[0])+string(sample[1]), `"emails":["e1","e2"]`) {
		t.Errorf("sample %s, %v; want the two events' fields, arrays as arrays", sample, err)
	}

	// Pinot's account: its server consumed the topic to Kafka's end (the
	// setup record and the event), none of it committed yet.
	snap, err := s.ServerAccount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := snap.(*Account)
	if len(a.Partitions) != 1 || a.Partitions[0].EndOffset != 2 || a.Partitions[0].Consumed != 2 || a.Partitions[0].Lag != 0 ||
		a.Partitions[0].State != "CONSUMING" || len(a.Segments) != 1 || a.Segments[0].Consuming != 1 {
		t.Errorf("account %+v; want one partition consumed to Kafka's end offset 2, one consuming segment", a)
	}

	other, _ := server(t, nil)
	other.cfg = s.cfg
	targettest.RefusesOtherTopic(t, ctx, s, other)

	if err := s.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := s.tableTopic(ctx); ok || err != nil {
		t.Errorf("table after teardown: %v, %v; want none", ok, err)
	}
	if err := s.api.Call(ctx, "schema of", "GET", s.schemaURL(), nil, nil); err == nil {
		t.Errorf("schema after teardown: found; want none")
	}
}

// An upsert table shows each event's highest revision: a query sees the
// update, not the insert, and the audit of updates finds it.
func TestUpsertShowsTheLastRevision(t *testing.T) {
	s, kc := server(t, map[string]string{"upsert": "true"})
	up := upsertStore{s}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMicro()
	ins := fmt.Sprintf(`{"_id":"a1","_event_time":%d,"generator_identifier":"g","_seq":3}`, now)
	produce(t, ctx, kc, ins)
	if _, ok, err := up.UpdateFreshness(ctx, "g"); ok || err != nil {
		t.Errorf("update freshness before any update: %v, %v; want nothing seen", ok, err)
	}
	for r := 1; r <= 2; r++ {
		produce(t, ctx, kc, fmt.Sprintf(`{"_id":"a1","_event_time":%d,"generator_identifier":"g","_seq":3,"_revision":%d,"_update_time":%d}`, now, r, now+int64(r)))
	}
	var ut int64
	waitFor(t, "update freshness", func() (ok bool, err error) {
		ut, ok, err = up.UpdateFreshness(ctx, "g")
		return ok && ut == now+2, err
	})
	revs, err := up.Revisions(ctx, "g", []string{"a1", "a2"})
	if err != nil || len(revs) != 1 || revs["a1"] != 2 {
		t.Errorf("revisions %v, %v; want a1 at 2", revs, err)
	}
	var got [][2]int64
	if err := up.Updated(ctx, "g", func(seq, rev int64) { got = append(got, [2]int64{seq, rev}) }); err != nil || len(got) != 1 || got[0] != [2]int64{3, 2} {
		t.Errorf("updated %v, %v; want [[3 2]]", got, err)
	}
	if n, err := s.Count(ctx, "g"); n != 1 || err != nil {
		t.Errorf("count %d, %v; want 1: three records, one event", n, err)
	}
}

// Pinot's errors come back in its words, and a request that outlasts its
// bound fails saying so.
func TestErrorsInPinotsWords(t *testing.T) {
	s, _ := server(t, nil)
	ctx := context.Background()
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.sql(ctx, "test query on", `SELECT no_such_column FROM `+s.tbl)
	if err == nil || !strings.Contains(err.Error(), "no_such_column") || !strings.Contains(err.Error(), "error ") {
		t.Errorf("%v; want Pinot's own message", err)
	}
	// A broker that hangs: the bound is freshbench's (Pinot, given the
	// same bound as the query's timeoutMs, may answer first, in its
	// words).
	mute := testenv.Mute(t)
	broker, bound := s.cfg.broker, s.api.Timeout
	s.cfg.broker, s.api.Timeout = "http://"+mute, 50*time.Millisecond
	_, _, err = s.Freshness(ctx, "g")
	_, ownErr := s.Query(ctx, target.Query{Kind: "mine", Statement: target.Statement{Text: `SELECT "_id" FROM {table} LIMIT 1`}})
	s.cfg.broker, s.api.Timeout = broker, bound
	if err == nil || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Errorf("%v; want the request's bound named", err)
	}
	// A query of one's own is bounded and its error classified as every
	// query's.
	if ownErr == nil || !strings.Contains(ownErr.Error(), "pinot query mine on "+s.cfg.table) || stats.ErrorKind(ownErr) != "timeout" {
		t.Errorf("%v (%s); want the query named and a timeout", ownErr, stats.ErrorKind(ownErr))
	}
}
