package results

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/freshbench/freshbench/outfile"
	"github.com/freshbench/freshbench/stats"
)

// WriteFile writes res as indented JSON to path (see outfile.Write).
func WriteFile(path string, res *Result) error {
	b, err := Marshal(res)
	if err != nil {
		return err
	}
	return outfile.Write(path, b)
}

// WriteMachineCalibration writes mc as this machine's calibration (see
// outfile.Write).
func WriteMachineCalibration(path string, mc *MachineCalibration) error {
	b, err := json.MarshalIndent(mc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode calibration: %w", err)
	}
	return outfile.Write(path, append(b, '\n'))
}

// Marshal is the content of a results file holding res.
func Marshal(res *Result) ([]byte, error) {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode results: %w", err)
	}
	return append(b, '\n'), nil
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
	if res.Verdict != nil {
		migrateVerdict(res.Verdict)
	}
	undecided := 0
	for _, s := range res.Steps {
		s.SchemaVersion = res.SchemaVersion
		was := s.Verdict != nil && s.Verdict.Undecided
		migrate(s)
		if res.Kind == KindPeak {
			s.Kind = KindStep
		}
		if !was && s.Verdict != nil && s.Verdict.Undecided {
			undecided++
		}
	}
	if res.Peak != nil && undecided > 0 {
		res.Peak.NotYetKnown += undecided
		res.Peak.Reason += fmt.Sprintf(" (read by the rule of three verdicts: %d step(s) judged not sustainable only for being too short to tell are not yet known)", undecided)
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
	case res.Target().Queries != nil && (len(res.Generators) == 0 || res.Command == "query"):
		return KindQuery
	}
	return KindRun
}

// tooShort are the reasons the rule of two verdicts (before version 5)
// gave a step too short to tell its trends: what it could not rule out,
// not evidence of a backlog.
var tooShort = []string{
	"too short to judge a trend; a hold of at least",
	"the step is too short to tell at this noise; a hold of at least",
	"or the visibility period is longer than the step (then a hold of at least",
	"refreshes: a hold of at least",
}

// migrateVerdict reads a verdict of the rule of two verdicts by the rule
// of three: a step not sustainable only for being too short to tell is
// not yet known, its reasons what it could not rule out. A step with any
// other reason keeps its verdict: that reason is evidence of a backlog.
func migrateVerdict(v *stats.Verdict) {
	if v.Sustainable || v.Undecided || len(v.Reasons) == 0 {
		return
	}
	for _, r := range v.Reasons {
		if !slices.ContainsFunc(tooShort, func(s string) bool { return strings.Contains(r, s) }) {
			return
		}
	}
	v.Undecided, v.Open, v.Reasons = true, v.Reasons, nil
}
