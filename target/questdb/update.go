package questdb

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/freshbench/freshbench/target"
)

// walStore is the target on a WAL table: the store, taking updates too.
// A WAL table deduplicates on (_event_time, _id), and an update keeps its
// insert's _event_time, so the whole row written again replaces the one
// stored when the WAL is applied: QuestDB's own update path, asynchronous
// like every write, so that a revision becomes visible with the apply, as
// an insert does. A table with wal=false cannot deduplicate (an update
// would be a second row), so Open returns the plain store for it, which
// is no target.Updater, and its Write refuses updates (write.go).
type walStore struct{ *store }

var _ target.Updater = walStore{}

// UpdateFreshness is the newest _update_time of the generator's rows;
// inserts have none (null), which max skips.
func (s walStore) UpdateFreshness(ctx context.Context, generator string) (int64, bool, error) {
	return s.newest(ctx, "update freshness query on", s.qUpdateFreshness, generator)
}

// Revisions reads each visible id's _revision, null (0) for a row as
// inserted.
func (s walStore) Revisions(ctx context.Context, generator string, ids []string) (map[string]int64, error) {
	out := make(map[string]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	q := `SELECT _id, coalesce(_revision, 0) FROM ` + s.tbl + ` WHERE generator_identifier = $1 AND ` + idsIn(ids)
	return s.conn.Revisions(ctx, q, pgx.QueryExecModeExec, generator)
}

// Updated streams the _seq and _revision of the generator's updated rows
// (a null _revision, an insert, is not above 0).
func (s walStore) Updated(ctx context.Context, generator string, fn func(seq, revision int64)) error {
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, s.qUpdated, generator)
	if err != nil {
		return s.conn.Fail(ctx, "revision scan of", err)
	}
	var seq, rev int64
	if _, err := pgx.ForEachRow(rows, []any{&seq, &rev}, func() error {
		fn(seq, rev)
		return nil
	}); err != nil {
		return s.conn.Fail(ctx, "revision scan of", err)
	}
	return nil
}
