package questdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	qdb "github.com/questdb/go-questdb-client/v4"
)

// opError is a one-line error for an operation; Unwrap keeps the cause
// for errors.Is and errors.As.
type opError struct {
	op  string // e.g. "questdb count on events"
	msg string
	err error
}

func (e *opError) Error() string { return e.op + ": " + e.msg }
func (e *opError) Unwrap() error { return e.err }

// describe renders err as one short line. It never includes a password:
// neither server echoes one, and dial errors carry only addresses.
func describe(err error, timeout time.Duration) string {
	var pgErr *pgconn.PgError
	var httpErr *qdb.HttpError
	var opErr *net.OpError
	switch {
	case errors.As(err, &pgErr):
		return pgErr.Message
	case errors.As(err, &httpErr):
		// QuestDB's message spans lines ("errors encountered on line(s):\n
		// error in line 2: …"); the line that names the row matters.
		return fmt.Sprintf("ILP over HTTP: %d %s", httpErr.HttpStatus(), strings.Join(strings.Fields(httpErr.Message), " "))
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timed out (request timeout %s)", timeout)
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &opErr):
		return opErr.Error()
	}
	return firstLine(err.Error())
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
