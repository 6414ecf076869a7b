// Package jsonapi is what the targets of databases with JSON-over-HTTP
// APIs (Druid, Pinot) share: requests bounded by the request timeout,
// answers decoded, and errors in the database's words, named by what
// was asked of which object.
package jsonapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/freshbench/freshbench/target/internal/bound"
)

// Client sends the requests of one target.
type Client struct {
	HTTP    *http.Client
	Timeout time.Duration // bound on each request
	Name    string        // the database, as errors begin: "druid"
	Object  string        // what the target's requests are about (a table), as errors name it
	// ReadError makes the error of an answer whose status is not 2xx
	// from its status and (the first 64 KiB of) its body, in the
	// database's words.
	ReadError func(status int, body []byte) error
}

// Call sends one request and decodes its JSON answer into out (nil: the
// answer is read and dropped), bounded by the request timeout; what
// names it in an error ("setup of").
func (c *Client) Call(ctx context.Context, what, method, u string, body any, out any) error {
	ctx, cancel := c.Request(ctx)
	defer cancel()
	resp, err := c.Send(ctx, method, u, body)
	if err != nil {
		return c.Fail(ctx, what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s %s: %s %s: %w", c.Name, what, c.Object, method, strings.TrimPrefix(u, "http://"), c.Failed(resp))
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
	} else {
		err = json.NewDecoder(resp.Body).Decode(out)
	}
	if err != nil {
		return c.Fail(ctx, what, err)
	}
	return nil
}

// Send sends one request with body as JSON (nil: none) and returns the
// answer, whatever its status.
func (c *Client) Send(ctx context.Context, method, u string, body any) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.HTTP.Do(req)
}

// Failed is the error of a failed answer, by ReadError.
func (c *Client) Failed(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return c.ReadError(resp.StatusCode, b)
}

// Request bounds one request, made with ctx, by the request timeout.
func (c *Client) Request(ctx context.Context) (context.Context, context.CancelFunc) {
	return bound.Request(ctx, c.Timeout)
}

// Fail wraps the failure of a request bounded by Request: a timeout is
// named as the bound it hit, the request timeout or the caller's
// deadline.
func (c *Client) Fail(ctx context.Context, what string, err error) error {
	switch {
	case bound.RequestTimedOut(ctx):
		return fmt.Errorf("%s %s %s: no answer within %s: %w", c.Name, what, c.Object, c.Timeout, err)
	case bound.CallersDeadline(ctx):
		return fmt.Errorf("%s %s %s: no answer before the caller's deadline (the request timeout is %s): %w", c.Name, what, c.Object, c.Timeout, err)
	}
	return fmt.Errorf("%s %s %s: %w", c.Name, what, c.Object, err)
}
