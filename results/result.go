// Package results is the results file: its versioned schema, which the
// runners (bench, ingest, probe, query) fill and which report, compare and
// merge read alone, and the reading, migrating and writing of the file.
// Nothing here measures; it imports only the measurement primitives of
// stats, and invalid for the settings a user gives (an experiment).
package results

import (
	"time"

	"github.com/freshbench/freshbench/stats"
)

// SchemaVersion of the results file. Bump it on any change that a reader
// of an older file would misread.
//
// 2: phase events are counted by intended time (events_due, throughput_*
// by the time of acknowledgement); the summary is of the measured phase
// alone. ReadFile migrates version 1 files.
//
// 3: kind (run, peak, step, query, sweep, merged); ReadFile fills it in
// older files from what they hold.
//
// Added within version 3, as nothing older reads differently: kind
// levels and its Levels; server_account; read endpoints
// (read_endpoints, visible_everywhere, and the summary's), beside which
// every figure of older files keeps its meaning: the write target's.
//
// 4: server_account in one shape for every database: tables of named
// values with units and roles at each end, the window's figures as
// tables, and findings. Older accounts read as tables (see
// ServerAccount.UnmarshalJSON).
//
// 5: a step's verdict is one of three (sustainable, not sustainable, not
// yet known: undecided with what it could not rule out in open). Older
// files judged a step too short to tell its trend not sustainable;
// ReadFile reads such a step, when that was its only reason, as not yet
// known (see migrateVerdict). Coordinate with issue 27, which may bump
// the version too: the two bumps are one (5) if they land together.
//
// 6: every endpoint's figures in one list, endpoints, the write target
// first: older files held the target's (freshness, visibility,
// completeness, audit_error, queries, updates) at the top and the
// others in read_endpoints. ReadFile moves them (see legacyEndpoints).
const SchemaVersion = 6

// Kinds of result. A reader renders a result by its kind rather than
// guessing from the fields that happen to be set.
const (
	// KindRun is one ingest run (bench.Run), with or without a query
	// workload beside it.
	KindRun = "run"
	// KindPeak is a peak search: its steps, each of KindStep, and the
	// peak found.
	KindPeak = "peak"
	// KindStep is one step of a peak search.
	KindStep = "step"
	// KindQuery is one measurement of a query workload, alone or beside
	// an ingest (then Generators and the ingest's figures are set too).
	KindQuery = "query"
	// KindSweep is a QPS sweep (QuerySweep), alone or beside an ingest;
	// the result's own figures are those of its best step.
	KindSweep = "sweep"
	// KindFrontier is a frontier: a QPS sweep beside an ingest at each
	// of several ingest rates (Frontier); the result's own figures are
	// those of the last rate's best step.
	KindFrontier = "frontier"
	// KindMerged is the instances of one experiment merged (package
	// merge); Merged says which.
	KindMerged = "merged"
)

// Result is everything one run measured: data first, rendered later by the
// report package. Histograms are encoded HDR, so results of many runs or
// machines merge exactly.
type Result struct {
	SchemaVersion int         `json:"schema_version"`
	MigratedFrom  int         `json:"migrated_from,omitempty"` // the schema version of the file as read
	Kind          string      `json:"kind"`                    // what the file holds: KindRun, KindPeak, …
	Command       string      `json:"command"`                 // run, peak step, …
	Tool          Tool        `json:"tool"`
	Environment   Environment `json:"environment"`
	Config        Config      `json:"config"`
	StartedAt     time.Time   `json:"started_at"`
	EndedAt       time.Time   `json:"ended_at"`
	EndedEarly    bool        `json:"ended_early"`
	EndReason     string      `json:"end_reason,omitempty"`
	Generators    []string    `json:"generators"`
	// Experiment, when set, is the experiment this result is one
	// instance of (see Experiment).
	Experiment *Experiment `json:"experiment,omitempty"`
	// Merged, set on a result of KindMerged, names the instances merged
	// and those missing or partial.
	Merged *Merged `json:"merged,omitempty"`
	// Workload, when the command read a workload file or a preset, is
	// the workload it ran, as resolved.
	Workload *Workload `json:"workload,omitempty"`

	Summary Summary  `json:"summary"`
	Phases  []*Phase `json:"phases"`
	// Endpoints are what each endpoint read from showed: the write
	// target first, named TargetEndpoint (see Target), then the read
	// endpoints apart from it (replicas, standbys, query nodes; see
	// Reads), in the order given.
	Endpoints []*Endpoint `json:"endpoints"`
	// Drain is how the wait for acknowledged events to show ended.
	Drain *Drain `json:"drain,omitempty"`
	// VisibleEverywhere, set with read endpoints, is the visibility
	// latency of each probe on all of them, the target included: the
	// latest of its sightings. A probe some endpoint never saw is a
	// lower bound (Censored), as on one endpoint.
	VisibleEverywhere *Visibility `json:"visible_everywhere,omitempty"`
	// UpdatesVisibleEverywhere, with an update stream and read
	// endpoints, is to each endpoint's Updates what VisibleEverywhere is
	// to its Visibility.
	UpdatesVisibleEverywhere *Visibility `json:"updates_visible_everywhere,omitempty"`
	// Series is the run's per-interval record: its writes, and the
	// target's freshness lag and queries (the target endpoint keeps no
	// series of its own; a read endpoint's is in its Endpoint).
	Series    []stats.Point `json:"series"`
	DriverCPU *DriverCPU    `json:"driver_cpu,omitempty"`
	// ServerAccount is the server's own account of the measured phase,
	// when the target gives one (see Account).
	ServerAccount *Account `json:"server_account,omitempty"`

	// A QPS sweep keeps every step; each endpoint's Queries is its best
	// step's.
	QuerySweep *QuerySweep `json:"query_sweep,omitempty"`
	// Frontier, set on a result of KindFrontier, is the highest QPS
	// under the latency bound at each ingest rate, with the freshness
	// there.
	Frontier *Frontier `json:"frontier,omitempty"`

	// A step of a peak search carries its verdict; the peak search's own
	// result carries its steps, in order, and the peak found.
	Verdict *stats.Verdict `json:"verdict,omitempty"`
	Steps   []*Result      `json:"steps,omitempty"`
	Peak    *Peak          `json:"peak,omitempty"`

	// Levels, set on a result of KindLevels, holds every trial at every
	// level and each level's figures.
	Levels *Levels `json:"levels,omitempty"`
	// A calibration's ceilings; its Steps are its peak searches.
	Calibration *Calibration `json:"calibration,omitempty"`
	// Ceiling is the share of this machine's driver ceiling the ingest
	// used, when it ran with one (see MachineCalibration).
	Ceiling *Ceiling `json:"ceiling,omitempty"`
	// Isolation, set by freshbench isolation, is what a burst of each
	// load did to the other.
	Isolation *Isolation `json:"isolation,omitempty"`
}

// Peak is the outcome of a peak search.
type Peak struct {
	Found                bool        `json:"found"` // some step was sustainable
	Step                 int         `json:"step"`  // index into Steps of the highest sustainable step
	Rate                 string      `json:"rate"`  // its target rate as given
	AchievedEventsPerSec float64     `json:"achieved_events_per_s"`
	AchievedMBPerSec     float64     `json:"achieved_mb_per_s"`
	Reason               string      `json:"reason"` // why the search stopped
	ElapsedS             float64     `json:"elapsed_s"`
	Search               *PeakSearch `json:"search,omitempty"`
	// The peak lies in [Sustainable, NotSustainable]: the highest target
	// rate judged sustainable and the lowest above it judged not
	// sustainable (0 when no step was), in the start rate's unit. Steps
	// not yet known count as neither; NotYetKnown counts them.
	Sustainable    float64 `json:"highest_sustainable_rate,omitempty"`
	NotSustainable float64 `json:"lowest_not_sustainable_rate,omitempty"`
	NotYetKnown    int     `json:"steps_not_yet_known,omitempty"`
	// Interval says the same in words: "[4.1k, 4.2k events/s]", or
	// "≥ 4000 events/s" when no step above was not sustainable.
	Interval string `json:"interval,omitempty"`
}

// PeakSearch is how a peak search stepped and judged its steps.
type PeakSearch struct {
	Start          string  `json:"start"`
	Increase       string  `json:"increase"`
	HoldS          float64 `json:"hold_s"`
	MaxSteps       int     `json:"max_steps,omitempty"`
	MaxRate        float64 `json:"max_rate,omitempty"` // in the start rate's unit
	Confirm        bool    `json:"confirm"`
	MinAchieved    float64 `json:"min_achieved_share"`
	MaxErrorRate   float64 `json:"max_error_rate"`
	MaxLateShare   float64 `json:"max_late_share"`
	MaxTrendMsPerS float64 `json:"max_trend_ms_per_s"`   // steepest write latency / freshness lag trend tolerated (stats.Rule.MaxGrowth)
	MaxHoldS       float64 `json:"max_hold_s,omitempty"` // a step holds until its verdict is known, up to this
	Precision      float64 `json:"precision,omitempty"`  // the peak is refined to an interval within this share
	SLO            string  `json:"slo,omitempty"`
}

// DriverCPU is the CPU time freshbench itself used while it streamed
// (warm-up included), so that a reader can tell a database limit from a
// driver limit.
type DriverCPU struct {
	Seconds     float64 `json:"cpu_s"`
	WallS       float64 `json:"wall_s"`
	CorePercent float64 `json:"core_percent"` // 100 = one core busy all the time
	// WaitS is the time its threads were ready to run but waited for a
	// CPU that other processes or a CPU quota held back (Linux's
	// run-queue delay, which counts a cgroup's throttling), and
	// WaitPercent that as a percentage of one core; absent where the
	// kernel does not tell.
	WaitS       float64 `json:"wait_s,omitempty"`
	WaitPercent float64 `json:"wait_percent,omitempty"`
}

// Tool identifies the program that wrote the file.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Environment describes where the run happened.
type Environment struct {
	Host          string `json:"host"`
	OS            string `json:"os"`
	Arch          string `json:"arch"`
	Cores         int    `json:"cores"`
	GoVersion     string `json:"go_version"`
	Target        string `json:"target"`         // scheme
	TargetURL     string `json:"target_url"`     // credentials removed
	TargetVersion string `json:"target_version"` // as the server reports it
}

// Corpus is a replayed corpus of the user's events.
type Corpus struct {
	Files []string `json:"files"`
	Lines int64    `json:"lines"`  // events in one pass
	AtEnd string   `json:"at_end"` // "loop": started over; "stop": the run ended with it
	// Replayed events over the run, and the passes over the corpus they
	// make: above 1, the corpus looped and events repeated its lines.
	Replayed int64   `json:"events_replayed"`
	Passes   float64 `json:"passes"`
}

// Config is the run's configuration as written to the results file.
type Config struct {
	Rate          string  `json:"rate"`
	RateUnit      string  `json:"rate_unit"` // events/s or bytes/s
	RatePerSecond float64 `json:"rate_per_second"`
	// WriteShape varies the rate over the run (pace.Shape, as written):
	// the target at t is the rate times its factor there. "" is constant.
	WriteShape  string  `json:"write_shape,omitempty"`
	BatchSize   int     `json:"batch_size"`
	DurationS   float64 `json:"duration_s"`
	WarmupS     float64 `json:"warmup_s"`
	Generators  int     `json:"generators"`
	MaxInflight int     `json:"max_inflight"`
	DocSize     int     `json:"doc_size"`
	DocShape    string  `json:"doc_shape,omitempty"` // "" is rockbench, the RockBench sample's
	// Corpus, when the events were a user's corpus replayed, says which
	// and how often; DocSize is then its mean line stamped.
	Corpus *Corpus `json:"corpus,omitempty"`
	// Template is the template the events were generated from (its
	// file, or a shipped template's name); DocSize is then its mean event.
	Template      string  `json:"template,omitempty"`
	Seed          uint64  `json:"seed"`
	IDNonce       uint64  `json:"id_nonce,omitempty"` // mixed into the ids; 0 = the ids the seed alone gives
	WriteTimeoutS float64 `json:"write_timeout_s"`
	WriteRetries  int     `json:"write_retries"`
	ProbeRate     float64 `json:"probe_rate"`
	// UpdateShare is the share of events that update an event already
	// written, UpdateKeys how they choose it (ingest.KeyChoice's form).
	UpdateShare   float64 `json:"update_share,omitempty"`
	UpdateKeys    string  `json:"update_keys,omitempty"`
	PollIntervalS float64 `json:"poll_interval_s"`
	DrainS        float64 `json:"drain_s"`
	// TargetLayout says in one line what the target created for the
	// events: the table's columns or the index's mapping.
	TargetLayout   string            `json:"target_layout,omitempty"`
	TargetSettings map[string]string `json:"target_settings,omitempty"`
	// Via is the intermediary the events passed through on their way to
	// the target (kafka://host:port/topic, credentials removed), and
	// ViaSettings its effective settings; empty for direct writes.
	Via         string            `json:"via,omitempty"`
	ViaSettings map[string]string `json:"via_settings,omitempty"`
	// ProbeShare and ProbeMaxRate are the probe budget when PollIntervalS
	// is 0: the loops polled as often as the target answered, within that
	// share of one connection's time and that many polls per second each.
	ProbeShare   float64 `json:"probe_share,omitempty"`
	ProbeMaxRate float64 `json:"probe_max_rate,omitempty"`
}

// Summary holds the headline figures of the measured phase, every one of
// them: events by their intended time (due = acknowledged + failed +
// unsent), throughput by the time of acknowledgement within the window.
// The phases say where the rest went.
type Summary struct {
	MeasuredS            float64                      `json:"measured_s"`
	TargetEventsPerSec   float64                      `json:"target_events_per_s"`
	AchievedEventsPerSec float64                      `json:"achieved_events_per_s"`
	TargetMBPerSec       float64                      `json:"target_mb_per_s"` // MB = 10^6 bytes
	AchievedMBPerSec     float64                      `json:"achieved_mb_per_s"`
	EventsDue            int64                        `json:"events_due"`
	EventsAcked          int64                        `json:"events_acked"`
	EventsAckedOnRetry   int64                        `json:"events_acked_on_retry,omitempty"`
	EventsFailed         int64                        `json:"events_failed"`
	EventsUnsent         int64                        `json:"events_unsent"`
	UnsentWait           stats.Summary                `json:"unsent_wait"` // lower bound of the latency of unsent batches
	Batches              int64                        `json:"batches"`
	LateBatches          int64                        `json:"late_batches"`
	Retries              int64                        `json:"retries"`
	WriteLatency         stats.Summary                `json:"write_latency"`
	ServiceTime          stats.Summary                `json:"service_time"`
	FreshnessLag         stats.Summary                `json:"freshness_lag"`
	VisibilityLatency    stats.Summary                `json:"visibility_latency"`
	VisibilityResolution float64                      `json:"visibility_resolution_ms"`
	ProbeQueryService    stats.Summary                `json:"probe_query_service"`
	Errors               map[string]*stats.ErrorCount `json:"errors,omitempty"`
	Missing              int64                        `json:"missing"`
	Unacknowledged       int64                        `json:"unacknowledged,omitempty"` // visible, though its write failed
	Unexpected           int64                        `json:"unexpected"`
	Duplicates           int64                        `json:"duplicates"`
	Audited              bool                         `json:"audited"`
	// ReadEndpoints summarizes each of Result.ReadEndpoints, in order;
	// the figures above are the write target's.
	ReadEndpoints []EndpointSummary `json:"read_endpoints,omitempty"`
	// VisibleEverywhere is Result.VisibleEverywhere's latency, with its
	// resolution (p99 of its gaps, ms).
	// Updates, with an update stream, are its headline figures on the
	// write target.
	Updates                     *UpdateSummary `json:"updates,omitempty"`
	VisibleEverywhere           *stats.Summary `json:"visible_everywhere_latency,omitempty"`
	VisibleEverywhereResolution float64        `json:"visible_everywhere_resolution_ms,omitempty"`
	// VisibilityMidpoint is the estimate from the windows in which the
	// probes became visible (Visibility.Midpoint); VisibilityLatency, the
	// upper bound, is the headline.
	VisibilityMidpoint stats.Summary `json:"visibility_latency_midpoint"`
	// Late counts the events not visible within the drain while the
	// target was still catching up, or visible only once a refresh was
	// forced after it (ShownByRefresh of them); Missing counts only those
	// lost.
	Late           int64 `json:"late,omitempty"`
	ShownByRefresh int64 `json:"shown_by_forced_refresh,omitempty"`
}
