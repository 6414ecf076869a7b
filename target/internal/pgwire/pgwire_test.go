package pgwire

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestPlainIdentifier(t *testing.T) {
	for name, want := range map[string]bool{
		"events": true, "Events_2": true, "_x": true, "": false, "2events": false, "a-b": false,
		"s.t": false, `a"b`: false, strings.Repeat("a", 10): true, strings.Repeat("a", 11): false,
	} {
		if got := PlainIdentifier(name, 10); got != want {
			t.Errorf("PlainIdentifier(%q) = %v, want %v", name, got, want)
		}
	}
}

// An error is one line that names the operation, the table and, for a
// timeout, which bound fired: the target's request timeout or the
// caller's own shorter deadline.
func TestFailNamesTheBound(t *testing.T) {
	c := &Conn{Timeout: 50 * time.Millisecond, Name: "postgres", Table: "events"}
	ctx, cancel := c.Request(context.Background())
	defer cancel()
	<-ctx.Done()
	if got := c.Fail(ctx, "count on", ctx.Err()).Error(); got != "postgres count on events: timed out (request timeout 50ms)" {
		t.Errorf("request timeout: %q", got)
	}
	short, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	ctx, cancel = c.Request(short)
	defer cancel()
	<-ctx.Done()
	if got := c.Fail(ctx, "count on", ctx.Err()).Error(); !strings.Contains(got, "the caller's deadline, before the request timeout 50ms") {
		t.Errorf("caller's deadline: %q", got)
	}
	pg := &pgconn.PgError{Message: "relation \"x\" does not exist", Code: "42P01"}
	err := c.Fail(context.Background(), "seq scan of", pg)
	if got := err.Error(); got != `postgres seq scan of events: relation "x" does not exist (SQLSTATE 42P01)` {
		t.Errorf("server error: %q", got)
	}
	if !errors.As(err, new(*pgconn.PgError)) {
		t.Error("the server's error is not kept for errors.As")
	}
	if got := Describe(errors.New("line one\nline two"), time.Second); got != "line one" {
		t.Errorf("a multi-line error: %q", got)
	}
}
