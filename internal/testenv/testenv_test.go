package testenv

import (
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a test would have ended.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()           {}
func (r *recorder) Fatal(args ...any) { r.fatal = args[0].(string) }
func (r *recorder) Skip(args ...any)  { r.skip = args[0].(string) }

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
