package testenv

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records how a test would have ended,
// and what it logged.
type recorder struct {
	testing.TB
	fatal, skip string
	logs        []string
}

func (r *recorder) Helper()           {}
func (r *recorder) Fatal(args ...any) { r.fatal = args[0].(string) }
func (r *recorder) Skip(args ...any)  { r.skip = args[0].(string) }
func (r *recorder) Failed() bool      { return r.fatal != "" }
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

const env = "FRESHBENCH_TEST_TESTENV_URL"

func TestURLSet(t *testing.T) {
	t.Setenv(env, "postgres://127.0.0.1:1/x")
	t.Setenv(RequireEnv, "1")
	r := &recorder{}
	if got := URL(r, env, "scripts/postgres.sh"); got != "postgres://127.0.0.1:1/x" || r.fatal != "" || r.skip != "" {
		t.Errorf("URL = %q, fatal %q, skip %q; want the variable's value and the test going on", got, r.fatal, r.skip)
	}
}

func TestURLMissingSkips(t *testing.T) {
	t.Setenv(env, "")
	t.Setenv(RequireEnv, "")
	r := &recorder{}
	URL(r, env, "scripts/postgres-replica.sh", "primary")
	if r.fatal != "" || !strings.Contains(r.skip, env+"=$(scripts/postgres-replica.sh url primary)") || !strings.Contains(r.skip, "`scripts/postgres-replica.sh start`") {
		t.Errorf("fatal %q, skip %q; want a skip that says how to start the server and set the variable", r.fatal, r.skip)
	}
}

func TestURLMissingFailsWhenRequired(t *testing.T) {
	t.Setenv(env, "")
	t.Setenv(RequireEnv, "1")
	r := &recorder{}
	URL(r, env, "scripts/kafka.sh")
	if r.skip != "" || !strings.Contains(r.fatal, env) || !strings.Contains(r.fatal, RequireEnv+"=1") {
		t.Errorf("fatal %q, skip %q; want a failure that names the variable and why it fails", r.fatal, r.skip)
	}
}

// A run whose premise fails is tried again at half the rate, saying why,
// until it holds or the rate would fall below the lowest.
func TestLowerRate(t *testing.T) {
	for _, c := range []struct {
		keeps, wantRate float64
		wantUnmet       bool
		tries           int
	}{{2000, 2000, false, 1}, {600, 500, false, 3}, {100, 250, true, 4}} {
		tb := &recorder{}
		var tried []float64
		rate, unmet := LowerRate(tb, 2000, 250, func(rate float64) string {
			tried = append(tried, rate)
			if rate > c.keeps {
				return fmt.Sprintf("kept %.0f", c.keeps)
			}
			return ""
		})
		if rate != c.wantRate || (unmet != "") != c.wantUnmet || len(tried) != c.tries || len(tb.logs) != c.tries-1 {
			t.Errorf("keeping %.0f: last rate %.0f (%q) after %v, logged %q; want %.0f after %d tries, unmet %v",
				c.keeps, rate, unmet, tried, tb.logs, c.wantRate, c.tries, c.wantUnmet)
		}
		for _, l := range tb.logs {
			if !strings.Contains(l, "kept") || !strings.Contains(l, "trying again at") {
				t.Errorf("logged %q; want why and the next rate", l)
			}
		}
	}
}

// A request to a mute server ends only by the client's own bound.
func TestMute(t *testing.T) {
	addr := Mute(t)
	c := &http.Client{Timeout: 50 * time.Millisecond}
	start := time.Now()
	_, err := c.Get("http://" + addr)
	if err == nil || time.Since(start) < 50*time.Millisecond {
		t.Errorf("%v after %s; want the client's 50ms timeout", err, time.Since(start))
	}
}

// WaitingTests sets the flag that -parallel sets.
func TestWaitingTests(t *testing.T) {
	f := flag.Lookup("test.parallel")
	old := f.Value.String()
	defer flag.Set("test.parallel", old)
	WaitingTests(7)
	if got := f.Value.String(); got != "7" {
		t.Errorf("-parallel %s after WaitingTests(7), want 7", got)
	}
}

// BuildFreshbench gives the same executable each time, which runs as
// freshbench; a build that cannot run says so.
func TestBuildFreshbench(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := BuildFreshbench(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "freshbench ") {
		t.Errorf("%s version: %q, %v; want freshbench's version", bin, out, err)
	}
	if again, err := BuildFreshbench(ctx); err != nil || again != bin {
		t.Errorf("built again at %s (%v); want the same executable, %s", again, err, bin)
	}
	cancelled, stop := context.WithCancel(ctx)
	stop()
	if _, err := BuildFreshbench(cancelled); err == nil {
		t.Error("a build with its context cancelled succeeded")
	}
}
