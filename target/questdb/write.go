package questdb

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	qdb "github.com/questdb/go-questdb-client/v4"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/flat"
)

// maxRejections bounds the requests one batch may take when QuestDB keeps
// rejecting rows of it (see Write): a batch whose every row is bad (a
// table of another shape) must not cost one request per row.
const maxRejections = 16

// ErrorKind of the items left unsent of a batch that met maxRejections
// rejections: not stored, but never judged by the server.
const errorAbandoned = "rejected_batch_abandoned"

// ErrorKind of an update written to a table without WAL, never sent: it
// would be stored beside its insert, not in its place (the fix: wal=true).
const errorUpdateNeedsWAL = "update_needs_wal"

// Write writes one batch: one ILP request over HTTP, or one flush on a
// TCP connection.
//
// What an answer means for the items, over HTTP: QuestDB commits an ILP
// request to one table as one transaction, all of its rows or none. A
// success acknowledges every row sent. A rejection (HTTP 400 and the like:
// a value the column cannot take, a timestamp before 1970) stores nothing
// and names the first bad line; that row is failed, with the error's code
// as its kind ("ilp_invalid"), and the rest are sent again as a new
// request, until one commits. So acknowledged + failed = the batch,
// exactly: a row is acknowledged only by the commit of a request that
// carried it. After maxRejections, the rows still unsent are failed too
// (kind rejected_batch_abandoned). A request that fails as a whole
// (refused, reset, timed out, 5xx) is a returned error: no row of it was
// committed by this call, whatever earlier rejections named. The client's
// own retries are off, so that a re-send is freshbench's (--write-retries)
// and counted as one; a WAL table's DEDUP makes a re-send of rows that did
// land replace them.
//
// Over TCP there is no answer: a flush that reached the socket counts
// every row acknowledged, and a row the server rejects is dropped with
// no more than a line in the server's log (one it cannot parse also costs
// the connection); only the completeness audit finds it, as missing.
//
// An update (Revision above 0) is the whole row again, with _revision and
// _update_time, which a WAL table's DEDUP puts in the place of the row
// stored under the same _event_time and _id; it is acknowledged and failed
// as an insert is. Into a table without WAL it is never sent, failed of
// kind update_needs_wal: it would be stored beside its insert.
func (s *store) Write(ctx context.Context, b target.Batch) (target.WriteResult, error) {
	if len(b.Docs) == 0 {
		return target.WriteResult{}, nil
	}
	ctx, cancel := s.conn.Request(ctx)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return target.WriteResult{}, s.conn.Fail(ctx, "write into", err)
	}
	var res target.WriteResult
	pending := make([]int, len(b.Docs)) // indexes into b.Docs not yet sent
	for i := range pending {
		pending[i] = i
	}
	for rejections := 0; ; rejections++ {
		if rejections == maxRejections {
			failItems(&res, b, pending, errorAbandoned)
			return res, nil
		}
		sent, err := s.send(ctx, b, pending, &res)
		if err == nil {
			res.Acknowledged += len(sent)
			return res, nil
		}
		var he *qdb.HttpError
		if !errors.As(err, &he) || he.HttpStatus() >= 500 {
			return target.WriteResult{}, s.conn.Fail(ctx, "write into", err)
		}
		kind := "ilp_" + he.Code
		if he.Line < 1 || he.Line > len(sent) {
			// A rejection that names no row of the request is about all of it.
			failItems(&res, b, sent, kind)
			return res, nil
		}
		bad := sent[he.Line-1]
		failItems(&res, b, []int{bad}, kind)
		pending = pending[:0]
		for _, i := range sent {
			if i != bad {
				pending = append(pending, i)
			}
		}
		if len(pending) == 0 {
			return res, nil
		}
	}
}

// send writes the rows of b at indexes rows in one request and returns
// those it sent, in the order of the request's lines. A row the client
// refuses to encode is failed in res and left out.
func (s *store) send(ctx context.Context, b target.Batch, rows []int, res *target.WriteResult) ([]int, error) {
	ls, err := s.senders.get(ctx)
	if err != nil {
		return nil, err
	}
	sent := make([]int, 0, len(rows))
	var cols []flat.Column
	for _, i := range rows {
		d := &b.Docs[i]
		if d.Revision > 0 && !s.cfg.wal {
			failItems(res, b, []int{i}, errorUpdateNeedsWAL)
			continue
		}
		gen := d.Generator
		if gen == "" {
			gen = b.Generator
		}
		if s.cfg.flat {
			// Before the line is begun: a refused event leaves no half line.
			var err error
			if cols, err = flat.Flatten(d.JSON, cols[:0]); err != nil {
				failItems(res, b, []int{i}, err.(*flat.Error).Kind)
				continue
			}
		}
		row := ls.Table(s.cfg.table).
			Symbol("generator_identifier", gen).
			StringColumn("_id", d.ID).
			Int64Column("_seq", d.Seq)
		if s.cfg.flat {
			row = flatRow(row, cols)
		} else {
			row = row.StringColumn("doc", string(d.JSON))
		}
		if d.Revision > 0 {
			// An insert leaves both null: its line is as it was before
			// updates, and the apply writes the two columns' null either way.
			row = row.Int64Column("_revision", d.Revision).
				TimestampColumn("_update_time", time.UnixMicro(d.UpdateTime))
		}
		err := row.At(ctx, time.UnixMicro(d.EventTime))
		if err != nil {
			failItems(res, b, []int{i}, "ilp_client")
			continue
		}
		sent = append(sent, i)
		if s.cfg.flat {
			s.columns.add(cols)
		}
	}
	if len(sent) == 0 {
		s.senders.put(ctx, ls)
		return sent, nil
	}
	err = ls.Flush(ctx)
	if err != nil && s.cfg.transport == transportTCP {
		// A TCP connection that failed a write is broken.
		_ = ls.Close(ctx)
		return sent, err
	}
	s.senders.put(ctx, ls)
	return sent, err
}

// flatRow adds an event's flattened columns to its line.
func flatRow(row qdb.LineSender, cols []flat.Column) qdb.LineSender {
	for _, c := range cols {
		switch c.Kind {
		case flat.Text:
			row = row.StringColumn(c.Name, c.Str)
		case flat.Double:
			row = row.Float64Column(c.Name, c.Num)
		case flat.Boolean:
			row = row.BoolColumn(c.Name, c.Bool)
		}
	}
	return row
}

// failItems counts the rows of b at indexes idx as failed of kind.
func failItems(res *target.WriteResult, b target.Batch, idx []int, kind string) {
	for _, i := range idx {
		res.FailedSeqs = append(res.FailedSeqs, b.Docs[i].Seq)
	}
	res.Failed += len(idx)
	res.AddError(kind, len(idx))
}

// newSender makes one ILP sender: over HTTP one that shares the store's
// transport (its connections are kept alive), never retries by itself and
// never flushes by itself; over TCP one connection.
func (s *store) newSender(ctx context.Context) (qdb.LineSender, error) {
	if s.cfg.transport == transportTCP {
		return qdb.NewLineSender(ctx, qdb.WithTcp(), qdb.WithAddress(s.cfg.tcpAddr))
	}
	return qdb.NewLineSender(ctx, qdb.WithHttp(), qdb.WithAddress(s.cfg.httpAddr),
		qdb.WithHttpTransport(s.http),
		// Given, so that no sender asks the server (/settings) first.
		qdb.WithProtocolVersion(qdb.ProtocolVersion2),
		qdb.WithAutoFlushDisabled(),
		qdb.WithRetryTimeout(0),
		qdb.WithRequestTimeout(s.cfg.timeout))
}

// maxIdle is how many idle senders, and HTTP connections, the store
// keeps: more than writes are ever in flight at once in practice
// (--max-inflight, 16 by default), so that each keeps its connection for
// the next; beyond it a write opens a fresh one.
const maxIdle = 64

func newHTTPTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = maxIdle
	return t
}

// senderPool keeps idle senders: a sender serves one write at a time,
// and a TCP sender is a connection worth keeping.
type senderPool struct {
	idle   chan qdb.LineSender
	create func(context.Context) (qdb.LineSender, error)
}

func newSenderPool(create func(context.Context) (qdb.LineSender, error)) *senderPool {
	return &senderPool{idle: make(chan qdb.LineSender, maxIdle), create: create}
}

func (p *senderPool) get(ctx context.Context) (qdb.LineSender, error) {
	select {
	case ls := <-p.idle:
		return ls, nil
	default:
	}
	ls, err := p.create(ctx)
	if err != nil {
		return nil, fmt.Errorf("ILP sender: %w", err)
	}
	return ls, nil
}

func (p *senderPool) put(ctx context.Context, ls qdb.LineSender) {
	select {
	case p.idle <- ls:
	default:
		_ = ls.Close(ctx)
	}
}

func (p *senderPool) close() {
	for {
		select {
		case ls := <-p.idle:
			_ = ls.Close(context.Background())
		default:
			return
		}
	}
}
