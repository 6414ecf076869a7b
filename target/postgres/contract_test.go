package postgres

import (
	"context"
	"testing"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

func TestTargetContract(t *testing.T) {
	serverURL(t)
	for _, method := range WriteMethods() {
		t.Run(method, func(t *testing.T) {
			targettest.Run(t, targettest.Harness{
				Open: func(t *testing.T) target.Target {
					u := withTable(t, serverURL(t), "fbt_"+randomHex(t, 6))
					tgt, err := Open(context.Background(), u, target.Options{Settings: map[string]string{"write_method": method}})
					if err != nil {
						t.Fatal(err)
					}
					return tgt
				},
				// A second row with the same _id is skipped by ON CONFLICT.
				FailItem: func(b *target.Batch, i int) { b.Docs[i].ID = b.Docs[0].ID },
				Register: Register,
				BadURLs: []string{
					"postgres://u@127.0.0.1:1/db?table=bad-name",
					"postgresql://u@127.0.0.1:1/db?sslmode=bogus",
				},
			})
		})
	}
}
