package via

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// brokerURL returns the broker of scripts/kafka.sh (kafka://host:port),
// or skips (fails when FRESHBENCH_REQUIRE_SERVERS=1).
func brokerURL(t *testing.T) string {
	t.Helper()
	raw := testenv.URL(t, "FRESHBENCH_TEST_KAFKA_URL", "scripts/kafka.sh")
	return strings.TrimSuffix(raw, "/")
}

// topicName is a topic of this test's own.
func topicName(name string) string {
	return fmt.Sprintf("fb-via-%s-%d", name, time.Now().UnixNano()%1e9)
}

func open(t *testing.T, raw string, timeout time.Duration) *Kafka {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	k, err := Open(ctx, raw, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// batch is n documents of generator g from _seq first on.
func batch(g string, first, n int) target.Batch {
	b := target.Batch{Generator: g}
	for i := first; i < first+n; i++ {
		id := fmt.Sprintf("%s-%d", g, i)
		b.Docs = append(b.Docs, target.Document{
			ID: id, Generator: g, Seq: int64(i), EventTime: 1_700_000_000_000_000 + int64(i),
			JSON: []byte(fmt.Sprintf(`{"_id":%q,"generator_identifier":%q,"_seq":%d,"note":"a \"quoted\" \\ line\n"}`, id, g, i)),
		})
	}
	return b
}

func TestOpenRefusesWhatTheUserCanFix(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want error
		says string
	}{
		{"http://127.0.0.1:19092/t", target.ErrBadURL, "kafka://host:port/topic"},
		{"kafka:///t", target.ErrBadURL, "kafka://host:port/topic"},
		{"kafka://127.0.0.1:19092/", target.ErrBadURL, "topic name"},
		{"kafka://127.0.0.1:19092/a/b", target.ErrBadURL, "topic name"},
		{"kafka://127.0.0.1:19092/t?ack=all", target.ErrBadURL, `"ack"`},
		{"kafka://127.0.0.1:19092/t?acks=2", target.ErrBadURL, "acks"},
		{"kafka://127.0.0.1:19092/t?compression=brotli", target.ErrBadURL, "compression"},
		{"kafka://127.0.0.1:19092/t?partitions=0", target.ErrBadURL, "partitions"},
		{"kafka://127.0.0.1:19092/t?format=avro", target.ErrBadURL, "format"},
	} {
		_, err := Open(context.Background(), c.raw, time.Second)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Open(%s) = %v, want %v naming %s", c.raw, err, c.want, c.says)
		}
	}
}

// The row format is Kafka Connect's JSON with a schema, whose payload
// holds the columns of the SQL targets and the document, intact, as a
// plain string (QuestDB has no JSON type a sink could cast it to).
func TestRowFormat(t *testing.T) {
	k := &Kafka{format: FormatRow}
	b := batch("g1", 7, 1)
	v := k.value(b, b.Docs[0])
	var rec struct {
		Schema struct {
			Type   string
			Fields []struct{ Field, Type, Name string }
		}
		Payload struct {
			ID        string `json:"_id"`
			Generator string `json:"generator_identifier"`
			EventTime int64  `json:"_event_time"`
			Seq       int64  `json:"_seq"`
			Doc       string `json:"doc"`
		}
	}
	if err := json.Unmarshal(v, &rec); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, v)
	}
	d := b.Docs[0]
	p := rec.Payload
	if p.ID != d.ID || p.Generator != "g1" || p.EventTime != d.EventTime || p.Seq != 7 || p.Doc != string(d.JSON) {
		t.Errorf("payload %+v, want the columns of %+v", p, d)
	}
	if rec.Schema.Type != "struct" || len(rec.Schema.Fields) != 5 || rec.Schema.Fields[4].Field != "doc" || rec.Schema.Fields[4].Name != "" {
		t.Errorf("schema %+v", rec.Schema)
	}
	k.format = FormatDocument
	if v := k.value(b, d); string(v) != string(d.JSON) {
		t.Errorf("document format gave %s, want the document", v)
	}
}

// Every record of a write is acknowledged, is in the topic once, under
// its _id, and the account's end offset counts them; a group's lag is
// what it has not committed.
func TestWriteAndAccount(t *testing.T) {
	base := brokerURL(t)
	topic := topicName("write")
	k := open(t, base+"/"+topic+"?partitions=2&linger=5ms&compression=lz4", 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const batches, size = 4, 50
	for i := range batches {
		res, err := k.Write(ctx, batch("g", i*size, size))
		if err != nil {
			t.Fatal(err)
		}
		if res.Acknowledged != size || res.Failed != 0 {
			t.Fatalf("batch %d: %+v, want %d acknowledged", i, res, size)
		}
	}
	const n = batches * size
	want := map[string]string{}
	for _, d := range batch("g", 0, n).Docs {
		want[d.ID] = string(d.JSON)
	}

	// A consumer group reads every record and commits all but the last
	// 30 of them.
	group := "fb-via-test-" + topic
	c, err := kgo.NewClient(kgo.SeedBrokers(strings.TrimPrefix(base, "kafka://")), kgo.ConsumeTopics(topic),
		kgo.ConsumerGroup(group), kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var recs []*kgo.Record
	for len(recs) < n && ctx.Err() == nil {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, fs.Records()...)
	}
	for _, r := range recs {
		if want[string(r.Key)] != string(r.Value) {
			t.Fatalf("record %s: value %s, want the document", r.Key, r.Value)
		}
		delete(want, string(r.Key))
	}
	if len(recs) != n || len(want) != 0 {
		t.Fatalf("read %d records, %d documents never seen; want %d once each", len(recs), len(want), n)
	}
	if err := c.CommitRecords(ctx, recs[:n-30]...); err != nil {
		t.Fatal(err)
	}

	k.group = group
	a, err := k.Account(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var end int64
	for _, o := range a.EndOffsets {
		end += o
	}
	if end != n || len(a.EndOffsets) != 2 {
		t.Errorf("end offsets %v: want %d records over 2 partitions", a.EndOffsets, n)
	}
	// CommitRecords commits the highest offset per partition, so the lag
	// is at least 30 and less than n.
	if len(a.Groups) != 1 || a.Groups[0].Group != group || a.Groups[0].Lag < 30 || a.Groups[0].Lag >= n {
		t.Errorf("groups %+v: want %s with a lag of 30 or a little more", a.Groups, group)
	}
	k.group = ""
	a, err = k.Account(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Groups) != 1 || a.Groups[0].Group != group {
		t.Errorf("without a group setting: groups %+v, want only %s, the one that committed on the topic", a.Groups, group)
	}
}

// Every acks setting and compression codec produces and is acknowledged
// as Kafka answers it (acks=0: once sent).
func TestWriteSettings(t *testing.T) {
	base := brokerURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, q := range []string{"acks=0", "acks=1", "acks=all&compression=gzip", "compression=snappy", "compression=zstd&format=row"} {
		k := open(t, base+"/"+topicName("settings")+"?"+q, 10*time.Second)
		res, err := k.Write(ctx, batch("g", 0, 20))
		if err != nil || res.Acknowledged != 20 {
			t.Errorf("%s: %+v, %v; want 20 acknowledged", q, res, err)
		}
		a, err := k.Account(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// acks=0 is not waited for: the records reach the log a moment
		// later.
		for deadline := time.Now().Add(10 * time.Second); a.EndOffsets[0] < 20 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			if a, err = k.Account(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if a.EndOffsets[0] != 20 {
			t.Errorf("%s: end offsets %v, want 20 records", q, a.EndOffsets)
		}
	}
}

// A frozen broker fails the records it does not acknowledge within the
// write's time, and the batch still accounts for every one of them.
func TestWriteBrokerFrozen(t *testing.T) {
	base := brokerURL(t)
	if os.Getenv("FRESHBENCH_TEST_KAFKA_OUTAGE") != "1" {
		t.Skip("FRESHBENCH_TEST_KAFKA_OUTAGE=1 lets this test freeze the broker of scripts/kafka.sh")
	}
	k := open(t, base+"/"+topicName("frozen"), 2*time.Second)
	ctx := context.Background()
	if res, err := k.Write(ctx, batch("g", 0, 10)); err != nil || res.Acknowledged != 10 {
		t.Fatalf("before the outage: %+v, %v", res, err)
	}
	kafkaSh(t, "pause-broker")
	resumed := false
	resume := func() {
		if !resumed {
			kafkaSh(t, "resume-broker")
			resumed = true
		}
	}
	defer resume()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	type answer struct {
		res target.WriteResult
		err error
	}
	answered := make(chan answer, 1)
	start := time.Now()
	go func() {
		res, err := k.Write(wctx, batch("g", 10, 40))
		answered <- answer{res, err}
	}()
	var res target.WriteResult
	var err error
	select {
	case a := <-answered:
		res, err = a.res, a.err
	case <-time.After(15 * time.Second):
		resume()
		t.Fatal("a write to a frozen broker did not end with its 2 s context")
	}
	took := time.Since(start)
	resume()
	if err == nil || stats.ErrorKind(err) != "timeout" {
		t.Fatalf("a write to a frozen broker: %+v, %v; want an error of kind timeout", res, err)
	}
	if took > 5*time.Second {
		t.Errorf("the write took %s, want it to end with its 2 s context", took)
	}
	// After the outage the same producer works again.
	wctx, cancel = context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err = k.Write(wctx, batch("g", 50, 10))
	if err != nil || res.Acknowledged+res.Failed != 10 || res.Acknowledged == 0 {
		t.Errorf("after the outage: %+v, %v; want the batch accounted for, acknowledged", res, err)
	}
}

// A partly answered batch counts the answered records as they were and
// the rest as failed of kind timeout: acknowledged + failed = sent.
func TestTallyAccountsForEveryRecord(t *testing.T) {
	b := batch("g", 0, 5)
	tl := &tally{pending: 5, done: make(chan struct{})}
	tl.record(0, nil)
	tl.record(3, errors.New("boom"))
	res, last := tl.close(b, context.DeadlineExceeded)
	tl.record(4, nil) // too late: not counted
	if res.Acknowledged != 1 || res.Failed != 4 || res.ErrorKinds["timeout"] != 3 || res.ErrorKinds["produce_failed"] != 1 {
		t.Errorf("%+v", res)
	}
	if fmt.Sprint(res.FailedSeqs) != "[1 2 3 4]" || !errors.Is(last, context.DeadlineExceeded) {
		t.Errorf("failed seqs %v, last %v", res.FailedSeqs, last)
	}
}

func kafkaSh(t *testing.T, arg string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "scripts", "kafka.sh")
	if out, err := exec.Command("bash", script, arg).CombinedOutput(); err != nil {
		t.Fatalf("kafka.sh %s: %v\n%s", arg, err, out)
	}
}

// consumer is a database that reads the topic itself and reports its own
// lag; only what Wrap and Backlog use of it is there.
type consumer struct {
	target.Target
	brokers, topic string
	lag            int64
}

func (c *consumer) ConsumeTopic(brokers, topic string)     { c.brokers, c.topic = brokers, topic }
func (c *consumer) Backlog(context.Context) (int64, error) { return c.lag, nil }

// Wrap tells a database that consumes the topic itself which topic, and
// the pipeline's backlog is then the database's own account of its lag,
// not a consumer group's (it commits none to Kafka).
func TestWrapTellsAConsumerItsTopic(t *testing.T) {
	db := &consumer{lag: 42}
	k := &Kafka{broker: "127.0.0.1:9", topic: "events"}
	p := k.Wrap(db)
	if db.brokers != "127.0.0.1:9" || db.topic != "events" {
		t.Errorf("told brokers %q, topic %q; want the via's", db.brokers, db.topic)
	}
	n, err := p.(target.Backlogged).Backlog(context.Background())
	if n != 42 || err != nil {
		t.Errorf("backlog %d, %v; want the database's own, 42", n, err)
	}
}

// updatingConsumer reads the topic itself and takes updates (a Pinot
// upsert table): the documents' revisions reach it through the topic.
type updatingConsumer struct {
	consumer
	target.Updater
}

// A database that reads the topic itself and takes updates is an
// Updater through the pipeline too: the topic carries each revision as
// the document it is. One that a sink writes (Kafka Connect) is not,
// nor is one fed the row format, which carries no revision.
func TestWrapPassesUpdatesOfAConsumer(t *testing.T) {
	for _, c := range []struct {
		name   string
		db     target.Target
		format string
		want   bool
	}{
		{"consumer with upserts", &updatingConsumer{}, FormatDocument, true},
		{"consumer with upserts, rows", &updatingConsumer{}, FormatRow, false},
		{"consumer without", &consumer{}, FormatDocument, false},
		{"sink's database with upserts", struct {
			target.Target
			target.Updater
		}{}, FormatDocument, false},
	} {
		k := &Kafka{broker: "127.0.0.1:9", topic: "events", format: c.format}
		if _, ok := k.Wrap(c.db).(target.Updater); ok != c.want {
			t.Errorf("%s: the pipeline is an Updater: %v; want %v", c.name, ok, c.want)
		}
	}
}

// layingOut is a database that reads the topic itself and says what it
// makes of the events.
type layingOut struct{ consumer }

func (layingOut) Layout() string { return "columns from the events" }

// The layout through a pipeline is the database's when it reads the
// documents from the topic itself; a sink's rows are not its writes, so
// a sink's database says nothing through it.
func TestWrapPassesTheLayoutOfAConsumer(t *testing.T) {
	k := &Kafka{broker: "127.0.0.1:9", topic: "events", format: FormatDocument}
	l, ok := k.Wrap(&layingOut{}).(target.Layouter)
	if !ok || l.Layout() != "columns from the events" {
		t.Errorf("layout through the pipeline: %v; want the consumer's", ok)
	}
	sink := struct {
		target.Target
		target.Layouter
	}{Layouter: layingOut{}}
	if l, ok := k.Wrap(sink).(target.Layouter); ok && l.Layout() != "" {
		t.Errorf("layout of a sink's database through the pipeline: %q; want none", l.Layout())
	}
}
