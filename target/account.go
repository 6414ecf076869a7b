package target

import (
	"context"

	"github.com/freshbench/freshbench/results"
)

// AccountReporter is implemented by targets whose server reports how its
// copies of the data take new writes: refreshes per shard copy
// (Elasticsearch, OpenSearch), the replication of each standby
// (PostgreSQL), the apply of each WAL table (QuestDB). The run records it
// at the start and the end of its measured phase, beside what it measured
// itself. The account is the database's own type; the run stores its
// tables, dated.
type AccountReporter interface {
	ServerAccount(ctx context.Context) (results.AccountSnapshot, error)
}

// AccountChecker is implemented by targets that hold their server's
// account of a run against freshbench's own figures of it (r, complete
// but for the account's findings): each check's verdict, with the
// figures. A check the figures cannot decide is results.NotYetKnown.
type AccountChecker interface {
	CheckAccount(a *results.Account, r *results.Result) []results.Finding
}
