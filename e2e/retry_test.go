package e2e

import (
	"context"
	"fmt"
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

// retryTimeouts are the write timeouts retryCommitted tries in turn: the
// held attempt must commit and time out within one, and a re-send after
// the hold must be answered within it. A JVM on a busy machine answers a
// bulk request in seconds (seen: write latency p50 3.9 s), so the first
// that a quiet server meets is followed by longer ones.
var retryTimeouts = []time.Duration{300 * time.Millisecond, time.Second, 3 * time.Second, 10 * time.Second}

// retryCommitted writes one batch of 20 through a proxy that holds the
// answer to the message that commits it, longer than the write timeout.
// A server too slow to commit within the timeout, or to answer a re-send
// within it, does not meet the premise (retryUnmet): that is tried again
// on a fresh index or table with the next, longer timeout, saying why,
// before the test fails on it.
func retryCommitted(t *testing.T, raw string, settings map[string]string, trigger string, next int) {
	for i, timeout := range retryTimeouts {
		unmet, err := retryCommittedOnce(t, withName(t, raw, "retry"), settings, trigger, next, timeout)
		if err != nil {
			t.Fatal(err)
		}
		if unmet == "" {
			return
		}
		if i == len(retryTimeouts)-1 {
			t.Fatalf("write timeout %s: %s", timeout, unmet)
		}
		t.Logf("write timeout %s: %s; trying again with %s", timeout, unmet, retryTimeouts[i+1])
	}
}

// retryCommittedOnce is one try of retryCommitted with the given write
// timeout; the answer that commits is held for 10/3 of it. It returns why
// the try could not test the case (the server too slow for the timeout),
// or an error for what no server speed excuses.
func retryCommittedOnce(t *testing.T, raw string, settings map[string]string, trigger string, next int, timeout time.Duration) (unmet string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	p := startProxy(t, u.Host)
	defer p.down()
	u.Host = p.addr
	ctx := context.Background()
	tgt, err := all.Registry().Open(ctx, u.String(), target.Options{Recreate: true, RequestTimeout: requestTimeout, Settings: settings})
	if err != nil {
		return "", err
	}
	defer tgt.Close()
	if err := tgt.Setup(ctx); err != nil {
		return "", err
	}
	defer tgt.Teardown(context.WithoutCancel(ctx))
	gen := targettest.Generator(t)
	b := targettest.Batch(gen, 20, 0)
	// The answer to the first message that commits is held: the attempt
	// commits and times out; re-sends go on until one is answered.
	p.holdAfter(trigger, next, timeout*10/3)
	a := ingest.WriteBatch(ctx, tgt, b, timeout, 8)
	if p.fired() == 0 {
		return "", fmt.Errorf("the proxy never saw %q: the test held no answer", trigger)
	}
	if unmet := retryUnmet(a, 20); unmet != "" {
		return unmet, nil
	}
	if a.Acked != 20 || a.Failed != 0 || a.Retries == 0 {
		return "", fmt.Errorf("acknowledged %d, failed %d (%v), re-sends %d; want 20 acknowledged after at least one re-send", a.Acked, a.Failed, a.ErrorKinds, a.Retries)
	}
	var n int64
	waitFor(time.Minute, 200*time.Millisecond, func() bool { n, err = tgt.Count(ctx, gen); return err == nil && n == 20 })
	if n != 20 {
		return "", fmt.Errorf("the target holds %d events of the batch (%v), want each of the 20 once", n, err)
	}
	// Each re-send found the batch stored: the held attempt committed,
	// which is the case under test.
	if a.AckedOnRetry != 20 {
		return "", fmt.Errorf("%d of 20 acknowledged on a re-send that found them stored, want all", a.AckedOnRetry)
	}
	return "", nil
}

// retryUnmet says why an attempt at a batch of n through the held proxy
// could not test a re-send of a committed write, "" when it could: every
// re-send timed out (the server answered none within the timeout after
// the hold), or the batch was acknowledged with none of it found stored
// by a re-send and none stored twice (the held attempt had not committed
// when the client gave up, and the server dropped it). Any other
// failure, and events counted both ways, are defects: no server speed
// explains them.
func retryUnmet(a ingest.Attempt, n int) string {
	switch {
	case a.Failed == n && a.Acked == 0 && a.ErrorKinds["timeout"] == n:
		return fmt.Sprintf("all %d events failed by timeout after %d re-sends: the server answered no re-send within the timeout", n, a.Retries)
	case a.Acked == n && a.Failed == 0 && a.Retries > 0 && a.AckedOnRetry == 0:
		return "the batch was acknowledged, none of it found stored by a re-send: the held attempt had not committed within the timeout"
	}
	return ""
}

// A server too slow for the write timeout leaves the case untested, to
// be tried again with a longer one; what a defect does is a failure at
// once.
func TestRetryUnmet(t *testing.T) {
	for _, c := range []struct {
		name  string
		a     ingest.Attempt
		unmet bool
	}{
		{"every re-send timed out (slow server)", ingest.Attempt{Failed: 20, Retries: 8, ErrorKinds: map[string]int{"timeout": 20}}, true},
		{"held attempt had not committed (slow server)", ingest.Attempt{Acked: 20, Retries: 3}, true},
		{"tested", ingest.Attempt{Acked: 20, AckedOnRetry: 20, Retries: 3}, false},
		{"re-send refused as a duplicate (defect)", ingest.Attempt{Failed: 20, Retries: 3, ErrorKinds: map[string]int{"conflict": 20}}, false},
		{"part found stored (defect)", ingest.Attempt{Acked: 20, AckedOnRetry: 10, Retries: 3}, false},
		{"part failed (defect)", ingest.Attempt{Acked: 10, Failed: 10, Retries: 3, ErrorKinds: map[string]int{"timeout": 10}}, false},
	} {
		if got := retryUnmet(c.a, 20); (got != "") != c.unmet {
			t.Errorf("%s: retryUnmet(%+v) = %q; want unmet %v", c.name, c.a, got, c.unmet)
		}
	}
}
