package jsonapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type apiError struct{ msg string }

func (e *apiError) Error() string { return e.msg }

func client(timeout time.Duration) *Client {
	return &Client{HTTP: &http.Client{}, Timeout: timeout, Name: "db", Object: "t",
		ReadError: func(status int, body []byte) error {
			return &apiError{msg: http.StatusText(status) + ": " + string(body)}
		}}
}

// An answer is decoded; a failed one is the database's error, named by
// what was asked of which object, by method and URL; a request that
// outlasts its bound fails naming the bound.
func TestCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			if r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "no JSON", http.StatusBadRequest)
				return
			}
			w.Write([]byte(`{"a":1}`))
		case "/slow":
			time.Sleep(200 * time.Millisecond)
		default:
			http.Error(w, "no such thing", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	c := client(time.Second)
	var out struct{ A int }
	if err := c.Call(context.Background(), "read of", http.MethodPost, srv.URL+"/ok", map[string]int{"x": 1}, &out); err != nil || out.A != 1 {
		t.Errorf("%+v, %v; want a = 1", out, err)
	}
	err := c.Call(context.Background(), "read of", http.MethodGet, srv.URL+"/missing", nil, nil)
	var ae *apiError
	if !errors.As(err, &ae) || !strings.HasPrefix(err.Error(), "db read of t: GET 127.0.0.1:") || !strings.Contains(err.Error(), "Not Found: no such thing") {
		t.Errorf("%v; want the database's error, named", err)
	}
	c.Timeout = 50 * time.Millisecond
	if err := c.Call(context.Background(), "read of", http.MethodGet, srv.URL+"/slow", nil, nil); err == nil || !strings.Contains(err.Error(), "db read of t: no answer within 50ms") {
		t.Errorf("%v; want the bound named", err)
	}
	// A caller's deadline shorter than the request timeout is named as
	// the caller's (stop 44's CI read "no answer within 30s" of a request
	// its caller had bounded at 10 s).
	c.Timeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Call(ctx, "read of", http.MethodGet, srv.URL+"/slow", nil, nil); err == nil || !strings.Contains(err.Error(), "db read of t: no answer before the caller's deadline (the request timeout is 1m0s)") {
		t.Errorf("%v; want the caller's deadline named", err)
	}
}
