package results

import (
	"fmt"
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

// A version 2 file did not say what it holds; read, it carries the kind
// its content and command show, and a peak's steps are steps.
func TestReadVersion2Kinds(t *testing.T) {
	for _, c := range []struct {
		name, file, kind, stepKind string
	}{
		{"run", `{"schema_version":2,"command":"run","generators":["1"]}`, KindRun, ""},
		{"run with queries beside", `{"schema_version":2,"command":"run","generators":["1"],"queries":{"mode":"open"}}`, KindRun, ""},
		{"peak", `{"schema_version":2,"command":"peak","generators":["1"],"steps":[{"schema_version":2,"command":"peak step","generators":["1"]}],"peak":{"found":true}}`, KindPeak, KindStep},
		{"peak step", `{"schema_version":2,"command":"peak step","generators":["1"]}`, KindStep, ""},
		{"query alone", `{"schema_version":2,"command":"query","queries":{"mode":"open"}}`, KindQuery, ""},
		{"query beside an ingest", `{"schema_version":2,"command":"query","generators":["1"],"queries":{"mode":"open"}}`, KindQuery, ""},
		{"sweep", `{"schema_version":2,"command":"query","queries":{"mode":"open"},"query_sweep":{"slo":"p95<200ms","steps":[{"mode":"open"}]}}`, KindSweep, ""},
		{"sweep beside an ingest", `{"schema_version":2,"command":"query","generators":["1"],"queries":{"mode":"open"},"query_sweep":{"slo":"p95<200ms"}}`, KindSweep, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "v2.json")
			if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != c.kind || res.MigratedFrom != 2 || res.SchemaVersion != SchemaVersion {
				t.Fatalf("kind %q, migrated from %d, schema %d; want %q, 2, %d", res.Kind, res.MigratedFrom, res.SchemaVersion, c.kind, SchemaVersion)
			}
			for i, s := range res.Steps {
				if s.Kind != c.stepKind {
					t.Errorf("step %d: kind %q; want %q", i+1, s.Kind, c.stepKind)
				}
			}
		})
	}
}

// A file of the current version keeps the kind it says, whatever it
// holds: the kind is read, not guessed.
func TestKindRoundTrips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v3.json")
	res := &Result{SchemaVersion: SchemaVersion, Kind: KindMerged, Command: "merge", Steps: []*Result{{SchemaVersion: SchemaVersion, Kind: KindRun}}}
	if err := WriteFile(path, res); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Kind != KindMerged || back.Steps[0].Kind != KindRun || back.MigratedFrom != 0 {
		t.Fatalf("kind %q, step kind %q, migrated from %d; want %q, %q, 0", back.Kind, back.Steps[0].Kind, back.MigratedFrom, KindMerged, KindRun)
	}
}

// A file newer than this freshbench, or with no version, is refused.
func TestReadRefusesUnknownVersions(t *testing.T) {
	for _, file := range []string{fmt.Sprintf(`{"schema_version":%d}`, SchemaVersion+1), `{"command":"run"}`} {
		path := filepath.Join(t.TempDir(), "r.json")
		if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(path); err == nil {
			t.Errorf("%s: read without error", file)
		}
	}
}
