package elastic

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/target"
)

func TestParseTimeValue(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"1s": time.Second, "200ms": 200 * time.Millisecond, "2m": 2 * time.Minute, "1d": 24 * time.Hour, "500micros": 500 * time.Microsecond,
		"-1": 0, "": 0, "1x": 0, "s": 0, "0s": 0, "1.5s": 0,
	} {
		got, ok := parseTimeValue(in)
		if got != want || ok != (want > 0) {
			t.Errorf("parseTimeValue(%q) = %s, %v; want %s, %v", in, got, ok, want, want > 0)
		}
	}
}

// On an index with refreshes disabled, a write the server acknowledged is
// stored but no search shows it until Refresh; after it, every one.
func TestServerForcedRefresh(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		ctx := context.Background()
		tg := openTest(t, s, target.Options{Settings: map[string]string{"refresh_interval": "-1"}})
		if err := tg.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		const n, gen = 30, "3333333333333333333"
		var docs []target.Document
		for i := range n {
			docs = append(docs, doc(fmt.Sprintf("%s-%d", gen, i), gen, int64(i), ""))
		}
		res, err := tg.Write(ctx, target.Batch{Generator: gen, Docs: docs})
		if err != nil || res.Acknowledged != n {
			t.Fatalf("write: %+v, %v", res, err)
		}
		if c, err := tg.Count(ctx, gen); err != nil || c != 0 {
			t.Fatalf("count before the refresh = %d, %v; want 0 (refreshes disabled)", c, err)
		}
		if err := tg.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if c, err := tg.Count(ctx, gen); err != nil || c != n {
			t.Errorf("count after the refresh = %d, %v; want %d", c, err, n)
		}
	})
}

// A refresh that fails says where and what: the target, the request, and
// the server's error (here, an index that does not exist).
func TestServerRefreshFails(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		tg := openTest(t, s, target.Options{}) // never set up: no index
		err := tg.Refresh(context.Background())
		if err == nil || !strings.Contains(err.Error(), "refresh: status 404") || !strings.Contains(err.Error(), tg.Index()) {
			t.Errorf("refresh of a missing index: %v; want the index named and status 404", err)
		}
	})
}
