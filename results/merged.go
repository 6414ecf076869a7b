package results

import "time"

// Merged says what a merged result (KindMerged) was made of: the
// experiment, one row per instance whose results file was merged, and
// the instances that are missing or partial, so that none is silently
// averaged away. The merged figures are of the instances merged.
type Merged struct {
	Experiment string    `json:"experiment"`
	Instances  int       `json:"instances"` // how many the experiment has
	StartAt    time.Time `json:"start_at,omitzero"`
	// Rows are the instances merged, by instance index.
	Rows []MergedInstance `json:"instance_results"`
	// Missing are the instance indices (0..Instances-1) with no file.
	Missing []int `json:"missing"`
	// Partial are the instances merged that ended early or whose
	// completeness audit failed: their figures cover less than the
	// others'.
	Partial []int `json:"partial"`
	// Differences are the settings allowed to differ between instances
	// that did (rate, generators, seed, host, …), each with every file's
	// value.
	Differences []string `json:"differences,omitempty"`
}

// MergedInstance is one instance's results file as merged.
type MergedInstance struct {
	Instance             int       `json:"instance"` // from 0, as run with
	File                 string    `json:"file"`
	Host                 string    `json:"host"`
	Rate                 string    `json:"rate"`
	StartedAt            time.Time `json:"started_at"`
	EndedAt              time.Time `json:"ended_at"`
	EndedEarly           bool      `json:"ended_early"`
	EndReason            string    `json:"end_reason,omitempty"`
	AuditError           string    `json:"audit_error,omitempty"`
	Generators           []string  `json:"generators"`
	AchievedEventsPerSec float64   `json:"achieved_events_per_s"`
	AchievedMBPerSec     float64   `json:"achieved_mb_per_s"`
	// DriverCorePercent is the instance's driver CPU (100 = one core),
	// when it was measured: each instance is its own driver.
	DriverCorePercent float64 `json:"driver_core_percent,omitempty"`
}

// Partial tells whether the instance's figures cover less than a whole
// run: it ended early, or its completeness audit failed.
func (m MergedInstance) Partial() bool { return m.EndedEarly || m.AuditError != "" }
