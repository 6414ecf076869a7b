package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/results"
)

// A results file written before the redactor knew a credential form (or
// edited by hand) still renders without the secret: every output shows the
// target URL through redact.URL again.
func TestRenderedTargetURLHidesCredentials(t *testing.T) {
	const secret = "s3cretZZ"
	for _, raw := range []string{
		"postgres://u@127.0.0.1/db?PASSWORD=" + secret + "&table=t",
		"postgres://u:" + secret + "@127.0.0.1/db",
		"host=127.0.0.1 password=" + secret,
	} {
		res := runResult(1000, 1)
		res.Environment.TargetURL = raw
		q := runResult(1000, 2)
		q.Target().Queries = queryResult(100, 3)
		q.Target().Queries.Beside = nil
		q.Kind, q.Command, q.Environment.TargetURL = results.KindQuery, "query", raw
		peak := peakResult()
		peak.Environment.TargetURL = raw
		var out bytes.Buffer
		for _, r := range []*results.Result{res, q, peak} {
			Console(&out, r)
			if err := HTML(&out, r); err != nil {
				t.Fatal(err)
			}
		}
		ConsoleQueries(&out, q)
		Compare(&out, []string{"a", "b"}, []*results.Result{res, runResult(500, 4)})
		if i := strings.Index(out.String(), secret); i >= 0 {
			t.Errorf("%s: the rendered output shows the secret: …%s…", raw, out.String()[max(0, i-80):i+len(secret)])
		}
		if !strings.Contains(out.String(), "xxxxx") {
			t.Errorf("%s: no redacted URL in the output", raw)
		}
	}
}
