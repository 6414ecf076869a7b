package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes res as indented JSON, atomically (see writeJSON).
func WriteFile(path string, res *Result) error {
	return writeJSON(path, "results", res)
}

// WriteMachineCalibration writes mc as this machine's calibration,
// atomically (see writeJSON).
func WriteMachineCalibration(path string, mc *MachineCalibration) error {
	return writeJSON(path, "calibration", mc)
}

// writeJSON writes v as indented JSON to path through a temporary file
// renamed over it: a reader never sees half a file, and an existing file
// is replaced only by a complete one. what names the file in errors.
func writeJSON(path, what string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s directory %s: %w", what, dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".freshbench-"+what+"-*")
	if err != nil {
		return fmt.Errorf("%s file %s: %w", what, path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s file %s: %w", what, path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s file %s: %w", what, path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s file %s: %w", what, path, err)
	}
	return nil
}

// CheckWritable fails early, before a run, when path cannot be written.
func CheckWritable(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: directory cannot be created: %w", path, err)
	}
	f, err := os.CreateTemp(dir, ".freshbench-results-*")
	if err != nil {
		return fmt.Errorf("%s: directory is not writable: %w", path, err)
	}
	f.Close()
	os.Remove(f.Name())
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s: is a directory; give a file name such as %s", path, filepath.Join(path, "results.json"))
	}
	return nil
}

// ReadFile reads a results file, checking its schema version.
func ReadFile(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	var res Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("results file %s is not valid freshbench JSON: %w", path, err)
	}
	if res.SchemaVersion == 0 {
		return nil, fmt.Errorf("%s is not a freshbench results file (it has no schema_version)", path)
	}
	if res.SchemaVersion < 1 || res.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("results file %s has schema version %d; this freshbench reads versions 1 to %d", path, res.SchemaVersion, SchemaVersion)
	}
	migrate(&res)
	return &res, nil
}

// migrate brings an older results file to the current schema, marking
// what it could not recover.
func migrate(res *Result) {
	if res.SchemaVersion >= SchemaVersion {
		return
	}
	// Version 1 counted a phase's acknowledged events and bytes when they
	// were acknowledged: that is throughput now. Events by intended time
	// cannot be recovered; due is what was dispatched or unsent.
	if res.SchemaVersion == 1 {
		for _, p := range res.Phases {
			p.Throughput, p.ThroughputBytes = p.Acked, p.AckedBytes
			p.Due = p.Dispatched + p.Unsent
		}
		res.Summary.EventsDue = res.Summary.EventsAcked + res.Summary.EventsFailed + res.Summary.EventsUnsent
	}
	if res.SchemaVersion < 3 && res.Kind == "" {
		res.Kind = kindOf(res)
	}
	for _, s := range res.Steps {
		s.SchemaVersion = res.SchemaVersion
		migrate(s)
		if res.Kind == KindPeak {
			s.Kind = KindStep
		}
	}
	res.MigratedFrom = res.SchemaVersion
	res.SchemaVersion = SchemaVersion
}

// kindOf tells the kind of a result written before the file said it
// (version 1 and 2), from what it holds and the command that wrote it.
func kindOf(res *Result) string {
	switch {
	case len(res.Steps) > 0 || res.Peak != nil:
		return KindPeak
	case res.Command == "peak step":
		return KindStep
	case res.QuerySweep != nil:
		return KindSweep
	case res.Queries != nil && (len(res.Generators) == 0 || res.Command == "query"):
		return KindQuery
	}
	return KindRun
}
