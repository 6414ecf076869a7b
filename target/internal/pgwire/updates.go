package pgwire

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Revisions runs query, whose rows are (_id, revision), and returns the
// revision of each id it returns: the reads of a target that takes
// updates (target.Updater). An id the query does not return is absent.
func (c *Conn) Revisions(ctx context.Context, query string, args ...any) (map[string]int64, error) {
	ctx, cancel := c.Request(ctx)
	defer cancel()
	rows, err := c.Pool.Query(ctx, query, args...)
	if err != nil {
		return nil, c.Fail(ctx, "revision query on", err)
	}
	out := map[string]int64{}
	var (
		id  string
		rev int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &rev}, func() error {
		out[id] = rev
		return nil
	}); err != nil {
		return nil, c.Fail(ctx, "revision query on", err)
	}
	return out, nil
}

// Updated runs query, the (_seq, revision) of one generator's ($1)
// updated rows, and streams them to fn as Seqs does.
func (c *Conn) Updated(ctx context.Context, query, generator string, fn func(seq, revision int64)) error {
	ctx, cancel := c.Request(ctx)
	defer cancel()
	rows, err := c.Pool.Query(ctx, query, generator)
	if err != nil {
		return c.Fail(ctx, "revision scan of", err)
	}
	var seq, rev int64
	if _, err := pgx.ForEachRow(rows, []any{&seq, &rev}, func() error {
		fn(seq, rev)
		return nil
	}); err != nil {
		return c.Fail(ctx, "revision scan of", err)
	}
	return nil
}
