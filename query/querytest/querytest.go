// Package querytest checks a target.Querier against documents whose
// answers are known: the contract each target's tests run against its
// real server.
package querytest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/workload"
)

// n is the number of documents Check writes; the expected answers below
// follow from it.
const n = 30

// buckets is the number of seconds that hold events of Documents: event
// i falls in the second (i+2)/4 of them (the last holds event n-1).
const buckets = (n-1+2)/4 + 1

// inSecond is where in its second an event falls: event i at microsecond
// inSecond[(i+2)%4], so every second but the first holds its first and
// last microsecond, its middle and its second microsecond, and the first
// only the last two (the earliest event is not on a whole second). An
// empty second lies between any two that hold events but the last three,
// which are consecutive (second, below): a bucket of two seconds merges
// two of those, whichever second it starts at. A bucket bounded anywhere
// but at whole seconds (rounded rather than floored, offset, aligned to
// the first event, another width), or an empty second returned as a
// bucket, changes the number of buckets.
var inSecond = [4]int64{0, 999_999, 500_000, 1}

// second is the second, counted from the first, that bucket b (0 …
// buckets-1) of Documents falls in: every other second, the last three
// consecutive.
func second(b int64) int64 { return 2*b - max(0, b-(buckets-3)) }

// Documents returns the n events of generator gen that Check queries.
// Event i has processBy pb<i%3>, the emails e<i%5> and all, company
// c<i%2>, the tags t0 and t<1+i%4>, each value suffixed with gen so that
// other tests' documents in a shared index never match, and an
// _event_time in the seconds of second, of those that ended just before
// now.
func Documents(gen string) target.Batch {
	b := target.Batch{Generator: gen}
	first := time.Now().Unix() - 2*buckets
	for i := range n {
		id := fmt.Sprintf("%s-%d", gen, i)
		at := (first+second(int64((i+2)/4)))*1_000_000 + inSecond[(i+2)%4]
		// %q quotes as JSON does for the plain ASCII used here.
		j := fmt.Sprintf(`{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":%d,"processBy":%q,"emails":[%q,%q],"company":%q,"tags":[%q,%q],"age":%d}`,
			id, at, gen, i, fmt.Sprintf("pb%d-%s", i%3, gen),
			fmt.Sprintf("e%d-%s@querytest.invalid", i%5, gen), "all-"+gen+"@querytest.invalid",
			fmt.Sprintf("c%d-%s", i%2, gen), "t0-"+gen, fmt.Sprintf("t%d-%s", 1+i%4, gen), 20+i)
		b.Docs = append(b.Docs, target.Document{ID: id, Generator: gen, Seq: int64(i), EventTime: at, JSON: []byte(j)})
	}
	return b
}

// Check sets up the queries, writes Documents(gen) to tgt, waits until a
// search sees them all, and checks that the database plans every shipped
// kind (query.CheckOwn), that each returns the rows the documents imply,
// that misses return none, that the query text shows the parameter, that
// the presets' restatements of the kinds return the same rows, and that
// Sample returns stored documents.
func Check(t *testing.T, tgt target.Target, gen string) {
	t.Helper()
	ctx := context.Background()
	q, ok := tgt.(target.Querier)
	if !ok {
		t.Fatalf("%s does not implement target.Querier", tgt.Name())
	}
	for i := range 2 { // idempotent
		if err := q.SetupQueries(ctx); err != nil {
			t.Fatalf("setup queries #%d: %v", i+1, err)
		}
	}
	b := Documents(gen)
	res, err := tgt.Write(ctx, b)
	if err != nil || res.Acknowledged != n {
		t.Fatalf("write: %+v %v", res, err)
	}
	waitVisible(t, tgt, gen)
	if err := query.CheckOwn(ctx, q, query.Config{Mix: shippedMix(), Limit: ShippedLimit}); err != nil {
		t.Errorf("the check before a run refuses a shipped kind: %v", err)
	}
	for _, c := range cases(gen) {
		checkQuery(t, tgt.Name(), q, c)
	}
	checkOwn(t, tgt.Name(), q, gen)
	checkSample(t, q)
}

// waitVisible waits until a search sees all n documents, for 2 min at
// most: a starved search engine's refreshes were seen 11.5 s late at the
// median, and a JVM starting a new index takes longer still.
func waitVisible(t *testing.T, tgt target.Target, gen string) {
	t.Helper()
	const wait = 2 * time.Minute
	deadline := time.Now().Add(wait)
	for {
		c, err := tgt.Count(context.Background(), gen)
		if err != nil {
			t.Fatal(err)
		}
		if c == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d documents visible after %s", c, n, wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// queryCase is a query and the rows Documents(gen) imply for it.
type queryCase struct {
	kind  target.QueryKind
	value string
	limit int
	want  int
}

// cases are the queries of every kind Check sends, hits and misses.
func cases(gen string) []queryCase {
	return []queryCase{
		{target.QueryPoint, "pb1-" + gen, 20, 10},
		{target.QueryPoint, "pb1-" + gen, 4, 4},
		{target.QueryPoint, "pb9-" + gen, 20, 0},
		{target.QueryArray, "e2-" + gen + "@querytest.invalid", 20, 6},
		{target.QueryArray, "all-" + gen + "@querytest.invalid", 50, n},
		{target.QueryArray, "all-" + gen + "@querytest.invalid", 20, 20},
		{target.QueryArray, "e2-" + gen, 20, 0}, // a prefix of a value is no member
		// c0 holds the even events: all have t0, those with i%4 == 0
		// have t1 (8 of them), the others t3 (7).
		{target.QueryAggregate, "c0-" + gen, 10, 3},
		{target.QueryAggregate, "c0-" + gen, 2, 2},
		{target.QueryAggregate, "c9-" + gen, 10, 0},
		{target.QueryNewest, gen, 7, 7},
		{target.QueryNewest, gen, 100, n},
		{target.QueryNewest, gen + "0", 10, 0},
		{target.QueryBucket, gen, 100, buckets},
		{target.QueryBucket, gen, 3, 3},
		{target.QueryBucket, gen + "0", 10, 0},
	}
}

// shippedMix is every shipped kind, weight 1.
func shippedMix() query.Mix {
	var m query.Mix
	for _, k := range target.QueryKinds() {
		m = append(m, query.Weighted{Kind: k, Weight: 1})
	}
	return m
}

// KindQuery is the shipped kind's query on family with the run's limit
// and its one parameter value.
func KindQuery(t testing.TB, family string, kind target.QueryKind, value any, limit int) target.Query {
	t.Helper()
	o, ok := query.Kind(kind)
	if !ok {
		t.Fatalf("%s is no shipped kind", kind)
	}
	s, err := o.Statement(family, limit, value)
	if err != nil {
		t.Fatal(err)
	}
	return target.Query{Kind: kind, Statement: s}
}

// checkQuery checks that a shipped kind's query on family returns the
// rows wanted and that its text shows the parameter.
func checkQuery(t *testing.T, family string, q target.Querier, c queryCase) {
	t.Helper()
	query := KindQuery(t, family, c.kind, c.value, c.limit)
	rows, err := q.Query(context.Background(), query)
	if err != nil {
		t.Errorf("%s %q limit %d: %v", c.kind, c.value, c.limit, err)
		return
	}
	if rows != c.want {
		t.Errorf("%s %q limit %d: %d rows, want %d; query:\n%s", c.kind, c.value, c.limit, rows, c.want, q.QueryText(query))
	}
	if text := q.QueryText(query); !strings.Contains(text, c.value) {
		t.Errorf("%s: query text does not show the parameter %q:\n%s", c.kind, c.value, text)
	}
}

// checkSample checks that Sample returns stored documents.
func checkSample(t *testing.T, q target.Querier) {
	t.Helper()
	docs, err := q.Sample(context.Background(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 5 {
		t.Fatalf("sample of 5: %d documents", len(docs))
	}
	for _, d := range docs {
		var f struct {
			Generator string `json:"generator_identifier"`
		}
		if err := json.Unmarshal(d, &f); err != nil || f.Generator == "" {
			t.Errorf("sampled document %q: %v, generator %q", d, err, f.Generator)
		}
	}
}

// Restated are the shipped presets' queries of one's own that restate a
// shipped kind, by preset and query name, with that kind: qps-20k-own
// writes the 20K-QPS study's two.
var Restated = map[string]map[string]target.QueryKind{
	"qps-20k-own": {"by-worker": target.QueryPoint, "by-email": target.QueryArray},
}

// ShippedLimit is the limit the end-to-end tests hold the presets'
// restatements to the shipped kinds at: the default limit.
const ShippedLimit = 10

// checkOwn holds every preset query of Restated to the rows Documents
// imply for each case of the kind it restates, as checkQuery holds the
// kind: hits, misses and limits, the case's limit given as the run's
// limit (the texts' :limit or "{{limit}}"). Every query of a preset must
// be in Restated and have a text for family, so that none goes
// unchecked, draw its parameter from the field the kind draws from, and
// pass the check before a run (query.CheckOwn).
func checkOwn(t *testing.T, family string, q target.Querier, gen string) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(Restated)) {
		p, err := workload.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		// The check before a run passes them: the database plans each.
		mix := make(query.Mix, len(p.Queries))
		for i, own := range p.Queries {
			mix[i] = query.Weighted{Kind: target.QueryKind(own.Name), Weight: 1}
		}
		if err := query.CheckOwn(context.Background(), q, query.Config{Mix: mix, Own: p.Queries, Limit: ShippedLimit}); err != nil {
			t.Errorf("%s: the check before a run refuses its queries: %v", name, err)
		}
		for _, own := range p.Queries {
			kind, ok := Restated[name][own.Name]
			if !ok {
				t.Errorf("%s: query %s restates no kind querytest knows; add it to Restated", name, own.Name)
				continue
			}
			if len(own.Params) != 1 || own.Params[0].Field != query.KindField(kind) {
				t.Errorf("%s: query %s has params %+v; the shipped %s kind draws one value, from %s", name, own.Name, own.Params, kind, query.KindField(kind))
			}
			for _, c := range cases(gen) {
				if c.kind != kind {
					continue
				}
				s, err := own.Statement(family, c.limit, c.value)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					break
				}
				query := target.Query{Kind: target.QueryKind(own.Name), Statement: s}
				got, err := q.Query(context.Background(), query)
				if err != nil {
					t.Errorf("%s: %s %q: %v", name, own.Name, c.value, err)
					continue
				}
				if got != c.want {
					t.Errorf("%s: %s %q limit %d: %d rows, want %d (as the shipped %s kind); query:\n%s", name, own.Name, c.value, c.limit, got, c.want, kind, q.QueryText(query))
				}
			}
		}
	}
}
