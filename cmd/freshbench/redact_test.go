package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// secret returns a string that appears nowhere unless a credential leaks.
func secret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "Sekrit" + hex.EncodeToString(b)
}

// serverHost is host:port of the test server named by env, or "" when
// the variable is not set.
func serverHost(t *testing.T, env string) string {
	t.Helper()
	raw := os.Getenv(env)
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	return u.Host
}

// redactRole creates (or resets) a PostgreSQL login role whose password is
// pw, a member of the test URL's user so that it may create its table: the
// shared server's own password is a common word and cannot serve as a
// secret to search for. The role and its table are dropped when the test
// ends.
func redactRole(t *testing.T, adminURL, pw, table string) string {
	t.Helper()
	const role = "freshbench_report_redact"
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, strings.Replace(adminURL, "?table=events", "", 1))
	if err != nil {
		t.Fatalf("connect to the PostgreSQL test server: %v", err)
	}
	defer conn.Close(ctx)
	var admin string
	if err := conn.QueryRow(ctx, "SELECT current_user").Scan(&admin); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The role and what it may have left behind after a failed run.
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, strings.Replace(adminURL, "?table=events", "", 1))
		if err != nil {
			t.Errorf("clean up role %s: %v", role, err)
			return
		}
		defer conn.Close(ctx)
		for _, q := range []string{`DROP TABLE IF EXISTS ` + table, `DROP ROLE IF EXISTS ` + role} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	for _, q := range []string{
		`DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '` + role + `') THEN CREATE ROLE ` + role + ` LOGIN; END IF; END $$`,
		`ALTER ROLE ` + role + ` PASSWORD '` + pw + `'`,
		`GRANT ` + pgx.Identifier{admin}.Sanitize() + ` TO ` + role,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return role
}

// dropTable drops table, if there is one, on the PostgreSQL test server.
func dropTable(t *testing.T, adminURL, table string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, strings.Replace(adminURL, "?table=events", "", 1))
	if err != nil {
		t.Errorf("drop table %s: %v", table, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+table); err != nil {
		t.Errorf("drop table %s: %v", table, err)
	}
}

// TestNoOutputShowsACredential runs every credential form of every target
// through every output freshbench produces: the error of an open that
// fails, and for a run that succeeds its console output and progress, the
// Prometheus labels, the results file, the HTML report and the comparison.
// A secret anywhere fails the test.
func TestNoOutputShowsACredential(t *testing.T) {
	if testing.Short() {
		t.Skip("runs against the test servers")
	}
	pg := serverHost(t, "FRESHBENCH_TEST_POSTGRES_URL")
	es := serverHost(t, "FRESHBENCH_TEST_ELASTICSEARCH_URL")
	os1 := serverHost(t, "FRESHBENCH_TEST_OPENSEARCH_URL")
	s := secret(t)
	rolePW := secret(t) // the PostgreSQL role's real password, secret too
	const tbl = "report_redact"
	role := ""
	if pg != "" {
		role = redactRole(t, os.Getenv("FRESHBENCH_TEST_POSTGRES_URL"), rolePW, tbl)
	}
	const closed = "127.0.0.1:1" // nothing listens: an open or setup that fails
	const idx = "report-redact"

	type form struct {
		name   string
		server string            // host:port of the server the form runs against; "" = none
		url    string            // with HOST for the server's host:port
		env    map[string]string // credentials from the environment
		runs   bool              // a run with the real server succeeds
	}
	forms := []form{
		{name: "postgres userinfo", server: pg, url: "postgres://" + role + ":" + rolePW + "@HOST/freshbench?table=" + tbl, runs: true},
		{name: "postgres password parameter", server: pg, url: "postgres://" + role + "@HOST/freshbench?table=" + tbl + "&password=" + rolePW, runs: true},
		{name: "postgresql sslpassword parameter", server: pg, url: "postgresql://" + role + ":" + rolePW + "@HOST/freshbench?sslpassword=" + s + "&table=" + tbl, runs: true},
		{name: "postgres PGPASSWORD", server: pg, url: "postgres://" + role + "@HOST/freshbench?table=" + tbl, env: map[string]string{"PGPASSWORD": rolePW}, runs: true},
		{name: "postgres Password parameter", server: pg, url: "postgres://" + role + "@HOST/freshbench?Password=" + s + "&table=" + tbl},
		{name: "postgres PASSWORD and SSLPassword parameters", server: pg, url: "postgres://" + role + "@HOST/freshbench?PASSWORD=" + s + "&SSLPassword=" + s},
		{name: "libpq key=value DSN", server: pg, url: "host=HOST user=" + role + " password=" + s + " dbname=freshbench"},
		{name: "libpq DSN quoted password", server: pg, url: "host=HOST user=" + role + " password='" + s + " x' dbname=freshbench"},
		{name: "elasticsearch userinfo", server: es, url: "elasticsearch://elastic:" + s + "@HOST/" + idx, runs: true},
		{name: "elasticsearch FRESHBENCH_ES_PASSWORD", server: es, url: "elasticsearch://HOST/" + idx,
			env: map[string]string{"FRESHBENCH_ES_USERNAME": "elastic", "FRESHBENCH_ES_PASSWORD": s}, runs: true},
		{name: "elasticsearch FRESHBENCH_ES_API_KEY", server: es, url: "elasticsearch://HOST/" + idx,
			env: map[string]string{"FRESHBENCH_ES_API_KEY": s}, runs: true},
		{name: "elasticsearch api_key parameter", server: es, url: "elasticsearch://HOST/" + idx + "?api_key=" + s},
		{name: "elasticsearch apikey parameter", server: es, url: "elasticsearch://HOST/" + idx + "?apikey=" + s},
		{name: "elasticsearch ApiKey parameter", server: es, url: "elasticsearch+https://HOST/" + idx + "?ApiKey=" + s},
		{name: "elasticsearch Password parameter", server: es, url: "elasticsearch://u@HOST/" + idx + "?Password=" + s},
		{name: "opensearch userinfo", server: os1, url: "opensearch://admin:" + s + "@HOST/" + idx, runs: true},
		{name: "opensearch FRESHBENCH_OS_PASSWORD", server: os1, url: "opensearch://HOST/" + idx,
			env: map[string]string{"FRESHBENCH_OS_USERNAME": "admin", "FRESHBENCH_OS_PASSWORD": s}, runs: true},
		{name: "opensearch+https userinfo", server: os1, url: "opensearch+https://admin:" + s + "@HOST/" + idx},
		// SQLite takes no credentials, but one given by mistake is a
		// secret all the same; its error message quotes the URL.
		{name: "sqlite userinfo", url: "sqlite://u:" + s + "@"},
		{name: "postgres PGSSLPASSWORD", server: pg, url: "postgres://" + role + "@HOST/freshbench?table=" + tbl,
			env: map[string]string{"PGPASSWORD": rolePW, "PGSSLPASSWORD": s}, runs: true},
	}
	secrets := []string{s, rolePW}
	check := func(t *testing.T, output, text string) {
		t.Helper()
		for _, sec := range secrets {
			if i := strings.Index(text, sec); i >= 0 {
				t.Errorf("%s shows a secret: …%s…", output, text[max(0, i-120):min(len(text), i+len(sec)+40)])
			}
		}
	}
	for i, f := range forms {
		// A table and an index of each form's own, so that the forms
		// without environment variables run at once (t.Setenv is per
		// process: those with them run one at a time, first).
		own := fmt.Sprintf("_%d", i)
		f.url = strings.NewReplacer("table="+tbl, "table="+tbl+own, "/"+idx, "/"+idx+own).Replace(f.url)
		t.Run(f.name, func(t *testing.T) {
			if len(f.env) == 0 {
				t.Parallel()
			}
			for k, v := range f.env {
				t.Setenv(k, v)
			}
			if f.server == pg && pg != "" {
				// What a failed run may leave behind, before the role
				// that owns it is dropped.
				t.Cleanup(func() { dropTable(t, os.Getenv("FRESHBENCH_TEST_POSTGRES_URL"), tbl+own) })
			}
			dir := t.TempDir()

			// An open (or setup) that fails: nothing listens on the port.
			bad := strings.ReplaceAll(f.url, "HOST", closed)
			if strings.HasPrefix(bad, "host=") {
				h, p, _ := net.SplitHostPort(closed)
				bad = strings.Replace(bad, "host="+closed, "host="+h+" port="+p, 1)
			}
			code, out, errOut := freshbench(t, "run", "--target", bad, "--duration", "1s", "--warmup", "0s",
				"--write-timeout", "2s", "--metrics-addr=", "--out", filepath.Join(dir, "bad.json"))
			if code == 0 {
				t.Errorf("run against %s succeeded, want a failed open", closed)
			}
			check(t, "the failed open's output", out+errOut)

			if !f.runs {
				return
			}
			if f.server == "" {
				t.Skip("no test server for this target (see scripts/)")
			}
			good := strings.ReplaceAll(f.url, "HOST", f.server)
			results := filepath.Join(dir, "run.json")
			var stdout bytes.Buffer
			var stderr lockedBuffer
			done := make(chan int, 1)
			go func() {
				done <- Main(context.Background(), shortRun("--target", good, "--out", results, "--rate", "200",
					"--batch-size", "20", "--teardown"), &stdout, &stderr)
			}()
			scraped := scrapeDuringRun(t, &stderr, done)
			if code := <-done; code != 0 {
				t.Fatalf("run: exit code %d\nstderr: %s", code, stderr.String())
			}
			check(t, "/metrics", scraped)
			check(t, "the run's output", stdout.String()+stderr.String())
			file, err := os.ReadFile(results)
			if err != nil {
				t.Fatal(err)
			}
			check(t, "the results file", string(file))
			code, out, errOut = freshbench(t, "report", results, "-o", "-")
			if code != 0 {
				t.Fatalf("report: exit code %d: %s", code, errOut)
			}
			check(t, "the HTML report", out+errOut)
			code, out, errOut = freshbench(t, "compare", results, results)
			if code != 0 {
				t.Fatalf("compare: exit code %d: %s", code, errOut)
			}
			check(t, "the comparison", out+errOut)
		})
	}
}
