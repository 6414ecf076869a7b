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
// answers newest-N and the buckets per second from the events it holds
// (their _event_time), and every other kind with no row.
func (t *Target) Query(ctx context.Context, q target.Query) (int, error) {
	if q.Own != nil {
		return 0, fmt.Errorf("sim: query %s: the simulator runs no queries of your own", q.Kind)
	}
	if err := sleep(ctx, t.occupy(t.cfg.QueryCost)); err != nil {
		return 0, err
	}
	if err := t.query(ctx); err != nil {
		return 0, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch q.Kind {
	case target.QueryNewest:
		return min(q.Limit, len(t.visible(q.Value, time.Now()))), nil
	case target.QueryBucket:
		return seconds(t.visible(q.Value, time.Now()), q.Limit), nil
	}
	return 0, nil
}

// seconds counts the distinct seconds of _event_time among evs, up to
// limit: the rows of a bucket query, whichever seconds they are. Newest
// written first, so that a long history is not read once limit is met.
func seconds(evs []event, limit int) int {
	seen := map[int64]bool{}
	for i := len(evs) - 1; i >= 0 && len(seen) < limit; i-- {
		seen[evs[i].eventTime/1_000_000] = true
	}
	return len(seen)
}

// QueryText describes q; nothing is sent anywhere.
func (t *Target) QueryText(q target.Query) string {
	return fmt.Sprintf("sim %s %q limit %d (answered after query_delay=%s)", q.Kind, q.Value, q.Limit, t.cfg.QueryDelay)
}

// Sample returns nothing: the simulated database keeps no documents.
func (t *Target) Sample(context.Context, int) ([][]byte, error) { return nil, nil }
