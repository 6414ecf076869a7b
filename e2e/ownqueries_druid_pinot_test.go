package e2e

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
	"github.com/freshbench/freshbench/query/querytest"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/workload"
)

// Queries of one's own run on Druid and Pinot as on the other databases:
// beside an ingest through Kafka, with their parameters drawn from the
// events the run wrote, and their rows hold against the audit.

// ownQueries are the test's queries of its own: a lookup by _id, and the
// _ids of one generator, whose rows count its events.
var ownQueries = []query.Own{
	{Name: "by-id", Where: "test:1", Params: []query.Param{{Name: "id", Field: "_id", Recent: true}},
		Texts: map[string]string{
			"druid": `SELECT "_id", "_seq" FROM {table} WHERE "_id" = :id`,
			"pinot": `SELECT "_id", "_seq" FROM {table} WHERE "_id" = :id LIMIT 10`,
		}},
	{Name: "of-generator", Where: "test:2", Params: []query.Param{{Name: "g", Field: "generator_identifier"}},
		Texts: map[string]string{
			"druid": `SELECT "_id" FROM {table} WHERE "generator_identifier" = :g`,
			// Pinot returns 10 rows unless told more.
			"pinot": `SELECT "_id" FROM {table} WHERE "generator_identifier" = :g LIMIT 1000000`,
		}},
}

// Through Kafka into Druid, queries of one's own run beside the ingest,
// answer without error, and count what the audit found.
func TestViaKafkaDruidOwnQueries(t *testing.T) {
	testOwnQueriesViaKafka(t, newDruidPipeline(t, "ownq").tgt, "druid")
}

// Through Kafka into Pinot, the same.
func TestViaKafkaPinotOwnQueries(t *testing.T) {
	testOwnQueriesViaKafka(t, newPinotPipeline(t, "ownq", nil), "pinot")
}

// testOwnQueriesViaKafka runs ownQueries beside an ingest of 300 events/s
// for 8 s into p, of family, and then holds them, and the presets',
// against truth:
//   - beside the ingest, every query is answered, and a lookup by _id
//     finds at most one row (every event is one row);
//   - after the drain, the _ids of the run's generator number exactly the
//     events the audit found of it, each once;
//   - every shipped kind finds rows for a stored event's value and none
//     for a miss;
//   - the presets' restatements of the shipped kinds (qps-20k-own's
//     by-worker and by-email) give the rows of the kinds they restate,
//     for values the table holds and for a miss;
//   - a value holding quotes and SQL of its own is a value: it matches
//     nothing (on Pinot it is written in as a literal);
//   - SQL the database cannot run fails in its words.
func testOwnQueriesViaKafka(t *testing.T, p target.Target, family string) {
	ctx := context.Background()
	cfg := pipelineConfig(300, 8*time.Second)
	cfg.Queries = &query.Config{
		Mix: query.Mix{{Kind: "by-id", Weight: 3}, {Kind: "of-generator", Weight: 1}}, Own: ownQueries,
		QPS: 10, MaxInflight: 4, Limit: 10, Timeout: 10 * time.Second, Settle: time.Second, Seed: 7,
	}
	q := p.(target.Querier)
	if err := query.CheckOwn(ctx, q, *cfg.Queries); err != nil {
		t.Fatal(err)
	}
	res := run(t, p, cfg)
	checkAccounting(t, cfg, res)
	checkExactlyOnce(t, res)

	qs := res.Target().Queries
	if qs == nil || len(qs.Kinds) != 2 {
		t.Fatalf("queries %+v, want the two of the test", qs)
	}
	for _, k := range qs.Kinds {
		t.Logf("%s: %d queries, %d rows, %d empty, %d failed, latency p50 %.1f ms p99 %.1f ms; %s",
			k.Kind, k.Queries, k.Rows, k.Empty, k.Failed, k.Latency.P50Ms, k.Latency.P99Ms, k.Text)
		if k.Queries == 0 || k.Failed != 0 {
			t.Errorf("%s: %d queries, %d failed (%v); want answers", k.Kind, k.Queries, k.Failed, k.Errors)
		}
		if k.Kind == "by-id" && k.Rows > k.Queries {
			t.Errorf("by-id: %d rows of %d lookups; an _id is one row at most", k.Rows, k.Queries)
		}
		if k.Kind == "of-generator" && k.Rows == 0 {
			t.Errorf("of-generator: no rows in %d queries; the run's freshness polls saw its events", k.Queries)
		}
	}

	rows := func(o query.Own, kind string, limit int, args ...any) int {
		t.Helper()
		s, err := o.Statement(family, limit, args...)
		if err != nil {
			t.Fatal(err)
		}
		n, err := q.Query(ctx, target.Query{Kind: target.QueryKind(kind), Statement: s})
		if err != nil {
			t.Fatalf("%s %v: %v", o.Name, args, err)
		}
		return n
	}
	// After the drain: the generator's rows are the events the audit
	// found, each once (checkExactlyOnce).
	for _, c := range res.Target().Completeness {
		n := rows(ownQueries[1], "of-generator", querytest.ShippedLimit, c.Generator)
		t.Logf("after the drain, of-generator %s: %d rows; the audit found %d of %d acknowledged", c.Generator, n, c.Visible, c.Acknowledged)
		if int64(n) != c.Visible || c.Visible != c.Acknowledged {
			t.Errorf("of-generator %s: %d rows; the audit found %d of %d acknowledged", c.Generator, n, c.Visible, c.Acknowledged)
		}
	}

	// The presets' queries restate the shipped kinds (querytest.Restated):
	// qps-20k-own point and array, each at the default limit and at 2,
	// for values the table holds and for a miss.
	presets := map[string]*workload.File{}
	for _, name := range slices.Sorted(maps.Keys(querytest.Restated)) {
		p, err := workload.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		presets[name] = p
	}
	preset := presets["qps-20k-own"]
	// Druid's SQL shows a field as a column only after the broker's
	// schema refresh, seconds after the event is visible (seen: a sample
	// of __time, _id, generator_identifier, _seq and _event_time alone):
	// the sample is taken again until the fields are columns.
	var evs []sampledEvent
	if !waitFor(2*time.Minute, time.Second, func() bool {
		docs, err := q.Sample(ctx, 3)
		evs, err = sampledEvents(docs, err)
		return err == nil
	}) {
		_, err := sampledEvents(q.Sample(ctx, 3))
		t.Fatalf("sample, 2 minutes after the drain: %v", err)
	}
	for _, ev := range evs {
		// Every shipped kind finds a stored event's value and not a
		// value never written.
		for _, kind := range target.QueryKinds() {
			for v, hit := range map[string]bool{ev[kind]: true, "nobody-" + ev[kind]: false} {
				n, err := q.Query(ctx, querytest.KindQuery(t, family, kind, v, querytest.ShippedLimit))
				if err != nil || (n > 0) != hit {
					t.Errorf("shipped %s %q: %d rows, %v; want rows: %v", kind, v, n, err, hit)
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(presets)) {
			for _, own := range presets[name].Queries {
				kind, ok := querytest.Restated[name][own.Name]
				if !ok {
					t.Fatalf("%s: query %s restates no kind querytest knows", name, own.Name)
				}
				hit := ev[kind]
				for _, v := range []string{hit, "nobody-" + hit} {
					// The run's limit is the texts' :limit: at 2 a hit is
					// cut where it is not at the default.
					for _, limit := range []int{querytest.ShippedLimit, 2} {
						want, err := q.Query(ctx, querytest.KindQuery(t, family, kind, v, limit))
						if err != nil {
							t.Fatal(err)
						}
						if got := rows(own, own.Name, limit, v); got != want {
							t.Errorf("%s: %s %q limit %d: %d rows, the shipped %s kind %d", name, own.Name, v, limit, got, kind, want)
						}
					}
				}
			}
		}
	}

	// A value that would end its literal early, were it not written in as
	// one, matches nothing; unquoted, it would match every event.
	worker := preset.Queries[presetIndex(t, preset.Queries, "by-worker")]
	for _, v := range []string{`' OR "processBy" <> '`, `x'' OR ''1''=''1`, `\' OR 1=1 --`} {
		if n := rows(worker, "by-worker", querytest.ShippedLimit, v); n != 0 {
			t.Errorf("by-worker %q: %d rows, want none", v, n)
		}
	}

	// SQL the database cannot run fails in its words, as a failed query.
	bad := query.Own{Name: "bad", Where: "test:3", Params: []query.Param{{Name: "id", Field: "_id"}},
		Texts: map[string]string{family: `SELECT "no_such_column" FROM {table} WHERE "_id" = :id LIMIT 1`}}
	s, err := bad.Statement(family, 1, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Query(ctx, target.Query{Kind: "bad", Statement: s}); err == nil || !strings.HasPrefix(err.Error(), family+" query bad on ") || !strings.Contains(strings.ToLower(err.Error()), "no_such_column") {
		t.Errorf("a query of an unknown column: %v; want the database's error naming the column", err)
	} else {
		t.Logf("a query of an unknown column: %v", err)
	}
	// Druid plans a query before it runs (EXPLAIN PLAN FOR, parameters
	// null): the check refuses the unknown column and passes the presets'.
	if family == "druid" {
		bcfg := query.Config{Mix: query.Mix{{Kind: "bad", Weight: 1}}, Own: []query.Own{bad}}
		if err := query.CheckOwn(ctx, q, bcfg); err == nil || !strings.Contains(err.Error(), "druid cannot run it: ") {
			t.Errorf("check of a query of an unknown column: %v; want it refused", err)
		}
		for name, p := range presets {
			pcfg := query.Config{Own: p.Queries, Limit: querytest.ShippedLimit}
			for _, o := range p.Queries {
				pcfg.Mix = append(pcfg.Mix, query.Weighted{Kind: target.QueryKind(o.Name), Weight: 1})
			}
			if err := query.CheckOwn(ctx, q, pcfg); err != nil {
				t.Errorf("check of %s's queries: %v", name, err)
			}
		}
	}
}

// presetIndex is the index of the query named name among qs.
func presetIndex(t *testing.T, qs []query.Own, name string) int {
	t.Helper()
	for i, o := range qs {
		if o.Name == name {
			return i
		}
	}
	t.Fatalf("no query %s", name)
	return -1
}

// sampledEvent is a stored event's value for each shipped kind, from the
// field the kind draws from (query.KindField): what the restatements'
// checks look up.
type sampledEvent map[target.QueryKind]string

// sampledEvents reads a sample of stored events, each of which must have
// every field the kinds draw from: a string, or an array of strings, of
// which the last element is taken.
func sampledEvents(docs [][]byte, err error) ([]sampledEvent, error) {
	if err != nil || len(docs) == 0 {
		return nil, fmt.Errorf("%d documents, %v", len(docs), err)
	}
	evs := make([]sampledEvent, len(docs))
	for i, d := range docs {
		var doc map[string]any
		if err := json.Unmarshal(d, &doc); err != nil {
			return nil, fmt.Errorf("sampled event %s: %w", d, err)
		}
		evs[i] = sampledEvent{}
		for _, kind := range target.QueryKinds() {
			field := query.KindField(kind)
			v := doc[field]
			if a, ok := v.([]any); ok && len(a) > 0 {
				v = a[len(a)-1]
			}
			s, ok := v.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("sampled event %s: %s is %v; want a string, or strings, for the %s kind", d, field, doc[field], kind)
			}
			evs[i][kind] = s
		}
	}
	return evs, nil
}
