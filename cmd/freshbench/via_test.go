package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/via"
)

// A --via that cannot be used is refused before anything runs, on every
// command that takes one.
func TestViaBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	data := filepath.Join(dir, "data")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"not kafka", shortRun("--data-dir", data, "--via", "http://127.0.0.1:9/t", "--out", out), "want kafka://host:port/topic"},
		{"no topic", shortRun("--data-dir", data, "--via", "kafka://127.0.0.1:9", "--out", out), "the path must be a topic name"},
		{"unknown setting", shortRun("--data-dir", data, "--via", "kafka://127.0.0.1:9/t?ack=all", "--out", out), `query parameter "ack": the URL takes acks, compression, format, group, linger, partitions`},
		{"bad value", shortRun("--data-dir", data, "--via", "kafka://127.0.0.1:9/t?compression=brotli", "--out", out), "compression=\"brotli\""},
		{"in-process target", shortRun("--target", "sim://", "--via", "kafka://127.0.0.1:9/t", "--out", out), "a sim:// target lives inside freshbench"},
		{"peak", []string{"peak", "--target", "discard://", "--via", "kafka://127.0.0.1:9/t", "--out", out}, "a discard:// target lives inside freshbench"},
		// A database that ingests only from Kafka: without a topic, and
		// with updates it has no upsert for.
		{"via-only target", shortRun("--target", "druid://127.0.0.1:9/ds", "--out", out), "--target: druid ingests only from a Kafka topic, with its own Kafka ingestion; give --via kafka://host:port/topic"},
		{"via-only peak", []string{"peak", "--target", "druid://127.0.0.1:9/ds", "--out", out}, "give --via kafka://host:port/topic"},
		{"no upsert", shortRun("--target", "druid://127.0.0.1:9/ds", "--via", "kafka://127.0.0.1:9/t", "--update-share", "0.2", "--out", out),
			"--update-share 0.2: a druid target takes no updates: Druid has no upsert"},
		{"query without an ingest", []string{"query", "--target", "postgres://127.0.0.1:9/db", "--qps", "10", "--via", "kafka://127.0.0.1:9/t", "--out", out},
			"--via: only an ingest's events pass through Kafka; give --rate too"},
	} {
		t.Run(c.name, func(t *testing.T) { wantUsageError(t, c.args, c.want) })
	}
	if _, err := os.Stat(data); err == nil {
		t.Error("a refused --via still created the database in --data-dir")
	}
}

// A run --via a real broker writes every event to the topic, records the
// via and its settings, and Kafka's account of the topic. No sink writes
// the topic into this SQLite database, so its audit finds every event
// missing: the figures are the database's, not Kafka's.
func TestRunVia(t *testing.T) {
	t.Parallel() // a server, index, topic or data directory of its own; no rate or latency asserted
	broker := testenv.URL(t, "FRESHBENCH_TEST_KAFKA_URL", "scripts/kafka.sh")
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	topic := fmt.Sprintf("fb-cmd-via-%d", time.Now().UnixNano()%1e9)
	code, stdout, stderr := freshbench(t, shortRun("--data-dir", filepath.Join(dir, "data"), "--rate", "200", "--drain", "1s",
		"--via", strings.TrimSuffix(broker, "/")+"/"+topic+"?linger=1ms&partitions=2", "--out", out, "--quiet")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.EventsAcked == 0 || s.EventsFailed != 0 || s.EventsDue != s.EventsAcked+s.EventsFailed+s.EventsUnsent {
		t.Errorf("due %d, acknowledged %d, failed %d, unsent %d: want every event acknowledged by Kafka", s.EventsDue, s.EventsAcked, s.EventsFailed, s.EventsUnsent)
	}
	if !strings.HasSuffix(res.Config.Via, "/"+topic+"?linger=1ms&partitions=2") || res.Config.ViaSettings["partitions"] != "2" || res.Config.ViaSettings["acks"] != "all" {
		t.Errorf("via %q %v", res.Config.Via, res.Config.ViaSettings)
	}
	a := res.ServerAccount
	if a == nil || a.End == nil {
		t.Fatalf("server account %+v: want Kafka's at the end", a)
	}
	if k, err := via.AccountOf(a.End); err != nil || k == nil || len(k.EndOffsets) != 2 {
		t.Fatalf("server account %+v (%v): want Kafka's, with 2 partitions", k, err)
	}
	if acked := s.EventsAcked + res.Phase(results.PhaseWarmup).Acked; res.Target().Completeness[0].Missing != acked {
		t.Errorf("completeness %+v: no sink, so want all %d missing\n%s", res.Target().Completeness[0], acked, stdout)
	}
}

// The query workload runs beside an ingest --via: the events go to Kafka,
// the queries to the database.
func TestQueryVia(t *testing.T) {
	t.Parallel() // a server, index, topic or data directory of its own; no rate or latency asserted
	broker := testenv.URL(t, "FRESHBENCH_TEST_KAFKA_URL", "scripts/kafka.sh")
	dir := t.TempDir()
	out := filepath.Join(dir, "q.json")
	topic := fmt.Sprintf("fb-cmd-query-via-%d", time.Now().UnixNano()%1e9)
	code, _, stderr := freshbench(t, "query", "--data-dir", filepath.Join(dir, "data"), "--rate", "100", "--qps", "5",
		"--duration", "2s", "--warmup", "0s", "--drain", "1s", "--metrics-addr", "127.0.0.1:0",
		"--via", strings.TrimSuffix(broker, "/")+"/"+topic, "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Config.Via == "" || res.Target().Queries == nil || res.Summary.EventsAcked == 0 {
		t.Errorf("via %q, queries %v, %d acknowledged: want the queries beside an ingest through Kafka", res.Config.Via, res.Target().Queries != nil, res.Summary.EventsAcked)
	}
}
