// Package sqlite is the embedded default target: SQLite in-process through
// a pure-Go driver (no cgo), one file in WAL mode. Documents are stored as
// JSON text beside indexed columns for the fields the probes query.
//
// URL forms: sqlite:///abs/path/file.db, sqlite://relative/file.db.
// The settings (table, also ?table= in the URL, and synchronous) are
// declared by Knobs.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	sqlitedriver "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/freshbench/freshbench/target"
)

// Register adds the sqlite scheme to r.
func Register(r *target.Registry) {
	r.Register(target.Driver{Name: "sqlite", Schemes: []string{"sqlite"}, Open: Open, Knobs: knobs(), Updates: true})
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Target is a SQLite database file.
type Target struct {
	path     string
	table    string
	opts     target.Options
	settings target.Settings
	writer   *sql.DB // one connection: SQLite has one writer at a time
	readers  *sql.DB
}

// Open opens (creating if needed) the database file named by u.
func Open(ctx context.Context, u *url.URL, opts target.Options) (target.Target, error) {
	path := u.Host + u.Path
	if u.Opaque != "" {
		path = u.Opaque
	}
	if path == "" {
		return nil, fmt.Errorf("%w: sqlite URL %q has no file path; want sqlite:///path/to/file.db", target.ErrBadURL, u.String())
	}
	settings, err := knobs().ResolveURL(u.Query(), opts.Settings)
	if err != nil {
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	table, sync := settings["table"].(string), settings["synchronous"].(string)
	if err := checkWritableDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	dsn := func(extra string) string {
		return "file:" + path + "?_pragma=busy_timeout(2000)&_pragma=journal_mode(WAL)&_pragma=synchronous(" + sync + ")" + extra
	}
	w, err := sql.Open("sqlite", dsn(""))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	r, err := sql.Open("sqlite", dsn("&_pragma=query_only(1)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	t := &Target{path: path, table: table, opts: opts, settings: settings, writer: w, readers: r}
	if err := w.PingContext(ctx); err != nil {
		t.Close()
		return nil, t.wrap("open", err)
	}
	return t, nil
}

// checkWritableDir creates dir if needed and proves a file can be made in it.
func checkWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("data directory %s cannot be created: %w; choose another data directory", dir, errors.Unwrap(err))
	}
	f, err := os.CreateTemp(dir, ".freshbench-write-check-*")
	if err != nil {
		return fmt.Errorf("data directory %s is not writable: %w; choose another data directory", dir, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// wrap adds context and turns SQLITE_BUSY into a message that says what
// to do.
func (t *Target) wrap(op string, err error) error {
	var se *sqlitedriver.Error
	if errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_BUSY || se.Code()&0xff == sqlite3.SQLITE_LOCKED) {
		return &lockedError{path: t.path}
	}
	return fmt.Errorf("sqlite %s %s: %w", op, t.path, err)
}

type lockedError struct{ path string }

func (e *lockedError) Error() string {
	return fmt.Sprintf("database file %s is locked by another process; stop it or choose another data directory", e.path)
}

// Kind lets the run count lock waits as their own kind of error.
func (e *lockedError) Kind() string { return "database_locked" }

func (t *Target) Name() string { return "sqlite" }

func (t *Target) Setup(ctx context.Context) error {
	stmts := []string{}
	if t.opts.Recreate {
		stmts = append(stmts, `DROP TABLE IF EXISTS `+t.table)
	}
	stmts = append(stmts,
		`CREATE TABLE IF NOT EXISTS `+t.table+` (
			_id TEXT PRIMARY KEY,
			generator_identifier TEXT NOT NULL,
			_event_time INTEGER NOT NULL,
			_seq INTEGER NOT NULL,
			doc TEXT NOT NULL,
			_revision INTEGER NOT NULL DEFAULT 0,
			_update_time INTEGER)`,
		`CREATE INDEX IF NOT EXISTS `+t.table+`_gen_time ON `+t.table+`(generator_identifier, _event_time)`,
		`CREATE INDEX IF NOT EXISTS `+t.table+`_gen_seq ON `+t.table+`(generator_identifier, _seq)`,
		// Partial: inserts, which have no update time, pay nothing for it.
		`CREATE INDEX IF NOT EXISTS `+t.table+`_gen_update ON `+t.table+`(generator_identifier, _update_time) WHERE _update_time IS NOT NULL`,
	)
	for _, s := range stmts {
		if _, err := t.writer.ExecContext(ctx, s); err != nil {
			return t.wrap("setup", err)
		}
	}
	return nil
}

// Write writes the batch in one transaction: inserts, and updates as
// upserts. An inserted row whose _id exists already is a failed item of
// kind duplicate_id, a row that a trigger skipped (RAISE(IGNORE)) a failed
// item of kind not_stored; the others are written.
func (t *Target) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	var res target.WriteResult
	tx, err := t.writer.BeginTx(ctx, nil)
	if err != nil {
		return res, t.wrap("begin", err)
	}
	defer tx.Rollback()
	const cols = ` (_id, generator_identifier, _event_time, _seq, doc, _revision, _update_time) VALUES (?,?,?,?,?,?,?)`
	insert, err := tx.PrepareContext(ctx, `INSERT INTO `+t.table+cols+` ON CONFLICT(_id) DO NOTHING`)
	if err != nil {
		return res, t.wrap("prepare", err)
	}
	defer insert.Close()
	var upsert *sql.Stmt
	for _, d := range b.Docs {
		stmt := insert
		var updateTime any
		if d.Revision > 0 {
			if upsert == nil {
				upsert, err = tx.PrepareContext(ctx, `INSERT INTO `+t.table+cols+` ON CONFLICT(_id) DO UPDATE SET doc = excluded.doc, _revision = excluded._revision, _update_time = excluded._update_time`)
				if err != nil {
					return res, t.wrap("prepare", err)
				}
				defer upsert.Close()
			}
			stmt, updateTime = upsert, d.UpdateTime
		}
		r, err := stmt.ExecContext(ctx, d.ID, d.Generator, d.EventTime, d.Seq, d.JSON, d.Revision, updateTime)
		if err != nil {
			return target.WriteResult{}, t.wrap("insert", err)
		}
		if n, _ := r.RowsAffected(); n == 0 && d.Revision > 0 {
			res.Failed++
			res.FailedSeqs = append(res.FailedSeqs, d.Seq)
			res.AddError(target.ErrorNotStored, 1)
			continue
		}
		if n, _ := r.RowsAffected(); n == 0 {
			// Skipped by ON CONFLICT, or by a trigger's RAISE(IGNORE):
			// within the transaction, a stored _id says which.
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM `+t.table+` WHERE _id = ?`, d.ID).Scan(&one)
			kind := target.ErrorDuplicateID
			switch {
			case errors.Is(err, sql.ErrNoRows):
				kind = target.ErrorNotStored
			case err != nil:
				return target.WriteResult{}, t.wrap("look up skipped row", err)
			}
			res.Failed++
			res.FailedSeqs = append(res.FailedSeqs, d.Seq)
			res.AddError(kind, 1)
			continue
		}
		res.Acknowledged++
	}
	if err := tx.Commit(); err != nil {
		return target.WriteResult{}, t.wrap("commit", err)
	}
	return res, nil
}

func (t *Target) Freshness(ctx context.Context, gen string) (int64, bool, error) {
	var v sql.NullInt64
	err := t.readers.QueryRowContext(ctx, `SELECT max(_event_time) FROM `+t.table+` WHERE generator_identifier = ?`, gen).Scan(&v)
	if err != nil {
		return 0, false, t.wrap("freshness query", err)
	}
	return v.Int64, v.Valid, nil
}

func (t *Target) Visible(ctx context.Context, gen string, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	in, args := idsIn(gen, ids)
	rows, err := t.readers.QueryContext(ctx, `SELECT _id FROM `+t.table+` WHERE generator_identifier = ? AND `+in, args...)
	if err != nil {
		return nil, t.wrap("visibility query", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, t.wrap("visibility query", err)
		}
		out[id] = true
	}
	return out, t.wrapNil("visibility query", rows.Err())
}

// idsIn is the condition "_id is one of ids" (not empty) and the
// arguments of a query that filters on generator gen first.
func idsIn(gen string, ids []string) (string, []any) {
	args := make([]any, 0, len(ids)+1)
	args = append(args, gen)
	for _, id := range ids {
		args = append(args, id)
	}
	return `_id IN (?` + strings.Repeat(",?", len(ids)-1) + `)`, args
}

func (t *Target) wrapNil(op string, err error) error {
	if err == nil {
		return nil
	}
	return t.wrap(op, err)
}

func (t *Target) Count(ctx context.Context, gen string) (int64, error) {
	var n int64
	err := t.readers.QueryRowContext(ctx, `SELECT count(*) FROM `+t.table+` WHERE generator_identifier = ?`, gen).Scan(&n)
	return n, t.wrapNil("count", err)
}

func (t *Target) Seqs(ctx context.Context, gen string, fn func(int64)) error {
	rows, err := t.readers.QueryContext(ctx, `SELECT _seq FROM `+t.table+` WHERE generator_identifier = ?`, gen)
	if err != nil {
		return t.wrap("seq scan", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s int64
		if err := rows.Scan(&s); err != nil {
			return t.wrap("seq scan", err)
		}
		fn(s)
	}
	return t.wrapNil("seq scan", rows.Err())
}

// UpdateFreshness is the newest _update_time of the generator's events.
func (t *Target) UpdateFreshness(ctx context.Context, gen string) (int64, bool, error) {
	var v sql.NullInt64
	err := t.readers.QueryRowContext(ctx, `SELECT max(_update_time) FROM `+t.table+` WHERE generator_identifier = ? AND _update_time IS NOT NULL`, gen).Scan(&v)
	if err != nil {
		return 0, false, t.wrap("update freshness query", err)
	}
	return v.Int64, v.Valid, nil
}

// Revisions is the revision stored for each of ids that is stored.
func (t *Target) Revisions(ctx context.Context, gen string, ids []string) (map[string]int64, error) {
	out := make(map[string]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	in, args := idsIn(gen, ids)
	rows, err := t.readers.QueryContext(ctx, `SELECT _id, _revision FROM `+t.table+` WHERE generator_identifier = ? AND `+in, args...)
	if err != nil {
		return nil, t.wrap("revision query", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id  string
			rev int64
		)
		if err := rows.Scan(&id, &rev); err != nil {
			return nil, t.wrap("revision query", err)
		}
		out[id] = rev
	}
	return out, t.wrapNil("revision query", rows.Err())
}

// Updated calls fn with the _seq and revision of every updated event.
func (t *Target) Updated(ctx context.Context, gen string, fn func(seq, revision int64)) error {
	rows, err := t.readers.QueryContext(ctx, `SELECT _seq, _revision FROM `+t.table+` WHERE generator_identifier = ? AND _update_time IS NOT NULL`, gen)
	if err != nil {
		return t.wrap("revision scan", err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq, rev int64
		if err := rows.Scan(&seq, &rev); err != nil {
			return t.wrap("revision scan", err)
		}
		fn(seq, rev)
	}
	return t.wrapNil("revision scan", rows.Err())
}

func (t *Target) Teardown(ctx context.Context) error {
	_, err := t.writer.ExecContext(ctx, `DROP TABLE IF EXISTS `+t.table)
	return t.wrapNil("teardown", err)
}

func (t *Target) Version(ctx context.Context) (string, error) {
	var v string
	err := t.readers.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&v)
	return "SQLite " + v, t.wrapNil("version", err)
}

func (t *Target) Close() error {
	werr := t.writer.Close()
	rerr := t.readers.Close()
	return errors.Join(werr, rerr)
}

// Layout says what Setup created for the events.
func (t *Target) Layout() string {
	return "table " + t.table + ": each event whole in the JSON text column doc, beside the columns _id, generator_identifier, _event_time, _seq, _revision and _update_time; a query reads a field as json_extract(doc, '$.a.b')"
}
