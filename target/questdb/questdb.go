// Package questdb is the freshbench target for QuestDB.
//
// URL: questdb://user:pass@host:8812/qdb?table=events&http_port=9000&tcp_port=9009.
// The host and port are QuestDB's PostgreSQL wire endpoint, which serves
// every read (freshness, probes, the audit, the query workload) through
// pgx; without a user and password the URL means QuestDB's defaults
// (admin, quest), and scripts/questdb.sh prints it so: freshbench masks a
// URL's password wherever it appears in a message, and the default one is
// part of the word "questdb". Writes go over the InfluxDB line protocol (ILP) to the
// same host, with QuestDB's official Go client, on http_port or tcp_port.
// The settings (Options.Settings: table, partition_by, wal, ilp_transport,
// http_port, tcp_port, columns, max_conns) are declared, with their defaults and
// meanings, by Knobs; the URL's query parameters may give any of them.
//
// Events are stored one row each, in a table Setup creates explicitly:
//
//	_id VARCHAR, generator_identifier SYMBOL INDEX, _seq LONG,
//	_event_time TIMESTAMP (the designated timestamp), doc VARCHAR,
//	_revision LONG, _update_time TIMESTAMP
//
// doc is the whole event as JSON; the query workload reads its fields with
// json_extract. With columns=flat there is no doc: each event's fields
// are flattened into columns by the rule flatRule states, which ILP
// creates with the first event that has the field. _revision and _update_time are an update's (an insert
// leaves both null, which the reads of updates take as revision 0):
// _update_time is a TIMESTAMP like _event_time, in the same microseconds
// as target.Document's UpdateTime, so it is stored exactly and reads as a
// time in QuestDB's own console and time functions.
//
// Data latency. A WAL table (wal=true, QuestDB's default kind) commits a
// write to its write-ahead log and acknowledges it; a separate job applies
// the log to the table later, and only applied rows are visible to queries.
// That apply lag is what freshbench's freshness and visibility figures
// measure here (over TCP, ILP commits what it received on its own
// schedule, not per batch, which adds to the lag), and QuestDB's own account of it — per table, the last
// transaction committed to the log (sequencerTxn) and the last applied
// (writerTxn), from wal_tables() — is the target's server account. WAL
// tables deduplicate on (_event_time, _id), so that a re-sent batch whose
// first attempt did land replaces its rows instead of doubling them, and
// an update (the whole row again, under its insert's _event_time and _id)
// replaces the row stored: the target takes updates (target.Updater), and
// a revision is visible once applied, as an insert is. A table with
// wal=false is written directly (QuestDB takes that over TCP only): a row
// is visible once the server commits it, a re-send can store a row twice,
// and the target takes no updates, which would be second rows.
package questdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/internal/pgwire"
)

// DefaultTable is the table used when neither the URL nor the settings
// name one.
const DefaultTable = "freshbench_events"

const (
	defaultTimeout = 30 * time.Second
	// defaultMaxConns covers the ingest's probes and the query workload's
	// concurrent reads without waiting for a pooled connection, which
	// would count as service time.
	defaultMaxConns = 16
	// maxTableLen keeps names well inside QuestDB's file-name limit (a
	// table is a directory).
	maxTableLen = 100
	// QuestDB's PostgreSQL-wire credentials when the URL gives none.
	defaultUser     = "admin"
	defaultPassword = "quest"
)

// Register registers the questdb scheme.
func Register(r *target.Registry) {
	r.Register(target.Driver{Name: "questdb", Schemes: []string{"questdb"}, Open: Open, Knobs: knobs(), Updates: true})
}

// config is everything Open derives from the URL and options before it
// connects; it is separate so that it can be checked without a server.
type config struct {
	pool      *pgxpool.Config
	table     string
	partition string
	wal       bool
	transport string
	flat      bool   // columns=flat: events flattened into columns, no doc
	httpAddr  string // host:port of ILP over HTTP
	tcpAddr   string // host:port of ILP over TCP
	settings  target.Settings
	recreate  bool
	timeout   time.Duration
	redacted  string // the URL as it may appear in messages
}

func parseConfig(u *url.URL, opts target.Options) (*config, error) {
	redacted := redact.URL(u.String())
	if u.Scheme != "questdb" {
		return nil, fmt.Errorf("%w %s: scheme must be questdb", target.ErrBadURL, redacted)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%w %s: want questdb://host:port (the PostgreSQL wire port, 8812 by default)", target.ErrBadURL, redacted)
	}
	q := u.Query()
	settings, err := knobs().ResolveURL(q, opts.Settings)
	if err != nil {
		return nil, fmt.Errorf("questdb %s: %w", redacted, err)
	}
	cfg := &config{
		redacted:  redacted,
		recreate:  opts.Recreate,
		timeout:   defaultTimeout,
		settings:  settings,
		table:     settings["table"].(string),
		partition: settings["partition_by"].(string),
		wal:       settings["wal"].(bool),
		transport: settings["ilp_transport"].(string),
		flat:      settings["columns"].(string) == columnsFlat,
		httpAddr:  net.JoinHostPort(u.Hostname(), strconv.Itoa(settings["http_port"].(int))),
		tcpAddr:   net.JoinHostPort(u.Hostname(), strconv.Itoa(settings["tcp_port"].(int))),
	}
	if cfg.wal && cfg.partition == "NONE" {
		return nil, fmt.Errorf("questdb: %w partition_by=NONE: a WAL table must be partitioned; set wal=false or another partition_by",
			conflict(q, "partition_by", "wal"))
	}
	if !cfg.wal && cfg.transport == transportHTTP {
		return nil, fmt.Errorf("questdb: %w wal=false: QuestDB takes ILP over HTTP into WAL tables only; set ilp_transport=tcp too",
			conflict(q, "wal", "ilp_transport"))
	}
	if opts.RequestTimeout > 0 {
		cfg.timeout = opts.RequestTimeout
	}

	port := u.Port()
	if port == "" {
		port = "8812"
	}
	user, password := defaultUser, defaultPassword
	if u.User != nil {
		user = u.User.Username()
		if p, ok := u.User.Password(); ok {
			password = p
		}
	}
	conn := url.URL{Scheme: "postgres", User: url.UserPassword(user, password),
		Host: net.JoinHostPort(u.Hostname(), port), Path: "/qdb", RawQuery: "sslmode=disable"}
	pc, err := pgxpool.ParseConfig(conn.String())
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", target.ErrBadURL, redacted, err)
	}
	pc.MaxConns = int32(settings["max_conns"].(int))
	// Without it a black-holed address waits for the OS TCP timeout.
	pc.ConnConfig.ConnectTimeout = cfg.timeout
	cfg.pool = pc
	return cfg, nil
}

// conflict is the error of settings that cannot go together: the URL's,
// when it gave one of them, so that the message points there.
func conflict(q url.Values, keys ...string) error {
	for _, k := range keys {
		if q.Has(k) {
			return target.ErrBadURL
		}
	}
	return target.ErrBadSetting
}

// Open connects to the server named by u and checks the connection, so
// that a wrong address or password fails here with a one-line message
// rather than at the first write.
func Open(ctx context.Context, u *url.URL, opts target.Options) (target.Target, error) {
	cfg, err := parseConfig(u, opts)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg.pool)
	if err != nil {
		return nil, &pgwire.OpError{Op: "connect to " + cfg.redacted, Msg: describe(err, cfg.timeout), Err: err}
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, &pgwire.OpError{Op: "connect to " + cfg.redacted, Msg: describe(err, cfg.timeout), Err: err}
	}
	s := newStore(pool, cfg)
	if cfg.wal {
		return walStore{s}, nil
	}
	return s, nil
}

// store implements target.Target: writes over ILP, reads over pgx.
type store struct {
	pool    *pgxpool.Pool
	conn    *pgwire.Conn
	cfg     *config
	senders *senderPool
	http    *http.Transport // of ILP over HTTP, closed with the store
	columns flatColumns     // with columns=flat, those written so far

	tbl              string // the quoted table name
	qFreshness       string
	qCount           string
	qSeqs            string
	qUpdateFreshness string
	qUpdated         string
}

func newStore(pool *pgxpool.Pool, cfg *config) *store {
	tbl := `"` + cfg.table + `"`
	s := &store{
		pool:             pool,
		conn:             &pgwire.Conn{Pool: pool, Timeout: cfg.timeout, Name: "questdb", Table: cfg.table, Describe: describe},
		cfg:              cfg,
		tbl:              tbl,
		qFreshness:       `SELECT max(_event_time) FROM ` + tbl + ` WHERE generator_identifier = $1`,
		qCount:           `SELECT count() FROM ` + tbl + ` WHERE generator_identifier = $1`,
		qSeqs:            `SELECT _seq FROM ` + tbl + ` WHERE generator_identifier = $1`,
		qUpdateFreshness: `SELECT max(_update_time) FROM ` + tbl + ` WHERE generator_identifier = $1`,
		qUpdated:         `SELECT _seq, _revision FROM ` + tbl + ` WHERE generator_identifier = $1 AND _revision > 0`,
	}
	s.http = newHTTPTransport()
	s.senders = newSenderPool(s.newSender)
	return s
}

func (s *store) Name() string { return "questdb" }

// createTable is the table's DDL: the designated timestamp is the event
// time, the generator a SYMBOL with an index (every read filters on it).
func (s *store) createTable() string {
	doc := "\n\tdoc VARCHAR,"
	if s.cfg.flat {
		doc = "" // the events' columns are made by ILP as they come
	}
	ddl := `CREATE TABLE IF NOT EXISTS ` + s.tbl + ` (
	_id VARCHAR,
	generator_identifier SYMBOL INDEX,
	_seq LONG,
	_event_time TIMESTAMP,` + doc + `
	_revision LONG,
	_update_time TIMESTAMP
) TIMESTAMP(_event_time) PARTITION BY ` + s.cfg.partition
	if s.cfg.wal {
		return ddl + ` WAL DEDUP UPSERT KEYS(_event_time, _id)`
	}
	return ddl + ` BYPASS WAL`
}

// exec runs one statement with the request timeout.
func (s *store) exec(ctx context.Context, op, sql string) error {
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	if _, err := s.pool.Exec(ctx, sql); err != nil {
		return s.conn.Fail(ctx, op, err)
	}
	return nil
}

// Setup creates the table; CREATE TABLE IF NOT EXISTS is atomic in
// QuestDB, so concurrent setups from several processes agree.
func (s *store) Setup(ctx context.Context) error {
	if s.cfg.recreate {
		if err := s.Teardown(ctx); err != nil {
			return err
		}
	}
	return s.exec(ctx, "setup", s.createTable())
}

// Teardown drops the table. Over ILP/TCP the server's writer keeps the
// table a while after the last write, and a drop meanwhile fails ("could
// not lock … [reason='tcpIlp']"), so the drop is tried again until
// lockWait has passed.
func (s *store) Teardown(ctx context.Context) error {
	const lockWait = 30 * time.Second
	deadline := time.Now().Add(lockWait)
	for {
		err := s.exec(ctx, "teardown", `DROP TABLE IF EXISTS `+s.tbl)
		if err == nil || !strings.Contains(err.Error(), "could not lock") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *store) Freshness(ctx context.Context, generator string) (int64, bool, error) {
	return s.newest(ctx, "freshness query on", s.qFreshness, generator)
}

// newest runs query, the max of a timestamp column over the generator's
// rows, the operation op, and returns it in microseconds.
func (s *store) newest(ctx context.Context, op, query, generator string) (int64, bool, error) {
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	var newest pgtype.Timestamp
	err := s.pool.QueryRow(ctx, query, generator).Scan(&newest)
	if errors.Is(err, pgx.ErrNoRows) {
		// QuestDB answers an aggregate over no rows with no row at all.
		return 0, false, nil
	}
	if err != nil {
		return 0, false, s.conn.Fail(ctx, op, err)
	}
	if !newest.Valid {
		return 0, false, nil
	}
	return newest.Time.UnixMicro(), true, nil
}

// quote makes s an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// idsIn is the condition that _id is one of ids, listed as literals:
// QuestDB binds no arrays, and one parameter per id would make a new
// prepared statement per probe count. Each list of ids is a statement of
// its own, so its query is sent unprepared (pgx.QueryExecModeExec): it
// then does not churn pgx's statement cache and the server's prepared
// ones.
func idsIn(ids []string) string {
	var b strings.Builder
	b.WriteString(`_id IN (`)
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quote(id))
	}
	b.WriteByte(')')
	return b.String()
}

// Visible reads which of ids a query sees (see idsIn).
func (s *store) Visible(ctx context.Context, generator string, ids []string) (map[string]bool, error) {
	if len(ids) == 0 {
		return map[string]bool{}, nil
	}
	q := `SELECT _id FROM ` + s.tbl + ` WHERE generator_identifier = $1 AND ` + idsIn(ids)
	return s.conn.Visible(ctx, ids, q, pgx.QueryExecModeExec, generator)
}

func (s *store) Count(ctx context.Context, generator string) (int64, error) {
	return s.conn.Count(ctx, s.qCount, generator)
}

// Seqs streams the rows as fn consumes them.
func (s *store) Seqs(ctx context.Context, generator string, fn func(seq int64)) error {
	return s.conn.Seqs(ctx, s.qSeqs, generator, fn)
}

// Version reads build(): "Build Information: QuestDB 9.3.4, JDK …".
func (s *store) Version(ctx context.Context) (string, error) {
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	var v string
	if err := s.pool.QueryRow(ctx, `SELECT build()`).Scan(&v); err != nil {
		return "", s.conn.Err("questdb version", err)
	}
	v = strings.TrimPrefix(v, "Build Information: ")
	if name, _, ok := strings.Cut(v, ","); ok {
		v = name
	}
	return v, nil
}

func (s *store) Close() error {
	s.senders.close()
	s.http.CloseIdleConnections()
	s.pool.Close()
	return nil
}

// Layout says what Setup created for the events, and with columns=flat
// how many columns the events written so far made.
func (s *store) Layout() string {
	if s.cfg.flat {
		return fmt.Sprintf("table %s: each event flattened into columns, %d of them from the events sent (%s), beside _id, generator_identifier (a SYMBOL), _seq, _revision, _update_time and the designated timestamp _event_time; a query reads a field by its column",
			s.cfg.table, s.columns.count(), flatRule)
	}
	return "table " + s.cfg.table + ": each event whole in the VARCHAR column doc (its fields are not flattened into columns), beside _id, generator_identifier (a SYMBOL), _seq, _revision, _update_time and the designated timestamp _event_time; a query reads a field as json_extract(doc, '$.a.b')"
}
