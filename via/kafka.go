// Package via puts an intermediary between freshbench and the database:
// the events are produced to an Apache Kafka topic, and a sink (Kafka
// Connect with a sink connector, or the database's own Kafka ingestion)
// writes them into the database, while every read — freshness polls,
// visibility probes, the completeness audit, the query load — still goes
// to the database. A write is then acknowledged when Kafka acknowledges
// it, and the figures read in the database measure the whole pipeline.
//
// URL: kafka://host:port/topic?acks=all&linger=5ms&compression=lz4&partitions=1&format=document&group=connect-sink
// (the query parameters are the knobs of Knobs, each optional).
package via

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

// The record formats: what a record's value holds. Its key is always the
// document's _id.
const (
	// FormatDocument is the generated JSON document, whole, as the
	// target would write it: for sinks that index documents.
	FormatDocument = "document"
	// FormatRow is Kafka Connect's JSON with a schema (JsonConverter,
	// schemas.enable=true): a struct of the columns that the PostgreSQL
	// and QuestDB targets' tables share, _id, generator_identifier,
	// _event_time (microseconds), _seq and doc (the document), for a JDBC
	// sink connector. doc is a plain string: a sink casts it to the
	// column's type (PostgreSQL's jsonb) or stores it as it is (QuestDB's
	// varchar, which has no JSON type to cast to).
	FormatRow = "row"
)

// Knobs are the settings of a kafka:// via, given as query parameters of
// its URL.
func Knobs() target.Knobs {
	return target.Knobs{
		{Name: "acks", Default: "all", Help: "acknowledgements a produce waits for: all (every in-sync replica), 1 (the leader) or 0 (none: a record counts as acknowledged once sent)",
			Parse: target.OneOf("all", "1", "0")},
		{Name: "linger", Default: "0s", Help: "how long the producer waits for more records before it sends a batch to a partition",
			Parse: target.ParseDuration(0)},
		{Name: "compression", Default: "none", Help: "compression of the producer's batches: none, gzip, snappy, lz4 or zstd",
			Parse: target.OneOf("none", "gzip", "snappy", "lz4", "zstd")},
		{Name: "partitions", Default: "1", Help: "partitions of the topic when freshbench creates it; an existing topic must have as many",
			Parse: target.ParseInt(1)},
		{Name: "format", Default: FormatDocument, Help: "the record value: document (the JSON document) or row (Kafka Connect JSON with a schema: the PostgreSQL and QuestDB targets' columns, for a JDBC sink)",
			Parse: target.OneOf(FormatDocument, FormatRow)},
		{Name: "group", Help: "the sink's consumer group, whose lag the server account reports (Kafka Connect: connect-<connector name>); unset: every group that committed offsets on the topic"},
	}
}

// Kafka is a producer to one topic and an admin client of its cluster.
// Safe for concurrent use.
type Kafka struct {
	client   *kgo.Client
	admin    *kadm.Client
	broker   string // host:port, as the URL gives it
	topic    string
	format   string
	group    string
	url      string // redacted
	settings target.Settings
}

// config is what a kafka:// URL says, parsed and checked.
type config struct {
	broker, topic, url string // url: redacted
	settings           target.Settings
}

// parse checks a kafka:// URL and its settings without connecting. A URL
// or setting the user can fix is an error wrapping target.ErrBadURL or
// target.ErrBadSetting.
func parse(raw string) (config, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "kafka" || u.Host == "" {
		return config{}, fmt.Errorf("%w %q: want kafka://host:port/topic", target.ErrBadURL, redact.URL(raw))
	}
	c := config{broker: u.Host, topic: strings.TrimPrefix(u.Path, "/"), url: redact.URL(raw)}
	if !validTopic(c.topic) {
		return config{}, fmt.Errorf("%w %q: the path must be a topic name (letters, digits, '.', '_', '-'; at most 249)", target.ErrBadURL, c.url)
	}
	if c.settings, err = Knobs().ResolveURL(u.Query(), nil); err != nil {
		return config{}, fmt.Errorf("kafka %s: %w", c.url, err)
	}
	return c, nil
}

// Check refuses a kafka:// URL that Open would refuse before connecting.
func Check(raw string) error {
	_, err := parse(raw)
	return err
}

// Open parses a kafka:// URL (see Check), connects, and creates the topic
// when it does not exist. writeTimeout bounds how long one record may
// take to be acknowledged, retries included.
func Open(ctx context.Context, raw string, writeTimeout time.Duration) (*Kafka, error) {
	c, err := parse(raw)
	if err != nil {
		return nil, err
	}
	settings := c.settings
	if writeTimeout <= 0 {
		writeTimeout = 30 * time.Second
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.broker),
		kgo.DefaultProduceTopic(c.topic),
		kgo.ProducerLinger(settings["linger"].(time.Duration)),
		kgo.ProducerBatchCompression(codec(settings["compression"].(string))),
		// A record that cannot be acknowledged in time fails as an item,
		// like a timed-out write; franz-go would retry it for ever.
		kgo.RecordDeliveryTimeout(writeTimeout),
		// A topic created a moment ago is unknown to the client until its
		// metadata is refreshed, which by default waits 5 s.
		kgo.MetadataMinAge(250 * time.Millisecond),
	}
	switch settings["acks"].(string) {
	case "all":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka %s: %w", c.url, err)
	}
	k := &Kafka{
		client: client, admin: kadm.NewClient(client), broker: c.broker, topic: c.topic,
		format: settings["format"].(string), group: settings["group"].(string),
		url: c.url, settings: settings,
	}
	if err := k.ensureTopic(ctx, settings["partitions"].(int)); err != nil {
		client.Close()
		return nil, err
	}
	return k, nil
}

// validTopic accepts Kafka's legal topic names.
func validTopic(t string) bool {
	if t == "" || len(t) > 249 || t == "." || t == ".." {
		return false
	}
	for _, c := range []byte(t) {
		if !(c == '.' || c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func codec(name string) kgo.CompressionCodec {
	switch name {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}

// ensureTopic creates the topic with the given partitions (replication
// factor 1 on a one-broker cluster, the cluster's default otherwise), or
// checks that the existing one has as many.
func (k *Kafka) ensureTopic(ctx context.Context, partitions int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	topics, err := k.admin.ListTopics(ctx, k.topic)
	if err != nil {
		return fmt.Errorf("kafka %s: list topics: %w", k.url, err)
	}
	if t, ok := topics[k.topic]; ok && t.Err == nil {
		if n := len(t.Partitions); n != partitions {
			return fmt.Errorf("%w partitions=%d: topic %s exists with %d partitions; give partitions=%d or another topic",
				target.ErrBadSetting, partitions, k.topic, n, n)
		}
		return nil
	}
	resp, err := k.admin.CreateTopic(ctx, int32(partitions), -1, nil, k.topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("kafka %s: create topic %s: %w", k.url, k.topic, err)
	}
	// A new topic takes a moment to reach the brokers' metadata; until
	// then its offsets are unknown, and the account would fail.
	for {
		topics, err := k.admin.ListTopics(ctx, k.topic)
		if err == nil {
			if t, ok := topics[k.topic]; ok && t.Err == nil && len(t.Partitions) == partitions && t.Partitions.NumReplicas() > 0 {
				if _, err = k.endOffsets(ctx); err == nil {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafka %s: topic %s created but not ready: %w", k.url, k.topic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close flushes nothing (every Write waited for its records) and
// disconnects.
func (k *Kafka) Close() { k.client.Close() }

// Write produces one record per document and waits until Kafka has
// acknowledged or failed each: the acknowledged ones are the batch's
// acknowledged items, the others its failed items, by error kind. When
// ctx ends first, the records not answered yet are failed items of kind
// timeout (Kafka may still take them: then the audit finds them as
// unexpected, as it does a database write that timed out and landed).
// When every record failed, the error is returned, as for a request that
// failed as a whole, so that --write-retries applies.
func (k *Kafka) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	t := &tally{pending: len(b.Docs), done: make(chan struct{})}
	for _, d := range b.Docs {
		seq := d.Seq
		k.client.Produce(ctx, &kgo.Record{Key: []byte(d.ID), Value: k.value(b, d)}, func(_ *kgo.Record, err error) {
			t.record(seq, err)
		})
	}
	if len(b.Docs) == 0 {
		return target.WriteResult{}, nil
	}
	select {
	case <-t.done:
	case <-ctx.Done():
	}
	res, last := t.close(b, ctx.Err())
	if res.Acknowledged == 0 && res.Failed > 0 {
		return target.WriteResult{}, &produceError{msg: fmt.Sprintf("kafka %s: produce to %s", k.url, k.topic), err: last}
	}
	return res, nil
}

// produceError is a write of which Kafka acknowledged no record; its kind
// is that of the last record's failure.
type produceError struct {
	msg string
	err error
}

func (e *produceError) Error() string { return e.msg + ": " + e.err.Error() }
func (e *produceError) Unwrap() error { return e.err }
func (e *produceError) Kind() string  { return errorKind(e.err) }

// tally collects the answers to one batch's records until it is closed;
// answers after that are too late to count.
type tally struct {
	mu      sync.Mutex
	res     target.WriteResult
	seen    map[int64]bool // _seq of the records answered
	pending int
	closed  bool
	last    error
	done    chan struct{}
}

func (t *tally) record(seq int64, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if t.seen == nil {
		t.seen = make(map[int64]bool, t.pending)
	}
	t.seen[seq] = true
	if err == nil {
		t.res.Acknowledged++
	} else {
		t.res.Failed++
		t.res.FailedSeqs = append(t.res.FailedSeqs, seq)
		t.res.AddError(errorKind(err), 1)
		t.last = err
	}
	if t.pending--; t.pending == 0 {
		close(t.done)
	}
}

// close ends the tally: records of b not answered by now fail with
// ctxErr.
func (t *tally) close(b target.Batch, ctxErr error) (target.WriteResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.pending > 0 {
		for _, d := range b.Docs {
			if !t.seen[d.Seq] {
				t.res.Failed++
				t.res.FailedSeqs = append(t.res.FailedSeqs, d.Seq)
			}
		}
		t.res.AddError(errorKind(ctxErr), t.pending)
		t.last = ctxErr
	}
	slices.Sort(t.res.FailedSeqs)
	return t.res, t.last
}

// errorKind names a failed record: Kafka's error code when the broker
// gave one (e.g. NOT_ENOUGH_REPLICAS), else the class of the failure.
func errorKind(err error) string {
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke):
		return strings.ToLower(ke.Message)
	case errors.Is(err, kgo.ErrRecordTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "produce_failed"
}

// value is the record value of d in the via's format.
func (k *Kafka) value(b target.Batch, d target.Document) []byte {
	if k.format == FormatDocument {
		return d.JSON
	}
	gen := d.Generator
	if gen == "" {
		gen = b.Generator
	}
	// The schema is the same for every record; Kafka Connect's
	// JsonConverter reads it from each.
	buf := make([]byte, 0, len(d.JSON)+len(d.JSON)/8+len(rowSchema)+160)
	buf = append(buf, `{"schema":`...)
	buf = append(buf, rowSchema...)
	buf = append(buf, `,"payload":{"_id":`...)
	buf = strconv.AppendQuote(buf, d.ID)
	buf = append(buf, `,"generator_identifier":`...)
	buf = strconv.AppendQuote(buf, gen)
	buf = append(buf, `,"_event_time":`...)
	buf = strconv.AppendInt(buf, d.EventTime, 10)
	buf = append(buf, `,"_seq":`...)
	buf = strconv.AppendInt(buf, d.Seq, 10)
	buf = append(buf, `,"doc":`...)
	buf = appendJSONString(buf, d.JSON)
	return append(buf, `}}`...)
}

const rowSchema = `{"type":"struct","optional":false,"fields":[` +
	`{"field":"_id","type":"string","optional":false},` +
	`{"field":"generator_identifier","type":"string","optional":false},` +
	`{"field":"_event_time","type":"int64","optional":false},` +
	`{"field":"_seq","type":"int64","optional":false},` +
	`{"field":"doc","type":"string","optional":false}]}`

// appendJSONString appends s as a JSON string. s is JSON already (valid
// UTF-8), so only quotes, backslashes and control characters need
// escaping.
func appendJSONString(buf, s []byte) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c < 0x20:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			buf = append(buf, c)
		}
	}
	return append(buf, '"')
}

// endOffsets returns the offset after the last record of each partition
// of the topic.
func (k *Kafka) endOffsets(ctx context.Context) (map[int32]int64, error) {
	listed, err := k.admin.ListEndOffsets(ctx, k.topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("kafka %s: end offsets of %s: %w", k.url, k.topic, err)
	}
	ends := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return ends, nil
}

// Account is Kafka's own account of the topic: its end offsets and the
// committed offsets of the sink's consumer group (the group setting), or
// of every group that committed offsets on the topic.
func (k *Kafka) Account(ctx context.Context) (*Account, error) {
	ends, err := k.endOffsets(ctx)
	if err != nil {
		return nil, err
	}
	a := &Account{Topic: k.topic, EndOffsets: ends}
	groups := []string{k.group}
	if k.group == "" {
		listed, err := k.admin.ListGroups(ctx)
		if err != nil {
			return nil, fmt.Errorf("kafka %s: list groups: %w", k.url, err)
		}
		groups = listed.Groups()
		slices.Sort(groups)
	}
	for _, g := range groups {
		offs, err := k.admin.FetchOffsets(ctx, g)
		if err != nil {
			return nil, fmt.Errorf("kafka %s: offsets of group %s: %w", k.url, g, err)
		}
		committed := map[int32]int64{}
		for p, o := range offs[k.topic] {
			if o.Err == nil && o.At >= 0 {
				committed[p] = o.At
			}
		}
		if len(committed) == 0 && k.group == "" {
			continue // a group of another topic
		}
		gl := GroupLag{Group: g, Committed: committed}
		for p, end := range a.EndOffsets {
			gl.Lag += max(end-committed[p], 0)
		}
		a.Groups = append(a.Groups, gl)
	}
	return a, nil
}

// Wrap returns the target that writes through k and reads, sets up and
// describes through db: the pipeline. Its server account is db's (when
// db reports one) with Kafka's beside it. Closing it closes both. A db
// that consumes the topic itself (target.StreamConsumer) is told which,
// so that its Setup, after Wrap, makes it consume this one.
func (k *Kafka) Wrap(db target.Target) target.Target {
	if c, ok := db.(target.StreamConsumer); ok {
		c.ConsumeTopic(k.broker, k.topic)
	}
	p := &pipeline{Target: db, kafka: k}
	q, queries := db.(target.Querier)
	// Updates reach the database only when it reads the documents from
	// the topic itself (a sink writes inserts; the row format carries no
	// revision) and upserts them.
	up, updates := db.(target.Updater)
	_, consumes := db.(target.StreamConsumer)
	updates = updates && consumes && k.format == FormatDocument
	switch {
	case queries && updates:
		return &queryUpdatePipeline{queryPipeline: &queryPipeline{pipeline: p, Querier: q}, Updater: up}
	case queries:
		return &queryPipeline{pipeline: p, Querier: q}
	case updates:
		return &updatePipeline{pipeline: p, Updater: up}
	}
	return p
}

type pipeline struct {
	target.Target
	kafka *Kafka
}

// queryPipeline is a pipeline into a database that runs the query
// workload.
type queryPipeline struct {
	*pipeline
	target.Querier
}

// updatePipeline is a pipeline into a database that consumes the topic
// itself and takes updates.
type updatePipeline struct {
	*pipeline
	target.Updater
}

// queryUpdatePipeline is both.
type queryUpdatePipeline struct {
	*queryPipeline
	target.Updater
}

func (p *pipeline) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	return p.kafka.Write(ctx, b)
}

func (p *pipeline) Close() error {
	p.kafka.Close()
	return p.Target.Close()
}

// Settings are the database's: the via's are recorded apart (Via).
func (p *pipeline) Settings() map[string]string {
	if d, ok := p.Target.(target.Describer); ok {
		return d.Settings()
	}
	return nil
}

// Layout is the database's when it reads the documents from the topic
// itself; a sink writes rows of its own, which the layout of the
// database's own writes does not describe, so none is said.
func (p *pipeline) Layout() string {
	if _, consumes := p.Target.(target.StreamConsumer); !consumes {
		return ""
	}
	if l, ok := p.Target.(target.Layouter); ok {
		return l.Layout()
	}
	return ""
}

// Via says what the events pass through, for the results file.
func (p *pipeline) Via() (string, map[string]string) {
	return p.kafka.url, p.kafka.settings.Text()
}

// Backlog is the consumer lag of the sink: the database's own account of
// it when it consumes the topic itself and reports one (its offsets are
// its own, not a consumer group's); else that of the sink's group, or the
// largest of the groups on the topic; every record when none committed
// yet.
func (p *pipeline) Backlog(ctx context.Context) (int64, error) {
	if b, ok := p.Target.(target.Backlogged); ok {
		return b.Backlog(ctx)
	}
	a, err := p.kafka.Account(ctx)
	if err != nil {
		return 0, err
	}
	if len(a.Groups) == 0 {
		var n int64
		for _, o := range a.EndOffsets {
			n += o
		}
		return n, nil
	}
	var most int64
	for _, g := range a.Groups {
		most = max(most, g.Lag)
	}
	return most, nil
}

// ServerAccount is the database's account (when it reports one) with
// Kafka's after it. Kafka's is read first: its end offsets are held
// against the events acknowledged in the measured phase, and a slow
// database account read before them would shift their window.
func (p *pipeline) ServerAccount(ctx context.Context) (results.AccountSnapshot, error) {
	ka, err := p.kafka.Account(ctx)
	if err != nil {
		return nil, err
	}
	var a results.AccountSnapshots
	if r, ok := p.Target.(target.AccountReporter); ok {
		db, err := r.ServerAccount(ctx)
		if err != nil {
			return nil, err
		}
		a = append(a, db)
	}
	return append(a, ka), nil
}
