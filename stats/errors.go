package stats

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
)

// ErrorCount is how often one kind of error happened, with one message as
// an example for the reader.
type ErrorCount struct {
	Count  int64  `json:"count"`
	Sample string `json:"sample,omitempty"`
}

// Kinder is implemented by errors that know their own kind.
type Kinder interface{ Kind() string }

// AddError counts n errors of kind into m, keeping the first message.
func AddError(m map[string]*ErrorCount, kind string, n int64, sample string) {
	e := m[kind]
	if e == nil {
		e = &ErrorCount{Sample: sample}
		m[kind] = e
	}
	e.Count += n
}

// CountError counts one error under its kind.
func CountError(m map[string]*ErrorCount, err error) {
	AddError(m, ErrorKind(err), 1, err.Error())
}

// ErrorKind names the class of a request that failed as a whole.
func ErrorKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection_refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection_reset"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	var kinded Kinder
	if errors.As(err, &kinded) {
		return kinded.Kind()
	}
	return "request_failed"
}
