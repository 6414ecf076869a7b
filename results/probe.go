package results

import (
	"fmt"
	"strconv"
	"time"

	"github.com/freshbench/freshbench/stats"
)

// Freshness is the freshness lag over the measured window.
type Freshness struct {
	// Lag is T − newest visible _event_time, one value per poll. A poll
	// that failed or timed out enters it too, as a lower bound: the
	// reader's view was at least as old as the newest event it last saw
	// (Censored says how many values are such lower bounds, Errors why).
	Lag          *stats.Histogram `json:"lag"`
	QueryService *stats.Histogram `json:"query_service"` // the freshness query's own time, answered polls only
	Samples      int64            `json:"samples"`       // polls that answered
	Empty        int64            `json:"samples_seeing_nothing"`
	// Errors counts the polls that failed, by kind ("timeout", …);
	// each of them is one of the Censored values of Lag.
	Errors   map[string]*stats.ErrorCount `json:"errors,omitempty"`
	Censored int64                        `json:"censored_lower_bounds"`
	// CensoredLag holds those lower bounds again, apart, so that the
	// summary can tell the figures they reach (nil: none yet, or results
	// written before it was kept).
	CensoredLag *stats.Histogram `json:"censored_lag,omitempty"`
	// StepsBack counts the answers that showed an older view than an
	// earlier answer of the same reader had shown of a generator: a
	// newest event older than one already seen, or none after some were
	// seen. Events went back out of sight; the lag of such a poll counts
	// from the older view. StepBackMaxMs is the largest step, in event
	// time.
	StepsBack     int64   `json:"steps_back,omitempty"`
	StepBackMaxMs float64 `json:"step_back_max_ms,omitempty"`
	// NotMeasured, when set, says why there is no freshness lag (the
	// target keeps no events); the other figures are then empty.
	NotMeasured string        `json:"not_measured,omitempty"`
	Last        time.Duration `json:"-"`
}

// LagSummary is Lag's summary, the figures that the failed polls' lower
// bounds reach marked as lower bounds.
func (f *Freshness) LagSummary() stats.Summary {
	if f.Lag == nil {
		return stats.Summary{}
	}
	s := f.Lag.Summarize()
	if f.CensoredLag == nil && f.Censored > 0 {
		// Results written before the bounds were kept apart: any value
		// may be one of them.
		return s.WithLowerFrom(s.MinMs)
	}
	return s.WithLowerBounds(f.CensoredLag)
}

// Visibility is the visibility latency of the probes whose events
// were due in the measured window.
type Visibility struct {
	// Latency is _event_time → the first query that saw the probe: an
	// upper bound, the headline figure. It also holds, as lower bounds,
	// the probes never seen: each at its age when the measurement ended
	// (Censored says how many, Unseen holds those ages).
	Latency *stats.Histogram `json:"latency"`
	// Midpoint is _event_time → the middle of the window in which the
	// probe became visible, (the last query that missed it, the first that
	// saw it]: an estimate within ± half the probe's Gap. It holds the
	// probes never seen too, as Latency does.
	Midpoint *stats.Histogram `json:"latency_midpoint,omitempty"`
	// Unseen holds the ages of the probes never seen when the measurement
	// ended: the lower bounds among Latency's and Midpoint's values.
	Unseen       *stats.Histogram `json:"unseen_age,omitempty"`
	QueryService *stats.Histogram `json:"query_service"` // the probe query's own time
	// Gap is, for each probe seen, the time from the last instant it was
	// known not to be visible (its dispatch, or the start of the last
	// query that missed it) to the end of the query that saw it: the
	// window in which it became visible, by how much its latency may
	// overstate. It includes the pause between polls and the time every
	// query of the poll took.
	Gap *stats.Histogram `json:"poll_gap"`
	// ResolutionMs is the measured p99 of Gap, ResolutionMaxMs its
	// maximum (0 when no probe was seen).
	ResolutionMs    float64 `json:"resolution_ms"`
	ResolutionMaxMs float64 `json:"resolution_max_ms"`
	Probes          int64   `json:"probes"`
	Seen            int64   `json:"seen"`
	NeverSeen       int64   `json:"never_seen"`
	Censored        int64   `json:"censored_lower_bounds"` // values of Latency that are lower bounds
	Dropped         int64   `json:"dropped_write_failed"`
	// BeforeTarget, on a read endpoint, counts the probes it showed
	// before the write target could have: its first sighting ended
	// before a query of the target's began that still missed them.
	// AfterTarget counts the converse: the target's first sighting ended
	// before a query of this endpoint's began that still missed them.
	// Probes in neither were seen on both within the poll resolution.
	// A standby that replays the primary's log is rarely before it (by
	// the moment between a commit's record and its visibility); copies
	// that refresh each on their own schedule (Elasticsearch's document
	// replication) may be either. Both are 0 on the target itself.
	BeforeTarget int64                        `json:"seen_before_target,omitempty"`
	AfterTarget  int64                        `json:"seen_after_target,omitempty"`
	Errors       map[string]*stats.ErrorCount `json:"errors,omitempty"`
	// NotMeasured, when set, says why there is no visibility latency (the
	// target keeps no events); the other figures are then empty.
	NotMeasured string `json:"not_measured,omitempty"`
}

// NewVisibility returns empty visibility figures.
func NewVisibility() Visibility {
	return Visibility{
		Latency: stats.NewHistogram(), Midpoint: stats.NewHistogram(), Unseen: stats.NewHistogram(),
		QueryService: stats.NewHistogram(), Gap: stats.NewHistogram(), Errors: map[string]*stats.ErrorCount{},
	}
}

// Record books one probe seen at done, known not visible at unseenAt,
// due at intended.
func (v *Visibility) Record(intended, unseenAt, done time.Time) {
	v.Seen++
	v.Latency.Record(done.Sub(intended))
	v.Midpoint.Record(unseenAt.Add(done.Sub(unseenAt) / 2).Sub(intended))
	v.Gap.Record(done.Sub(unseenAt))
}

// RecordUnseen books one probe due at intended and not seen by now: a
// lower bound.
func (v *Visibility) RecordUnseen(intended, now time.Time) {
	v.NeverSeen++
	v.Censored++
	age := now.Sub(intended)
	v.Latency.Record(age)
	v.Midpoint.Record(age)
	v.Unseen.Record(age)
}

// LatencySummary is Latency's summary, its figures that the never-seen
// probes reach marked as lower bounds.
func (v *Visibility) LatencySummary() stats.Summary { return v.summary(v.Latency) }

// MidpointSummary is Midpoint's, marked likewise; empty in results
// written before it was kept.
func (v *Visibility) MidpointSummary() stats.Summary { return v.summary(v.Midpoint) }

func (v *Visibility) summary(h *stats.Histogram) stats.Summary {
	if h == nil {
		return stats.Summary{}
	}
	s := h.Summarize()
	if v.Unseen == nil && v.Censored > 0 {
		// Results written before the ages were kept apart: any value may
		// be one of the lower bounds.
		return s.WithLowerFrom(s.MinMs)
	}
	return s.WithLowerBounds(v.Unseen)
}

// SetResolution sets ResolutionMs and ResolutionMaxMs from Gap: its p99
// and its maximum, 0 when no probe was seen.
func (v *Visibility) SetResolution() {
	v.ResolutionMs, v.ResolutionMaxMs = 0, 0
	if v.Gap == nil || v.Gap.Count() == 0 {
		return
	}
	v.ResolutionMs = float64(v.Gap.Quantile(0.99).Microseconds()) / 1000
	v.ResolutionMaxMs = float64(v.Gap.Quantile(1).Microseconds()) / 1000
}

// Completeness is the audit of one generator after the drain.
type Completeness struct {
	Generator    string `json:"generator"`
	Acknowledged int64  `json:"acknowledged"`
	Visible      int64  `json:"visible"` // distinct events a search returned
	// Missing: acknowledged, and still not visible once the target had
	// caught up (the drain saw its count of visible events stop moving)
	// and, on a target that can, after a refresh forced then: lost
	// writes.
	Missing int64 `json:"missing"`
	// Late: acknowledged, and not visible within the drain while the
	// target was still catching up, or visible only once a refresh was
	// forced after it (ShownByRefresh of them): late, not lost (see
	// Recheck).
	Late       int64   `json:"late,omitempty"`
	LateSample []int64 `json:"late_seq_sample,omitempty"`
	// ShownByRefresh counts the Late events that the target had stored
	// but no search showed until a refresh was forced after the drain
	// (a search engine with refreshes disabled or starved).
	ShownByRefresh int64 `json:"shown_by_forced_refresh,omitempty"`
	// NotVisible are the _seqs of the events late or missing, as ranges,
	// for a later re-check (freshbench audit); NotVisibleCut says the
	// list stopped at its bound and holds only the first of them.
	NotVisible    []SeqRange `json:"not_visible_seq_ranges,omitempty"`
	NotVisibleCut bool       `json:"not_visible_ranges_cut,omitempty"`
	// Unacknowledged are visible events whose write was not
	// acknowledged: it failed, or was answered after the database had
	// stored them (a timeout after the commit, or a server's own retry
	// answered as a duplicate id). Stored, not lost; counted failed by
	// the ingest, because the answer said so.
	Unacknowledged int64 `json:"unacknowledged,omitempty"`
	// Unexpected are visible events this run never wrote. (Files
	// written before Unacknowledged counted those here too.)
	Unexpected    int64   `json:"unexpected"`
	Duplicates    int64   `json:"duplicates"` // extra copies of a visible event
	MissingSample []int64 `json:"missing_seq_sample,omitempty"`
	// UnexpectedSample is the same for the events visible but never
	// written.
	UnexpectedSample []int64 `json:"unexpected_seq_sample,omitempty"`
	// NotMeasured, when set, says why there is no audit (the target keeps
	// no events); Visible, Missing, Unexpected and Duplicates are then 0
	// and mean nothing.
	NotMeasured string `json:"not_measured,omitempty"`
	// Recheck, when set, is a later audit of the generator: how many of
	// the Late events it found visible.
	Recheck *Recheck `json:"recheck,omitempty"`
}

// SeqRange is the _seqs From to To, both included.
type SeqRange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Recheck is an audit made after the drain, of the events that were late.
type Recheck struct {
	AfterS   float64 `json:"after_drain_s"` // how long after the drain's end
	TurnedUp int64   `json:"turned_up"`     // late events visible by then
	// StillNotVisible: late events still not visible by then; late still,
	// unless the target had caught up (then they are lost).
	StillNotVisible int64 `json:"still_not_visible"`
}

// Drain is how the wait after the schedule ended: how long it took,
// whether the target had caught up (everything visible, or its count of
// visible events no longer moving), and the freshness it had reached.
type Drain struct {
	WaitedS  float64 `json:"waited_s"`
	MaxS     float64 `json:"max_s"`
	CaughtUp bool    `json:"caught_up"`
	// BehindMs is how far the target's view was behind the schedule at
	// the drain's end: the schedule's end − the newest _event_time it
	// showed (about 0 once it shows the last events; the largest over the
	// generators). Absent when unknown.
	BehindMs *float64 `json:"behind_schedule_end_ms,omitempty"`
}

// String says what the drain found, for logs: the wait, its bound,
// whether the target caught up and how far behind the schedule it was.
func (d Drain) String() string {
	s := fmt.Sprintf("waited %.1f s of at most %.1f s, ", d.WaitedS, d.MaxS)
	if !d.CaughtUp {
		s += "not "
	}
	s += "caught up"
	if d.BehindMs != nil {
		s += fmt.Sprintf(", %.0f ms behind the schedule's end", *d.BehindMs)
	}
	return s
}

// UpdateAudit is the audit of one generator's updates after the drain:
// whether each updated event shows the revision acknowledged last.
type UpdateAudit struct {
	Generator    string `json:"generator"`
	Acknowledged int64  `json:"updates_acknowledged"` // acknowledged updates
	Events       int64  `json:"events_updated"`       // distinct events with an acknowledged update
	Current      int64  `json:"current"`              // events showing the revision acknowledged last
	// Lost: events showing an older revision than the one acknowledged
	// last (or none): lost updates.
	Lost       int64   `json:"lost"`
	LostSample []int64 `json:"lost_seq_sample,omitempty"`
	// Unacknowledged: events showing a revision never acknowledged (its
	// request failed as a whole after the database stored it).
	Unacknowledged int64  `json:"unacknowledged"`
	NotMeasured    string `json:"not_measured,omitempty"`
}

// Updates are the figures of an update stream on one read endpoint:
// the freshness of updates (newest _update_time seen), the visibility of
// each probed update's revision, and the audit.
type Updates struct {
	Freshness  Freshness     `json:"freshness"`
	Visibility Visibility    `json:"visibility"`
	Audit      []UpdateAudit `json:"audit,omitempty"`
	AuditError string        `json:"audit_error,omitempty"`
}

// UpdateSummary holds the headline figures of an update stream on one
// endpoint: the measured phase's updates (dispatched = acknowledged +
// failed), the freshness and visibility of updates, and the audit.
type UpdateSummary struct {
	Dispatched           int64         `json:"dispatched"`
	Acked                int64         `json:"acked"`
	Failed               int64         `json:"failed"`
	FreshnessLag         stats.Summary `json:"freshness_lag"`
	VisibilityLatency    stats.Summary `json:"visibility_latency"`
	VisibilityResolution float64       `json:"visibility_resolution_ms"`
	Events               int64         `json:"events_updated"`
	Lost                 int64         `json:"lost"`
	Unacknowledged       int64         `json:"unacknowledged"`
	Audited              bool          `json:"audited"`
}

// summarizeUpdates derives u's summary over the generators gens, with the
// measured phase m's counts.
func summarizeUpdates(u *Updates, m *Phase, gens []string) *UpdateSummary {
	if u == nil {
		return nil
	}
	s := &UpdateSummary{
		Dispatched: m.UpdatesDispatched, Acked: m.UpdatesAcked, Failed: m.UpdatesFailed,
		FreshnessLag: u.Freshness.LagSummary(), VisibilityLatency: u.Visibility.LatencySummary(),
		VisibilityResolution: u.Visibility.ResolutionMs,
		Audited:              len(u.Audit) == len(gens) && u.AuditError == "",
	}
	for _, a := range u.Audit {
		s.Events += a.Events
		s.Lost += a.Lost
		s.Unacknowledged += a.Unacknowledged
		if a.NotMeasured != "" {
			s.Audited = false
		}
	}
	return s
}

// Polling says how the freshness and probe loops paced their polls: a
// fixed mean interval, or adaptive within the probe budget.
func (c Config) Polling() string {
	if c.PollIntervalS > 0 || c.ProbeShare == 0 {
		return "every " + time.Duration(c.PollIntervalS*float64(time.Second)).Round(time.Microsecond).String()
	}
	return fmt.Sprintf("adaptive (≤ %s of a connection, ≤ %s/s)",
		strconv.FormatFloat(100*c.ProbeShare, 'f', -1, 64)+" %", strconv.FormatFloat(c.ProbeMaxRate, 'f', -1, 64))
}

// ProbeLoad is the load the measurement itself puts on the target: the
// freshness polls and the probe queries that ended in the measured
// window, answered or failed, and the service time of those answered.
type ProbeLoad struct {
	FreshnessPerSec  float64
	FreshnessService stats.Summary
	ProbePerSec      float64
	ProbeService     stats.Summary
}

// ProbeLoad derives r's probe load over its measured window; false when
// nothing was measured.
func (r *Result) ProbeLoad() (ProbeLoad, bool) {
	s := r.Summary.MeasuredS
	if s <= 0 {
		return ProbeLoad{}, false
	}
	f, v := r.Target().Freshness, r.Target().Visibility
	var load ProbeLoad
	load.FreshnessPerSec = float64(f.Samples+f.Censored) / s
	if f.QueryService != nil {
		load.FreshnessService = f.QueryService.Summarize()
	}
	var probes int64
	for _, e := range v.Errors {
		probes += e.Count
	}
	if v.QueryService != nil {
		probes += v.QueryService.Count()
		load.ProbeService = v.QueryService.Summarize()
	}
	load.ProbePerSec = float64(probes) / s
	return load, true
}
