package report

import (
	"bytes"
	"strings"
	"testing"
)

// A run through Kafka says so beside its completeness, without a secret
// of the URL.
func TestConsoleVia(t *testing.T) {
	res := runResult(2000, 1)
	var direct bytes.Buffer
	Console(&direct, res)
	if strings.Contains(direct.String(), "via ") {
		t.Errorf("a direct run mentions a via:\n%s", direct.String())
	}
	res.Config.Via = "kafka://u:s3cret@127.0.0.1:19092/t"
	var b bytes.Buffer
	Console(&b, res)
	out := b.String()
	want := "via kafka://u:xxxxx@127.0.0.1:19092/t: writes acknowledged by Kafka; missing = acknowledged by Kafka, never visible: lost in the pipeline"
	if !strings.Contains(out, want) {
		t.Errorf("console lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "s3cret") {
		t.Error("the via's password is in the output")
	}
}

// The HTML report of a run --via draws the backlog; that of direct writes
// does not.
func TestBacklogChart(t *testing.T) {
	res := runResult(2000, 1)
	if strings.Contains(render(t, res), "Backlog in Kafka") {
		t.Error("a run of direct writes has a backlog chart")
	}
	res.Config.Via = "kafka://127.0.0.1:19092/t"
	res.Series[3].Backlog = 2500
	page := render(t, res)
	for _, want := range []string{"Backlog in Kafka over time", "consumer lag up to 2500 records", "kafka://127.0.0.1:19092/t"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
