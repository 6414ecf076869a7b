package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/freshbench/freshbench/query/querytest"
	"github.com/freshbench/freshbench/target"
)

func TestQueries(t *testing.T) {
	s, _ := openTest(t, nil, target.Options{})
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	querytest.Check(t, s, "g"+randomHex(t, 4))
}

// Every shipped kind must be able to use an index: its text repeats the
// indexed expressions exactly. With sequential scans priced out, the plan of a
// small table shows whether an index applies.
func TestQueriesUseTheIndexes(t *testing.T) {
	ctx := context.Background()
	s, table := openTest(t, nil, target.Options{})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.SetupQueries(ctx); err != nil {
		t.Fatal(err)
	}
	for kind, suffix := range map[target.QueryKind]string{
		target.QueryPoint:     "_procby_idx",
		target.QueryArray:     "_emails_idx",
		target.QueryAggregate: "_company_idx",
		target.QueryNewest:    "_gen_", // either index on the generator serves it on an empty table
	} {
		var plan []string
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			q := querytest.KindQuery(t, "postgres", kind, "v", 10).Statement
			rows, err := tx.Query(ctx, "EXPLAIN "+strings.ReplaceAll(q.Text, "{table}", s.table()), q.Args...)
			if err != nil {
				return err
			}
			plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(plan, "\n"), table+suffix) {
			t.Errorf("%s: plan does not use %s:\n%s", kind, table+suffix, strings.Join(plan, "\n"))
		}
	}
}

// The bucket query reads only the (generator_identifier, _event_time)
// index: it holds every column the query needs. On a table whose
// visibility map is set, as autovacuum keeps an ingested table's, the
// plan is an index-only scan of it.
func TestBucketQueryScansTheTimeIndexOnly(t *testing.T) {
	ctx := context.Background()
	s, table := openTest(t, nil, target.Options{})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	b := querytest.Documents("g")
	if res, err := s.Write(ctx, b); err != nil || res.Acknowledged != len(b.Docs) {
		t.Fatalf("write: %+v %v", res, err)
	}
	// The premise: the visibility map covers the table. VACUUM cannot
	// set it while another session's snapshot is older than the rows (seen
	// with the other tests' transactions on the shared server: a bitmap
	// scan of the other index planned instead), so it runs again until it
	// has, for up to a minute.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		if _, err := s.pool.Exec(ctx, `VACUUM (ANALYZE) `+pgx.Identifier{table}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		var pages, visible int
		if err := s.pool.QueryRow(ctx, `SELECT relpages, relallvisible FROM pg_class WHERE oid = $1::regclass`, pgx.Identifier{table}.Sanitize()).Scan(&pages, &visible); err != nil {
			t.Fatal(err)
		}
		if visible >= pages {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute of VACUUM, %d of the table's %d pages are all-visible: another session's snapshot holds them back", visible, pages)
		}
	}
	var plan []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			return err
		}
		q := querytest.KindQuery(t, "postgres", target.QueryBucket, "g", 10).Statement
		rows, err := tx.Query(ctx, "EXPLAIN "+strings.ReplaceAll(q.Text, "{table}", s.table()), q.Args...)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Index Only Scan using " + table + "_gen_time_idx"; !strings.Contains(strings.Join(plan, "\n"), want) {
		t.Errorf("bucket: plan has no %s:\n%s", want, strings.Join(plan, "\n"))
	}
}

// The reads of updates use the partial index on (generator_identifier,
// _update_time), which holds the updated rows alone: an insert adds no
// entry to it, so inserts pay nothing for it.
func TestUpdateReadsUseThePartialIndex(t *testing.T) {
	ctx := context.Background()
	s, table := openTest(t, nil, target.Options{})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	idx := table + "_gen_upd_idx"
	var def string
	if err := s.pool.QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE indexname = $1`, idx).Scan(&def); err != nil {
		t.Fatalf("index %s: %v", idx, err)
	}
	if !strings.HasSuffix(def, "WHERE (_update_time IS NOT NULL)") {
		t.Errorf("index %s is not partial: %s", idx, def)
	}
	for name, q := range map[string]string{"update freshness": s.qUpdateFresh, "updated": s.qUpdated} {
		var plan []string
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, "EXPLAIN "+q, "g")
			if err != nil {
				return err
			}
			plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(plan, "\n"), idx) {
			t.Errorf("%s: plan does not use %s:\n%s", name, idx, strings.Join(plan, "\n"))
		}
	}
}
