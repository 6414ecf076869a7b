package elastic

import (
	"io"
	"net/http"
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
