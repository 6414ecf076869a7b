package e2e

import (
	"context"
	"net/url"
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
	p := startProxy(t, u.Host)
	u.Host = p.addr
	if u.Scheme == "postgres" || u.Scheme == "postgresql" {
		q := u.Query()
		q.Set("table", "fb_e2e_retry")
		u.RawQuery = q.Encode()
	} else {
		u.Path = "/fb-e2e-retry"
	}
	ctx := context.Background()
	tgt, err := all.Registry().Open(ctx, u.String(), target.Options{Recreate: true, RequestTimeout: 30 * time.Second, Settings: settings})
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
