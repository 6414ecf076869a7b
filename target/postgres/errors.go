package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// opError is a one-line error for an operation. Its message is built from
// the parts of the cause that matter (the server's message, the dial
// error) instead of pgx's multi-part, possibly multi-line text, while
// Unwrap keeps the cause for errors.Is and errors.As.
type opError struct {
	op  string // e.g. "connect to postgres://u:xxxxx@host/db"
	msg string
	err error
}

func (e *opError) Error() string { return e.op + ": " + e.msg }
func (e *opError) Unwrap() error { return e.err }

// describe renders err as one short line. It never includes a password:
// the server does not echo one, and dial errors carry only addresses.
func describe(err error, timeout time.Duration) string {
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
