// Package druid is the freshbench target for Apache Druid, which takes
// its writes from a Kafka topic with its own ingestion: a Kafka
// supervisor, whose tasks read the topic, index the events in memory
// (queryable at once), persist and publish them as segments, and hand
// them off to the historicals. freshbench produces the events to the
// topic (--via kafka://…, package via) and reads them over Druid SQL.
//
// URL: druid://host:port/datasource?overlord=host:port&task_duration=PT1H.
// host:port serves Druid SQL (/druid/v2/sql): a broker, or a router,
// which also proxies the overlord's and the coordinator's APIs and is then
// the overlord's default. The path names the datasource (and the
// supervisor, which Druid names after it); the settings are declared,
// with their defaults and meanings, by knobs, and the URL's query
// parameters may give any of them.
//
// The datasource, made by Setup's supervisor spec from freshbench's event
// shape: __time, the primary timestamp, is _event_time (microseconds, cut
// to Druid's milliseconds); _id and generator_identifier are strings,
// _seq and _event_time (whole, in microseconds) longs; every other field
// is found by Druid's schema discovery (emails and tags as arrays of
// strings, nested objects as JSON). No rollup: every event is a row, so
// an event ingested twice shows as a duplicate. Druid has no upsert, so
// the target takes no updates.
//
// Reads are Druid SQL over HTTP, each bounded by the request timeout
// (also sent as the query's own timeout), and Druid's errors are reported
// in its words. Until a first event is ingested the datasource is unknown
// to SQL; a read then sees nothing.
package druid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/internal/jsonapi"
)

// DefaultDatasource is the datasource when the URL's path names none.
const DefaultDatasource = "freshbench"

const defaultTimeout = 30 * time.Second

// noUpdates is why the target takes no updates.
const noUpdates = "Druid has no upsert: an event written again is a second row, not a replacement"

// Register registers the druid scheme.
func Register(r *target.Registry) {
	r.Register(target.Driver{Name: "druid", Schemes: []string{"druid"}, Open: Open, Knobs: knobs(),
		ViaOnly: true, NoUpdates: noUpdates})
}

func knobs() target.Knobs {
	return target.Knobs{
		{Name: "overlord", Help: "host:port of the overlord's API (supervisors, tasks) and the coordinator's (datasources); unset: the URL's host:port (a router proxies both)",
			Parse: target.ParseHostPort},
		{Name: "task_duration", Default: "PT1H", Parse: parsePeriod,
			Help: "taskDuration of the supervisor's tasks (ISO 8601 period): how long a task reads before it publishes its segments and hands them off"},
		{Name: "segment_granularity", Default: "HOUR", Parse: target.OneOf("MINUTE", "FIVE_MINUTE", "TEN_MINUTE", "FIFTEEN_MINUTE", "HOUR", "DAY"),
			Help: "segmentGranularity of the datasource: the time span of one segment"},
		{Name: "max_rows_in_memory", Default: "150000", Parse: target.ParseInt(1000),
			Help: "maxRowsInMemory of the tasks: rows held before they persist to disk"},
	}
}

var periodRE = regexp.MustCompile(`^P(T(\d+H)?(\d+M)?(\d+S)?|\d+D)$`)

func parsePeriod(v string) (any, error) {
	if !periodRE.MatchString(v) || v == "PT" {
		return nil, fmt.Errorf("%q: want an ISO 8601 period such as PT1H, PT10M or PT30S", v)
	}
	return v, nil
}

// validDatasource keeps names that need no quoting in a URL path and are
// quoted safely as SQL identifiers.
var validDatasource = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$`)

type config struct {
	broker     string // http://host:port
	overlord   string // http://host:port
	datasource string
	settings   target.Settings
	recreate   bool
	timeout    time.Duration
	redacted   string
}

func parseConfig(u *url.URL, opts target.Options) (*config, error) {
	redacted := redact.URL(u.String())
	if u.Scheme != "druid" || u.Host == "" || u.Port() == "" {
		return nil, fmt.Errorf("%w %s: want druid://host:port/datasource (the broker's or router's port)", target.ErrBadURL, redacted)
	}
	ds := strings.TrimPrefix(u.Path, "/")
	if ds == "" {
		ds = DefaultDatasource
	}
	if !validDatasource.MatchString(ds) {
		return nil, fmt.Errorf("%w %s: the path must be a datasource name (letters, digits, '_', '.', '-'; at most 200)", target.ErrBadURL, redacted)
	}
	s, err := knobs().ResolveURL(u.Query(), opts.Settings)
	if err != nil {
		return nil, fmt.Errorf("druid %s: %w", redacted, err)
	}
	c := &config{broker: "http://" + u.Host, overlord: "http://" + u.Host, datasource: ds, settings: s,
		recreate: opts.Recreate, timeout: opts.RequestTimeout, redacted: redacted}
	if o := s["overlord"].(string); o != "" {
		c.overlord = "http://" + o
	}
	if c.timeout <= 0 {
		c.timeout = defaultTimeout
	}
	return c, nil
}

// store is a Druid datasource and the supervisor that feeds it.
type store struct {
	cfg *config
	api *jsonapi.Client
	ds  string // the datasource, quoted as an SQL identifier

	target.Topic // the via's, which the supervisor reads
}

var (
	_ target.Target         = (*store)(nil)
	_ target.StreamConsumer = (*store)(nil)
	_ target.Describer      = (*store)(nil)
	_ target.Layouter       = (*store)(nil)
)

// Open checks the URL and settings; it sends nothing.
func Open(_ context.Context, u *url.URL, opts target.Options) (target.Target, error) {
	c, err := parseConfig(u, opts)
	if err != nil {
		return nil, err
	}
	return &store{cfg: c, ds: `"` + c.datasource + `"`, api: &jsonapi.Client{HTTP: &http.Client{}, Timeout: c.timeout,
		Name: "druid", Object: c.datasource, ReadError: readError}}, nil
}

func (s *store) Name() string { return "druid" }

func (s *store) Settings() map[string]string { return s.cfg.settings.Text() }

func (s *store) Close() error {
	s.api.HTTP.CloseIdleConnections()
	return nil
}

// errNoVia is the answer to a write or setup without a topic.
var errNoVia = errors.New("druid takes its writes only from a Kafka topic, read by its own Kafka ingestion: write through a kafka:// via")

// Write refuses: the events reach Druid through the via's topic.
func (s *store) Write(context.Context, target.Batch) (target.WriteResult, error) {
	return target.WriteResult{}, fmt.Errorf("druid %s: %w", s.cfg.redacted, errNoVia)
}

// Version is the broker's.
func (s *store) Version(ctx context.Context) (string, error) {
	var st struct {
		Version string `json:"version"`
	}
	if err := s.api.Call(ctx, "version of", http.MethodGet, s.cfg.broker+"/status", nil, &st); err != nil {
		return "", err
	}
	return "Apache Druid " + st.Version, nil
}

// druidError is an error answer of Druid's APIs, in its words.
type druidError struct {
	Status       int
	Err          string `json:"error"`
	ErrorCode    string `json:"errorCode"`
	ErrorMessage string `json:"errorMessage"`
	ErrorClass   string `json:"errorClass"`
	Host         string `json:"host"`
	body         string
}

func (e *druidError) message() string {
	switch {
	case e.ErrorMessage != "" && e.ErrorCode != "":
		return e.ErrorCode + ": " + e.ErrorMessage
	case e.ErrorMessage != "":
		return e.ErrorMessage
	case e.Err != "":
		return e.Err
	}
	return strings.TrimSpace(e.body)
}

func (e *druidError) Error() string { return e.message() }

// readError makes the error of a failed answer.
func readError(status int, body []byte) error {
	e := &druidError{Status: status, body: string(body)}
	_ = json.Unmarshal(body, e)
	if e.message() == "" {
		e.body = http.StatusText(status)
	}
	return e
}

// Layout says what the supervisor makes of the events: the fields
// freshbench stamps as its spec declares them, every other top-level
// field as Druid's schema discovery types it (SQL's names for the types).
func (s *store) Layout() string {
	return "datasource " + s.cfg.datasource + ": __time from _event_time (cut to milliseconds); _id and generator_identifier VARCHAR, _seq and _event_time BIGINT; " +
		"every other top-level field a column typed by Druid's schema discovery from its values (a string VARCHAR, a whole number BIGINT, a fraction DOUBLE, an array ARRAY), " +
		"a nested object not flattened but one COMPLEX<json> column whose fields a query reads with JSON_VALUE(col, '$.a.b'); " +
		"SQL knows a new column once the broker refreshes its schema (druid.sql.planner.metadataRefreshPeriod), which may be after its first event is visible"
}
