package elastic

import (
	"bytes"
	"io"
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
