// Package e2e runs whole measured runs (bench.Run) against the real
// servers of scripts/*.sh and checks that the figures follow what the
// servers are told to do: refresh intervals, outages, restarts.
//
//	scripts/test.sh ./e2e        (starts the servers, then runs these)
package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/report"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
)

var servers = []struct{ name, env, script string }{
	{"elasticsearch", "FRESHBENCH_TEST_ELASTICSEARCH_URL", "elasticsearch.sh"},
	{"opensearch", "FRESHBENCH_TEST_OPENSEARCH_URL", "opensearch.sh"},
	{"opensearch3", "FRESHBENCH_TEST_OPENSEARCH3_URL", "opensearch3.sh"},
	{"postgres", "FRESHBENCH_TEST_POSTGRES_URL", "postgres.sh"},
}

// TestMain warms up every search engine before the tests measure it. A
// JVM that was started a moment ago (as in CI) compiles its hot paths and
// a fresh cluster settles its first mappings during the first seconds of
// load; on two cores that can slow the first run several-fold, which is
// the server's warm-up, not what these tests are about.
func TestMain(m *testing.M) {
	for _, s := range servers {
		raw := os.Getenv(s.env)
		if raw == "" || strings.HasPrefix(raw, "postgres") {
			continue
		}
		if err := warmUp(raw); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: warming up %s: %v\n", s.name, err)
		}
	}
	os.Exit(m.Run())
}

func warmUp(raw string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	i := strings.LastIndexByte(raw, '/')
	raw = raw[:i+1] + "fb-e2e-warmup"
	tgt, err := all.Registry().Open(ctx, raw, target.Options{Recreate: true, RequestTimeoutS: 10})
	if err != nil {
		return err
	}
	defer tgt.Close()
	if err := tgt.Setup(ctx); err != nil {
		return err
	}
	defer tgt.Teardown(context.WithoutCancel(ctx))
	cfg := config(1000, 8*time.Second, 200*time.Millisecond)
	cfg.Drain = 0
	start := time.Now()
	res, err := bench.Run(ctx, tgt, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "e2e: warmed up %s in %s: %.0f events/s, write latency p50 %.0f ms\n",
		raw, time.Since(start).Round(time.Second), res.Summary.AchievedEventsPerSec, res.Summary.WriteLatency.P50Ms)
	return nil
}

// serverURL returns the test URL of a server, or skips (fails when
// FRESHBENCH_REQUIRE_SERVERS=1).
func serverURL(t *testing.T, name string) string {
	t.Helper()
	for _, s := range servers {
		if s.name != name {
			continue
		}
		raw := os.Getenv(s.env)
		if raw == "" {
			msg := fmt.Sprintf("%s is not set: start a server with `scripts/%s start` and set %s=$(scripts/%s url)", s.env, s.script, s.env, s.script)
			if os.Getenv("FRESHBENCH_REQUIRE_SERVERS") == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
		return raw
	}
	t.Fatalf("no server %q", name)
	return ""
}

// withName points a server URL at an index or table of this test's own,
// so that tests never share data.
func withName(t *testing.T, raw, name string) string {
	t.Helper()
	name = fmt.Sprintf("fb_e2e_%s_%d", name, time.Now().UnixNano()%1e9)
	if strings.HasPrefix(raw, "postgres") {
		sep := "?"
		if strings.Contains(raw, "?") {
			sep = "&"
		}
		// The URL's own table= comes first; Query().Get reads the first.
		if i := strings.Index(raw, "table="); i >= 0 {
			end := strings.IndexByte(raw[i:], '&')
			if end < 0 {
				return raw[:i] + "table=" + name
			}
			return raw[:i] + "table=" + name + raw[i+end:]
		}
		return raw + sep + "table=" + name
	}
	i := strings.LastIndexByte(raw, '/')
	return raw[:i+1] + strings.ReplaceAll(name, "_", "-")
}

// open opens and sets up a fresh target that is dropped when the test ends.
func open(t *testing.T, raw string, settings map[string]string) target.Target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tgt, err := all.Registry().Open(ctx, raw, target.Options{Recreate: true, Settings: settings, RequestTimeoutS: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := tgt.Setup(ctx); err != nil {
		tgt.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := tgt.Teardown(ctx); err != nil {
			t.Errorf("teardown: %v", err)
		}
		tgt.Close()
	})
	return tgt
}

func config(rate float64, d time.Duration, poll time.Duration) bench.Config {
	return bench.Config{
		Ingest: ingest.Config{
			Rate: pace.Rate{PerSecond: rate, Unit: pace.Events}, BatchSize: 50, Duration: d, Warmup: time.Second,
			Generators: 1, MaxInflight: 8, DocSize: 1000, Seed: 3, WriteTimeout: 5 * time.Second, ProbeRate: 20,
		},
		PollInterval: poll, Drain: 15 * time.Second,
	}
}

func run(t *testing.T, tgt target.Target, cfg bench.Config) *bench.Result {
	t.Helper()
	res, err := bench.Run(context.Background(), tgt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	t.Logf("%s: achieved %.0f/%.0f events/s; write latency p50 %.1f ms p99 %.1f ms; freshness lag p50 %.0f ms p95 %.0f ms; visibility p50 %.0f ms p95 %.0f ms (%d probes); failed %d; missing %d",
		tgt.Name(), s.AchievedEventsPerSec, s.TargetEventsPerSec, s.WriteLatency.P50Ms, s.WriteLatency.P99Ms,
		s.FreshnessLag.P50Ms, s.FreshnessLag.P95Ms, s.VisibilityLatency.P50Ms, s.VisibilityLatency.P95Ms, s.VisibilityLatency.Count, s.EventsFailed, s.Missing)
	return res
}

// A short run at a modest rate against each server keeps up, loses
// nothing and measures every figure.
func TestRunKeepsUpAndLosesNothing(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			tgt := open(t, withName(t, serverURL(t, s.name), "run"), map[string]string{"refresh_interval": "200ms"})
			res := run(t, tgt, config(1000, 5*time.Second, 100*time.Millisecond))
			sum := res.Summary
			if sum.AchievedEventsPerSec < 980 {
				t.Errorf("achieved %.0f events/s of 1000", sum.AchievedEventsPerSec)
			}
			if !sum.Audited || sum.Missing != 0 || sum.Unexpected != 0 || sum.Duplicates != 0 || sum.EventsFailed != 0 {
				t.Errorf("audited %v, missing %d, unexpected %d, duplicates %d, failed %d; want a clean run",
					sum.Audited, sum.Missing, sum.Unexpected, sum.Duplicates, sum.EventsFailed)
			}
			if sum.FreshnessLag.Count < 20 || sum.VisibilityLatency.Count < 50 || sum.WriteLatency.Count < 50 {
				t.Errorf("too few samples: freshness %d, visibility %d, writes %d",
					sum.FreshnessLag.Count, sum.VisibilityLatency.Count, sum.WriteLatency.Count)
			}
		})
	}
}

// The refresh interval of a search engine decides when a document becomes
// searchable: 2 s must read back as a visibility latency and freshness lag
// about ten times those of 200 ms. A uniform arrival within the interval
// gives a median of about half the interval, plus the poll resolution.
func TestRefreshIntervalShowsInLatency(t *testing.T) {
	for _, name := range []string{"elasticsearch", "opensearch", "opensearch3"} {
		t.Run(name, func(t *testing.T) {
			raw := serverURL(t, name)
			p50 := map[string][2]float64{}
			for _, ri := range []string{"200ms", "2s"} {
				tgt := open(t, withName(t, raw, "refresh"), map[string]string{"refresh_interval": ri})
				s := run(t, tgt, config(500, 7*time.Second, 50*time.Millisecond)).Summary
				p50[ri] = [2]float64{s.VisibilityLatency.P50Ms, s.FreshnessLag.P95Ms}
			}
			fast, slow := p50["200ms"], p50["2s"]
			// 200 ms: median ≈ 100 ms + poll; p95 lag ≈ 200 ms + batch gap.
			if fast[0] > 450 || fast[1] > 700 {
				t.Errorf("refresh 200ms: visibility p50 %.0f ms, freshness lag p95 %.0f ms; want ≲ 450 / 700 ms", fast[0], fast[1])
			}
			// 2 s: median ≈ 1 s; p95 lag ≈ 1.9 s + batch gap.
			if slow[0] < 600 || slow[0] > 2200 || slow[1] < 1500 || slow[1] > 3000 {
				t.Errorf("refresh 2s: visibility p50 %.0f ms, freshness lag p95 %.0f ms; want in [600, 2200] / [1500, 3000] ms", slow[0], slow[1])
			}
			if slow[0] < 3*fast[0] {
				t.Errorf("visibility p50 %.0f ms at 2s refresh is not clearly above %.0f ms at 200ms", slow[0], fast[0])
			}
		})
	}
}

// PostgreSQL makes a row visible when its transaction commits, so the
// visibility latency is the write latency plus at most one poll interval
// and the probe query's own time.
func TestPostgresVisibleOnCommit(t *testing.T) {
	tgt := open(t, withName(t, serverURL(t, "postgres"), "commit"), nil)
	poll := 50 * time.Millisecond
	s := run(t, tgt, config(1000, 5*time.Second, poll)).Summary
	bound := s.WriteLatency.P50Ms + float64(poll.Milliseconds()) + s.ProbeQueryService.P95Ms + 20
	if s.VisibilityLatency.P50Ms > bound {
		t.Errorf("visibility p50 %.1f ms, want ≤ write latency p50 %.1f + poll %d + probe query p95 %.1f + 20 ms",
			s.VisibilityLatency.P50Ms, s.WriteLatency.P50Ms, poll.Milliseconds(), s.ProbeQueryService.P95Ms)
	}
	if s.VisibilityLatency.MinMs < s.WriteLatency.MinMs*0.5 {
		t.Errorf("visibility min %.1f ms below half the fastest write %.1f ms: an event was seen before it was committed?", s.VisibilityLatency.MinMs, s.WriteLatency.MinMs)
	}
}

// When the server goes away in the middle of a run, the run goes on,
// counts the failed writes, shows the outage in its per-second series,
// recovers, and writes its results. The outage is made by a loopback
// proxy that closes its listener and every connection, which is what a
// client sees of a stopped server, without the minute a search engine
// takes to start again.
func TestOutageDuringRun(t *testing.T) {
	for _, name := range []string{"elasticsearch", "opensearch", "opensearch3"} {
		t.Run(name, func(t *testing.T) {
			raw := withName(t, serverURL(t, name), "outage")
			p := startProxy(t, hostOf(t, raw))
			tgt := open(t, strings.Replace(raw, hostOf(t, raw), p.addr, 1), map[string]string{"refresh_interval": "200ms"})
			cfg := config(500, 8*time.Second, 100*time.Millisecond)
			cfg.Ingest.WriteTimeout = time.Second
			go func() {
				time.Sleep(3 * time.Second)
				p.down()
				time.Sleep(2 * time.Second)
				p.up(t)
			}()
			res := run(t, tgt, cfg)
			s := res.Summary
			if s.EventsFailed == 0 || len(s.Errors) == 0 {
				t.Fatalf("no failed writes during a 2 s outage: %+v", s)
			}
			t.Logf("errors: %v", errorKinds(s))
			var failedSeconds, okAfter int
			for _, pt := range res.Series {
				if pt.FailedEvents > 0 {
					failedSeconds++
				}
				if pt.StartS >= 6 && pt.AckedEvents > 0 {
					okAfter++
				}
			}
			if failedSeconds < 1 || failedSeconds > 4 {
				t.Errorf("%d seconds with failures in the series, want the ~2 s outage", failedSeconds)
			}
			if okAfter == 0 {
				t.Errorf("no acknowledged writes after the server came back")
			}
			if s.Missing != 0 {
				t.Errorf("%d acknowledged events missing", s.Missing)
			}
			out := filepath.Join(t.TempDir(), "outage.json")
			if err := report.WriteFile(out, res); err != nil {
				t.Fatal(err)
			}
			back, err := report.ReadFile(out)
			if err != nil || back.Summary.EventsFailed != s.EventsFailed {
				t.Fatalf("results file: %v, failed %d", err, back.Summary.EventsFailed)
			}
		})
	}
}

// A real PostgreSQL restart in the middle of a run: the run goes on,
// counts the failures, and writes its results; nothing acknowledged is
// lost. It restarts the scripts/postgres.sh cluster, so it runs only with
// FRESHBENCH_TEST_POSTGRES_RESTART=1 (scripts/test.sh sets it).
func TestPostgresRestartDuringRun(t *testing.T) {
	raw := withName(t, serverURL(t, "postgres"), "restart")
	if os.Getenv("FRESHBENCH_TEST_POSTGRES_RESTART") != "1" {
		t.Skip("set FRESHBENCH_TEST_POSTGRES_RESTART=1 to restart the scripts/postgres.sh cluster during a run")
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "scripts", "postgres.sh")
	tgt := open(t, raw, nil)
	cfg := config(500, 8*time.Second, 100*time.Millisecond)
	cfg.Ingest.WriteTimeout = 2 * time.Second
	restarted := make(chan error, 1)
	go func() {
		time.Sleep(3 * time.Second)
		out, err := exec.Command("bash", script, "restart").CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%w: %s", err, out)
		}
		restarted <- err
	}()
	res := run(t, tgt, cfg)
	if err := <-restarted; err != nil {
		t.Fatalf("restart: %v", err)
	}
	s := res.Summary
	if s.EventsFailed == 0 {
		t.Errorf("no failed writes across a restart")
	}
	t.Logf("errors: %v", errorKinds(s))
	if !s.Audited || s.Missing != 0 {
		t.Errorf("audited %v, missing %d: acknowledged events lost across a restart", s.Audited, s.Missing)
	}
	if s.EventsAcked < 2000 {
		t.Errorf("only %d events acknowledged: the run did not go on after the restart", s.EventsAcked)
	}
}

func errorKinds(s bench.Summary) map[string]int64 {
	m := map[string]int64{}
	for k, e := range s.Errors {
		m[k] = e.Count
	}
	return m
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	rest := raw[strings.Index(raw, "://")+3:]
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest[:strings.IndexAny(rest, "/?")]
}

// proxy forwards loopback TCP connections to a server and can be taken
// down (listener and every connection closed) and brought back on the same
// address.
type proxy struct {
	addr, upstream string
	mu             sync.Mutex
	ln             net.Listener
	conns          map[net.Conn]bool
}

func startProxy(t *testing.T, upstream string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String(), upstream: upstream, conns: map[net.Conn]bool{}}
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *proxy) forward(c net.Conn) {
	u, err := net.Dial("tcp", p.upstream)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // went down meanwhile
		p.mu.Unlock()
		c.Close()
		u.Close()
		return
	}
	p.conns[c], p.conns[u] = true, true
	p.mu.Unlock()
	go func() { io.Copy(u, c); u.Close() }()
	io.Copy(c, u)
	c.Close()
}

func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *proxy) up(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Errorf("proxy back up on %s: %v", p.addr, err)
		return
	}
	p.serve(ln)
}
