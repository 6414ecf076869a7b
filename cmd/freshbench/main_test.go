package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/freshbench/freshbench/results"
)

// lockedBuffer is a stderr that the test reads while Main writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freshbench runs the command line and returns its exit code, stdout and
// stderr.
func freshbench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout bytes.Buffer
	var stderr lockedBuffer
	code := Main(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// freshbenchVirtual is freshbench on virtual time (a synctest bubble): for
// a command against an in-process target with no listener
// (--metrics-addr=), whose schedule then takes no wall-clock time.
func freshbenchVirtual(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) { code, stdout, stderr = freshbench(t, args...) })
	return code, stdout, stderr
}

// wantUsageError checks the bad-input contract: exit code 2 and one line
// on stderr that says what was wrong.
func wantUsageError(t *testing.T, args []string, want string) {
	t.Helper()
	code, stdout, stderr := freshbench(t, args...)
	if code != 2 {
		t.Errorf("freshbench %s: exit code %d, want 2\nstderr: %s", strings.Join(args, " "), code, stderr)
	}
	if n := strings.Count(stderr, "\n"); n != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("freshbench %s: %d lines on stderr, want one:\n%s", strings.Join(args, " "), n, stderr)
	}
	if !strings.Contains(stderr, want) {
		t.Errorf("freshbench %s: stderr %q does not contain %q", strings.Join(args, " "), stderr, want)
	}
	if stdout != "" {
		t.Errorf("freshbench %s: wrote to stdout on bad input: %q", strings.Join(args, " "), stdout)
	}
}

// shortRun is a run of about three seconds with its metrics endpoint on a
// free port, so that tests never collide with a running freshbench.
func shortRun(extra ...string) []string {
	return append([]string{"run", "--duration", "2s", "--warmup", "0s", "--drain", "2s",
		"--poll-interval", "100ms", "--metrics-addr", "127.0.0.1:0"}, extra...)
}

// shortRunIn is shortRun with the embedded database and the results file
// in dir.
func shortRunIn(dir string, extra ...string) []string {
	return append(shortRun("--data-dir", filepath.Join(dir, "data"), "--out", filepath.Join(dir, "r.json")), extra...)
}

func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Every case would otherwise run against SQLite in dir.
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown target scheme", shortRunIn(dir, "--target", "mongodb://127.0.0.1/x"), `--target: bad target URL: unknown scheme "mongodb", want one of`},
		{"target without scheme", shortRunIn(dir, "--target", "127.0.0.1:9200"), "--target: bad target URL"},
		{"unparseable rate", shortRunIn(dir, "--rate", "fast"), `--rate: rate "fast"`},
		{"rate without number", shortRunIn(dir, "--rate", "MB/s"), "--rate:"},
		{"unparseable doc size", shortRunIn(dir, "--doc-size", "1XB"), `--doc-size: size "1XB"`},
		{"batch size 0", shortRunIn(dir, "--batch-size", "0"), "--batch-size 0: want a positive number"},
		{"duration 0", shortRunIn(dir, "--duration", "0s"), "--duration 0s: want a positive duration"},
		{"duration not a duration", shortRunIn(dir, "--duration", "ten"), `invalid value "ten" for flag -duration`},
		{"warmup past duration", shortRunIn(dir, "--warmup", "5s"), "--warmup 5s: want 0 or more and less than the duration 2s"},
		{"documents too small", shortRunIn(dir, "--doc-size", "10"), "--doc-size 10: want 400..1000000 bytes"},
		{"shorter than a batch", shortRunIn(dir, "--duration", "1ns", "--warmup", "0s"), "--duration 1ns: want a measured part (after the warm-up of 0s) of at least one batch interval, 50ms"},
		{"batches past the memory limit", shortRunIn(dir, "--batch-size", "10000000"), "--batch-size 10000000: want batches that fit the memory limit: batch size 10000000 × document size 1000 B × (in-flight bound 16 + generators 1) × 2 (documents and request body) = 340.00 GB, more than the limit of 1.07 GB"},
		{"memory limit raised, still short", shortRunIn(dir, "--batch-size", "2000000", "--max-memory", "8GB"), "more than the limit of 8.00 GB"},
		{"unknown flag", shortRunIn(dir, "--rates", "10"), "flag provided but not defined: -rates"},
		{"stray argument", shortRunIn(dir, "extra"), `unexpected argument "extra"`},
		{"data dir under a file", shortRunIn(dir, "--data-dir", filepath.Join(file, "data")), "choose another data directory (--data-dir)"},
		{"out under a file", shortRunIn(dir, "--out", filepath.Join(file, "r.json")), "--out " + filepath.Join(file, "r.json") + ": directory cannot be created"},
		{"out is a directory", shortRunIn(dir, "--out", dir), "--out " + dir + " is a directory"},
		{"metrics address not host:port", shortRunIn(dir, "--metrics-addr", "9464"), `invalid value "9464" for flag -metrics-addr: want host:port`},
		{"metrics port out of range", shortRunIn(dir, "--metrics-addr", "127.0.0.1:70000"), "want host:port"},
		{"negative metrics linger", shortRunIn(dir, "--metrics-linger", "-1s"), `invalid value "-1s" for flag -metrics-linger: want a duration of 0 or more`},
	} {
		t.Run(c.name, func(t *testing.T) { wantUsageError(t, c.args, c.want) })
	}
}

// TestRunLockedDatabase: another process holding the embedded database is
// bad input too: the message says to stop it or choose another --data-dir.
func TestRunLockedDatabase(t *testing.T) {
	t.Parallel() // a server, index, topic or data directory of its own; no rate or latency asserted
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The driver is registered by the SQLite target the binary links.
	other, err := sql.Open("sqlite", "file:"+filepath.Join(data, "freshbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	wantUsageError(t, shortRun("--data-dir", data, "--out", filepath.Join(dir, "r.json")),
		"is locked by another process; stop it or choose another data directory (--data-dir)")
	if _, err := os.Stat(filepath.Join(dir, "r.json")); !os.IsNotExist(err) {
		t.Errorf("a results file was written although nothing ran: %v", err)
	}
}

// TestRunReportCompare runs the whole command line: a short run on the
// embedded SQLite with its metrics endpoint scraped while it runs, a run
// on the simulated target, then report and compare on their results.
func TestRunReportCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of about three seconds each")
	}
	t.Parallel() // a data directory of its own
	dir := t.TempDir()
	sqliteOut := filepath.Join(dir, "sqlite.json")

	var stdout bytes.Buffer
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), shortRun("--data-dir", filepath.Join(dir, "data"), "--out", sqliteOut, "--rate", "500"), &stdout, &stderr)
	}()
	scraped := scrapeDuringRun(t, &stderr, done)
	code := <-done
	if code != 0 {
		t.Fatalf("run: exit code %d\nstderr: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "results: "+sqliteOut) {
		t.Errorf("run did not name its results file:\n%s", stdout.String())
	}
	res, err := results.ReadFile(sqliteOut)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if res.Command != "run" || res.Environment.Target != "sqlite" || s.EventsAcked == 0 || !s.Audited || s.Missing != 0 {
		t.Errorf("results: command %q, target %q, %d acked, audited %v, %d missing; want a complete sqlite run",
			res.Command, res.Environment.Target, s.EventsAcked, s.Audited, s.Missing)
	}
	wantTarget := `target="` + res.Environment.TargetURL + `"`
	if !strings.Contains(scraped, "freshbench_events_written_total{") || !strings.Contains(scraped, wantTarget) {
		t.Errorf("/metrics during the run has no events written for %s:\n%.2000s", wantTarget, scraped)
	}

	simOut := filepath.Join(dir, "sim.json")
	var out, errOut string
	synctest.Test(t, func(t *testing.T) { // on virtual time: no server, no listener
		code, out, errOut = freshbench(t, shortRun("--target", "sim://?visibility_delay=300ms", "--out", simOut, "--rate", "1000", "--metrics-addr=")...)
	})
	if code != 0 {
		t.Fatalf("run on sim: exit code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if strings.Contains(errOut, "metrics:") {
		t.Errorf("--metrics-addr= still served metrics: %s", errOut)
	}

	t.Run("report", func(t *testing.T) {
		code, out, errOut := freshbench(t, "report", sqliteOut)
		html := strings.TrimSuffix(sqliteOut, ".json") + ".html"
		if code != 0 || out != "report: "+html+"\n" {
			t.Fatalf("report: exit code %d, stdout %q, stderr %q", code, out, errOut)
		}
		page, err := os.ReadFile(html)
		if err != nil {
			t.Fatal(err)
		}
		checkOffline(t, string(page))

		// Flags after the file, and standard output.
		code, out, errOut = freshbench(t, "report", simOut, "-o", "-")
		if code != 0 || !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.Contains(out, "sim:") {
			t.Fatalf("report -o -: exit code %d, stderr %q, stdout starts %.100q", code, errOut, out)
		}
		named := filepath.Join(dir, "named.html")
		if code, _, errOut := freshbench(t, "report", "--out", named, simOut); code != 0 {
			t.Fatalf("report --out: exit code %d: %s", code, errOut)
		}
		if _, err := os.Stat(named); err != nil {
			t.Error(err)
		}
	})

	t.Run("compare", func(t *testing.T) {
		code, out, errOut := freshbench(t, "compare", sqliteOut, simOut)
		if code != 0 {
			t.Fatalf("compare: exit code %d: %s", code, errOut)
		}
		t.Log("\n" + out)
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`baseline sqlite\n`),
			regexp.MustCompile(`\n\s+target events/s\s+500\s+1,000\s+2\.00x\n`),
			regexp.MustCompile(`\n\s+rate\s+500 events/s\s+1000 events/s\n`),
			regexp.MustCompile(`\n\s+target\s+sqlite\s+sim\n`),
		} {
			if !want.MatchString(out) {
				t.Errorf("compare output does not match %s", want)
			}
		}
		// Freshness lag on sim is its visibility delay or more.
		m := regexp.MustCompile(`freshness lag p50 ms\s+\S+\s+(\S+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatal("no freshness lag p50 row")
		}
		if lag, err := strconv.ParseFloat(m[1], 64); err != nil || lag < 300 || lag > 1000 {
			t.Errorf("sim's freshness lag p50 in compare: %s ms, want 300-1000 ms (visibility delay 300ms)", m[1])
		}
	})

	t.Run("bad input", func(t *testing.T) {
		notResults := filepath.Join(dir, "notes.txt")
		os.WriteFile(notResults, []byte("not json\n"), 0o644)
		otherJSON := filepath.Join(dir, "package.json")
		os.WriteFile(otherJSON, []byte(`["a", "b"]`), 0o644)
		future := filepath.Join(dir, "future.json")
		b, _ := json.Marshal(map[string]any{"schema_version": results.SchemaVersion + 1})
		os.WriteFile(future, b, 0o644)
		missing := filepath.Join(dir, "missing.json")
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"report"}, "want one results file, got 0"},
			{[]string{"report", sqliteOut, simOut}, "want one results file, got 2"},
			{[]string{"report", missing}, "no such file or directory"},
			{[]string{"report", notResults}, "is not valid freshbench JSON"},
			{[]string{"report", otherJSON}, "is not valid freshbench JSON"},
			{[]string{"report", future}, fmt.Sprintf("has schema version %d; this freshbench reads versions 1 to %d", results.SchemaVersion+1, results.SchemaVersion)},
			{[]string{"report", sqliteOut, "-o", filepath.Join(notResults, "x.html")}, "-o " + filepath.Join(notResults, "x.html") + ":"},
			{[]string{"report", "-x", sqliteOut}, "flag provided but not defined: -x"},
			{[]string{"compare"}, "want two or more results files, got 0"},
			{[]string{"compare", sqliteOut}, "want two or more results files, got 1"},
			{[]string{"compare", sqliteOut, missing}, "no such file or directory"},
			{[]string{"compare", future, sqliteOut}, fmt.Sprintf("schema version %d", results.SchemaVersion+1)},
		} {
			wantUsageError(t, c.args, c.want)
		}
	})
}

// scrapeDuringRun waits for the run to print its metrics address and
// returns what /metrics served once events had been written.
func scrapeDuringRun(t *testing.T, stderr *lockedBuffer, done chan int) string {
	t.Helper()
	addrRe := regexp.MustCompile(`metrics: (http://127\.0\.0\.1:\d+/metrics)\n`)
	var last string
	// A starved search engine may take 10–20 s to map a new index's first
	// batch (seen in a busy round: the mapping update 10 s after the
	// index was made), all that time with the writes in flight.
	const within = time.Minute
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case code := <-done:
			done <- code
			t.Fatalf("the run ended before /metrics showed written events (exit code %d); last scrape:\n%.2000s\nstderr: %s", code, last, stderr.String())
		default:
		}
		m := addrRe.FindStringSubmatch(stderr.String())
		if m == nil {
			continue
		}
		resp, err := http.Get(m[1])
		if err != nil {
			t.Fatalf("scrape %s: %v", m[1], err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		last = string(body)
		if regexp.MustCompile(`freshbench_events_written_total\{[^}]*\} [1-9]`).MatchString(last) {
			return last
		}
	}
	t.Fatalf("no written events on /metrics within %s; last scrape:\n%.2000s\nstderr: %s", within, last, stderr.String())
	return ""
}

// checkOffline fails when the page would load anything: scripts, styles,
// images or fonts from elsewhere.
func checkOffline(t *testing.T, page string) {
	t.Helper()
	if !strings.Contains(page, "<svg") || !strings.Contains(page, "<style>") {
		t.Error("the report has no inline SVG chart or inline style")
	}
	if m := regexp.MustCompile(`(?i)(src|href)\s*=|@import|url\(|<link|<script`).FindString(page); m != "" {
		t.Errorf("the report refers to an outside resource (%q); it must work offline", m)
	}
}
