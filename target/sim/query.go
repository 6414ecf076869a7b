package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*Target)(nil)

// SetupQueries has nothing to prepare.
func (t *Target) SetupQueries(context.Context) error { return nil }

// Query answers after QueryDelay, with unbounded concurrency, and, with a
// query cost and a capacity, once the one queue it shares with the writes
// has done its share of work. The simulated database keeps no payload: it
// answers newest-N from the events it holds, and every other kind with no
// row.
func (t *Target) Query(ctx context.Context, q target.Query) (int, error) {
	if err := sleep(ctx, t.occupy(t.cfg.QueryCost)); err != nil {
		return 0, err
	}
	if err := t.query(ctx); err != nil {
		return 0, err
	}
	if q.Kind != target.QueryNewest {
		return 0, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return min(q.Limit, len(t.visible(q.Value, time.Now()))), nil
}

// QueryText describes q; nothing is sent anywhere.
func (t *Target) QueryText(q target.Query) string {
	return fmt.Sprintf("sim %s %q limit %d (answered after query_delay=%s)", q.Kind, q.Value, q.Limit, t.cfg.QueryDelay)
}

// Sample returns nothing: the simulated database keeps no documents.
func (t *Target) Sample(context.Context, int) ([][]byte, error) { return nil, nil }
