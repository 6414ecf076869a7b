// Package postgres is the freshbench target for PostgreSQL.
//
// URL: postgres://user:pass@host:port/db?table=events (or postgresql://).
// Credentials and anything else libpq understands come from the URL or the
// usual PG* environment variables (pgx reads them, including PGPASSWORD and
// ~/.pgpass). The query parameter table is the table setting given in the
// URL (giving it both ways with different values is an error); it is
// removed before the rest is handed to pgx, which would otherwise send it
// to the server as a run-time parameter. pgx's own parameters such as
// sslmode or pool_max_conns pass through.
//
// Events are stored one row each:
//
//	_id text PRIMARY KEY, generator_identifier text, _event_time bigint,
//	_seq bigint, doc jsonb, _revision bigint NOT NULL DEFAULT 0,
//	_update_time bigint
//
// with b-tree indexes on (generator_identifier, _event_time), which turns
// the freshness query into a backward index probe, on
// (generator_identifier, _seq) for the completeness scan, and on
// (generator_identifier, _update_time) WHERE _update_time IS NOT NULL for
// the reads of updates: partial, so that an insert, which leaves
// _update_time NULL, adds no entry to it.
//
// The settings (Options.Settings: table, write_method, gin, unlogged,
// max_conns, synchronous_commit) are declared, with their defaults and
// meanings, by Knobs.
//
// Write methods. Every batch is one transaction: a single statement (insert,
// copy) or a pipeline that ends in one Sync (pipeline), so the server
// commits all of the batch or none of it; insert and pipeline take one
// round trip, without BEGIN/COMMIT round trips.
//
//   - insert: one INSERT … SELECT FROM unnest($arrays) … ON CONFLICT (_id)
//     DO NOTHING RETURNING _seq. Five parameters whatever the batch size, so
//     the protocol's 65535-parameter limit never applies. A row whose _id
//     already exists is skipped, and reported as a failed item of kind
//     "duplicate_id" with its _seq; the rest of the batch is acknowledged.
//   - copy: COPY … FROM STDIN (binary) via pgx CopyFrom, in a transaction
//     of its own (BEGIN and COMMIT add two round trips). The fastest for
//     large batches, but COPY has no ON CONFLICT: one duplicate _id aborts
//     the COPY, and the batch is written again by insert, which names each
//     duplicate.
//   - pipeline: one single-row INSERT … ON CONFLICT DO NOTHING per event,
//     all sent in one pgx.Batch (one round trip, one implicit transaction);
//     duplicates are reported like insert's.
//
// Updates (target.Updater). A Document with a Revision above 0 is written
// as an upsert, INSERT … ON CONFLICT (_id) DO UPDATE SET doc, _revision,
// _update_time … RETURNING _seq, in the same transaction as the inserts of
// its batch: insert sends the set-based insert of the inserts and a
// set-based upsert (unnest, seven parameters) of the updates in one
// pipeline, still one round trip; copy runs the upsert after its COPY;
// pipeline sends a single-row upsert per update. A batch of inserts alone
// is written exactly as before. An upsert the server did not return (a
// BEFORE UPDATE trigger returned NULL, a rule) is a failed item of kind
// "not_stored". An upsert the server returned is acknowledged even when a
// trigger kept the old row (RETURN OLD): the server said it wrote the row,
// and the reads (Revisions, Updated) show the revision it keeps, so an
// audit counts that update as lost.
//
// Rows not stored. A BEFORE INSERT trigger that returns NULL makes the
// server skip a row without an error. Such a row is a failed item of kind
// "not_stored" (target.ErrorNotStored) with its _seq, never acknowledged:
// insert and pipeline look up the _ids of the rows the server skipped (a
// stored _id is a duplicate, a missing one was not stored); copy, when the
// server copied fewer rows than it was sent, looks up which rows its own
// transaction inserted before it commits.
//
// insert is the default because it is the only method that is both cheap
// per round trip at any batch size and exact about duplicates: a retried or
// replayed event costs one failed item instead of a whole failed batch.
// Pick copy to measure PostgreSQL's raw bulk-load speed.
//
// Failures. The server rejecting the data itself (SQLSTATE class 22, data
// exception, or 23, integrity constraint violation) is reported as a
// WriteResult whose every item failed, with the condition name as the kind
// and a nil error: retrying the same batch cannot help. Anything else
// (connection refused or lost, server shutting down, timeout) is a returned
// error, and nothing of the batch is acknowledged. The pool replaces broken
// connections on its own, so writes succeed again once the server is back.
package postgres

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/internal/pgwire"
)

// DefaultTable is the table used when the URL has no table parameter.
const DefaultTable = "freshbench_events"

const (
	defaultTimeout     = 30 * time.Second
	defaultWriteMethod = methodInsert
	// defaultMaxConns is larger than pgxpool's default (max(4, NumCPU))
	// because the ingest pipeline keeps several batches in flight and probes
	// query concurrently: waiting for a pooled connection would be counted
	// as database service time.
	defaultMaxConns = 16
	// maxTableLen leaves room for the longest index-name suffix within
	// PostgreSQL's 63-byte identifiers, which it would truncate silently.
	maxTableLen = 50
)

const (
	methodInsert   = "insert"
	methodCopy     = "copy"
	methodPipeline = "pipeline"
)

// WriteMethods lists the accepted values of the write_method setting.
func WriteMethods() []string { return []string{methodInsert, methodCopy, methodPipeline} }

// Register registers the postgres and postgresql schemes.
func Register(r *target.Registry) {
	r.Register(target.Driver{Name: "postgres", Schemes: []string{"postgres", "postgresql"}, Open: Open, Knobs: knobs(), Updates: true})
}

// config is everything Open derives from the URL and options before it
// connects; it is separate so that it can be checked without a server.
type config struct {
	pool     *pgxpool.Config
	table    string
	method   string
	gin      string // "" (none), "jsonb_ops" or "jsonb_path_ops"
	settings target.Settings
	unlogged bool
	recreate bool
	timeout  time.Duration
	redacted string // the URL as it may appear in messages
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
		return nil, &pgwire.OpError{Op: "connect to " + cfg.redacted, Msg: pgwire.Describe(err, cfg.timeout), Err: err}
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, &pgwire.OpError{Op: "connect to " + cfg.redacted, Msg: pgwire.Describe(err, cfg.timeout), Err: err}
	}
	return newStore(pool, cfg), nil
}

// redactURL hides the password of the userinfo and of a password query
// parameter (which pgx also accepts) for messages.
func redactURL(u *url.URL) string {
	c := *u
	q := c.Query()
	changed := false
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
			changed = true
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return redact.URL(c.String())
}

func parseConfig(u *url.URL, opts target.Options) (*config, error) {
	redacted := redactURL(u)
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("%w %s: scheme must be postgres or postgresql", target.ErrBadURL, redacted)
	}
	cfg := &config{redacted: redacted, recreate: opts.Recreate, timeout: defaultTimeout}
	if opts.RequestTimeout > 0 {
		cfg.timeout = opts.RequestTimeout
	}

	q := u.Query()
	ks := knobs()
	set, err := ks.WithQuery(q, opts.Settings)
	if err != nil {
		return nil, fmt.Errorf("postgres %s: %w", redacted, err)
	}
	// The table is freshbench's, not a run-time parameter for the server.
	q.Del("table")
	if set["max_conns"] != "" && q.Has("pool_max_conns") && set["max_conns"] != q.Get("pool_max_conns") {
		return nil, fmt.Errorf("%w %s: pool_max_conns=%s in the URL but max_conns=%s in the settings; give it once",
			target.ErrBadURL, redacted, q.Get("pool_max_conns"), set["max_conns"])
	}
	settings, err := ks.Resolve(set)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cfg.settings = settings
	cfg.table = settings["table"].(string)
	cfg.method = settings["write_method"].(string)
	if g := settings["gin"].(string); g != "false" {
		cfg.gin = g
	}
	cfg.unlogged = settings["unlogged"].(bool)

	connURL := *u
	connURL.RawQuery = q.Encode()
	pc, err := pgxpool.ParseConfig(connURL.String())
	if err != nil {
		// pgx redacts passwords in its parse errors; drop its copy of the
		// URL, which ours already shows.
		msg := err.Error()
		if _, rest, ok := strings.Cut(msg, "`: "); ok && strings.HasPrefix(msg, "cannot parse `") {
			msg = rest
		}
		return nil, fmt.Errorf("%w %s: %s", target.ErrBadURL, redacted, msg)
	}
	if _, ok := set["max_conns"]; ok || !q.Has("pool_max_conns") {
		pc.MaxConns = int32(settings["max_conns"].(int))
	} else {
		settings["max_conns"] = int(pc.MaxConns) // as the URL set it
	}
	if pc.ConnConfig.ConnectTimeout == 0 {
		// Without it a black-holed address waits for the OS TCP timeout.
		pc.ConnConfig.ConnectTimeout = cfg.timeout
	}
	if v := settings["synchronous_commit"].(string); v != "" {
		pc.ConnConfig.RuntimeParams["synchronous_commit"] = v
	}
	cfg.pool = pc
	return cfg, nil
}

var _ target.Updater = (*store)(nil)

// store implements target.Target and target.Updater on a pgx pool.
type store struct {
	pool *pgxpool.Pool
	conn *pgwire.Conn
	cfg  *config
	// The statements are built once from the validated, quoted table name.
	qSetup     []string
	qDrop      string
	qInsert    string
	qInsertOne string
	// qUpsert and qUpsertOne write updates: insert and pipeline shapes.
	qUpsert    string
	qUpsertOne string
	// qStored finds which of some _ids are stored; qWrittenHere which of
	// them the current transaction inserted.
	qStored      string
	qWrittenHere string
	qFreshness   string
	qVisible     string
	qCount       string
	qSeqs        string
	qUpdateFresh string
	qRevisions   string
	qUpdated     string
}

func newStore(pool *pgxpool.Pool, cfg *config) *store {
	tbl := pgx.Identifier{cfg.table}.Sanitize()
	idx := func(suffix string) string { return pgx.Identifier{cfg.table + suffix}.Sanitize() }
	create := "CREATE TABLE"
	if cfg.unlogged {
		create = "CREATE UNLOGGED TABLE"
	}
	setup := []string{
		create + ` IF NOT EXISTS ` + tbl + ` (
	_id text PRIMARY KEY,
	generator_identifier text NOT NULL,
	_event_time bigint NOT NULL,
	_seq bigint NOT NULL,
	doc jsonb NOT NULL,
	_revision bigint NOT NULL DEFAULT 0,
	_update_time bigint)`,
		`CREATE INDEX IF NOT EXISTS ` + idx("_gen_time_idx") + ` ON ` + tbl + ` (generator_identifier, _event_time)`,
		`CREATE INDEX IF NOT EXISTS ` + idx("_gen_seq_idx") + ` ON ` + tbl + ` (generator_identifier, _seq)`,
		// Partial: an insert, which has no update time, adds no entry.
		`CREATE INDEX IF NOT EXISTS ` + idx("_gen_upd_idx") + ` ON ` + tbl + ` (generator_identifier, _update_time) WHERE _update_time IS NOT NULL`,
	}
	if cfg.gin != "" {
		setup = append(setup, `CREATE INDEX IF NOT EXISTS `+idx("_doc_gin_idx")+` ON `+tbl+` USING gin (doc `+cfg.gin+`)`)
	}
	const cols = `(_id, generator_identifier, _event_time, _seq, doc)`
	// An update replaces the payload and says which revision it is; the
	// event's own columns stay as its insert wrote them.
	const (
		upCols = `(_id, generator_identifier, _event_time, _seq, doc, _revision, _update_time)`
		upSet  = ` ON CONFLICT (_id) DO UPDATE SET doc = excluded.doc, _revision = excluded._revision, _update_time = excluded._update_time`
	)
	return &store{
		pool:   pool,
		conn:   &pgwire.Conn{Pool: pool, Timeout: cfg.timeout, Name: "postgres", Table: cfg.table},
		cfg:    cfg,
		qSetup: setup,
		qDrop:  `DROP TABLE IF EXISTS ` + tbl,
		qInsert: `INSERT INTO ` + tbl + ` ` + cols + `
SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[]::jsonb[])
ON CONFLICT (_id) DO NOTHING RETURNING _seq`,
		qInsertOne: `INSERT INTO ` + tbl + ` ` + cols + ` VALUES ($1, $2, $3, $4, $5) ON CONFLICT (_id) DO NOTHING`,
		qUpsert: `INSERT INTO ` + tbl + ` ` + upCols + `
SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[]::jsonb[], $6::bigint[], $7::bigint[])` + upSet + ` RETURNING _seq`,
		qUpsertOne:   `INSERT INTO ` + tbl + ` ` + upCols + ` VALUES ($1, $2, $3, $4, $5, $6, $7)` + upSet,
		qUpdateFresh: `SELECT max(_update_time) FROM ` + tbl + ` WHERE generator_identifier = $1 AND _update_time IS NOT NULL`,
		qRevisions:   `SELECT _id, _revision FROM ` + tbl + ` WHERE generator_identifier = $1 AND _id = ANY($2)`,
		qUpdated:     `SELECT _seq, _revision FROM ` + tbl + ` WHERE generator_identifier = $1 AND _update_time IS NOT NULL AND _revision > 0`,
		qStored:      `SELECT _id FROM ` + tbl + ` WHERE _id = ANY($1)`,
		qWrittenHere: `SELECT _id FROM ` + tbl + ` WHERE _id = ANY($1) AND xmin = pg_current_xact_id()::xid`,
		qFreshness:   `SELECT max(_event_time) FROM ` + tbl + ` WHERE generator_identifier = $1`,
		qVisible:     `SELECT _id FROM ` + tbl + ` WHERE generator_identifier = $1 AND _id = ANY($2)`,
		qCount:       `SELECT count(*) FROM ` + tbl + ` WHERE generator_identifier = $1`,
		qSeqs:        `SELECT _seq FROM ` + tbl + ` WHERE generator_identifier = $1`,
	}
}

func (s *store) Name() string { return "postgres" }

// Setup creates the table and indexes. It runs in one transaction under an
// advisory lock: DDL is transactional in PostgreSQL, and concurrent
// CREATE … IF NOT EXISTS from several freshbench processes can otherwise
// fail with a duplicate-key error on the catalog.
func (s *store) Setup(ctx context.Context) error {
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "freshbench:"+s.cfg.table); err != nil {
			return err
		}
		stmts := s.qSetup
		if s.cfg.recreate {
			stmts = append([]string{s.qDrop}, stmts...)
		}
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.conn.Fail(ctx, "setup", err)
	}
	return nil
}

func (s *store) Teardown(ctx context.Context) error {
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	if _, err := s.pool.Exec(ctx, s.qDrop); err != nil {
		return s.conn.Fail(ctx, "teardown", err)
	}
	return nil
}

func (s *store) Freshness(ctx context.Context, generator string) (int64, bool, error) {
	return s.newest(ctx, "freshness query on", s.qFreshness, generator)
}

// UpdateFreshness is the newest _update_time of the generator's rows, a
// backward probe of the partial index that holds the updated rows alone.
func (s *store) UpdateFreshness(ctx context.Context, generator string) (int64, bool, error) {
	return s.newest(ctx, "update freshness query on", s.qUpdateFresh, generator)
}

// newest runs query, a max() over one generator's rows, which is NULL
// when there are none.
func (s *store) newest(ctx context.Context, op, query, generator string) (int64, bool, error) {
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	var newest *int64
	if err := s.pool.QueryRow(ctx, query, generator).Scan(&newest); err != nil {
		return 0, false, s.conn.Fail(ctx, op, err)
	}
	if newest == nil {
		return 0, false, nil
	}
	return *newest, true, nil
}

// Revisions is the revision stored for each of ids that is stored.
func (s *store) Revisions(ctx context.Context, generator string, ids []string) (map[string]int64, error) {
	if len(ids) == 0 {
		return map[string]int64{}, nil
	}
	return s.conn.Revisions(ctx, s.qRevisions, generator, ids)
}

// Updated streams the _seq and revision of the generator's updated rows.
func (s *store) Updated(ctx context.Context, generator string, fn func(seq, revision int64)) error {
	return s.conn.Updated(ctx, s.qUpdated, generator, fn)
}

func (s *store) Visible(ctx context.Context, generator string, ids []string) (map[string]bool, error) {
	return s.conn.Visible(ctx, ids, s.qVisible, generator, ids)
}

func (s *store) Count(ctx context.Context, generator string) (int64, error) {
	return s.conn.Count(ctx, s.qCount, generator)
}

// Seqs streams the rows as fn consumes them.
func (s *store) Seqs(ctx context.Context, generator string, fn func(seq int64)) error {
	return s.conn.Seqs(ctx, s.qSeqs, generator, fn)
}

func (s *store) Version(ctx context.Context) (string, error) {
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	var v string
	if err := s.pool.QueryRow(ctx, `SHOW server_version`).Scan(&v); err != nil {
		return "", s.conn.Err("postgres version", err)
	}
	return "PostgreSQL " + v, nil
}

func (s *store) Close() error {
	s.pool.Close()
	return nil
}

// Layout says what Setup created for the events.
func (s *store) Layout() string {
	gin := ""
	if s.cfg.gin != "" {
		gin = ", with a GIN index (" + s.cfg.gin + ") on it"
	}
	return "table " + s.cfg.table + ": each event whole in the jsonb column doc" + gin + ", beside the columns _id, generator_identifier, _event_time, _seq, _revision and _update_time; a query reads a field as doc->'a'->>'b'"
}
