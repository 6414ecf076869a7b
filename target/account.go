package target

import (
	"context"

	"github.com/freshbench/freshbench/results"
)

// AccountReporter is implemented by targets whose server reports how its
// copies of the data take new writes: refreshes per shard copy
// (Elasticsearch, OpenSearch), the replication of each standby
// (PostgreSQL). The run records it at the start and the end of its
// measured phase, beside what it measured itself. ServerAccount leaves
// the account's At to the caller.
type AccountReporter interface {
	ServerAccount(ctx context.Context) (results.ServerAccount, error)
}
