package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/freshbench/freshbench/target"
)

// Write writes one batch as one transaction with the configured method.
func (s *store) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	if len(b.Docs) == 0 {
		return target.WriteResult{}, nil
	}
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	var (
		res target.WriteResult
		err error
	)
	switch s.cfg.method {
	case methodCopy:
		res, err = s.writeCopy(ctx, b)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation {
			// COPY has no ON CONFLICT: one stored _id (a re-send of a batch
			// that was committed, a repeated id) fails the whole COPY and
			// rolls it back. Written again by INSERT, each duplicate is
			// named and the rest stored.
			res, err = s.writeInsert(ctx, b)
		}
	case methodPipeline:
		res, err = s.writePipeline(ctx, b)
	default:
		res, err = s.writeInsert(ctx, b)
	}
	if err == nil {
		return res, nil
	}
	if kind, ok := rejection(err); ok {
		return allFailed(b, kind), nil
	}
	return target.WriteResult{}, s.conn.Fail(ctx, s.cfg.method+" into", err)
}

// uniqueViolation is the SQLSTATE of a duplicate key.
const uniqueViolation = "23505"

// generatorOf prefers the document's own generator and falls back to the
// batch's, so that a hand-built Document without one still lands.
func generatorOf(b target.Batch, d *target.Document) string {
	if d.Generator != "" {
		return d.Generator
	}
	return b.Generator
}

// split returns the inserts and the updates of b, each in batch order. A
// batch of inserts alone is returned as it is, without a copy.
func split(b target.Batch) (ins, up target.Batch) {
	first := slices.IndexFunc(b.Docs, func(d target.Document) bool { return d.Revision > 0 })
	if first < 0 {
		return b, target.Batch{Generator: b.Generator}
	}
	ins = target.Batch{Generator: b.Generator, Docs: make([]target.Document, first, len(b.Docs))}
	copy(ins.Docs, b.Docs[:first])
	up = target.Batch{Generator: b.Generator}
	for _, d := range b.Docs[first:] {
		if d.Revision > 0 {
			up.Docs = append(up.Docs, d)
		} else {
			ins.Docs = append(ins.Docs, d)
		}
	}
	return ins, up
}

// columns are the arrays that qInsert takes ($1…$5) and, with revisions,
// that qUpsert takes ($1…$7).
func columns(b target.Batch, revisions bool) []any {
	n := len(b.Docs)
	ids := make([]string, n)
	gens := make([]string, n)
	times := make([]int64, n)
	seqs := make([]int64, n)
	docs := make([][]byte, n) // sent as text[] elements without copying
	for i := range b.Docs {
		d := &b.Docs[i]
		ids[i], gens[i], times[i], seqs[i], docs[i] = d.ID, generatorOf(b, d), d.EventTime, d.Seq, d.JSON
	}
	if !revisions {
		return []any{ids, gens, times, seqs, docs}
	}
	revs := make([]int64, n)
	updateTimes := make([]int64, n)
	for i := range b.Docs {
		revs[i], updateTimes[i] = b.Docs[i].Revision, b.Docs[i].UpdateTime
	}
	return []any{ids, gens, times, seqs, docs, revs, updateTimes}
}

// returnedSeqs counts the _seq values that a statement's RETURNING _seq
// gave back, and closes rows.
func returnedSeqs(rows pgx.Rows, n int) (map[int64]int, error) {
	out := make(map[int64]int, n)
	var seq int64
	if _, err := pgx.ForEachRow(rows, []any{&seq}, func() error {
		out[seq]++
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// writeInsert writes the inserts with qInsert and the updates with
// qUpsert. A batch with both sends the two statements in one pipeline:
// one round trip, one implicit transaction. A batch of inserts alone is
// the one statement it has always been.
func (s *store) writeInsert(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	ins, up := split(b)
	if len(up.Docs) == 0 {
		rows, err := s.pool.Query(ctx, s.qInsert, columns(b, false)...)
		if err != nil {
			return target.WriteResult{}, err
		}
		inserted, err := returnedSeqs(rows, len(b.Docs))
		if err != nil {
			return target.WriteResult{}, err
		}
		return s.skipped(ctx, b, inserted)
	}
	batch := &pgx.Batch{}
	if len(ins.Docs) > 0 {
		batch.Queue(s.qInsert, columns(ins, false)...)
	}
	batch.Queue(s.qUpsert, columns(up, true)...)
	br := s.pool.SendBatch(ctx, batch)
	var inserted, upserted map[int64]int
	var err error
	if len(ins.Docs) > 0 {
		inserted, err = nextReturned(br, len(ins.Docs))
	}
	if err == nil {
		upserted, err = nextReturned(br, len(up.Docs))
	}
	// Close reads the final Sync: only then is the transaction committed.
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return target.WriteResult{}, err
	}
	return s.result(ctx, ins, up, inserted, upserted)
}

// nextReturned reads what the next statement of br returned: see
// returnedSeqs.
func nextReturned(br pgx.BatchResults, n int) (map[int64]int, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return returnedSeqs(rows, n)
}

// writeCopy copies the inserts of the batch in an explicit transaction:
// when the server stored fewer rows than were sent (a BEFORE INSERT
// trigger returned NULL), the rows this transaction wrote are looked up
// before it commits, so that the missing ones are named exactly. COPY
// cannot update, so the updates follow in the same transaction as one
// qUpsert. The transaction costs two round trips (BEGIN, COMMIT) beside a
// COPY that carries the whole batch.
func (s *store) writeCopy(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	ins, up := split(b)
	var res target.WriteResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		res = target.WriteResult{}
		if len(ins.Docs) > 0 {
			r, err := s.copyInserts(ctx, tx, ins)
			if err != nil {
				return err
			}
			res = r
		}
		if len(up.Docs) == 0 {
			return nil
		}
		rows, err := tx.Query(ctx, s.qUpsert, columns(up, true)...)
		if err != nil {
			return err
		}
		upserted, err := returnedSeqs(rows, len(up.Docs))
		if err != nil {
			return err
		}
		res = merge(res, updated(up, upserted))
		return nil
	})
	if err != nil {
		return target.WriteResult{}, err
	}
	return res, nil
}

// copyInserts copies b, inserts alone, within tx.
func (s *store) copyInserts(ctx context.Context, tx pgx.Tx, b target.Batch) (target.WriteResult, error) {
	n, err := tx.CopyFrom(ctx, pgx.Identifier{s.cfg.table}, copyColumns,
		pgx.CopyFromSlice(len(b.Docs), func(i int) ([]any, error) {
			d := &b.Docs[i]
			return []any{d.ID, generatorOf(b, d), d.EventTime, d.Seq, d.JSON}, nil
		}))
	if err != nil {
		return target.WriteResult{}, err
	}
	if int(n) == len(b.Docs) {
		return target.WriteResult{Acknowledged: len(b.Docs)}, nil
	}
	// COPY has no ON CONFLICT, so a row that is not there was not
	// stored: xmin names the rows this very transaction inserted.
	ids := make([]string, len(b.Docs))
	for i := range b.Docs {
		ids[i] = b.Docs[i].ID
	}
	rows, err := tx.Query(ctx, s.qWrittenHere, ids)
	if err != nil {
		return target.WriteResult{}, err
	}
	written := make(map[string]bool, n)
	var id string
	if _, err := pgx.ForEachRow(rows, []any{&id}, func() error {
		written[id] = true
		return nil
	}); err != nil {
		return target.WriteResult{}, err
	}
	var res target.WriteResult
	for i := range b.Docs {
		if written[b.Docs[i].ID] {
			res.Acknowledged++
			continue
		}
		res.Failed++
		res.FailedSeqs = append(res.FailedSeqs, b.Docs[i].Seq)
	}
	if res.Failed > 0 {
		res.AddError(target.ErrorNotStored, res.Failed)
	}
	if res.Acknowledged != int(n) {
		return target.WriteResult{}, fmt.Errorf("copy stored %d rows but %d of the batch's _id are found", n, res.Acknowledged)
	}
	return res, nil
}

var copyColumns = []string{"_id", "generator_identifier", "_event_time", "_seq", "doc"}

// writePipeline sends one single-row statement per event, an insert or
// an upsert, in one pgx.Batch.
func (s *store) writePipeline(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	batch := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(b.Docs))}
	for i := range b.Docs {
		d := &b.Docs[i]
		if d.Revision > 0 {
			batch.Queue(s.qUpsertOne, d.ID, generatorOf(b, d), d.EventTime, d.Seq, d.JSON, d.Revision, d.UpdateTime)
			continue
		}
		batch.Queue(s.qInsertOne, d.ID, generatorOf(b, d), d.EventTime, d.Seq, d.JSON)
	}
	br := s.pool.SendBatch(ctx, batch)
	inserted := make(map[int64]int, len(b.Docs))
	upserted := map[int64]int{}
	for i := range b.Docs {
		tag, err := br.Exec()
		if err != nil {
			// The batch is one implicit transaction: one failed statement
			// rolls back all of them, including those already reported.
			_ = br.Close()
			return target.WriteResult{}, err
		}
		if tag.RowsAffected() != 1 {
			continue
		}
		if b.Docs[i].Revision > 0 {
			upserted[b.Docs[i].Seq]++
		} else {
			inserted[b.Docs[i].Seq]++
		}
	}
	// Close reads the final Sync: only then is the transaction committed.
	if err := br.Close(); err != nil {
		return target.WriteResult{}, err
	}
	ins, up := split(b)
	return s.result(ctx, ins, up, inserted, upserted)
}

// result is the outcome of a committed batch of inserts ins and updates
// up, from the _seq values the server inserted and upserted.
func (s *store) result(ctx context.Context, ins, up target.Batch, inserted, upserted map[int64]int) (target.WriteResult, error) {
	res, err := s.skipped(ctx, ins, inserted)
	if err != nil {
		return target.WriteResult{}, err
	}
	return merge(res, updated(up, upserted)), nil
}

// updated turns the _seq values that the upserts of the updates up
// returned into a result. An upsert returns its row whether it inserted
// or updated it; one it did not return was skipped by a trigger (a BEFORE
// UPDATE or BEFORE INSERT trigger that returned NULL) or a rule, and is
// a failed item of kind not_stored. An upsert has no duplicates to tell
// apart, so nothing is looked up.
func updated(up target.Batch, upserted map[int64]int) target.WriteResult {
	var res target.WriteResult
	for i := range up.Docs {
		seq := up.Docs[i].Seq
		if upserted[seq] > 0 {
			upserted[seq]--
			res.Acknowledged++
			continue
		}
		res.Failed++
		res.FailedSeqs = append(res.FailedSeqs, seq)
		res.AddError(target.ErrorNotStored, 1)
	}
	return res
}

// merge adds the results of two parts of one batch.
func merge(a, b target.WriteResult) target.WriteResult {
	a.Acknowledged += b.Acknowledged
	a.Failed += b.Failed
	a.Retries += b.Retries
	a.FailedSeqs = append(a.FailedSeqs, b.FailedSeqs...)
	for kind, n := range b.ErrorKinds {
		a.AddError(kind, n)
	}
	return a
}

// skipped turns the _seq values the server inserted into a result for
// the inserts b. Every other document was skipped, either by ON CONFLICT
// DO NOTHING (its _id was already stored, or repeated within the batch)
// or by a BEFORE INSERT trigger that returned NULL. The write has
// committed by now, so the skipped _ids are looked up once more: one that
// is stored is a duplicate, one that is not was not stored. The lookup
// runs only when rows were skipped; a concurrent writer of the same _id
// makes it a duplicate, which it is.
func (s *store) skipped(ctx context.Context, b target.Batch, inserted map[int64]int) (target.WriteResult, error) {
	var res target.WriteResult
	var missing []int // indexes into b.Docs
	for i := range b.Docs {
		seq := b.Docs[i].Seq
		if inserted[seq] > 0 {
			inserted[seq]--
			res.Acknowledged++
			continue
		}
		missing = append(missing, i)
	}
	if len(missing) == 0 {
		return res, nil
	}
	ids := make([]string, len(missing))
	for j, i := range missing {
		ids[j] = b.Docs[i].ID
	}
	rows, err := s.pool.Query(ctx, s.qStored, ids)
	if err != nil {
		return target.WriteResult{}, fmt.Errorf("look up skipped rows: %w", err)
	}
	stored := make(map[string]bool, len(ids))
	var id string
	if _, err := pgx.ForEachRow(rows, []any{&id}, func() error {
		stored[id] = true
		return nil
	}); err != nil {
		return target.WriteResult{}, fmt.Errorf("look up skipped rows: %w", err)
	}
	for _, i := range missing {
		res.Failed++
		res.FailedSeqs = append(res.FailedSeqs, b.Docs[i].Seq)
		if stored[b.Docs[i].ID] {
			res.AddError(target.ErrorDuplicateID, 1)
		} else {
			res.AddError(target.ErrorNotStored, 1)
		}
	}
	return res, nil
}

// allFailed reports a batch the server rejected as a whole.
func allFailed(b target.Batch, kind string) target.WriteResult {
	res := target.WriteResult{Failed: len(b.Docs), FailedSeqs: make([]int64, len(b.Docs))}
	for i := range b.Docs {
		res.FailedSeqs[i] = b.Docs[i].Seq
	}
	res.AddError(kind, len(b.Docs))
	return res
}

// rejection tells whether err is the server refusing the data itself
// (SQLSTATE class 22 data exception or 23 integrity constraint violation)
// rather than failing the request, and names the condition.
func rejection(err error) (string, bool) {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) != 5 {
		return "", false
	}
	switch pgErr.Code[:2] {
	case "22", "23":
		return conditionName(pgErr.Code), true
	}
	return "", false
}

// conditionName maps the SQLSTATE codes a write can plausibly meet to
// PostgreSQL's condition names (Appendix A of its manual).
func conditionName(code string) string {
	switch code {
	case "23505":
		return "unique_violation"
	case "23502":
		return "not_null_violation"
	case "23514":
		return "check_violation"
	case "23503":
		return "foreign_key_violation"
	case "22P02":
		return "invalid_text_representation"
	case "22021":
		return "character_not_in_repertoire"
	case "22003":
		return "numeric_value_out_of_range"
	case "22001":
		return "string_data_right_truncation"
	case "22030":
		return "duplicate_json_object_key_value"
	case "22032":
		return "invalid_json_text"
	case "2203D":
		return "too_many_json_array_elements"
	case "2203E":
		return "too_many_json_object_members"
	}
	return "sqlstate_" + code
}
