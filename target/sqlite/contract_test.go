package sqlite

import (
	"context"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

func TestTargetContract(t *testing.T) {
	targettest.Run(t, targettest.Harness{
		Open: func(t *testing.T) target.Target {
			u := &url.URL{Scheme: "sqlite", Path: filepath.Join(t.TempDir(), "contract.db")}
			tgt, err := Open(context.Background(), u, target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return tgt
		},
		// A second row with the same _id is skipped by ON CONFLICT.
		FailItem: func(b *target.Batch, i int) { b.Docs[i].ID = b.Docs[0].ID },
		Register: Register,
		BadURLs:  []string{"sqlite://", "sqlite:///tmp/x.db?table=1bad", "sqlite:///tmp/x.db?table=a-b", "sqlite:///tmp/x.db?synchronus=off"},
	})
}
