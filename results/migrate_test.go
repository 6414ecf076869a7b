package results

import (
	"os"
	"path/filepath"
	"testing"
)

// A version 1 file reads as the current schema: its acknowledgements,
// counted then by the time they arrived, are the throughput now.
func TestReadVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.json")
	v1 := `{"schema_version":1,"command":"run","phases":[{"name":"measured","events_dispatched":900,"events_unsent":100,"events_acked":880,"bytes_acked":880000,"events_failed":20}],
	"summary":{"events_acked":880,"events_failed":20,"events_unsent":100},
	"steps":[{"schema_version":1,"phases":[{"name":"measured","events_dispatched":10,"events_acked":10,"bytes_acked":1000}]}]}`
	if err := os.WriteFile(path, []byte(v1), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Phases[0]
	if res.MigratedFrom != 1 || p.Throughput != 880 || p.ThroughputBytes != 880000 || p.Due != 1000 || res.Summary.EventsDue != 1000 {
		t.Fatalf("migrated from %d: throughput %d events %d bytes, due %d, summary due %d; want 1, 880, 880000, 1000, 1000",
			res.MigratedFrom, p.Throughput, p.ThroughputBytes, p.Due, res.Summary.EventsDue)
	}
	if s := res.Steps[0].Phases[0]; s.Throughput != 10 || res.Steps[0].MigratedFrom != 1 {
		t.Fatalf("step: throughput %d, migrated from %d; want 10 and 1", s.Throughput, res.Steps[0].MigratedFrom)
	}
}
