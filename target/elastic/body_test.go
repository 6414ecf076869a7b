package elastic

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
)

// A body is recycled only when every reader the transport got from it,
// the first and those of GetBody, is closed: a transport can still be
// writing a body whose response already came.
func TestBodyRecycledOnlyWhenClosed(t *testing.T) {
	var bodies bodyPool
	body := bodies.get(16)
	body.b = append(body.b, "0123456789"...)
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/", nil)
	if err != nil {
		t.Fatal(err)
	}
	body.attach(req)
	if req.ContentLength != 10 {
		t.Fatalf("content length %d, want 10", req.ContentLength)
	}
	again, err := req.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(again); err != nil || string(b) != "0123456789" {
		t.Fatalf("GetBody read %q, %v", b, err)
	}
	req.Body.Close()
	req.Body.Close() // twice: counted once
	bodies.put(body)
	if got := bodies.get(16); got == body {
		t.Fatal("body recycled while a reader of GetBody is open")
	}
	again.Close()
	if body.open.Load() != 0 {
		t.Fatalf("%d readers open after all were closed", body.open.Load())
	}
}

// countingConn counts the writes that reach the socket.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// postBodies posts n bodies of size bytes through a transport that dials
// with wrap and returns the writes the socket saw, checking every body
// arrived at its length.
func postBodies(tb testing.TB, n, size int, wrap func(net.Conn) net.Conn) int64 {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil || n != int64(size) {
			http.Error(w, fmt.Sprintf("read %d bytes, %v", n, err), http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	var writes atomic.Int64
	var d net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(countingConn{c, &writes}), nil
	}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	body := &requestBody{b: bytes.Repeat([]byte("z"), size)}
	for range n {
		req, err := http.NewRequest(http.MethodPost, srv.URL, nil)
		if err != nil {
			tb.Fatal(err)
		}
		body.attach(req)
		res, err := client.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			tb.Fatalf("status %d", res.StatusCode)
		}
	}
	return writes.Load()
}

// A _bulk body goes to the socket in one write after the buffered
// headers, not through the transport's 32 KB copy buffer.
func TestBodyWrittenAtOnce(t *testing.T) {
	const n, size = 4, 500_000
	plain := postBodies(t, n, size, func(c net.Conn) net.Conn { return c })
	whole := postBodies(t, n, size, func(c net.Conn) net.Conn { return bodyConn{c} })
	t.Logf("writes per body: %d through the transport's copy, %d with bodyConn", plain/n, whole/n)
	if whole > 2*n {
		t.Fatalf("%d writes for %d bodies, want at most 2 each (headers, body)", whole, n)
	}

	// The targets' transport dials such connections.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tr, err := newHTTPTransport(config{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tr.DialContext(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(bodyConn); !ok {
		t.Fatalf("the transport dials a %T, want a bodyConn", c)
	}
}

func BenchmarkPostBody(b *testing.B) {
	for _, bc := range []struct {
		name string
		wrap func(net.Conn) net.Conn
	}{
		{"copy", func(c net.Conn) net.Conn { return c }},
		{"bodyConn", func(c net.Conn) net.Conn { return bodyConn{c} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(500_000)
			b.ReportAllocs()
			before := processCPU(b)
			postBodies(b, b.N, 500_000, bc.wrap)
			// Client and server share the process; CPU, not wall time,
			// is what the change saves (a single large write may wait).
			b.ReportMetric(float64(processCPU(b)-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

func processCPU(tb testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
