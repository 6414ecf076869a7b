package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/elastic"
	"github.com/freshbench/freshbench/target/postgres"
	"github.com/freshbench/freshbench/target/questdb"
)

// replicated returns the first URL (the primary, or node 1) of a
// replicated setup of scripts/*-replica.sh or scripts/*-cluster.sh, or
// skips.
func replicated(t *testing.T, env, script string, urlArgs ...string) string {
	t.Helper()
	raw := testenv.URL(t, env, "scripts/"+script, urlArgs...)
	first, _, _ := strings.Cut(raw, ",")
	warmedUp(first, map[string]string{"replicas": "1"})
	return first
}

// waitGreen waits until every copy of the index of raw, a search-engine
// URL, is allocated.
func waitGreen(t *testing.T, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: time.Minute}
	res, err := c.Get("http://" + u.Host + "/_cluster/health" + u.Path + "?wait_for_status=green&timeout=50s")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var h struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil || h.Status != "green" {
		t.Fatalf("%s: health %q (%v), want green", u.Path, h.Status, err)
	}
}

// A run records the server's own account of its measured phase in the
// results file: on a two-node cluster, the refreshes of the primary and of
// the replica, no more often than the refresh interval; on a PostgreSQL
// primary, its standby's replication.
func TestServerAccountInResults(t *testing.T) {
	t.Run("elasticsearch-cluster", func(t *testing.T) {
		const interval = 500 * time.Millisecond
		raw := withName(t, replicated(t, "FRESHBENCH_TEST_ES_CLUSTER_URLS", "elasticsearch-cluster.sh"), "account")
		tgt := open(t, raw, map[string]string{"replicas": "1", "refresh_interval": interval.String()})
		waitGreen(t, raw)
		// Refreshes count only when there is something to refresh: a
		// warm-up long enough for a cold cluster's first bulk writes on a
		// busy machine (seen at over 4 s) keeps writes flowing all
		// through the measured part.
		cfg := config(500, 7*time.Second, 100*time.Millisecond)
		cfg.Ingest.Warmup = 3 * time.Second
		cfg.Ingest.WriteTimeout = requestTimeout
		// A cluster that keeps no schedule writes little or nothing in
		// the measured part (a busy round: 0 of 500 events/s, so no
		// refresh at all), and that is tried again at a lower rate
		// (testenv.LowerRate) before the counts are held to the interval.
		var res *results.Result
		_, unmet := testenv.LowerRate(t, cfg.Ingest.Rate.PerSecond, 125, func(rate float64) string {
			cfg.Ingest.Rate.PerSecond = rate
			res = run(t, tgt, cfg)
			return offSchedule(tgt.Name(), res.Summary)
		})
		// No more often than the interval holds whatever the load; at
		// least one refresh, only while writes flow through the
		// measured part: a failure says when they may not have.
		if unmet != "" {
			unmet = " (" + unmet + " even at 125 events/s)"
		}
		a := recorded(t, res)
		window := a.End.At.Sub(a.Start.At)
		refreshes := refreshesOf(t, a)
		if len(refreshes) != 2 || refreshes[0].Node == refreshes[1].Node {
			t.Fatalf("refreshes %+v, want the primary's and the replica's, on two nodes", refreshes)
		}
		for _, r := range refreshes {
			t.Logf("%s primary=%v: %d refreshes in %s, period %.0f ms", r.Node, r.Primary, r.Refreshes, window.Round(time.Millisecond), r.PeriodMS)
			if most := accountRefreshBound(a, interval); r.Refreshes < 1 || r.Refreshes > most {
				t.Errorf("%s: %d refreshes in %s at refresh_interval %s, want 1 to %d%s", r.Node, r.Refreshes, window, interval, most, unmet)
			}
		}
	})
	t.Run("postgres-replica", func(t *testing.T) {
		raw := withName(t, replicated(t, "FRESHBENCH_TEST_PG_PRIMARY_URL", "postgres-replica.sh", "primary"), "account")
		tgt := open(t, raw, nil)
		a := recorded(t, run(t, tgt, config(500, 3*time.Second, 100*time.Millisecond)))
		for _, end := range []*results.ServerAccount{a.Start, a.End} {
			if sb := standbysOf(t, end); len(sb) != 1 || sb[0].ApplicationName != "freshbench_standby" || sb[0].State != "streaming" {
				t.Errorf("standbys %+v, want freshbench_standby streaming", sb)
			}
		}
	})
}

// recorded returns the server's account of res as the results file has
// it, with both ends.
func recorded(t *testing.T, res *results.Result) *results.Account {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		ServerAccount *results.Account `json:"server_account"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	a := file.ServerAccount
	if a == nil || a.Start == nil || a.End == nil || a.Error != "" {
		t.Fatalf("server_account %+v, want both ends", a)
	}
	return a
}

// accountUnanswered says why res has no whole server account when the
// server gave no answer in time (a starved server: the machine's state,
// for testenv.LowerRate), "" otherwise: a missing account for any other
// reason is a defect for the test's checks to show.
func accountUnanswered(res *results.Result) string {
	if a := res.ServerAccount; a != nil && strings.Contains(a.Error, "no answer") {
		return "the server's account is not complete: " + a.Error
	}
	return ""
}

// recordedOwn is the database's own account at the start and at the end
// of the measured phase as the results file records them, read by
// accountOf (such as pinot.AccountOf).
func recordedOwn[A any](t *testing.T, res *results.Result, accountOf func(*results.ServerAccount) (*A, error)) (start, end *A) {
	t.Helper()
	rec := recorded(t, res)
	start, err := accountOf(rec.Start)
	if err != nil {
		t.Fatal(err)
	}
	if end, err = accountOf(rec.End); err != nil {
		t.Fatal(err)
	}
	return start, end
}

// ownAccount is the database's own account now (of type A, such as
// pinot.Account), read through the pipeline p.
func ownAccount[A any, P interface {
	*A
	results.AccountSnapshot
}](t *testing.T, p target.Target) P {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := p.(target.AccountReporter).ServerAccount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s.(results.AccountSnapshots) {
		if d, ok := a.(P); ok {
			return d
		}
	}
	t.Fatalf("server account %+v: no %T in it", s, new(A))
	return nil
}

// The server's account of each database, read through the database's own
// package as the results file has it.

func refreshesOf(t *testing.T, a *results.Account) []elastic.CopyRefreshes {
	t.Helper()
	r, err := elastic.Refreshes(a)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func copiesOf(t *testing.T, s *results.ServerAccount) []elastic.Copy {
	t.Helper()
	c, err := elastic.Copies(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func standbysOf(t *testing.T, s *results.ServerAccount) []postgres.Standby {
	t.Helper()
	sb, err := postgres.Standbys(s)
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

func walApplyOf(t *testing.T, a *results.Account) []questdb.WALApply {
	t.Helper()
	w, err := questdb.WALApplyOf(a)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// accountRefreshBound is the most refreshes a copy that keeps its
// interval can count between an account's start and end: the time
// between the instants the server read its counters, which may be longer
// than between the accounts' dates by half of each request's round trip.
func accountRefreshBound(a *results.Account, interval time.Duration) int64 {
	within := time.Duration((a.Start.WithinMS + a.End.WithinMS) * float64(time.Millisecond))
	return int64((a.End.At.Sub(a.Start.At)+within)/interval) + 1
}

// Accounts read slowly (450 ms each way, as on a busy cluster) around a
// copy that refreshed every 500 ms for 3.9 s: its 8 refreshes are within
// the bound; before, the accounts' dates alone, 3 s apart, allowed 7.
func TestAccountRefreshBoundSlowReadings(t *testing.T) {
	t0 := time.Now()
	a := &results.Account{
		Start: &results.ServerAccount{At: t0, WithinMS: 450},
		End:   &results.ServerAccount{At: t0.Add(3 * time.Second), WithinMS: 450},
	}
	if most := accountRefreshBound(a, 500*time.Millisecond); most < 8 || most > 9 {
		t.Errorf("at most %d refreshes; want 8 or 9: 3.9 s over 500 ms, and one", most)
	}
	a.Start.WithinMS, a.End.WithinMS = 0, 0
	if most := accountRefreshBound(a, 500*time.Millisecond); most != 7 {
		t.Errorf("readings taken in an instant: at most %d refreshes; want 7", most)
	}
}
