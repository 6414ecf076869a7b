package e2e

import (
	"bytes"
	"context"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
	"github.com/freshbench/freshbench/target/targettest"
)

// A write that the server committed but whose answer arrived after the
// client's timeout is re-sent; the re-send finds the events stored. That
// is a success: no event is counted failed, none is stored twice.
func TestRetryOfACommittedWrite(t *testing.T) {
	type variant struct {
		name     string
		settings map[string]string
		// trigger: the client message whose answer is held; the server
		// has committed when it answers it, or the next one after it.
		trigger string
		next    int
	}
	for _, s := range servers {
		variants := []variant{{"bulk", nil, "_bulk", 0}}
		if s.name == "postgres" {
			variants = []variant{
				// pgx first prepares the INSERT (the message with its text),
				// then executes it in the next message: the answer to that
				// one comes once committed.
				{"insert", map[string]string{"write_method": "insert"}, "insert into", 1},
				{"pipeline", map[string]string{"write_method": "pipeline"}, "insert into", 1},
				{"copy", map[string]string{"write_method": "copy"}, "commit", 0},
			}
		}
		for _, v := range variants {
			t.Run(s.name+"/"+v.name, func(t *testing.T) {
				retryCommitted(t, serverURL(t, s.name), v.settings, v.trigger, v.next)
			})
		}
	}
}

func retryCommitted(t *testing.T, raw string, settings map[string]string, trigger string, next int) {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := startHoldingProxy(t, u.Host)
	u.Host = p.addr
	if u.Scheme == "postgres" || u.Scheme == "postgresql" {
		q := u.Query()
		q.Set("table", "fb_e2e_retry")
		u.RawQuery = q.Encode()
	} else {
		u.Path = "/fb-e2e-retry"
	}
	ctx := context.Background()
	tgt, err := all.Registry().Open(ctx, u.String(), target.Options{Recreate: true, RequestTimeoutS: 30, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	if err := tgt.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer tgt.Teardown(context.WithoutCancel(ctx))
	gen := targettest.Generator(t)
	b := targettest.Batch(gen, 20, 0)
	// The answer to the first message that commits is held for a second:
	// the attempt commits and times out; re-sends go on until one is
	// answered.
	p.holdAfter(trigger, next, time.Second)
	a := ingest.WriteBatch(ctx, tgt, b, 300*time.Millisecond, 8)
	if p.fired() == 0 {
		t.Fatalf("the proxy never saw %q: the test held no answer", trigger)
	}
	if a.Acked != 20 || a.Failed != 0 || a.Retries == 0 {
		t.Fatalf("acknowledged %d, failed %d (%v), re-sends %d; want 20 acknowledged after at least one re-send", a.Acked, a.Failed, a.ErrorKinds, a.Retries)
	}
	var n int64
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if n, err = tgt.Count(ctx, gen); err == nil && n == 20 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n != 20 {
		t.Fatalf("the target holds %d events of the batch (%v), want each of the 20 once", n, err)
	}
	// Each re-send found the batch stored: the held attempt committed,
	// which is the case under test.
	if a.AckedOnRetry != 20 {
		t.Fatalf("%d of 20 acknowledged on a re-send that found them stored, want all: the first attempt did not commit, so the case was not tested", a.AckedOnRetry)
	}
}

// holdingProxy forwards loopback TCP connections and, while told to, holds
// every byte the server sends until the hold ends: what a client sees of
// a slow network after the server has done the work.
type holdingProxy struct {
	addr, upstream string
	mu             sync.Mutex
	until          time.Time
	trigger        []byte // a client message containing it arms the hold
	next           int    // …which starts with the next-th message after it
	armed          bool
	holdFor        time.Duration // how long
	holds          int
}

func startHoldingProxy(t *testing.T, upstream string) *holdingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &holdingProxy{addr: ln.Addr().String(), upstream: upstream}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	return p
}

// holdAfter arms the proxy: the next-th client message after the first
// that contains trigger (case-insensitive; 0: that one) holds the
// server's answers for d from then.
func (p *holdingProxy) holdAfter(trigger string, next int, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trigger, p.next, p.holdFor = []byte(strings.ToLower(trigger)), next, d
}

func (p *holdingProxy) fired() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.holds
}

// toServer copies the client's bytes, starting the hold on the trigger.
func (p *holdingProxy) toServer(s, c net.Conn) {
	defer s.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.mu.Lock()
			switch {
			case p.armed && p.next > 0:
				p.next--
			case p.trigger != nil && bytes.Contains(bytes.ToLower(buf[:n]), p.trigger):
				p.armed, p.trigger = true, nil
			}
			if p.armed && p.next == 0 {
				p.until, p.armed = time.Now().Add(p.holdFor), false
				p.holds++
			}
			p.mu.Unlock()
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *holdingProxy) forward(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer s.Close()
	go p.toServer(s, c)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			p.mu.Lock()
			wait := time.Until(p.until)
			p.mu.Unlock()
			if wait > 0 {
				time.Sleep(wait)
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
