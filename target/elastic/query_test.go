package elastic

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/query/querytest"
	"github.com/freshbench/freshbench/target"
)

func TestServerQueries(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		tg := openTest(t, s, target.Options{Settings: map[string]string{"refresh_interval": "200ms"}})
		if err := tg.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		querytest.Check(t, tg, "4444")
	})
}

// An index that freshbench did not create maps strings as text, on which
// a term query misses; SetupQueries must refuse it and say what to do.
func TestServerQueriesNeedTheMapping(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		ctx := context.Background()
		tg := openTest(t, s, target.Options{})
		// Writing to a missing index creates it with dynamic mapping.
		if _, err := tg.Write(ctx, target.Batch{Generator: "5", Docs: []target.Document{doc("d", "5", 0, `,"emails":["a@b.c"],"company":"x","tags":["t"]`)}}); err != nil {
			t.Fatal(err)
		}
		err := tg.SetupQueries(ctx)
		if err == nil || !strings.Contains(err.Error(), "recreate it") {
			t.Fatalf("setup queries on a dynamically mapped index: %v, want an error that says to recreate it", err)
		}
		t.Logf("refused: %v", err)
		// What the message advises works.
		u := &url.URL{Scheme: s.product, Host: tg.cfg.host, Path: "/" + tg.Index()}
		again, err := open(ctx, u, target.Options{Recreate: true}, os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		defer again.Close()
		if err := again.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		if err := again.SetupQueries(ctx); err != nil {
			t.Fatalf("setup queries after --recreate: %v", err)
		}
	})
}
