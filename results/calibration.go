package results

import "time"

// KindCalibration is a calibration (freshbench calibrate): the driver
// measured alone against a no-op server, one peak search per batch size,
// each kept in Steps as a result of KindPeak, in the order of
// Calibration.Points.
const KindCalibration = "calibration"

// Calibration is this machine's driver ceiling for each batch size.
type Calibration struct {
	Points       []CalibrationPoint `json:"points"`
	MaxDurationS float64            `json:"max_duration_s"`
	// NoopCPUS is the CPU time the noop server used over the whole
	// calibration, when freshbench ran it as a child process: on a
	// machine it shares with the driver, what it took from it.
	NoopCPUS float64 `json:"noop_cpu_s,omitempty"`
}

// CalibrationPoint is what the search at one batch size found.
type CalibrationPoint struct {
	BatchSize int `json:"batch_size"`
	// Found is false when no step was sustainable: the ceiling is below
	// the first step's rate.
	Found bool `json:"found"`
	// CeilingEventsPerSec is the rate the highest sustainable step
	// achieved: the most events/s this machine's driver sends at this
	// batch size while it keeps its schedule.
	CeilingEventsPerSec float64 `json:"ceiling_events_per_s"`
	CeilingTargetPerSec float64 `json:"ceiling_target_events_per_s"` // that step's target rate
	// CPUPer100kS is the driver's CPU time per 100,000 events
	// acknowledged in that step (its warm-up included), in seconds.
	CPUPer100kS float64 `json:"cpu_per_100k_events_s"`
	CorePercent float64 `json:"core_percent"` // that step's driver CPU, 100 = one core
	Reason      string  `json:"reason"`       // why the search stopped
}

// DriverCPUPer100k is the driver's CPU time per 100,000 events a run
// acknowledged (its warm-up and tail included, as DriverCPU is), in
// seconds; 0 when either is unknown.
func (r *Result) DriverCPUPer100k() float64 {
	var acked int64
	for _, p := range r.Phases {
		if p != nil {
			acked += p.Acked
		}
	}
	if r.DriverCPU == nil || acked == 0 {
		return 0
	}
	return r.DriverCPU.Seconds / float64(acked) * 1e5
}

// MachineCalibration is what freshbench calibrate saves as this
// machine's calibration, apart from its results file: the ceilings that
// run, peak and query read to say what share of them a run used.
type MachineCalibration struct {
	Host         string             `json:"host"`
	Cores        int                `json:"cores"`
	Tool         Tool               `json:"tool"`
	CalibratedAt time.Time          `json:"calibrated_at"`
	Points       []CalibrationPoint `json:"points"`
}

// Ceiling is the share of this machine's driver ceiling a run used: its
// target rate and its achieved rate over the ceiling at its batch size.
type Ceiling struct {
	File string `json:"file"` // the calibration read
	// NotUsed, when set, says why no ceiling applies (no calibration,
	// one from another host, …); the figures below are then empty.
	NotUsed      string    `json:"not_used,omitempty"`
	CalibratedAt time.Time `json:"calibrated_at,omitzero"`
	// BatchSizes are the calibrated batch sizes the ceiling comes from:
	// the run's own, the two around it (interpolated), or the nearest
	// when the run's is outside the calibrated range (Method says which).
	BatchSizes    []int   `json:"calibrated_batch_sizes,omitempty"`
	Method        string  `json:"method,omitempty"`
	EventsPerSec  float64 `json:"ceiling_events_per_s,omitempty"`
	TargetShare   float64 `json:"target_share,omitempty"`   // target events/s / ceiling
	AchievedShare float64 `json:"achieved_share,omitempty"` // achieved events/s / ceiling
	// Warning, when set, says that the run used more than half the
	// ceiling: the driver, not the database, may have been the limit.
	Warning string `json:"warning,omitempty"`
}
