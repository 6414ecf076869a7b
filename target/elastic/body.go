package elastic

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// requestBody is the body of one request. The transport reads it through
// readers it closes when done (a re-sent request gets a new one from
// GetBody), so the buffer may be reused once every reader is closed.
type requestBody struct {
	b    []byte
	open atomic.Int32 // readers handed out and not closed
}

// attach makes b req's body, with its length and GetBody, as
// http.NewRequest does for a *bytes.Reader.
func (b *requestBody) attach(req *http.Request) {
	req.ContentLength = int64(len(b.b))
	if len(b.b) == 0 {
		req.Body = http.NoBody
		return
	}
	req.Body = b.reader()
	req.GetBody = func() (io.ReadCloser, error) { return b.reader(), nil }
}

func (b *requestBody) reader() io.ReadCloser {
	b.open.Add(1)
	return &bodyReader{Reader: bytes.NewReader(b.b), body: b}
}

// bodyReader is one reading of a requestBody. The embedded *bytes.Reader
// keeps its WriteTo, so the transport writes the body in one call.
type bodyReader struct {
	*bytes.Reader
	body   *requestBody
	closed atomic.Bool
}

func (r *bodyReader) Close() error {
	if r.closed.CompareAndSwap(false, true) {
		r.body.open.Add(-1)
	}
	return nil
}

// bodyPool recycles _bulk bodies: each is about batch size × document
// size bytes, and a fresh one per request cost the page faults and
// zeroing of a large allocation, several percent of the driver's CPU.
type bodyPool struct{ p sync.Pool }

// get returns an empty body with room for size bytes.
func (bp *bodyPool) get(size int) *requestBody {
	b, _ := bp.p.Get().(*requestBody)
	if b == nil {
		b = new(requestBody)
	}
	if cap(b.b) < size {
		b.b = make([]byte, 0, size)
	}
	b.b = b.b[:0]
	return b
}

// put recycles b unless the transport may still read it: a request whose
// response came before its body was written can still be writing it.
// Such a body is left to the garbage collector.
func (bp *bodyPool) put(b *requestBody) {
	if b.open.Load() == 0 {
		bp.p.Put(b)
	}
}

// bodyConn hands a request body to the connection in one write. The
// transport copies a body of known length through an io.LimitedReader,
// which hides the body's WriteTo, so the copy went through a 32 KB buffer:
// a memmove of every byte and sixteen write calls per 500 KB _bulk body.
type bodyConn struct{ net.Conn }

func (c bodyConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if br, ok := lr.R.(*bodyReader); ok && int64(br.Len()) <= lr.N {
			n, err := br.WriteTo(c.Conn)
			lr.N -= n
			return n, err
		}
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r) // the struct hides this ReadFrom
}

// dialBodyConn wraps dial's connections in bodyConn.
func dialBodyConn(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return bodyConn{c}, nil
	}
}
