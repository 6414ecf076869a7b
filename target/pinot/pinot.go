// Package pinot is the freshbench target for Apache Pinot, which takes
// its writes from a Kafka topic with its own ingestion: a REALTIME table
// whose server consumes the topic (the low-level consumer: one consuming
// segment per partition, queryable as it fills), commits each segment
// when it is full and starts the next from the offset the controller
// recorded. freshbench produces the events to the topic (--via
// kafka://…, package via) and reads them over the broker's SQL API.
//
// URL: pinot://host:port/table?controller=host:port. host:port is a
// broker (SQL, /query/sql); controller, required, serves the admin API
// (schemas, tables, segments). The path names the table and its schema;
// the settings are declared, with their defaults and meanings, by knobs,
// and the URL's query parameters may give any of them.
//
// The table, made by Setup: _event_time (microseconds) is the time
// column; _id, generator_identifier, _seq, _revision and _update_time are
// columns, and beside them either the fields of freshbench's generated
// event shape (emails, tags and ratings multi-valued, address and friends
// JSON) or, told a sample of the user's events (ShapeEvents), their
// fields flattened by the flat rule (target/flat); a field the schema
// does not name is not stored. An append-only table keeps every record
// it consumes, so an event ingested twice shows as a duplicate. With
// upsert=true the table is an upsert table instead (primary key _id,
// comparison column _revision): a query sees the highest revision of
// each event, so the target takes updates (target.Updater).
//
// Reads are Pinot SQL over HTTP, each bounded by the request timeout
// (also sent as the query's own timeoutMs), and Pinot's errors — HTTP
// errors and the exceptions of an answer, such as segments no server
// serves — are reported in its words: an answer with exceptions is an
// error, never a partial result.
package pinot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/internal/jsonapi"
)

// DefaultTable is the table when the URL's path names none.
const DefaultTable = "freshbench"

const defaultTimeout = 30 * time.Second

// Register registers the pinot scheme.
func Register(r *target.Registry) {
	// An append-only table, the default, takes no updates; upsert=true
	// makes one that does.
	r.Register(target.Driver{Name: "pinot", Schemes: []string{"pinot"}, Open: Open, Knobs: knobs(), ViaOnly: true})
}

func knobs() target.Knobs {
	return target.Knobs{
		{Name: "controller", Help: "host:port of the controller's API (schemas, tables, segments); required",
			Parse: target.ParseHostPort},
		{Name: "upsert", Default: "false", Parse: target.ParseBool,
			Help: "make the table an upsert table (primary key _id, comparison column _revision), which takes updates (an update stream); false: append-only, every record a row"},
		{Name: "flush_rows", Default: "5000000", Parse: target.ParseInt(1000),
			Help: "realtime.segment.flush.threshold.rows (Pinot's default): rows a consuming segment takes before its server stops consuming, builds it, commits it and starts the next"},
		{Name: "flush_time", Default: "6h", Parse: target.ParseDuration(time.Minute),
			Help: "realtime.segment.flush.threshold.time (Pinot's default): how long a consuming segment takes rows before it is committed"},
	}
}

// validTable keeps names that need no quoting in a URL path or a Kafka
// setting and are safe as SQL identifiers.
var validTable = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]{0,199}$`)

type config struct {
	broker     string // http://host:port
	controller string // http://host:port
	table      string
	upsert     bool
	settings   target.Settings
	recreate   bool
	timeout    time.Duration
	redacted   string
}

func parseConfig(u *url.URL, opts target.Options) (*config, error) {
	redacted := redact.URL(u.String())
	if u.Scheme != "pinot" || u.Host == "" || u.Port() == "" {
		return nil, fmt.Errorf("%w %s: want pinot://host:port/table?controller=host:port (the broker's port)", target.ErrBadURL, redacted)
	}
	table := strings.TrimPrefix(u.Path, "/")
	if table == "" {
		table = DefaultTable
	}
	if !validTable.MatchString(table) {
		return nil, fmt.Errorf("%w %s: the path must be a table name (letters, digits, '_', '-'; at most 200)", target.ErrBadURL, redacted)
	}
	s, err := knobs().ResolveURL(u.Query(), opts.Settings)
	if err != nil {
		return nil, fmt.Errorf("pinot %s: %w", redacted, err)
	}
	ctl := s["controller"].(string)
	if ctl == "" {
		return nil, fmt.Errorf("%w %s: give the controller, controller=host:port (scripts/pinot.sh url)", target.ErrBadSetting, redacted)
	}
	c := &config{broker: "http://" + u.Host, controller: "http://" + ctl, table: table, upsert: s["upsert"].(bool),
		settings: s, recreate: opts.Recreate, timeout: opts.RequestTimeout, redacted: redacted}
	if c.timeout <= 0 {
		c.timeout = defaultTimeout
	}
	return c, nil
}

// store is a Pinot REALTIME table and its schema.
type store struct {
	cfg *config
	api *jsonapi.Client
	tbl string // the table, quoted as an SQL identifier

	user *userColumns // the user's fields (ShapeEvents); nil: freshbench's generated shape
	kept []string     // the columns of a table Setup found there, which it kept
	made bool         // Setup made the table

	target.Topic // the via's, which the table consumes

	mu    sync.Mutex
	kafka *kadm.Client // for Kafka's end offsets in the account; made at its first read
}

// upsertStore is a store of an upsert table: it takes updates.
type upsertStore struct{ *store }

var (
	_ target.Target         = (*store)(nil)
	_ target.StreamConsumer = (*store)(nil)
	_ target.Describer      = (*store)(nil)
	_ target.Layouter       = (*store)(nil)
	_ target.EventShaped    = (*store)(nil)
	_ target.Updater        = upsertStore{}
)

// Open checks the URL and settings; it sends nothing.
func Open(_ context.Context, u *url.URL, opts target.Options) (target.Target, error) {
	c, err := parseConfig(u, opts)
	if err != nil {
		return nil, err
	}
	s := &store{cfg: c, tbl: `"` + c.table + `"`, api: &jsonapi.Client{HTTP: &http.Client{}, Timeout: c.timeout,
		Name: "pinot", Object: c.table, ReadError: readError}}
	if c.upsert {
		return upsertStore{s}, nil
	}
	return s, nil
}

func (s *store) Name() string { return "pinot" }

func (s *store) Settings() map[string]string { return s.cfg.settings.Text() }

func (s *store) Close() error {
	s.api.HTTP.CloseIdleConnections()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kafka != nil {
		s.kafka.Close()
	}
	return nil
}

// errNoVia is the answer to a write or setup without a topic.
var errNoVia = errors.New("pinot takes its writes only from a Kafka topic, consumed by its own REALTIME table: write through a kafka:// via")

// Write refuses: the events reach Pinot through the via's topic.
func (s *store) Write(context.Context, target.Batch) (target.WriteResult, error) {
	return target.WriteResult{}, fmt.Errorf("pinot %s: %w", s.cfg.redacted, errNoVia)
}

// Version is the controller's.
func (s *store) Version(ctx context.Context) (string, error) {
	var v map[string]string
	if err := s.api.Call(ctx, "version of", http.MethodGet, s.cfg.controller+"/version", nil, &v); err != nil {
		return "", err
	}
	x, ok := v["pinot-controller"]
	if !ok {
		return "", fmt.Errorf("pinot version of %s: the controller names no pinot-controller version", s.cfg.table)
	}
	// 0.11.0-<commit>
	x, _, _ = strings.Cut(x, "-")
	return "Apache Pinot " + x, nil
}

// pinotError is an error answer of Pinot's APIs, in its words.
type pinotError struct {
	Status int
	Code   int    `json:"code"`
	Err    string `json:"error"`
	body   string
}

func (e *pinotError) Error() string {
	if e.Err != "" {
		return e.Err
	}
	return strings.TrimSpace(e.body)
}

// readError makes the error of a failed answer.
func readError(status int, body []byte) error {
	e := &pinotError{Status: status, body: string(body)}
	_ = json.Unmarshal(body, e)
	if e.Error() == "" {
		e.body = http.StatusText(status)
	}
	return e
}
