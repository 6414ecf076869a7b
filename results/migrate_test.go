package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/stats"
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

// A peak search written under the rule of two verdicts (by freshbench at
// 7f1924f, schema 3; testdata/peak-v3-*.json, their series left out)
// judged a step too short to tell its trend not sustainable. Read now,
// such a step is not yet known and the peak counts it so; a step with
// evidence of a backlog beside (late batches) stays not sustainable; a
// schema-4 file of the same rule reads the same, and a current file's
// verdicts are left as they are.
func TestReadTwoVerdictSteps(t *testing.T) {
	res, err := ReadFile(filepath.Join("testdata", "peak-v3-too-short.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || res.MigratedFrom != 3 {
		t.Fatalf("%d steps, migrated from %d; want 2 steps from version 3", len(res.Steps), res.MigratedFrom)
	}
	if v := res.Steps[0].Verdict; v.Decision() != stats.DecisionSustainable {
		t.Errorf("step 1: %s, want sustainable", v)
	}
	v := res.Steps[1].Verdict
	if v.Decision() != stats.DecisionNotYetKnown || len(v.Reasons) != 0 || !strings.Contains(v.Reason(), "too short to tell") {
		t.Errorf("step 2: %s (reasons %q), want not yet known: too short to tell", v, v.Reasons)
	}
	if p := res.Peak; !p.Found || p.Step != 0 || p.NotYetKnown != 1 || !strings.Contains(p.Reason, "1 step(s) judged not sustainable only for being too short to tell are not yet known") {
		t.Errorf("peak %+v, want step 1 with one step not yet known", p)
	}

	late, err := ReadFile(filepath.Join("testdata", "peak-v3-late.json"))
	if err != nil {
		t.Fatal(err)
	}
	if v := late.Steps[0].Verdict; v.Decision() != stats.DecisionNotSustainable || !strings.Contains(v.Reason(), "batches late") {
		t.Errorf("a step with late batches: %s, want not sustainable", v)
	}
	if late.Peak.NotYetKnown != 0 {
		t.Errorf("peak counts %d steps not yet known, want 0", late.Peak.NotYetKnown)
	}

	tooShort := `{"reasons":["freshness lag trend -6.3 ms/s could be as high as 224.2 ms/s (5.0 ms/s tolerated): the step is too short to tell at this noise; a hold of at least 1h55m20s is needed"]}`
	for _, c := range []struct {
		version int
		want    string
	}{{4, stats.DecisionNotYetKnown}, {SchemaVersion, stats.DecisionNotSustainable}} {
		path := filepath.Join(t.TempDir(), "peak.json")
		body := fmt.Sprintf(`{"schema_version":%d,"kind":"peak","command":"peak","peak":{"found":false,"step":-1,"reason":"step 1 was not sustainable"},
		"steps":[{"schema_version":%[1]d,"kind":"step","verdict":%s}]}`, c.version, tooShort)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Steps[0].Verdict.Decision(); got != c.want {
			t.Errorf("version %d: %s, want %s", c.version, got, c.want)
		}
	}
}

// A schema-5 file (written by freshbench at 5d41d24, testdata/*-v5-
// endpoints.json: a run with a read endpoint and updates, a query beside
// an ingest with a read endpoint) held the target's figures at the top
// and the others in read_endpoints. Read now, they are the endpoint list,
// the target first, each figure as the file held it, and the summary
// derived from the list is the one the old code stored.
func TestReadVersion5Endpoints(t *testing.T) {
	for _, name := range []string{"run-v5-endpoints.json", "query-v5-endpoints.json"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var old map[string]json.RawMessage
			if err := json.Unmarshal(b, &old); err != nil {
				t.Fatal(err)
			}
			res, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if res.MigratedFrom != 5 || res.SchemaVersion != SchemaVersion {
				t.Fatalf("migrated from %d to %d; want 5 to %d", res.MigratedFrom, res.SchemaVersion, SchemaVersion)
			}
			var reads []json.RawMessage
			if err := json.Unmarshal(old["read_endpoints"], &reads); err != nil || len(reads) == 0 {
				t.Fatalf("testdata holds no read endpoints (%v)", err)
			}
			if len(res.Endpoints) != 1+len(reads) {
				t.Fatalf("%d endpoints; want the target and %d read endpoints", len(res.Endpoints), len(reads))
			}
			tgt := res.Endpoints[0]
			if tgt.Name != TargetEndpoint || tgt.URL != res.Environment.TargetURL || tgt.URL == "" {
				t.Errorf("endpoint 0: %q at %q; want %q at %q", tgt.Name, tgt.URL, TargetEndpoint, res.Environment.TargetURL)
			}
			for field, got := range map[string]any{
				"freshness": tgt.Freshness, "visibility": tgt.Visibility, "completeness": tgt.Completeness,
				"queries": tgt.Queries, "updates": tgt.Updates,
			} {
				sameJSON(t, "target's "+field, got, old[field])
			}
			for i, r := range reads {
				sameJSON(t, fmt.Sprintf("read endpoint %d", i), res.Endpoints[i+1], r)
			}
			if res.Kind == KindRun {
				sameJSON(t, "summary derived again", Summarize(res, res.Summary.MeasuredS), old["summary"])
			}

			// Written and read again, the file holds the list alone.
			again := filepath.Join(t.TempDir(), name)
			if err := WriteFile(again, res); err != nil {
				t.Fatal(err)
			}
			nb, err := os.ReadFile(again)
			if err != nil {
				t.Fatal(err)
			}
			var now map[string]json.RawMessage
			if err := json.Unmarshal(nb, &now); err != nil {
				t.Fatal(err)
			}
			for _, gone := range []string{"freshness", "visibility", "completeness", "queries", "updates", "read_endpoints"} {
				if _, ok := now[gone]; ok {
					t.Errorf("written again, the file holds %q at the top", gone)
				}
			}
			back, err := ReadFile(again)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "endpoints read back", back.Endpoints, now["endpoints"])
			sameJSON(t, "endpoints written", res.Endpoints, now["endpoints"])
		})
	}
}

// sameJSON fails t unless got encodes to the JSON value want (absent or
// null: got encodes to null or is empty).
func sameJSON(t *testing.T, what string, got any, want json.RawMessage) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var gv, wv any
	if err := json.Unmarshal(g, &gv); err != nil {
		t.Fatal(err)
	}
	if len(want) > 0 {
		if err := json.Unmarshal(want, &wv); err != nil {
			t.Fatal(err)
		}
	}
	if empty(gv) && empty(wv) {
		return
	}
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("%s differs:\n got %s\nwant %s", what, g, want)
	}
}

func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case []any:
		return len(v) == 0
	}
	return false
}
