package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/target"
)

var _ target.Querier = (*Target)(nil)

// SetupQueries has nothing to prepare.
func (t *Target) SetupQueries(context.Context) error { return nil }

// simText is what a query's text may ask of the simulated database, which
// keeps no payload, only each event's generator and _event_time. A
// parameter is written :name in the query's sim text ($1 … once bound),
// the run's limit :limit:
//
//	newest :generator :limit  the generator's visible events, at most the limit
//	bucket :generator :limit  the seconds of their _event_time, at most the limit
//	none :param …             no row: no event holds a payload to match
const simText = "newest :generator :limit, bucket :generator :limit, or none :param (the simulator keeps only each event's generator and _event_time)"

// simQuery is a parsed sim text.
type simQuery struct {
	verb  string
	arg   int // newest, bucket: the parameter holding the generator
	limit int
}

// parse reads a sim text with nargs parameters bound.
func parse(text string, nargs int) (simQuery, error) {
	f := strings.Fields(text)
	bad := func() (simQuery, error) {
		return simQuery{}, fmt.Errorf("%q is no text the simulator runs; want %s", text, simText)
	}
	param := func(w string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimPrefix(w, "$"))
		return n - 1, strings.HasPrefix(w, "$") && err == nil && n >= 1 && n <= nargs
	}
	if len(f) == 0 {
		return bad()
	}
	q := simQuery{verb: f[0]}
	switch q.verb {
	case "none":
		for _, w := range f[1:] {
			if _, ok := param(w); !ok {
				return bad()
			}
		}
		return q, nil
	case "newest", "bucket":
		if len(f) != 3 {
			return bad()
		}
		var ok bool
		if q.arg, ok = param(f[1]); !ok {
			return bad()
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 {
			return bad()
		}
		q.limit = n
		return q, nil
	}
	return bad()
}

// Query answers q's sim text after QueryDelay, with unbounded
// concurrency, and, with a query cost and a capacity, once the one queue
// it shares with the writes has done its share of work: newest-N and the
// buckets per second from the events it holds, and none with no row. A
// text that starts with explain is read and not answered, at once.
func (t *Target) Query(ctx context.Context, q target.Query) (int, error) {
	text, explain := strings.CutPrefix(q.Statement.Text, "explain ")
	sq, err := parse(text, len(q.Statement.Args))
	if err != nil {
		return 0, fmt.Errorf("sim query %s: %w", q.Kind, err)
	}
	if explain {
		return 0, nil
	}
	if err := sleep(ctx, t.occupy(t.cfg.QueryCost)); err != nil {
		return 0, err
	}
	if err := t.query(ctx); err != nil {
		return 0, err
	}
	if sq.verb == "none" {
		return 0, nil
	}
	gen, _ := q.Statement.Args[sq.arg].(string) // a generator is a string; any other value holds no event
	t.mu.Lock()
	defer t.mu.Unlock()
	evs := t.visible(gen, time.Now())
	if sq.verb == "newest" {
		return min(sq.limit, len(evs)), nil
	}
	return seconds(evs, sq.limit), nil
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
	return target.StatementText(q.Statement, "") + fmt.Sprintf("\n-- answered after query_delay=%s", t.cfg.QueryDelay)
}

// Sample returns nothing: the simulated database keeps no documents.
func (t *Target) Sample(context.Context, int) ([][]byte, error) { return nil, nil }
