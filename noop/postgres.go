package noop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// postgres answers PostgreSQL's wire protocol (version 3.0) for the
// statements freshbench's postgres target sends: the simple and extended
// query protocols, pipelines, COPY FROM STDIN in binary, transactions.
// Any user is let in without a password, and TLS is declined. A statement
// it does not understand is refused with SQLSTATE 0A000 rather than
// answered with a guess; a write to a table that was not created fails
// as it would on PostgreSQL (42P01).
type postgres struct {
	store   *store
	version string
	pid     atomic.Uint32

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

func newPostgres(version string) *postgres {
	return &postgres{store: newStore(), version: version, conns: map[net.Conn]bool{}}
}

// serve accepts connections until ln is closed.
func (p *postgres) serve(ln net.Listener) {
	for {
		nc, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			time.Sleep(10 * time.Millisecond) // out of descriptors, say: try again
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			nc.Close()
			return
		}
		p.conns[nc] = true
		p.wg.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			p.session(nc)
			p.mu.Lock()
			delete(p.conns, nc)
			p.mu.Unlock()
		}()
	}
}

// close stops accepting, closes every connection and waits for them.
func (p *postgres) close(ln net.Listener) error {
	err := ln.Close()
	p.mu.Lock()
	p.closed = true
	for nc := range p.conns {
		nc.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// session serves one connection until it ends: any read or write error,
// a connection dropped in the middle of a message included, ends only
// this session.
func (p *postgres) session(nc net.Conn) {
	defer nc.Close()
	be := pgproto3.NewBackend(nc, nc)
	if !p.startup(be, nc) {
		return
	}
	s := &conn{p: p, be: be, stmts: map[string]*statement{}, portals: map[string]*portal{}, tx: 'I'}
	for {
		msg, err := be.Receive()
		if err != nil {
			return
		}
		if !s.handle(msg) {
			return
		}
	}
}

// startup answers the startup packet: no TLS, no password.
func (p *postgres) startup(be *pgproto3.Backend, nc net.Conn) bool {
	for {
		msg, err := be.ReceiveStartupMessage()
		if err != nil {
			return false
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			if _, err := nc.Write([]byte{'N'}); err != nil {
				return false
			}
		case *pgproto3.StartupMessage:
			if m.ProtocolVersion != pgproto3.ProtocolVersion30 {
				be.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0})
			}
			be.Send(&pgproto3.AuthenticationOk{})
			for _, ps := range []pgproto3.ParameterStatus{
				{Name: "server_version", Value: p.version},
				{Name: "server_encoding", Value: "UTF8"},
				{Name: "client_encoding", Value: "UTF8"},
				{Name: "DateStyle", Value: "ISO, MDY"},
				{Name: "integer_datetimes", Value: "on"},
				{Name: "standard_conforming_strings", Value: "on"},
				{Name: "TimeZone", Value: "UTC"},
				{Name: "application_name", Value: m.Parameters["application_name"]},
			} {
				be.Send(&ps)
			}
			pid := p.pid.Add(1)
			be.Send(&pgproto3.BackendKeyData{ProcessID: pid, SecretKey: binary.BigEndian.AppendUint32(nil, pid)})
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
			return be.Flush() == nil
		default:
			// A cancel request: nothing runs long enough to cancel.
			return false
		}
	}
}

// pgError is an error the server reports to the client.
type pgError struct{ code, msg string }

func (e *pgError) Error() string { return e.msg + " (SQLSTATE " + e.code + ")" }

func errorf(code, format string, a ...any) *pgError {
	return &pgError{code: code, msg: fmt.Sprintf(format, a...)}
}

// conn is one session's state.
type conn struct {
	p       *postgres
	be      *pgproto3.Backend
	stmts   map[string]*statement
	portals map[string]*portal
	tx      byte // 'I' idle, 'T' in a transaction, 'E' in a failed one
	skip    bool // an extended-protocol error: ignore messages until Sync
	copyBuf []byte
	vals    [][]byte // a row being sent
	scratch []byte
}

// portal is a bound statement: its parameters decoded into what it needs.
type portal struct {
	st      *statement
	formats []int16 // of the result columns
	gen     string
	ids     []string
	limit   int64 // -1: none
	w       *write
}

// handle serves one message and reports whether the session goes on.
func (c *conn) handle(msg pgproto3.FrontendMessage) bool {
	switch m := msg.(type) {
	case *pgproto3.Query:
		c.simple(m.String)
		return c.ready()
	case *pgproto3.Sync:
		c.skip = false
		return c.ready()
	case *pgproto3.Flush:
		return c.be.Flush() == nil
	case *pgproto3.Terminate:
		return false
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		return true // outside COPY the protocol ignores them
	}
	if c.skip {
		return true
	}
	var err *pgError
	switch m := msg.(type) {
	case *pgproto3.Parse:
		err = c.parse(m)
	case *pgproto3.Bind:
		err = c.bind(m)
	case *pgproto3.Describe:
		err = c.describe(m)
	case *pgproto3.Execute:
		err = c.execute(m)
	case *pgproto3.Close:
		if m.ObjectType == 'S' {
			delete(c.stmts, m.Name)
		} else {
			delete(c.portals, m.Name)
		}
		c.be.Send(&pgproto3.CloseComplete{})
	default:
		err = errorf("08P01", "freshbench noop does not serve %T messages", msg)
	}
	if err != nil {
		c.fail(err)
		c.skip = true
	}
	return true
}

func (c *conn) ready() bool {
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.tx})
	return c.be.Flush() == nil
}

// fail sends err; a transaction it happens in is failed.
func (c *conn) fail(err *pgError) {
	c.be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: err.code, Message: err.msg})
	if c.tx == 'T' {
		c.tx = 'E'
	}
}

// prepare classifies one statement of sql.
func (c *conn) prepare(sql string, toks []token) (*statement, *pgError) {
	st, err := parseStatement(sql, toks)
	if err != nil {
		return nil, errorf("0A000", "%v", err)
	}
	return st, c.check(st)
}

// check refuses what PostgreSQL would refuse before running st: a
// statement in a failed transaction, a table that does not exist.
func (c *conn) check(st *statement) *pgError {
	if c.tx == 'E' && st.kind != stmtCommit && st.kind != stmtRollback {
		return errorf("25P02", "current transaction is aborted, commands ignored until end of transaction block")
	}
	if st.table != "" && st.kind != stmtCreate && st.kind != stmtDrop && !c.p.store.exists(st.table) {
		return errorf("42P01", "relation %q does not exist", st.table)
	}
	return nil
}

// simple serves a simple query: each of its statements in turn, up to
// the first error.
func (c *conn) simple(sql string) {
	toks, err := tokenize(sql)
	if err != nil {
		c.fail(errorf("42601", "%v", err))
		return
	}
	parts := splitStatements(toks)
	if len(parts) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	for _, part := range parts {
		st, perr := c.prepare(sql, part)
		if perr == nil && len(st.params) > 0 {
			perr = errorf("42P02", "there is no parameter $1")
		}
		if perr == nil {
			if st.kind == stmtCopy {
				perr = c.copyIn(st)
			} else {
				if len(st.cols) > 0 {
					c.be.Send(c.rowDescription(st, nil))
				}
				perr = c.run(&portal{st: st, limit: -1})
			}
		}
		if perr != nil {
			c.fail(perr)
			return
		}
	}
}

func (c *conn) parse(m *pgproto3.Parse) *pgError {
	toks, err := tokenize(m.Query)
	if err != nil {
		return errorf("42601", "%v", err)
	}
	parts := splitStatements(toks)
	if len(parts) > 1 {
		return errorf("42601", "cannot insert multiple commands into a prepared statement")
	}
	var part []token
	if len(parts) == 1 {
		part = parts[0]
	}
	st, perr := c.prepare(m.Query, part)
	if perr != nil {
		return perr
	}
	for i, oid := range m.ParameterOIDs {
		if oid != 0 && i < len(st.params) {
			st.params[i] = oid
		}
	}
	c.stmts[m.Name] = st
	c.be.Send(&pgproto3.ParseComplete{})
	return nil
}

func (c *conn) describe(m *pgproto3.Describe) *pgError {
	var st *statement
	var formats []int16
	if m.ObjectType == 'S' {
		st = c.stmts[m.Name]
		if st == nil {
			return errorf("26000", "prepared statement %q does not exist", m.Name)
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: st.params})
	} else {
		pt := c.portals[m.Name]
		if pt == nil {
			return errorf("34000", "portal %q does not exist", m.Name)
		}
		st, formats = pt.st, pt.formats
	}
	if len(st.cols) == 0 {
		c.be.Send(&pgproto3.NoData{})
		return nil
	}
	c.be.Send(c.rowDescription(st, formats))
	return nil
}

func (c *conn) rowDescription(st *statement, formats []int16) *pgproto3.RowDescription {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(st.cols))}
	for i, col := range st.cols {
		size := int16(-1)
		switch col.oid {
		case oidInt8:
			size = 8
		case oidInt4, oidVoid:
			size = 4
		}
		rd.Fields[i] = pgproto3.FieldDescription{Name: []byte(col.name), DataTypeOID: col.oid, DataTypeSize: size, TypeModifier: -1, Format: formatOf(formats, i)}
	}
	return rd
}

// formatOf is the format code of item i: none given means text, one
// given applies to all.
func formatOf(codes []int16, i int) int16 {
	switch {
	case len(codes) == 0:
		return pgproto3.TextFormat
	case len(codes) == 1:
		return codes[0]
	case i < len(codes):
		return codes[i]
	}
	return pgproto3.TextFormat
}

func (c *conn) bind(m *pgproto3.Bind) *pgError {
	st := c.stmts[m.PreparedStatement]
	if st == nil {
		return errorf("26000", "prepared statement %q does not exist", m.PreparedStatement)
	}
	if len(m.Parameters) != len(st.params) {
		return errorf("08P01", "bind message supplies %d parameters, but prepared statement %q requires %d", len(m.Parameters), m.PreparedStatement, len(st.params))
	}
	pt := &portal{st: st, formats: append([]int16(nil), m.ResultFormatCodes...), limit: -1}
	param := func(i int) (value []byte, binary bool) {
		return m.Parameters[i], formatOf(m.ParameterFormatCodes, i) == pgproto3.BinaryFormat
	}
	if st.genParam >= 0 {
		v, _ := param(st.genParam)
		pt.gen = string(v)
	}
	if st.limitParam >= 0 {
		v, bin := param(st.limitParam)
		n, err := intValue(v, bin)
		if err != nil {
			return errorf("22P02", "LIMIT: %v", err)
		}
		pt.limit = n
	}
	if st.idsParam >= 0 {
		v, bin := param(st.idsParam)
		if !bin {
			return errorf("0A000", "freshbench noop reads array parameters in binary format only")
		}
		if _, err := arrayElems(v, func(_ int, _ uint32, e []byte) error {
			pt.ids = append(pt.ids, string(e))
			return nil
		}); err != nil {
			return errorf("22P03", "_id array: %v", err)
		}
	}
	if st.kind == stmtInsert {
		w, err := c.insertRows(st, param)
		if err != nil {
			return err
		}
		pt.w = w
	}
	c.portals[m.DestinationPortal] = pt
	c.be.Send(&pgproto3.BindComplete{})
	return nil
}

// insertRows reads the rows an INSERT's parameters carry, into a write
// of its own (the parameters' memory is reused by the next message).
func (c *conn) insertRows(st *statement, param func(int) ([]byte, bool)) (*write, *pgError) {
	rs := newRows(c.p.store.wantsSamples(st.table))
	for col, p := range st.insertArgs {
		name := st.insertCols[col]
		v, bin := param(p)
		if !st.unnest {
			if err := rs.set(0, name, v, st.params[p], bin); err != nil {
				return nil, errorf("22P02", "%s: %v", name, err)
			}
			continue
		}
		if !bin {
			return nil, errorf("0A000", "freshbench noop reads array parameters in binary format only")
		}
		if _, err := arrayElems(v, func(i int, oid uint32, e []byte) error { return rs.set(i, name, e, oid, true) }); err != nil {
			return nil, errorf("22P02", "%s: %v", name, err)
		}
	}
	return rs.done(), nil
}

func (c *conn) execute(m *pgproto3.Execute) *pgError {
	pt := c.portals[m.Portal]
	if pt == nil {
		return errorf("34000", "portal %q does not exist", m.Portal)
	}
	if m.MaxRows != 0 {
		return errorf("0A000", "freshbench noop does not return rows in parts (Execute with a row limit)")
	}
	if pt.st.kind == stmtCopy {
		return errorf("0A000", "freshbench noop serves COPY in the simple query protocol only")
	}
	if err := c.check(pt.st); err != nil {
		return err
	}
	return c.run(pt)
}

// run executes a bound statement: its rows, then its command tag.
func (c *conn) run(pt *portal) *pgError {
	var tag string
	switch pt.st.kind {
	case stmtEmpty:
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	case stmtBegin, stmtCommit, stmtRollback:
		tag = c.transaction(pt.st)
	case stmtCreate, stmtDrop, stmtCommand, stmtInsert:
		tag = c.change(pt)
	default:
		var err *pgError
		if tag, err = c.query(pt); err != nil {
			return err
		}
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
	return nil
}

// transaction moves the connection's transaction status and returns the
// command tag: a COMMIT of a failed transaction rolls it back.
func (c *conn) transaction(st *statement) string {
	switch st.kind {
	case stmtBegin:
		if c.tx == 'I' {
			c.tx = 'T'
		}
	case stmtCommit:
		tag := st.tag
		if c.tx == 'E' {
			tag = "ROLLBACK"
		}
		c.tx = 'I'
		return tag
	case stmtRollback:
		c.tx = 'I'
	}
	return st.tag
}

// change runs a statement that changes the store (or nothing), returning
// its command tag; an insert sends its RETURNING rows.
func (c *conn) change(pt *portal) string {
	st, store := pt.st, c.p.store
	switch st.kind {
	case stmtCreate:
		store.ensure(st.table)
	case stmtDrop:
		store.drop(st.table)
	case stmtInsert:
		n := len(pt.w.events)
		store.record(st.table, pt.w, n)
		if len(st.cols) > 0 {
			for i := range pt.w.events {
				c.sendEvent(st, pt, &pt.w.events[i])
			}
		}
		return "INSERT 0 " + strconv.Itoa(n)
	}
	return st.tag
}

// query sends a query's rows and returns its command tag.
func (c *conn) query(pt *portal) (string, *pgError) {
	st, store := pt.st, c.p.store
	switch st.kind {
	case stmtFreshness:
		if v, ok := store.newest(st.table, pt.gen); ok {
			c.sendInt(pt, v)
		} else {
			c.sendRow(nil)
		}
		return "SELECT 1", nil
	case stmtCount:
		n := store.countAll(st.table)
		if st.genParam >= 0 {
			n = store.count(st.table, pt.gen)
		}
		c.sendInt(pt, n)
		return "SELECT 1", nil
	case stmtIDs:
		ids := store.visible(st.table, pt.gen, pt.ids)
		for _, id := range ids {
			c.sendRow([]byte(id))
		}
		return "SELECT " + strconv.Itoa(len(ids)), nil
	case stmtSeqs:
		n, err := c.sendSeqs(pt)
		return "SELECT " + strconv.Itoa(n), err
	case stmtSample:
		limit := keptSamples
		if pt.limit >= 0 {
			limit = int(min(pt.limit, keptSamples))
		}
		docs := store.samples(st.table, limit)
		for _, d := range docs {
			c.sendText(pt, 0, d.doc)
		}
		return "SELECT " + strconv.Itoa(len(docs)), nil
	case stmtNoRows:
		return "SELECT 0", nil
	case stmtOneRow:
		return c.sendOneRow(pt), nil
	}
	return "", errorf("0A000", "freshbench noop cannot run this statement here")
}

// sendSeqs streams the generator's seqs, flushing as it goes instead of
// holding a large answer, and returns how many it sent.
func (c *conn) sendSeqs(pt *portal) (int, *pgError) {
	n := 0
	for _, sp := range c.p.store.seqs(pt.st.table, pt.gen) {
		for v := sp.lo; v < sp.hi; v++ {
			c.sendInt(pt, v)
			if n++; n%8192 == 0 {
				if err := c.be.Flush(); err != nil {
					return n, errorf("08006", "send rows: %v", err)
				}
			}
		}
	}
	return n, nil
}

// sendOneRow answers a statement of one fixed value (the server's version
// its own) and returns its tag: SHOW for a text setting.
func (c *conn) sendOneRow(pt *portal) string {
	st := pt.st
	v := st.value
	if st.cols[0].name == "server_version" {
		v = c.p.version
	}
	c.sendText(pt, 0, []byte(v))
	if st.tag != "" {
		return st.tag
	}
	if st.cols[0].oid == oidText {
		return "SHOW"
	}
	return "SELECT 1"
}

func (c *conn) sendRow(v []byte) {
	c.vals = append(c.vals[:0], v)
	c.be.Send(&pgproto3.DataRow{Values: c.vals})
}

// sendInt sends a one-column row of an integer in the column's format.
func (c *conn) sendInt(pt *portal, v int64) {
	c.scratch = appendInt(c.scratch[:0], pt.st.cols[0].oid, formatOf(pt.formats, 0) == pgproto3.BinaryFormat, v)
	c.sendRow(c.scratch)
}

// sendText sends a one-column row of text or JSON in column i's format.
func (c *conn) sendText(pt *portal, i int, v []byte) {
	c.scratch = c.scratch[:0]
	if pt.st.cols[i].oid == oidJSONB && formatOf(pt.formats, i) == pgproto3.BinaryFormat {
		c.scratch = append(c.scratch, 1) // jsonb's binary format version
	}
	c.scratch = append(c.scratch, v...)
	c.sendRow(c.scratch)
}

// sendEvent sends the RETURNING columns of an inserted row.
func (c *conn) sendEvent(st *statement, pt *portal, e *event) {
	c.vals = c.vals[:0]
	c.scratch = c.scratch[:0]
	var ends []int
	for i, col := range st.cols {
		bin := formatOf(pt.formats, i) == pgproto3.BinaryFormat
		switch col.name {
		case "_seq":
			c.scratch = appendInt(c.scratch, col.oid, bin, e.seq)
		case "_event_time":
			c.scratch = appendInt(c.scratch, col.oid, bin, e.time)
		case "generator_identifier":
			c.scratch = append(c.scratch, e.gen...)
		}
		ends = append(ends, len(c.scratch))
	}
	start := 0
	for _, end := range ends {
		c.vals = append(c.vals, c.scratch[start:end])
		start = end
	}
	c.be.Send(&pgproto3.DataRow{Values: c.vals})
}

func appendInt(dst []byte, oid uint32, bin bool, v int64) []byte {
	switch {
	case !bin:
		return strconv.AppendInt(dst, v, 10)
	case oid == oidInt4:
		return appendUint32(dst, uint32(v))
	}
	return appendUint32(appendUint32(dst, uint32(v>>32)), uint32(v))
}

func appendUint32(dst []byte, v uint32) []byte {
	return append(dst, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// copyIn serves COPY … FROM STDIN BINARY: the rows arrive in CopyData
// messages until CopyDone.
func (c *conn) copyIn(st *statement) *pgError {
	formats := make([]uint16, len(st.copyCols))
	for i := range formats {
		formats[i] = pgproto3.BinaryFormat
	}
	c.be.Send(&pgproto3.CopyInResponse{OverallFormat: pgproto3.BinaryFormat, ColumnFormatCodes: formats})
	if err := c.be.Flush(); err != nil {
		return errorf("08006", "send: %v", err)
	}
	buf := c.copyBuf[:0]
	defer func() { c.copyBuf = buf[:0] }()
	for done := false; !done; {
		msg, err := c.be.Receive()
		if err != nil {
			return errorf("08006", "COPY interrupted: %v", err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			buf = append(buf, m.Data...)
		case *pgproto3.CopyDone:
			done = true
		case *pgproto3.CopyFail:
			return errorf("57014", "COPY from stdin failed: %s", m.Message)
		case *pgproto3.Flush, *pgproto3.Sync:
		default:
			return errorf("08P01", "unexpected message type %T during COPY from stdin", msg)
		}
	}
	w, n, err := c.copyRows(st, buf)
	if err != nil {
		return errorf("22P04", "COPY: %v", err)
	}
	c.p.store.record(st.table, w, n)
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte("COPY " + strconv.Itoa(n))})
	return nil
}

var copySignature = []byte("PGCOPY\n\xff\r\n\x00")

// copyRows reads PostgreSQL's binary COPY format.
func (c *conn) copyRows(st *statement, data []byte) (*write, int, error) {
	rest, ok := bytes.CutPrefix(data, copySignature)
	if !ok || len(rest) < 8 {
		return nil, 0, errors.New("file signature not recognized")
	}
	ext := int(binary.BigEndian.Uint32(rest[4:8]))
	if len(rest) < 8+ext {
		return nil, 0, errors.New("header extension cut short")
	}
	rest = rest[8+ext:]
	rs := newRows(c.p.store.wantsSamples(st.table))
	row := 0
	// The trailer (-1) is optional, as PostgreSQL reads it: pgx sends none.
	for len(rest) > 0 {
		if len(rest) < 2 {
			return nil, 0, errors.New("unexpected end of data")
		}
		fields := int16(binary.BigEndian.Uint16(rest))
		rest = rest[2:]
		if fields == -1 {
			break
		}
		if int(fields) != len(st.copyCols) {
			return nil, 0, fmt.Errorf("row field count is %d, expected %d", fields, len(st.copyCols))
		}
		for _, name := range st.copyCols {
			if len(rest) < 4 {
				return nil, 0, errors.New("unexpected end of data")
			}
			l := int32(binary.BigEndian.Uint32(rest))
			rest = rest[4:]
			var v []byte
			if l >= 0 {
				if int(l) > len(rest) {
					return nil, 0, errors.New("unexpected end of data")
				}
				v, rest = rest[:l], rest[l:]
			}
			if err := rs.set(row, name, v, typeOfColumn(name), true); err != nil {
				return nil, 0, fmt.Errorf("row %d, column %s: %w", row+1, name, err)
			}
		}
		row++
	}
	return rs.done(), row, nil
}

// rows gathers the events of written rows, column by column, into a write
// that owns its memory.
type rows struct {
	w       write
	prevGen []byte
	samples bool
	ids     []string
	docs    [][]byte
}

func newRows(samples bool) *rows { return &rows{samples: samples} }

func (r *rows) event(i int) *event {
	for len(r.w.events) <= i {
		r.w.events = append(r.w.events, event{})
	}
	return &r.w.events[i]
}

// set books column name of row i: v in the format of a value of type oid,
// binary or text.
func (r *rows) set(i int, name string, v []byte, oid uint32, bin bool) error {
	switch name {
	case "_id":
		if i == 0 {
			r.w.firstID = bytes.Clone(v)
		}
		if r.samples && i < keptSamples {
			r.ids = append(r.ids, string(v))
		}
	case "generator_identifier":
		if !bytes.Equal(v, r.prevGen) {
			r.prevGen = bytes.Clone(v)
		}
		r.event(i).gen = r.prevGen
	case "_event_time", "_seq":
		if v == nil {
			return nil
		}
		n, err := intValue(v, bin)
		if err != nil {
			return err
		}
		e := r.event(i)
		if name == "_seq" {
			e.seq, e.hasSeq = n, true
		} else {
			e.time, e.hasTime = n, true
		}
	case "doc":
		if r.samples && i < keptSamples && v != nil {
			if bin && oid == oidJSONB {
				if len(v) == 0 || v[0] != 1 {
					return errors.New("unsupported jsonb version number")
				}
				v = v[1:]
			}
			r.docs = append(r.docs, bytes.Clone(v))
		}
	}
	return nil
}

func (r *rows) done() *write {
	for i, d := range r.docs {
		id := ""
		if i < len(r.ids) {
			id = r.ids[i]
		}
		r.w.samples = append(r.w.samples, sample{id: id, doc: d})
	}
	return &r.w
}

// intValue decodes an integer parameter or field: 8 or 4 bytes in binary
// format, digits in text.
func intValue(v []byte, bin bool) (int64, error) {
	if !bin {
		return strconv.ParseInt(string(v), 10, 64)
	}
	switch len(v) {
	case 8:
		return int64(binary.BigEndian.Uint64(v)), nil
	case 4:
		return int64(int32(binary.BigEndian.Uint32(v))), nil
	}
	return 0, fmt.Errorf("an integer of %d bytes", len(v))
}

// arrayElems calls fn with each element of a one-dimensional array in
// binary format (nil for NULL) and returns how many there were.
func arrayElems(b []byte, fn func(i int, elemOID uint32, v []byte) error) (int, error) {
	if len(b) < 12 {
		return 0, errors.New("array header cut short")
	}
	dims := int32(binary.BigEndian.Uint32(b))
	oid := binary.BigEndian.Uint32(b[8:])
	if dims == 0 {
		return 0, nil
	}
	if dims != 1 || len(b) < 20 {
		return 0, fmt.Errorf("want a one-dimensional array, got %d dimensions", dims)
	}
	n := int(int32(binary.BigEndian.Uint32(b[12:])))
	rest := b[20:]
	for i := range n {
		if len(rest) < 4 {
			return i, errors.New("array cut short")
		}
		l := int32(binary.BigEndian.Uint32(rest))
		rest = rest[4:]
		var v []byte
		if l >= 0 {
			if int(l) > len(rest) {
				return i, errors.New("array cut short")
			}
			v, rest = rest[:l], rest[l:]
		}
		if err := fn(i, oid, v); err != nil {
			return i, err
		}
	}
	return n, nil
}
