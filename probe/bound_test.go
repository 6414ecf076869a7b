package probe

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/freshbench/freshbench/stats"
)

// A client whose error wraps the context's cause (as an HTTP client's
// can when its request is cancelled) must not make
// the bound's error wrap itself: errors.Is would walk the chain forever,
// under the lock of the loop that asked (seen: an isolation run on a
// loaded two-node cluster hung, the ingest blocked on the probes' lock
// for minutes while errors.Is spun).
func TestBoundErrorWrapsNoCycle(t *testing.T) {
	err := withBound(context.Background(), time.Millisecond, func() string { return "probe query of generator g" }, func(ctx context.Context) error {
		<-ctx.Done()
		return fmt.Errorf("search: %w", context.Cause(ctx))
	})
	done := make(chan string, 1)
	go func() { done <- stats.ErrorKind(err) }()
	select {
	case kind := <-done:
		var bound *boundError
		if !errors.As(err, &bound) || kind != "timeout" {
			t.Errorf("error %v of kind %q: want the poll's bound, a timeout", err, kind)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("classifying the bound's error never returns: its chain wraps itself")
	}
}
