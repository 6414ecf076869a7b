package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/results"
)

// A run through Kafka says so beside its completeness, with the topic's
// records and the sink's consumer lag from Kafka's account; without a
// secret of the URL.
func TestConsoleVia(t *testing.T) {
	res := runResult(2000, 1)
	var direct bytes.Buffer
	Console(&direct, res)
	if strings.Contains(direct.String(), "via ") {
		t.Errorf("a direct run mentions a via:\n%s", direct.String())
	}
	res.Config.Via = "kafka://u:s3cret@127.0.0.1:19092/t"
	res.ServerAccount = &results.Account{
		Start: &results.ServerAccount{Kafka: &results.KafkaAccount{Topic: "t", EndOffsets: map[int32]int64{0: 100, 1: 50},
			Groups: []results.KafkaGroupLag{{Group: "connect-sink", Lag: 30}}}},
		End: &results.ServerAccount{Kafka: &results.KafkaAccount{Topic: "t", EndOffsets: map[int32]int64{0: 1000, 1: 900},
			Groups: []results.KafkaGroupLag{{Group: "connect-sink", Lag: 0}}}},
	}
	var b bytes.Buffer
	Console(&b, res)
	out := b.String()
	for _, want := range []string{
		"via kafka://u:xxxxx@127.0.0.1:19092/t: writes acknowledged by Kafka; missing = acknowledged by Kafka, never visible: lost in the pipeline",
		"topic t: 150 records at the start of the measured phase, 1900 at its end",
		"consumer lag (records the sink has not committed): connect-sink 30 → 0 records",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
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
