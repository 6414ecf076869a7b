package noop

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

func connect(t *testing.T, ctx context.Context, srv *Server) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, srv.PostgresURL("t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != code {
		t.Errorf("%s: error %v, want SQLSTATE %s", what, err, code)
	}
}

// What the server does not understand, or what PostgreSQL would refuse,
// fails with PostgreSQL's SQLSTATE, and the session goes on; a failed
// transaction refuses everything until it is rolled back.
func TestPostgresRefusals(t *testing.T) {
	srv := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, srv)
	_, err := c.Exec(ctx, `UPDATE t SET x = 1`)
	wantCode(t, "UPDATE", err, "0A000")
	_, err = c.Exec(ctx, `INSERT INTO missing (_id, _seq) VALUES ($1, $2)`, "a", 1)
	wantCode(t, "INSERT into a missing table", err, "42P01")
	_, err = c.Exec(ctx, `SELECT count(*) FROM missing`)
	wantCode(t, "SELECT from a missing table", err, "42P01")

	if _, err := c.Exec(ctx, `CREATE TABLE t (_id text PRIMARY KEY, generator_identifier text, _event_time bigint, _seq bigint, doc jsonb)`); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, `UPDATE t SET x = 1`)
	wantCode(t, "UPDATE in a transaction", err, "0A000")
	_, err = tx.Exec(ctx, `SELECT count(*) FROM t WHERE generator_identifier = $1`, "g")
	wantCode(t, "a statement in a failed transaction", err, "25P02")
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := c.QueryRow(ctx, `SELECT count(*) FROM t WHERE generator_identifier = $1`, "g").Scan(&n); err != nil || n != 0 {
		t.Errorf("count after the rollback: %d, %v", n, err)
	}
	// Several statements in one simple query run in turn.
	if _, err := c.Exec(ctx, `SET application_name = 'x'; CREATE INDEX IF NOT EXISTS i ON t (_seq); -- done`); err != nil {
		t.Errorf("simple query of several statements: %v", err)
	}
	var v string
	if err := c.QueryRow(ctx, `SHOW server_version`).Scan(&v); err != nil || !strings.HasPrefix(v, "freshbench-noop") {
		t.Errorf("server_version %q, %v", v, err)
	}
}

// A client that drops its connection in the middle of a message, or of a
// COPY, leaves the server serving everyone else, and books nothing of the
// COPY cut short.
func TestPostgresDroppedConnection(t *testing.T) {
	srv := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, srv)
	if _, err := c.Exec(ctx, `CREATE TABLE t (_id text)`); err != nil {
		t.Fatal(err)
	}
	addr := srv.pgLn.Addr().String()
	raw := func() (net.Conn, *pgproto3.Frontend) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fe := pgproto3.NewFrontend(nc, nc)
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u"}})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
				return nc, fe
			}
		}
	}

	// Half a message: a Query whose length promises more than is sent.
	nc, _ := raw()
	if _, err := nc.Write([]byte{'Q', 0, 0, 1, 0, 'S', 'E'}); err != nil {
		t.Fatal(err)
	}
	nc.Close()

	// Half a COPY.
	nc, fe := raw()
	fe.Send(&pgproto3.Query{String: `COPY t (_id, generator_identifier, _seq) FROM STDIN BINARY`})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	if msg, err := fe.Receive(); err != nil {
		t.Fatal(err)
	} else if _, ok := msg.(*pgproto3.CopyInResponse); !ok {
		t.Fatalf("got %T, want CopyInResponse", msg)
	}
	fe.Send(&pgproto3.CopyData{Data: append([]byte("PGCOPY\n\xff\r\n\x00"), 0, 0, 0, 0, 0, 0, 0, 0, 0, 3)})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	nc.Close()

	var n int64
	if err := c.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Errorf("after dropped connections: count %d, %v; want 0", n, err)
	}
	c2, err := pgx.Connect(ctx, srv.PostgresURL("t"))
	if err != nil {
		t.Fatalf("a new connection after dropped ones: %v", err)
	}
	c2.Close(ctx)
}
