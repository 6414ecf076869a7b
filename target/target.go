// Package target defines the contract every database under test implements
// and a registry that opens a target from a URL (sqlite:///path,
// elasticsearch://host:9200/index, postgres://…).
package target

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/freshbench/freshbench/redact"
)

// Document is one generated event ready to be written.
//
// JSON is the whole serialized document. It always starts with
// `{"_id":"<ID>",` so that a target that must not store _id in the body
// (Elasticsearch, OpenSearch) can cut that prefix without parsing.
//
// Revision 0 is an insert. Revision r ≥ 1 is the r-th update of the event
// with the same ID: the whole document again, with the same _id,
// generator_identifier, _seq and _event_time, a new payload, and the
// fields _revision (r) and _update_time (UpdateTime) in its JSON. A
// target writes it as an upsert that replaces what is stored under ID
// (see Updater).
type Document struct {
	ID         string
	Generator  string
	Seq        int64
	EventTime  int64 // microseconds since the Unix epoch
	Revision   int64 // 0: an insert; r ≥ 1: the r-th update
	UpdateTime int64 // microseconds since the Unix epoch, when the update was generated; 0 for an insert
	JSON       []byte
	// Plain says that JSON holds no raw newline and ID no character that
	// JSON escapes, as every generated document does, so that a target
	// may frame it without scanning it first. False says nothing.
	Plain bool
}

// Batch is one write request: the events of one generator, in _seq order.
type Batch struct {
	Generator string
	Docs      []Document
}

// ErrorDuplicateID is the error kind of an item whose _id is already
// stored (a database with a unique key on _id rejects the second write).
const ErrorDuplicateID = "duplicate_id"

// ErrorNotStored is the error kind of an item the database accepted without
// error but did not store: a BEFORE INSERT trigger returned NULL
// (PostgreSQL) or RAISE(IGNORE) (SQLite), or a rule discarded the row.
const ErrorNotStored = "not_stored"

// WriteResult is the item-level outcome of one batch write. A partly failed
// batch reports the failed items here; it is never counted as a success.
type WriteResult struct {
	Acknowledged int            // items the database confirmed
	Failed       int            // items finally rejected
	Retries      int            // re-sent requests or items (429, rejected execution, …)
	FailedSeqs   []int64        // _seq of the failed items, when the target knows them
	ErrorKinds   map[string]int // failed items by error type, e.g. "mapper_parsing_exception"
}

// AddError counts n failed items of the given kind.
func (r *WriteResult) AddError(kind string, n int) {
	if r.ErrorKinds == nil {
		r.ErrorKinds = make(map[string]int)
	}
	r.ErrorKinds[kind] += n
}

// Writer is the role the ingest needs: write one batch. A returned error
// means the whole request failed (connection refused, timeout, 5xx): no
// item is acknowledged.
type Writer interface {
	Write(ctx context.Context, b Batch) (WriteResult, error)
}

// Reader is the role of a read endpoint: what the freshness poll, the
// visibility probes and the completeness audit ask of it.
type Reader interface {
	// Freshness returns the newest _event_time that a query for this
	// generator can see, and false when it sees no event at all.
	Freshness(ctx context.Context, generator string) (int64, bool, error)
	// Visible returns which of ids a search (not a real-time GET) sees.
	Visible(ctx context.Context, generator string, ids []string) (map[string]bool, error)
	// Count returns how many events of the generator a search sees.
	Count(ctx context.Context, generator string) (int64, error)
	// Seqs calls fn with the _seq of every visible event of the generator
	// (once per stored document, so duplicates show up as repeats).
	Seqs(ctx context.Context, generator string, fn func(seq int64)) error
}

// Admin is the role of the commands around a run: set up, describe and
// tear down the index or table.
type Admin interface {
	// Name is the scheme-level name, e.g. "sqlite", "elasticsearch".
	Name() string
	// Setup creates the index or table (idempotent).
	Setup(ctx context.Context) error
	// Teardown drops the index or table.
	Teardown(ctx context.Context) error
	// Version describes the database server (for the results file).
	Version(ctx context.Context) (string, error)
	// Close releases connections.
	Close() error
}

// Target is a database under test: every role. Implementations must be
// safe for concurrent use by many goroutines. Consumers take the smallest
// role they use.
type Target interface {
	Admin
	Writer
	Reader
}

// Options carries what every target is opened with. Settings holds the
// target's own knobs, checked and parsed against the Knobs its Driver
// declares.
type Options struct {
	Recreate       bool              // drop and create the index/table at setup
	Insecure       bool              // skip TLS verification (https only)
	CACert         string            // path to a PEM CA bundle
	Settings       map[string]string // the target's knobs by name: shards, refresh_interval, write_method, …
	RequestTimeout time.Duration     // bound on each request (--write-timeout, as the ingest's WriteTimeout); 0 means the target's default
	// ReadLocal makes every read answer from the copy of the data on the
	// node the URL names, where a target can tell (Elasticsearch and
	// OpenSearch: search preference _local): a read endpoint then
	// measures that node, not whichever copy the cluster picks.
	ReadLocal bool
}

// Opener opens a target from its parsed URL.
type Opener func(ctx context.Context, u *url.URL, opts Options) (Target, error)

// Driver is one kind of target: the URL schemes it serves, how it opens
// and the settings it takes.
type Driver struct {
	Name    string   // as the settings help names it, e.g. "postgres"
	Schemes []string // URL schemes, e.g. postgres and postgresql
	Open    Opener
	Knobs   Knobs // the settings (Options.Settings keys) it takes; nil: none
	// What its targets can do beyond the roles every target has, declared
	// here so that a command can tell before it opens one.
	Updates   bool // takes update streams: its targets are Updaters, unless a setting says otherwise
	InProcess bool // lives inside freshbench, where no sink outside it can write
	// ViaOnly: the database takes its writes only from a Kafka topic,
	// with its own ingestion (a Druid supervisor), so a run needs --via;
	// its targets are StreamConsumers.
	ViaOnly bool
	// NoUpdates, when not empty, is why the database cannot take update
	// streams (no upsert), said when a run asks for updates.
	NoUpdates string
}

// capabilities names what the driver declares, for its help: " (takes
// updates)", or "" when it declares nothing.
func (d Driver) capabilities() string {
	var cs []string
	if d.Updates {
		cs = append(cs, "takes updates")
	}
	if d.InProcess {
		cs = append(cs, "in-process")
	}
	if d.ViaOnly {
		cs = append(cs, "writes through a Kafka via only")
	}
	if len(cs) == 0 {
		return ""
	}
	return " (" + strings.Join(cs, ", ") + ")"
}

// Registry maps URL schemes to drivers.
type Registry struct {
	mu      sync.RWMutex
	drivers map[string]Driver // by scheme
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{drivers: make(map[string]Driver)} }

// Register adds a driver for each of its schemes.
func (r *Registry) Register(d Driver) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range d.Schemes {
		r.drivers[s] = d
	}
}

// Schemes lists the registered schemes, sorted.
func (r *Registry) Schemes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.drivers))
}

// Drivers lists the registered drivers once each, sorted by name.
func (r *Registry) Drivers() []Driver {
	r.mu.RLock()
	defer r.mu.RUnlock()
	seen := map[string]bool{}
	var out []Driver
	for _, d := range r.drivers {
		if !seen[d.Name] {
			seen[d.Name] = true
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b Driver) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the driver registered for scheme.
func (r *Registry) Lookup(scheme string) (Driver, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.drivers[scheme]
	return d, ok
}

// SettingsHelp describes every driver's settings, one line each under the
// driver's name, for a command's help.
func (r *Registry) SettingsHelp() string {
	var b strings.Builder
	for _, d := range r.Drivers() {
		if len(d.Knobs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s%s:\n%s\n", d.Name, d.capabilities(), d.Knobs.Help("  "))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ErrBadURL marks a target URL that cannot be used as given.
var ErrBadURL = errors.New("bad target URL")

// Open parses raw and opens the target registered for its scheme. A
// setting the target does not take is refused before anything is opened,
// with an error that wraps ErrBadSetting.
func (r *Registry) Open(ctx context.Context, raw string, opts Options) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("%w %q: want scheme://…, one of %s", ErrBadURL, redact.URL(raw), strings.Join(r.Schemes(), ", "))
	}
	d, ok := r.Lookup(u.Scheme)
	if !ok {
		return nil, fmt.Errorf("%w: unknown scheme %q, want one of %s", ErrBadURL, u.Scheme, strings.Join(r.Schemes(), ", "))
	}
	if err := d.Knobs.Check(opts.Settings); err != nil {
		return nil, fmt.Errorf("%s: %w", d.Name, err)
	}
	return d.Open(ctx, u, opts)
}

// QueryKind names one query of the query workload: a shipped kind (the
// constants, whose texts per family package query ships) or a query of
// the user's own.
type QueryKind string

// The shipped kinds; query/kinds.yaml states their meaning and texts.
const (
	QueryPoint     QueryKind = "point"     // the documents whose processBy equals the value
	QueryArray     QueryKind = "array"     // the documents whose emails contain the value
	QueryAggregate QueryKind = "aggregate" // documents per tag of those whose company equals the value
	QueryNewest    QueryKind = "newest"    // the generator's documents, newest first
	QueryBucket    QueryKind = "bucket"    // the generator's documents per second of _event_time
)

// QueryKinds lists every shipped kind, in the order reports show them.
func QueryKinds() []QueryKind {
	return []QueryKind{QueryPoint, QueryArray, QueryAggregate, QueryNewest, QueryBucket}
}

// Query is one query of the query workload: its kind, and the statement
// that runs it on the target.
type Query struct {
	Kind      QueryKind
	Statement Statement
}

// Statement is a query in the target's language, with its parameters:
// SQL whose placeholders are numbered as the database takes them ($1 or
// ?1), {table} standing for the target's table, and Args bound to them;
// or a search body (Elasticsearch, OpenSearch) with its parameters
// written in. Its rows are the rows an SQL query returns, or the hits a
// search returns plus the buckets of its aggregations.
type Statement struct {
	Text string
	Args []any
}

// SQLLiteral is v (a parameter's value: a string, a whole number, a
// fraction, a boolean or nil) written as a standard SQL literal, for a
// database that binds no parameters: a string in single quotes with each
// quote doubled, so that no value can end its literal early (a
// backslash is no escape in standard SQL); a number in Go's shortest
// form, which SQL reads back exactly; TRUE, FALSE or NULL.
func SQLLiteral(v any) string {
	switch x := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case nil:
		return "NULL"
	}
	return SQLLiteral(fmt.Sprint(v))
}

// StatementText is s as a person reads it: the text, {table} written as
// table, and its parameters.
func StatementText(s Statement, table string) string {
	t := strings.ReplaceAll(s.Text, "{table}", table)
	if len(s.Args) == 0 {
		return t
	}
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = fmt.Sprintf("%d: %#v", i+1, a)
	}
	return t + "\n-- parameters " + strings.Join(args, ", ")
}

// Querier is implemented by targets that run the query workload. Like
// Target, implementations must be safe for concurrent use.
type Querier interface {
	// Name is the database family the queries are written for (a
	// target's name: sqlite, postgres, elasticsearch, …, sim).
	Name() string
	// SetupQueries prepares what the queries need, such as indexes on the
	// fields they filter on (idempotent; may take long on a large table).
	SetupQueries(ctx context.Context) error
	// Query runs q and returns how many rows (documents, or groups of an
	// aggregation) came back. Rows are read in full, as a client would.
	Query(ctx context.Context, q Query) (rows int, err error)
	// QueryText is q exactly as Query sends it, for people to read.
	QueryText(q Query) string
	// Sample returns up to n stored documents (JSON), whichever are the
	// cheapest to read, to draw parameters from data already there.
	Sample(ctx context.Context, n int) ([][]byte, error)
}

// Describer is implemented by targets that take settings: Settings
// states their effective values, defaults included (refresh_interval,
// write_method, …), as Knobs.Resolve returned them, so that a results
// file says what was measured even when no setting was given.
type Describer interface {
	Settings() map[string]string
}

// Layouter is implemented by a target that says in one line what it
// created for the events: the table's columns or the index's mapping, and
// how a query reaches a field of the user's documents.
type Layouter interface {
	Layout() string
}

// EventShaped is implemented by a target that makes its table's columns
// from the events it will be sent (Pinot): ShapeEvents tells it, before
// its Setup, a sample of them, each a JSON object, at most ShapeSample.
// A target told none (freshbench's generated shapes) makes the table of
// its own event shape. An error says the table cannot hold the events.
type EventShaped interface {
	ShapeEvents(sample [][]byte) error
}

// ShapeSample is the most events an EventShaped target is told.
const ShapeSample = 1000

// Piped is implemented by a target whose writes pass through an
// intermediary before the database (a Kafka topic and its sink): Via
// names it (credentials removed) and its effective settings, for the
// results file.
type Piped interface {
	Via() (url string, settings map[string]string)
}

// Updater is implemented by targets that take update streams: a
// Document with a Revision above 0 in a batch replaces the document
// stored under its ID with the database's own update path (an upsert),
// and is acknowledged only when the database says it stored that
// revision. An update the database skipped (a trigger, a rule) is a failed
// item of kind ErrorNotStored, as an insert is.
//
// The ingest never has two updates of one event in flight at once, so the
// revision stored last is the highest one acknowledged, unless the
// database lost one.
type Updater interface {
	// UpdateFreshness returns the newest _update_time a query for this
	// generator can see, and false when it sees no updated event.
	UpdateFreshness(ctx context.Context, generator string) (int64, bool, error)
	// Revisions returns, for each of ids that a search (not a real-time
	// GET) sees, the revision it sees: 0 for the event as inserted.
	Revisions(ctx context.Context, generator string, ids []string) (map[string]int64, error)
	// Updated calls fn with the _seq and revision of every visible event
	// of the generator whose revision is above 0.
	Updated(ctx context.Context, generator string, fn func(seq, revision int64)) error
}

// StreamConsumer is implemented by a target whose database reads a Kafka
// topic itself (Druid's Kafka supervisor): ConsumeTopic tells it the
// brokers (host:port, comma-separated) and the topic that the via
// produces to, before its Setup, which makes the database consume them.
type StreamConsumer interface {
	ConsumeTopic(brokers, topic string)
}

// Backlogged is implemented by a target whose writes pass through an
// intermediary: Backlog is how many acknowledged events it holds that its
// sink has not taken yet, as the intermediary itself reports it (a Kafka
// sink's consumer lag). A run samples it once a second into its series.
type Backlogged interface {
	Backlog(ctx context.Context) (int64, error)
}

// Refresher is implemented by a target that makes writes visible to
// search in periodic refreshes (a search engine's refresh interval):
// RefreshPeriod is the period it was set up with, false when it has none
// (refreshes disabled, or a period it cannot tell). The probes poll no
// faster than a few times a period: polling faster sees nothing new and
// costs the server searches.
type Refresher interface {
	RefreshPeriod() (time.Duration, bool)
}

// ForceRefresher is implemented by a target that can make every write it
// has stored visible to search at once (a search engine's refresh API).
// Forced only after a run's drain, never during the measured run: it
// tells an event stored but not yet searchable (late) from one lost.
type ForceRefresher interface {
	Refresh(ctx context.Context) error
}
