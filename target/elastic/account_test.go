package elastic

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

// These tests run against the two-node clusters of
// scripts/elasticsearch-cluster.sh and scripts/opensearch-cluster.sh:
//
//	FRESHBENCH_TEST_ES_CLUSTER_URLS=$(scripts/elasticsearch-cluster.sh url) \
//	FRESHBENCH_TEST_OS_CLUSTER_URLS=$(scripts/opensearch-cluster.sh url) \
//	go test -run Cluster ./target/elastic/

var testClusters = []testServer{
	{Elasticsearch, Elasticsearch, "FRESHBENCH_TEST_ES_CLUSTER_URLS", "scripts/elasticsearch-cluster.sh", "Elasticsearch 8."},
	{OpenSearch, OpenSearch, "FRESHBENCH_TEST_OS_CLUSTER_URLS", "scripts/opensearch-cluster.sh", "OpenSearch 2."},
}

// clusterURLs returns the URLs of a cluster's two nodes, node 1 first, or
// skips.
func clusterURLs(t *testing.T, s testServer) []*url.URL {
	t.Helper()
	raw := testenv.URL(t, s.env, s.script)
	var out []*url.URL
	for _, r := range strings.Split(raw, ",") {
		u, err := url.Parse(r)
		if err != nil {
			t.Fatalf("%s: %v", s.env, err)
		}
		out = append(out, u)
	}
	if len(out) != 2 {
		t.Fatalf("%s=%s: want the URLs of two nodes", s.env, raw)
	}
	return out
}

// openCluster opens node 1 of a cluster on a fresh index with one replica,
// sets it up and waits until the replica is allocated (green); the index
// is deleted when the test ends.
func openCluster(t *testing.T, s testServer, settings map[string]string) *Target {
	t.Helper()
	u := *clusterURLs(t, s)[0]
	u.Path = fmt.Sprintf("/freshbench-test-%s-%d", strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())), time.Now().UnixNano())
	settings["replicas"] = "1"
	tg, err := open(context.Background(), &u, target.Options{Settings: settings}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := tg.Teardown(ctx); err != nil {
			t.Errorf("teardown: %v", err)
		}
		tg.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tg.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	waitGreen(t, tg)
	return tg
}

// waitGreen waits until the index's replica is allocated. A starved
// cluster can take longer than one wait (seen: not green within 30 s)
// while it still allocates: the wait goes on, saying why, for as long as
// the cluster reports a shard of the index initializing or unassigned,
// up to three rounds of 50 s.
func waitGreen(t *testing.T, tg *Target) {
	t.Helper()
	const rounds = 3
	for i := 1; ; i++ {
		var health struct {
			Status       string `json:"status"`
			Initializing int    `json:"initializing_shards"`
			Unassigned   int    `json:"unassigned_shards"`
			PendingTasks int    `json:"number_of_pending_tasks"`
		}
		// A wait that times out answers 408 with the health all the same.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := tg.do(ctx, http.MethodGet, "/_cluster/health/"+tg.ip, "wait_for_status=green&timeout=50s", nil)
		cancel()
		if err == nil && !is2xx(res.status) && res.status != http.StatusRequestTimeout {
			err = serverError(res.status, res.body)
		}
		if err == nil {
			err = json.Unmarshal(res.body, &health)
		}
		if err == nil && health.Status == "green" {
			return
		}
		state := fmt.Sprintf("health %q (%d shards initializing, %d unassigned, %d cluster tasks pending), %v",
			health.Status, health.Initializing, health.Unassigned, health.PendingTasks, err)
		if err != nil || i == rounds || health.Initializing+health.Unassigned == 0 {
			t.Fatalf("index %s with one replica: %s; want green", tg.Index(), state)
		}
		t.Logf("index %s with one replica: %s after %d × 50 s: the cluster is still allocating; waiting again", tg.Index(), state, i)
	}
}

// stream writes small batches to targets until stopped, and counts the
// batches each acknowledged.
type stream struct {
	wg    sync.WaitGroup
	acked map[*Target]*atomic.Int64
}

// writeUntil writes small batches to each target until stop is closed.
func writeUntil(t *testing.T, stop <-chan struct{}, tgs ...*Target) *stream {
	s := &stream{acked: map[*Target]*atomic.Int64{}}
	for _, tg := range tgs {
		acked := new(atomic.Int64)
		s.acked[tg] = acked
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for seq := int64(0); ; seq += 5 {
				var docs []target.Document
				for i := range int64(5) {
					docs = append(docs, doc(fmt.Sprintf("acct-%d", seq+i), "acct", seq+i, ""))
				}
				if _, err := tg.Write(context.Background(), target.Batch{Generator: "acct", Docs: docs}); err != nil {
					t.Errorf("write to %s: %v", tg.Index(), err)
					return
				}
				acked.Add(1)
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
	}
	return s
}

// account takes the server's account of tg, dated when it was asked for.
func account(t *testing.T, tg *Target) *results.ServerAccount {
	t.Helper()
	return timedAccount(t, tg).ServerAccount
}

// readAccount is an account and when its reply came: the server read its
// counters between the account's At (the request's send) and then.
type readAccount struct {
	*results.ServerAccount
	Replied time.Time
}

// timedAccount takes the server's account of tg, with when it came.
func timedAccount(t *testing.T, tg *Target) readAccount {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	at := time.Now()
	a, err := tg.ServerAccount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return readAccount{&results.ServerAccount{At: at, Tables: a.AccountTables()}, time.Now()}
}

// mostRefreshes is the most refreshes a copy that refreshes no more often
// than every interval can show between two accounts. The counters were
// read somewhere in each request's round trip, so the window between the
// readings is at most from the first's send to the second's reply: the
// upper bound is the one the claim needs (the two sends' difference
// understates the window by the second reading's round trip).
func mostRefreshes(before, after readAccount, interval time.Duration) int64 {
	return int64(after.Replied.Sub(before.At)/interval) + 1
}

// copiesOf reads the shard copies of an account as the results file has
// them.
func copiesOf(t *testing.T, a *results.ServerAccount) []Copy {
	t.Helper()
	c, err := Copies(a)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// refreshesOf reads the refreshes of each copy between two accounts.
func refreshesOf(t *testing.T, before, after *results.ServerAccount) []CopyRefreshes {
	t.Helper()
	r, err := Refreshes(results.NewAccount(before, after))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The account has one entry per shard copy, the primary and the replica on
// the cluster's two nodes, and its refresh counts are the server's: while
// documents stream in, a copy refreshes about once per refresh_interval
// (never more often), and not at all with refreshes turned off.
func TestClusterServerAccountRefreshes(t *testing.T) {
	t.Parallel() // indices of its own, beside the other server tests
	for _, s := range testClusters {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel() // separate clusters; the bounds come from each one's own window
			const interval = 200 * time.Millisecond
			urls := clusterURLs(t, s)
			every := openCluster(t, s, map[string]string{"refresh_interval": interval.String()})
			never := openCluster(t, s, map[string]string{"refresh_interval": "-1"})

			stop := make(chan struct{})
			writes := writeUntil(t, stop, every, never)
			time.Sleep(300 * time.Millisecond)
			before := map[*Target]readAccount{every: timedAccount(t, every), never: timedAccount(t, never)}
			ackedBefore := writes.acked[every].Load()
			// A starved node can miss its refresh schedule for seconds (a
			// busy round: an OpenSearch primary refreshed 0 times in 3.9 s
			// at 200 ms, its replica 4 times): the window grows, up to
			// 20 s, until every copy of every has refreshed twice; the
			// bounds below come from the window taken.
			var after map[*Target]readAccount
			time.Sleep(3 * time.Second)
			poll(17*time.Second, 3*time.Second, func() (bool, string) {
				after = map[*Target]readAccount{every: timedAccount(t, every), never: timedAccount(t, never)}
				least := math.MaxInt
				for _, r := range refreshesOf(t, before[every].ServerAccount, after[every].ServerAccount) {
					least = min(least, int(r.Refreshes))
				}
				if least < 2 {
					t.Logf("a copy of %s refreshed %d times in %s: a longer window", every.Index(), least, after[every].At.Sub(before[every].At).Round(time.Millisecond))
				}
				return least >= 2, ""
			})
			ackedInWindow := writes.acked[every].Load() - ackedBefore
			close(stop)
			writes.wg.Wait()
			// At least two refreshes only while documents stream in: a
			// starved cluster that acknowledged a batch every few seconds
			// has little to refresh (a busy round: an OpenSearch replica
			// refreshed once in 23 s). Below a batch every ten refresh
			// intervals of the window, the stream did not flow, and only
			// the upper bound is this test's to hold.
			streamed := after[every].At.Sub(before[every].At)
			flowed := ackedInWindow >= int64(streamed/(10*interval))
			if !flowed {
				t.Logf("%s acknowledged %d batches in %s: the writes did not stream, so the copies' refreshes are held to the upper bound only", every.Index(), ackedInWindow, streamed.Round(time.Millisecond))
			}

			for _, tg := range []*Target{every, never} {
				copies, refreshes := copiesOf(t, after[tg].ServerAccount), refreshesOf(t, before[tg].ServerAccount, after[tg].ServerAccount)
				if len(copies) != 2 || len(refreshes) != 2 {
					t.Fatalf("%s: copies %+v, refreshes %+v; want the primary and the replica", tg.Index(), copies, refreshes)
				}
				var addrs, nodes []string
				primaries := 0
				for _, c := range copies {
					addrs = append(addrs, c.NodeAddress)
					nodes = append(nodes, c.Node)
					if c.Primary {
						primaries++
					}
				}
				slices.Sort(addrs)
				if want := []string{urls[0].Host, urls[1].Host}; primaries != 1 || nodes[0] == nodes[1] || !slices.Equal(addrs, want) {
					t.Errorf("%s: copies on nodes %v at %v, %d primaries; want one primary and one replica, on the nodes at %v",
						tg.Index(), nodes, addrs, primaries, want)
				}
				window := after[tg].At.Sub(before[tg].At)
				most := mostRefreshes(before[tg], after[tg], interval)
				for _, r := range refreshes {
					t.Logf("%s %s primary=%v: %d refreshes in %s, period %.0f ms", tg.Index(), r.Node, r.Primary, r.Refreshes, window.Round(time.Millisecond), r.PeriodMS)
					switch {
					case tg == never && r.Refreshes != 0:
						t.Errorf("%s: %d refreshes with refresh_interval -1, want 0", r.Node, r.Refreshes)
					case tg == every && (r.Refreshes < 2 && flowed || r.Refreshes > most):
						t.Errorf("%s: %d refreshes in %s (%s with the second reading's round trip) at refresh_interval %s while %d batches were acknowledged, want 2 to %d",
							r.Node, r.Refreshes, window, after[tg].Replied.Sub(before[tg].At), interval, ackedInWindow, most)
					}
				}
			}
		})
	}
}

// replication_type=segment makes an index whose replica copies the
// primary's segments, which the server says in the index's settings and
// in the account of the replica (its segment-replication lag, its
// replication rounds); replication_type=document one that does not.
func TestClusterReplicationType(t *testing.T) {
	// Indices of its own, beside the other server tests.
	t.Parallel()
	s := testClusters[1] // OpenSearch
	for _, typ := range []string{ReplicationSegment, ReplicationDocument} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			tg := openCluster(t, s, map[string]string{"refresh_interval": "200ms", "replication_type": typ})
			var settings map[string]struct {
				Settings map[string]string `json:"settings"`
			}
			if err := tg.getJSON(context.Background(), "/"+tg.ip+"/_settings/index.replication.type", "flat_settings=true", &settings); err != nil {
				t.Fatal(err)
			}
			if got := settings[tg.Index()].Settings["index.replication.type"]; got != strings.ToUpper(typ) {
				t.Errorf("index.replication.type = %q, want %q", got, strings.ToUpper(typ))
			}

			stop := make(chan struct{})
			writes := writeUntil(t, stop, tg)
			before := account(t, tg)
			var after *results.ServerAccount
			eventually(t, "a replica that the account describes", func() (bool, string) {
				after = account(t, tg)
				for _, c := range copiesOf(t, after) {
					if !c.Primary && (typ == ReplicationDocument || c.SegmentReplication != nil) {
						return true, ""
					}
				}
				return false, fmt.Sprintf("%+v", copiesOf(t, after))
			})
			// Every copy refreshes, or takes a replication round, while
			// documents come in; a starved node can go seconds without one
			// (a busy round beside two hogs per core: a replica none in
			// about a second), so the account is read until each shows one.
			eventually(t, "a refresh or replication round on every copy while documents came in", func() (bool, string) {
				after = account(t, tg)
				for _, r := range refreshesOf(t, before, after) {
					if r.Refreshes == 0 {
						return false, fmt.Sprintf("none yet on %s (primary %v)", r.Node, r.Primary)
					}
				}
				return true, ""
			})
			close(stop)
			writes.wg.Wait()
			for _, c := range copiesOf(t, after) {
				if c.Replication != typ {
					t.Errorf("copy on %s: replication %q, want %q", c.Node, c.Replication, typ)
				}
				if segrep := !c.Primary && typ == ReplicationSegment; segrep != (c.SegmentReplication != nil) {
					t.Errorf("copy on %s (primary %v): segment replication %+v", c.Node, c.Primary, c.SegmentReplication)
				}
			}
		})
	}
}

// The refreshes of a copy over a window are the differences of the
// server's counters between its two accounts, as the results file holds
// them: the refreshes that opened a new reader for searches (on a
// segment-replication replica, every reader refresh: its replication
// rounds), none for a copy that restarted or is at one end only.
func TestRefreshesOverAWindow(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	seg := func(c Copy) Copy {
		c.Replication = ReplicationSegment
		if !c.Primary {
			c.SegmentReplication = &SegmentReplication{}
		}
		c.SearchRefreshes = c.searchRefreshes()
		return c
	}
	doc := func(c Copy) Copy { c.SearchRefreshes = c.searchRefreshes(); return c }
	at := func(d time.Duration, copies ...Copy) *results.ServerAccount {
		return &results.ServerAccount{At: t0.Add(d), Tables: Account{Copies: copies}.AccountTables()}
	}
	start := at(0,
		doc(Copy{Index: "i", Primary: true, Node: "n1", RefreshTotal: 10, ExternalRefreshTotal: 5, RefreshTimeMS: 100}),
		doc(Copy{Index: "i", Node: "n2", RefreshTotal: 9, ExternalRefreshTotal: 5, RefreshTimeMS: 50}),
		seg(Copy{Index: "s", Primary: true, Node: "n2", RefreshTotal: 4, ExternalRefreshTotal: 2}),
		seg(Copy{Index: "s", Node: "n1", RefreshTotal: 3}),
		doc(Copy{Index: "r", Node: "n2", RefreshTotal: 50, ExternalRefreshTotal: 40}), // restarts below
		doc(Copy{Index: "g", Node: "n1", RefreshTotal: 7, ExternalRefreshTotal: 7}),   // gone below
	)
	end := at(10*time.Second,
		doc(Copy{Index: "i", Primary: true, Node: "n1", RefreshTotal: 30, ExternalRefreshTotal: 25, RefreshTimeMS: 400}),
		doc(Copy{Index: "i", Node: "n2", RefreshTotal: 9, ExternalRefreshTotal: 5, RefreshTimeMS: 50}),
		seg(Copy{Index: "s", Primary: true, Node: "n2", RefreshTotal: 14, ExternalRefreshTotal: 12}),
		seg(Copy{Index: "s", Node: "n1", RefreshTotal: 8}),
		doc(Copy{Index: "r", Node: "n2", RefreshTotal: 3, ExternalRefreshTotal: 2}),
		doc(Copy{Index: "new", Node: "n1", RefreshTotal: 3, ExternalRefreshTotal: 2}),
	)
	got := refreshesOf(t, start, end)
	want := []CopyRefreshes{
		{Index: "i", Primary: true, Node: "n1", Refreshes: 20, PeriodMS: 500, RefreshTimeMS: 300},
		{Index: "i", Node: "n2"},
		{Index: "s", Primary: true, Node: "n2", Refreshes: 10, PeriodMS: 1000},
		{Index: "s", Node: "n1", Refreshes: 5, PeriodMS: 2000},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("refreshes %+v\nwant %+v", got, want)
	}
	if c := copiesOf(t, end); len(c) != 6 || c[3].SegmentReplication == nil || c[2].SegmentReplication != nil {
		t.Errorf("copies %+v: want the segment-replication replica's lag, and only its", c)
	}
}

// A copy that refreshes exactly every interval stays within mostRefreshes
// however long each account takes to come back (seen: ~450 ms per stats
// reading on a busy server), and one that refreshes twice as often does
// not, where the readings leave that decidable.
func TestMostRefreshesSlowReadings(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const interval = 200 * time.Millisecond
	// refreshes counts a copy's refreshes, every period from t0, in the
	// window (from, to] between its two counter readings.
	refreshes := func(period time.Duration, from, to time.Time) int64 {
		return int64(to.Sub(t0)/period) - int64(from.Sub(t0)/period)
	}
	for _, rtt := range []time.Duration{0, 50 * time.Millisecond, 450 * time.Millisecond, 2 * time.Second} {
		before := readAccount{&results.ServerAccount{At: t0}, t0.Add(rtt)}
		after := readAccount{&results.ServerAccount{At: t0.Add(3 * time.Second)}, t0.Add(3*time.Second + rtt)}
		// The worst case: the counters read at the start of the first
		// request and at the end of the second.
		most := mostRefreshes(before, after, interval)
		if got := refreshes(interval, before.At, after.Replied); got > most {
			t.Errorf("readings taking %s: a copy refreshing every %s shows %d refreshes, above the bound %d", rtt, interval, got, most)
		}
		// Readings as slow as the window leave a copy refreshing twice as
		// often undecided; up to 450 ms in 3 s, it is caught.
		if got := refreshes(interval/2, before.Replied, after.At); got <= most && rtt <= 450*time.Millisecond {
			t.Errorf("readings taking %s: a copy refreshing every %s shows %d refreshes, within the bound %d for every %s", rtt, interval/2, got, most, interval)
		}
	}
}
