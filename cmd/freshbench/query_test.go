package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/docgen"
	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/results"
)

func TestQueryBadInput(t *testing.T) {
	data := []string{"query", "--data-dir", filepath.Join(t.TempDir(), "data"), "--metrics-addr="}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--qps and --concurrency 0 and 0: want one of the two"},
		{[]string{"--qps", "10", "--concurrency", "2"}, "--qps and --concurrency 10 and 2: want one of the two"},
		{[]string{"--qps", "-1"}, "--qps -1"},
		{[]string{"--qps", "10", "--mix", "point=1,lookup=2"}, `--mix: mix "point=1,lookup=2": unknown kind "lookup"`},
		{[]string{"--qps", "10", "--miss-share", "1.5"}, "--miss-share 1.5"},
		{[]string{"--qps", "10", "--limit", "0"}, "--limit 0"},
		{[]string{"--qps", "10", "--query-max-inflight", "0"}, "--query-max-inflight 0"},
		{[]string{"--qps", "10", "--warmup", "10s", "--duration", "5s"}, "--warmup 10s"},
		{[]string{"--qps", "10", "--slo", "p95<1s"}, "--slo applies to a sweep"},
		{[]string{"--sweep", "--qps", "10", "--sweep-max", "100"}, "--sweep sets the QPS"},
		{[]string{"--sweep"}, "--sweep-max 0"},
		{[]string{"--sweep", "--sweep-max", "100", "--slo", "p95>1s"}, "--slo: SLO"},
		{[]string{"--qps", "10", "--rate", "fast"}, "--rate"},
		// A frontier is checked where the rest of the run is, in bench.
		{[]string{"--frontier", "1000"}, "--frontier 1000 events/s: want a sweep as well"},
		{[]string{"--frontier", "1000", "--sweep", "--rate", "10"}, "--frontier and --rate: give one"},
		{[]string{"--frontier", "1000,fast", "--sweep"}, "--frontier: rate \"fast\""},
	} {
		wantUsageError(t, append(append([]string{}, data...), c.args...), c.want)
	}
}

// The query command alone and beside an ingest, on SQLite: both write a
// results file with the queries and say what they measured; --explain
// shows the statements; the HTML report has the query section.
func TestQueryCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs of a few seconds")
	}
	t.Parallel() // a data directory of its own
	dir := t.TempDir()
	data := filepath.Join(dir, "data")

	code, out, errOut := freshbenchVirtual(t, "query", "--data-dir", data, "--qps", "10", "--duration", "1s", "--warmup", "0s", "--metrics-addr=")
	if code != 1 || !strings.Contains(errOut, "no stored document") || !strings.Contains(errOut, "--rate") {
		t.Errorf("query on an empty database: exit code %d, stderr %q, stdout %q; want 1 and a hint", code, errOut, out)
	}

	beside := filepath.Join(dir, "beside.json")
	code, out, errOut = freshbenchVirtual(t, "query", "--data-dir", data, "--rate", "500", "--qps", "30", "--settle", "100ms",
		"--duration", "2s", "--warmup", "0s", "--drain", "1s", "--out", beside, "--metrics-addr=")
	if code != 0 {
		t.Fatalf("query beside an ingest: exit code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for _, want := range []string{"events/s", "query load: open loop at 30 QPS", "beside the ingest: ", "results: " + beside} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	res, err := results.ReadFile(beside)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != results.KindQuery {
		t.Errorf("query beside an ingest: kind %q, want %q", res.Kind, results.KindQuery)
	}
	if q := res.Target().Queries; res.Command != "query" || q == nil || q.Total.Queries < 30 || q.Beside == nil || len(q.Kinds) != 4 || res.Summary.EventsAcked == 0 {
		t.Fatalf("results of a query run beside an ingest: command %q, queries %+v", res.Command, res.Target().Queries)
	}

	// Alone, on what the first run wrote, stopped early: what was
	// measured is written.
	alone := filepath.Join(dir, "alone.json")
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var stdout bytes.Buffer
	var stderr lockedBuffer
	code = Main(ctx, []string{"query", "--data-dir", data, "--concurrency", "2", "--mix", "point,newest,bucket",
		"--duration", "30s", "--warmup", "0s", "--out", alone, "--metrics-addr="}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("query alone: exit code %d\nstderr: %s", code, stderr.String())
	}
	res, err = results.ReadFile(alone)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != results.KindQuery {
		t.Errorf("query alone: kind %q, want %q", res.Kind, results.KindQuery)
	}
	if q := res.Target().Queries; !res.EndedEarly || q == nil || q.Mode != "closed" || q.Total.Queries == 0 || q.Total.Empty != 0 || q.Beside != nil || len(res.Generators) != 0 {
		t.Fatalf("results of an interrupted query run alone: ended early %v, queries %+v", res.EndedEarly, res.Target().Queries)
	}
	if !strings.Contains(stdout.String(), "freshbench query: sqlite://") || !strings.Contains(stdout.String(), "ended early") {
		t.Errorf("stdout does not introduce the run:\n%s", stdout.String())
	}

	code, out, errOut = freshbench(t, "query", "--data-dir", data, "--explain", "--mix", "array=1")
	if code != 0 || !strings.Contains(out, "-- array (weight 1)\nSELECT doc FROM freshbench_events WHERE EXISTS") || strings.Contains(out, "point") {
		t.Errorf("--explain: exit code %d, stderr %q, stdout:\n%s", code, errOut, out)
	}

	html := filepath.Join(dir, "beside.html")
	if code, _, errOut := freshbench(t, "report", beside, "--out", html); code != 0 {
		t.Fatalf("report: exit code %d: %s", code, errOut)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `<section id="queries">`) || !strings.Contains(string(page), "json_extract(doc, &#39;$.processBy&#39;)") {
		t.Error("the HTML report lacks the query section or the query text")
	}
}

// A sweep on a target that answers one query at a time in 10 ms (100 QPS
// at most) must stop at the first step over that and keep every step. The
// steps lie far on either side of the capacity (20 %, 160 %), so that a
// busy test machine cannot move the verdicts: at 160 QPS the queue grows
// by 60 queries a second and the latency passes 100 ms within the step.
func TestQuerySweepCommand(t *testing.T) { synctest.Test(t, testQuerySweepCommand) }

func testQuerySweepCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("three steps of a second")
	}
	out := filepath.Join(t.TempDir(), "sweep.json")
	code, stdout, stderr := freshbench(t, "query", "--target", "sim://?query_delay=10ms", "--rate", "500", "--settle", "0s",
		"--sweep", "--sweep-start", "20", "--sweep-step", "140", "--sweep-max", "400", "--slo", "p95<100ms", "--query-max-inflight", "1",
		"--duration", "1s", "--warmup", "200ms", "--drain", "0s", "--out", out, "--metrics-addr=", "--quiet")
	if code != 0 {
		t.Fatalf("sweep: exit code %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != results.KindSweep {
		t.Errorf("sweep: kind %q, want %q", res.Kind, results.KindSweep)
	}
	sw := res.QuerySweep
	if sw == nil || !sw.Found || sw.QPS != 20 || len(sw.Steps) != 2 || res.Target().Queries.TargetQPS != 20 {
		t.Fatalf("sweep %+v, want the best step at 20 QPS and a stop at 160", sw)
	}
	for _, want := range []string{"step 1  20 QPS", "step 2  160 QPS", "missed", "highest QPS with p95<100ms (*): 20"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

// A sweep writes its results file after every step: while the second step
// runs, the file holds the first, the best so far, and says the sweep is
// under way; stopped then, the command keeps both steps. As in
// TestQuerySweepCommand, 20 and 40 QPS lie far under the 100 QPS the
// target answers.
func TestQuerySweepWritesEachStep(t *testing.T) { synctest.Test(t, testQuerySweepWritesEachStep) }

func testQuerySweepWritesEachStep(t *testing.T) {
	if testing.Short() {
		t.Skip("two steps of a second")
	}
	out := filepath.Join(t.TempDir(), "sweep.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"query", "--target", "sim://?query_delay=10ms", "--rate", "500", "--settle", "0s",
			"--sweep", "--sweep-start", "20", "--sweep-step", "20", "--sweep-max", "400", "--slo", "p95<100ms", "--query-max-inflight", "1",
			"--duration", "1s", "--warmup", "200ms", "--drain", "0s", "--out", out, "--metrics-addr=", "--quiet"}, &stdout, &stderr)
	}()

	deadline := time.After(30 * time.Second)
	for {
		res, err := results.ReadFile(out)
		if err == nil {
			sw := res.QuerySweep
			if sw == nil || len(sw.Steps) == 0 || sw.Reason != query.SweepUnderWay || !sw.Found || sw.QPS != 20 ||
				res.Target().Queries.TargetQPS != 20 || res.Command != "query" || res.Kind != results.KindSweep || res.Environment.Target != "sim" {
				t.Fatalf("results file during the sweep: command %q, target %q, sweep %+v; want the step at 20 QPS as the best, under way",
					res.Command, res.Environment.Target, sw)
			}
			break
		}
		select {
		case code := <-done:
			t.Fatalf("the sweep ended (exit code %d) before its results file held a step: %v\nstderr: %s", code, err, stderr.String())
		case <-deadline:
			t.Fatalf("no results file after 30s: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("interrupted sweep: exit code %d\nstderr: %s", code, stderr.String())
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if sw := res.QuerySweep; sw == nil || len(sw.Steps) != 2 || sw.Reason != "interrupted" || sw.QPS != 20 {
		t.Fatalf("results file of the interrupted sweep: %+v; want two steps, the best at 20 QPS", sw)
	}
	if !strings.Contains(stdout.String(), "step 1  20 QPS") || !strings.Contains(stdout.String(), "results: "+out) {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}

// --frontier sweeps the QPS beside an ingest at each of its rates; the
// results file, the console and the HTML report show the frontier; it
// needs --sweep and takes the place of --rate.
func TestQueryFrontier(t *testing.T) { synctest.Test(t, testQueryFrontier) }

func testQueryFrontier(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "f.json")
	target := "sim://?capacity=4000&query_cost=20&visibility_delay=50ms"
	args := []string{"query", "--target", target, "--frontier", "1000,3000", "--sweep", "--sweep-start", "40", "--sweep-step", "40", "--sweep-max", "40",
		"--slo", "p95<200ms", "--duration", "2s", "--warmup", "500ms", "--drain", "2s", "--settle", "200ms", "--quiet", "--metrics-addr", "", "--out", out}
	code, stdout, stderr := freshbench(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readResult(t, out)
	if r.Kind != results.KindFrontier || r.Frontier == nil || len(r.Frontier.Points) != 2 || r.Frontier.Points[1].IngestRate != "3000 events/s" {
		t.Fatalf("kind %s, frontier %+v", r.Kind, r.Frontier)
	}
	if !strings.Contains(stdout, "frontier: the highest QPS with p95<200ms at each ingest rate") {
		t.Errorf("console:\n%s", stdout)
	}
	if code, _, stderr := freshbench(t, "report", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	html, err := os.ReadFile(strings.TrimSuffix(out, ".json") + ".html")
	if err != nil || !strings.Contains(string(html), "<h3>Frontier</h3>") {
		t.Errorf("the HTML report has no frontier (%v)", err)
	}
}

// The nested documents of the 20K-QPS study go through a run and the
// study's two queries (processBy = v, emails contains v) find them, on
// the embedded default and on Elasticsearch; a bad shape is refused.
func TestNestedShapeQueried(t *testing.T) {
	t.Parallel() // a server, index, topic or data directory of its own; no rate or latency asserted
	es := serverHost(t, "FRESHBENCH_TEST_ELASTICSEARCH_URL")
	dir := t.TempDir()
	targets := map[string][]string{"sqlite": {"--data-dir", filepath.Join(dir, "data")}}
	if es != "" {
		idx := fmt.Sprintf("fb-nested-%d", time.Now().UnixNano())
		t.Cleanup(func() {
			req, _ := http.NewRequest(http.MethodDelete, "http://"+es+"/"+idx, nil)
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
			}
		})
		// Its requests may take their time: a starved server took over
		// 30 s (the default bound) to create an index.
		targets["elasticsearch"] = []string{"--target", "elasticsearch://" + es + "/" + idx, "--set", "refresh_interval=200ms", "--write-timeout", "2m"}
	} else if testenv.Required() {
		t.Fatal("FRESHBENCH_TEST_ELASTICSEARCH_URL is not set")
	}
	for name, where := range targets {
		t.Run(name, func(t *testing.T) {
			// A bubble's clock stands still while a goroutine waits on the
			// network: only the in-process database runs on virtual time.
			bubble := synctest.Test
			if name != "sqlite" {
				bubble = func(t *testing.T, f func(*testing.T)) { f(t) }
			}
			bubble(t, func(t *testing.T) {
				out := filepath.Join(dir, name+".json")
				// A starved search engine may acknowledge nothing for
				// --settle before the run ends (seen under load: no query
				// of either kind had a parameter; the first batch's mapping
				// took 20 s), or its refresh may come after --settle (seen:
				// 19 of 20 found nothing): not this test's premise, so it is
				// tried again at a lower rate with a longer settle
				// (nestedRun), on the same index, whose mapping the first
				// attempt made (the queries draw their values from the
				// attempt's own events).
				var r *results.Result
				rate, unmet := testenv.LowerRate(t, 200, 50, func(rate float64) string {
					settle, duration := nestedRun(rate)
					args := append([]string{"query", "--doc-shape", "nested", "--doc-size", "9KB", "--rate", fmt.Sprint(rate), "--batch-size", "20", "--qps", "20",
						"--mix", "point=1,array=1", "--duration", duration.String(), "--warmup", "1s", "--settle", settle.String(), "--drain", "10s",
						"--quiet", "--metrics-addr", "", "--out", out}, where...)
					code, _, stderr := freshbench(t, args...)
					if code != 0 {
						t.Fatalf("exit %d: %s", code, stderr)
					}
					r = readResult(t, out)
					for _, k := range r.Target().Queries.Kinds {
						if k.Queries == 0 && name != "sqlite" {
							return fmt.Sprintf("no %s query was made (achieved %.0f of %.0f events/s)", k.Kind, r.Summary.AchievedEventsPerSec, rate)
						}
						// (Seen at load 20: 5 of 6 found nothing, the
						// refresh later than the settle.)
						if name != "sqlite" && k.Queries-k.Empty < k.Queries/2 {
							return fmt.Sprintf("%d of %d %s queries found nothing: the refresh came after --settle", k.Empty, k.Queries, k.Kind)
						}
					}
					return ""
				})
				if unmet != "" {
					settle, _ := nestedRun(rate)
					t.Fatalf("at %.0f events/s, the lowest tried, with --settle %s: %s; the premise of this test (queries drawn from documents the server shows) was never met", rate, settle, unmet)
				}
				if r.Config.DocShape != "nested" || r.Config.DocSize != 9000 || r.Summary.Missing != 0 || !r.Summary.Audited {
					t.Errorf("config %+v, missing %d (unexpected %d, failed %d, errors %v, drain %+v): want nested 9 KB documents, all audited", r.Config, r.Summary.Missing, r.Summary.Unexpected, r.Summary.EventsFailed, r.Summary.Errors, r.Drain)
				}
				// A parameter comes from a document acknowledged --settle
				// before; SQLite shows it at once, a search engine after its
				// next refresh, which a busy machine may delay past the
				// settle: there most queries, not all, must find theirs.
				for _, k := range r.Target().Queries.Kinds {
					found := k.Queries - k.Empty
					if k.Queries == 0 || k.Failed > 0 || name == "sqlite" && k.Empty > 0 || found < k.Queries/2 {
						t.Errorf("%s: %d queries, %d failed, %d found nothing: want the queries to find the documents they were drawn from", k.Kind, k.Queries, k.Failed, k.Empty)
					}
				}
			})
		})
	}
	wantUsageError(t, []string{"run", "--doc-shape", "flat"}, "--doc-shape flat")
	wantUsageError(t, []string{"run", "--doc-shape", "nested", "--doc-size", "1KB"}, fmt.Sprintf("at least %d bytes for the nested shape", docgen.MinSize(docgen.ShapeNested)))
}

// nestedRun is the --settle and --duration of TestNestedShapeQueried's
// run at rate events/s: 2 s and 5 s at 200 events/s, and as many times
// longer as the rate is lower, for a starved server that keeps neither
// the rate nor its refresh interval.
func nestedRun(rate float64) (settle, duration time.Duration) {
	scale := max(1, 200/rate)
	return time.Duration(scale * float64(2*time.Second)), time.Duration(scale * float64(5*time.Second))
}

// A search engine that makes a document searchable only seconds after it
// was acknowledged (seen under load: 19 of 20 point queries found nothing
// 2 s after, and then no query at all) gets, by the lowest rate tried, a
// settle past that lag, in a run long enough to query after it.
func TestNestedRunSettlesPastALateRefresh(t *testing.T) {
	const lag = 6 * time.Second
	var settle, duration time.Duration
	for rate := 200.0; rate >= 50; rate /= 2 {
		settle, duration = nestedRun(rate)
		if duration < settle+3*time.Second {
			t.Errorf("at %.0f events/s: settle %s in a run of %s; want 3 s or more of queries after it", rate, settle, duration)
		}
	}
	if settle <= lag {
		t.Errorf("at the lowest rate, settle %s; want more than a refresh %s late", settle, lag)
	}
	if s, d := nestedRun(200); s != 2*time.Second || d != 5*time.Second {
		t.Errorf("at the full rate, settle %s, duration %s; want 2s and 5s, the test's first run", s, d)
	}
}
