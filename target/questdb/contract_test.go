package questdb

import (
	"context"
	"testing"
	"time"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

// suspended is a WAL-table target whose Setup suspends the WAL apply, as
// Elasticsearch's contract run sets refresh_interval -1: the suite then
// sees that an acknowledged write is not visible before Searchable, which
// resumes the apply, waits for it and suspends it again, as a refresh
// makes visible what was written before it and nothing after.
type suspended struct{ walStore }

func (s suspended) Setup(ctx context.Context) error {
	if err := s.store.Setup(ctx); err != nil {
		return err
	}
	return s.exec(ctx, "suspend WAL of", `ALTER TABLE `+s.tbl+` SUSPEND WAL`)
}

func TestTargetContract(t *testing.T) {
	serverURL(t)
	bad := []string{
		"questdb://127.0.0.1:1/qdb?table=bad-name",
		"questdb://127.0.0.1:1/qdb?tabel=x",
		"questdb://127.0.0.1:1/qdb?wal=maybe",
		"questdb:///qdb",
	}
	// An event time before 1970 is a row QuestDB refuses ("designated
	// timestamp before 1970-01-01 is not allowed").
	failItem := func(b *target.Batch, i int) { b.Docs[i].EventTime = -1 }
	// Over TCP there are no item-level failures to report (write.go), so
	// the contract is run over HTTP, which takes WAL tables only;
	// TestTCP covers the other transport.
	targettest.Run(t, targettest.Harness{
		Open:     func(t *testing.T) target.Target { return suspended{openTarget(t, nil).(walStore)} },
		FailItem: failItem,
		Searchable: func(ctx context.Context, tgt target.Target) error {
			s := tgt.(suspended).store
			if err := s.exec(ctx, "resume WAL of", `ALTER TABLE `+s.tbl+` RESUME WAL`); err != nil {
				return err
			}
			if err := waitApplied(ctx, s, 30*time.Second); err != nil {
				return err
			}
			// Or the updates written after a Searchable would be applied
			// before the suite checks that they are not seen yet.
			return s.exec(ctx, "suspend WAL of", `ALTER TABLE `+s.tbl+` SUSPEND WAL`)
		},
		Register: Register,
		BadURLs:  bad,
	})
}
