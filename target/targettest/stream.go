package targettest

import (
	"context"
	"errors"
	"fmt"
	"github.com/freshbench/freshbench/query/querytest"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/target"
)

// Stream is a target whose database consumes a Kafka topic itself (a
// target.StreamConsumer), on a table of the test's own that consumes a
// topic of the same name, and a client that produces to that topic: no
// via stands between, the test writes the topic's records.
type Stream struct {
	Target target.Target
	Name   string      // the table's and the topic's
	Broker string      // Kafka's, host:port
	Kafka  *kgo.Client // produces to the topic
}

// OpenStream opens, with open, the target at the URL of env (the server
// of scripts/<script>) on a table named prefix_<number>, with settings,
// and tells it the topic of the same name on the Kafka broker of
// FRESHBENCH_TEST_KAFKA_URL. It sets nothing up; the target is torn down
// and closed, and the client closed, when the test ends.
func OpenStream(t *testing.T, env, script, prefix string, settings map[string]string,
	open func(context.Context, *url.URL, target.Options) (target.Target, error)) Stream {
	t.Helper()
	raw := testenv.URL(t, env, script)
	broker := strings.TrimPrefix(strings.TrimSuffix(testenv.URL(t, "FRESHBENCH_TEST_KAFKA_URL", "scripts/kafka.sh"), "/"), "kafka://")
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano()%1e9)
	u.Path = "/" + name
	tgt, err := open(context.Background(), u, target.Options{Settings: settings, RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tgt.(target.StreamConsumer).ConsumeTopic(broker, name)
	kc, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.DefaultProduceTopic(name), kgo.AllowAutoTopicCreation())
	if err != nil {
		tgt.Close()
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	TeardownAtEnd(t, tgt, time.Minute)
	return Stream{Target: tgt, Name: name, Broker: broker, Kafka: kc}
}

// NoStream checks that tgt, a StreamConsumer told no topic, refuses to
// write and to set up with noVia, its error that says to give one.
func NoStream(t *testing.T, tgt target.Target, noVia error) {
	t.Helper()
	if _, err := tgt.Write(context.Background(), target.Batch{}); !errors.Is(err, noVia) {
		t.Errorf("write: %v; want %v", err, noVia)
	}
	if err := tgt.Setup(context.Background()); !errors.Is(err, noVia) {
		t.Errorf("setup: %v; want %v", err, noVia)
	}
}

// SeesOneEvent checks what the reads of tgt see of generator g once its
// one event is visible: _id a1, _seq 7, processBy p, company c, emails
// [e1 e2], tags [t1 t2]. A count of 1, a1 visible and a2 not, the seqs
// [7], and one row for each kind of query, but two for the aggregate:
// one per tag.
func SeesOneEvent(t *testing.T, ctx context.Context, tgt interface {
	target.Reader
	target.Querier
}, g string) {
	t.Helper()
	if n, err := tgt.Count(ctx, g); n != 1 || err != nil {
		t.Errorf("count %d, %v; want 1", n, err)
	}
	seen, err := tgt.Visible(ctx, g, []string{"a1", "a2"})
	if err != nil || !seen["a1"] || seen["a2"] {
		t.Errorf("visible %v, %v; want a1 only", seen, err)
	}
	var seqs []int64
	if err := tgt.Seqs(ctx, g, func(seq int64) { seqs = append(seqs, seq) }); err != nil || len(seqs) != 1 || seqs[0] != 7 {
		t.Errorf("seqs %v, %v; want [7]", seqs, err)
	}
	for _, q := range []target.Query{
		querytest.KindQuery(t, tgt.Name(), target.QueryPoint, "p", 10),
		querytest.KindQuery(t, tgt.Name(), target.QueryArray, "e2", 10),
		querytest.KindQuery(t, tgt.Name(), target.QueryAggregate, "c", 10),
		querytest.KindQuery(t, tgt.Name(), target.QueryNewest, g, 10),
		querytest.KindQuery(t, tgt.Name(), target.QueryBucket, g, 10),
	} {
		want := 1
		if q.Kind == target.QueryAggregate {
			want = 2 // one row per tag
		}
		if n, err := tgt.Query(ctx, q); n != want || err != nil {
			t.Errorf("%s query: %d rows, %v; want %d\n%s", q.Kind, n, err, want, tgt.QueryText(q))
		}
	}
}

// CheckURLs parses each URL of cases with parse and checks its error,
// which must say what the case maps the URL to ("" for no error).
func CheckURLs[C any](t *testing.T, parse func(*url.URL) (C, error), cases map[string]string) {
	t.Helper()
	for _, raw := range slices.Sorted(maps.Keys(cases)) {
		want := cases[raw]
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := parse(u)
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", raw, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v (%+v); want an error saying %q", raw, err, cfg, want)
		}
	}
}

// SetupTwice sets tgt up twice, as setup is idempotent, and checks that
// nothing of generator g is seen yet.
func SetupTwice(t *testing.T, ctx context.Context, tgt target.Target, g string) {
	t.Helper()
	for range 2 {
		if err := tgt.Setup(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := tgt.Freshness(ctx, g); ok || err != nil {
		t.Fatalf("freshness before any event: %v, %v; want nothing seen", ok, err)
	}
}

// WaitFresh waits, up to a minute, until generator g is seen at all, and
// checks that its freshness is then want, the _event_time of its event.
func WaitFresh(t *testing.T, ctx context.Context, tgt target.Reader, g string, want int64) {
	t.Helper()
	var got int64
	var ok bool
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got, ok, err = tgt.Freshness(ctx, g); err != nil || ok {
			break
		}
	}
	if err != nil || !ok || got != want {
		t.Fatalf("freshness %d, %v, %v; want the event's _event_time %d, in microseconds", got, ok, err, want)
	}
}

// RefusesOtherTopic checks that other, a target on the table of tgt, told
// another topic than tgt's, refuses to set up with target.ErrBadSetting.
func RefusesOtherTopic(t *testing.T, ctx context.Context, tgt interface {
	Source() (brokers, topic string)
}, other target.Target) {
	t.Helper()
	brokers, topic := tgt.Source()
	other.(target.StreamConsumer).ConsumeTopic(brokers, topic+"_other")
	if err := other.Setup(ctx); !errors.Is(err, target.ErrBadSetting) {
		t.Errorf("setup on another topic: %v; want %v", err, target.ErrBadSetting)
	}
}
