// Package pgwire is what the targets reached over PostgreSQL's wire
// protocol with pgx share (PostgreSQL, QuestDB): requests bounded by the
// target's own timeout, errors in one line that say which bound fired,
// and the reads of a generator's rows that the completeness audit and the
// visibility probes make.
package pgwire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/freshbench/freshbench/target/internal/bound"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// OpError is a one-line error for an operation. Its message is built from
// the parts of the cause that matter (the server's message, the dial
// error) instead of pgx's multi-part, possibly multi-line text, while
// Unwrap keeps the cause for errors.Is and errors.As.
type OpError struct {
	Op  string // e.g. "postgres count on events"
	Msg string
	Err error
}

func (e *OpError) Error() string { return e.Op + ": " + e.Msg }
func (e *OpError) Unwrap() error { return e.Err }

// Describe renders err as one short line. It never includes a password:
// the servers do not echo one, and dial errors carry only addresses.
func Describe(err error, timeout time.Duration) string {
	var pgErr *pgconn.PgError
	var opErr *net.OpError
	switch {
	case errors.As(err, &pgErr):
		return fmt.Sprintf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timed out (request timeout %s)", timeout)
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &opErr):
		return opErr.Error()
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// Conn is a target's pool with its request timeout and the names its
// errors start with.
type Conn struct {
	Pool    *pgxpool.Pool
	Timeout time.Duration
	Name    string // the target's, e.g. "postgres"
	Table   string
	// Describe renders a cause; nil means the package's Describe. A
	// target whose writes fail otherwise (QuestDB's ILP over HTTP) adds
	// its own cases.
	Describe func(err error, timeout time.Duration) string
}

// Request bounds one request by the target's timeout.
func (c *Conn) Request(ctx context.Context) (context.Context, context.CancelFunc) {
	return bound.Request(ctx, c.Timeout)
}

// Fail wraps err, which ended the operation op (e.g. "count on") on the
// table under ctx, as one line without the password. A timeout names
// the bound that fired: the request timeout, or the caller's own
// shorter deadline.
func (c *Conn) Fail(ctx context.Context, op string, err error) error {
	msg := c.describe(err)
	if errors.Is(err, context.DeadlineExceeded) && !bound.RequestTimedOut(ctx) {
		msg = fmt.Sprintf("timed out (the caller's deadline, before the request timeout %s)", c.Timeout)
	}
	return &OpError{Op: c.Name + " " + op + " " + c.Table, Msg: msg, Err: err}
}

// Err wraps err as the one-line error of the operation op, which names
// what it was done to itself (e.g. "connect to URL").
func (c *Conn) Err(op string, err error) error {
	return &OpError{Op: op, Msg: c.describe(err), Err: err}
}

func (c *Conn) describe(err error) string {
	if c.Describe != nil {
		return c.Describe(err, c.Timeout)
	}
	return Describe(err, c.Timeout)
}

// Count runs query, a count of one generator's rows ($1).
func (c *Conn) Count(ctx context.Context, query, generator string) (int64, error) {
	ctx, cancel := c.Request(ctx)
	defer cancel()
	var n int64
	if err := c.Pool.QueryRow(ctx, query, generator).Scan(&n); err != nil {
		return 0, c.Fail(ctx, "count on", err)
	}
	return n, nil
}

// Seqs runs query, the _seq of one generator's rows ($1), and streams
// them to fn: pgx reads them from the socket as fn consumes them, so a
// large generator does not have to fit in memory.
func (c *Conn) Seqs(ctx context.Context, query, generator string, fn func(seq int64)) error {
	ctx, cancel := c.Request(ctx)
	defer cancel()
	rows, err := c.Pool.Query(ctx, query, generator)
	if err != nil {
		return c.Fail(ctx, "seq scan of", err)
	}
	var seq int64
	if _, err := pgx.ForEachRow(rows, []any{&seq}, func() error {
		fn(seq)
		return nil
	}); err != nil {
		return c.Fail(ctx, "seq scan of", err)
	}
	return nil
}

// Visible marks which of ids the rows of query ($1 the generator, then
// args) return as their one column, _id.
func (c *Conn) Visible(ctx context.Context, ids []string, query string, args ...any) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = false
	}
	if len(ids) == 0 {
		return out, nil
	}
	ctx, cancel := c.Request(ctx)
	defer cancel()
	rows, err := c.Pool.Query(ctx, query, args...)
	if err != nil {
		return nil, c.Fail(ctx, "visibility query on", err)
	}
	var id string
	if _, err := pgx.ForEachRow(rows, []any{&id}, func() error {
		out[id] = true
		return nil
	}); err != nil {
		return nil, c.Fail(ctx, "visibility query on", err)
	}
	return out, nil
}

// CountRows runs query with args, the operation op (e.g. "point query
// on"), and counts the rows it returns: how a query of the workload is
// answered.
func (c *Conn) CountRows(ctx context.Context, op, query string, args ...any) (int, error) {
	ctx, cancel := c.Request(ctx)
	defer cancel()
	rows, err := c.Pool.Query(ctx, query, args...)
	if err != nil {
		return 0, c.Fail(ctx, op, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		return n, c.Fail(ctx, op, err)
	}
	return n, nil
}

// Docs runs query ($1 the limit n) and returns its one column, each row's
// document.
func (c *Conn) Docs(ctx context.Context, query string, n int) ([][]byte, error) {
	ctx, cancel := c.Request(ctx)
	defer cancel()
	rows, err := c.Pool.Query(ctx, query, n)
	if err != nil {
		return nil, c.Fail(ctx, "sample of", err)
	}
	docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, c.Fail(ctx, "sample of", err)
	}
	return docs, nil
}

// PlainIdentifier accepts a table name of 1 to maxLen letters, digits and
// underscores, not starting with a digit: it needs no escaping beyond
// quoting and cannot carry a schema or SQL.
func PlainIdentifier(name string, maxLen int) bool {
	if name == "" || len(name) > maxLen || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	for _, c := range []byte(name) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
