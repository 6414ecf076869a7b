package results

import "github.com/freshbench/freshbench/stats"

// Summarize derives the summary of r from what r holds: its measured
// phase, freshness, visibility and completeness, over a measured window
// of measuredS seconds. The target rate is r.Config's (a shaped rate's: the
// events its schedule made due in the window); the achieved rate
// is what the measured phase acknowledged while it lasted. A run and a
// merge of runs summarize by this one rule.
func Summarize(r *Result, measuredS float64) Summary {
	m := r.Phase(PhaseMeasured)
	if m == nil {
		m = NewPhase(PhaseMeasured)
	}
	t := r.Target()
	// The target's figures are summarized as every endpoint's are.
	ts := t.summarize(r.Generators)
	s := Summary{
		MeasuredS:    measuredS,
		WriteLatency: m.WriteLatency.Summarize(), ServiceTime: m.ServiceTime.Summarize(),
		FreshnessLag: ts.FreshnessLag, VisibilityLatency: ts.VisibilityLatency,
		VisibilityMidpoint:   t.Visibility.MidpointSummary(),
		VisibilityResolution: ts.VisibilityResolution, ProbeQueryService: ts.ProbeQueryService,
		Missing: ts.Missing, Unacknowledged: ts.Unacknowledged, Unexpected: ts.Unexpected, Duplicates: ts.Duplicates, Audited: ts.Audited,
		Batches: m.Batches, LateBatches: m.LateBatches, Retries: m.Retries,
		EventsDue: m.Due, EventsAcked: m.Acked, EventsAckedOnRetry: m.AckedOnRetry,
		EventsFailed: m.Failed, EventsUnsent: m.Unsent, UnsentWait: m.UnsentWait.Summarize(),
		Errors: map[string]*stats.ErrorCount{},
	}
	for k, e := range m.Errors {
		stats.AddError(s.Errors, k, e.Count, e.Sample)
	}
	if s.MeasuredS > 0 {
		rate, docSize := r.Config.RatePerSecond, float64(r.Config.DocSize)
		switch {
		case r.Config.WriteShape != "":
			// A shaped rate's target is what its schedule made due.
			s.TargetEventsPerSec = float64(m.Due) / s.MeasuredS
			s.TargetMBPerSec = s.TargetEventsPerSec * docSize / 1e6
		case r.Config.RateUnit == "bytes/s":
			s.TargetMBPerSec = rate / 1e6
			s.TargetEventsPerSec = rate / docSize
		default:
			s.TargetEventsPerSec = rate
			s.TargetMBPerSec = rate * docSize / 1e6
		}
		s.AchievedEventsPerSec = float64(m.Throughput) / s.MeasuredS
		s.AchievedMBPerSec = float64(m.ThroughputBytes) / s.MeasuredS / 1e6
	}
	for _, c := range t.Completeness {
		s.Late += c.Late
		s.ShownByRefresh += c.ShownByRefresh
	}
	s.Updates = summarizeUpdates(t.Updates, m, r.Generators)
	for _, e := range r.Reads() {
		s.ReadEndpoints = append(s.ReadEndpoints, e.summarize(r.Generators))
	}
	if v := r.VisibleEverywhere; v != nil && v.NotMeasured == "" {
		sum := v.LatencySummary()
		s.VisibleEverywhere, s.VisibleEverywhereResolution = &sum, v.ResolutionMs
	}
	return s
}

// Beside is the ingest's side of s, for a query load that ran beside it.
func (s Summary) Beside() *Beside {
	return &Beside{
		TargetEventsPerSec: s.TargetEventsPerSec, AchievedEventsPerSec: s.AchievedEventsPerSec,
		WriteLatency: s.WriteLatency, FreshnessLag: s.FreshnessLag,
	}
}

// Phase returns r's phase of that name, nil when it has none.
func (r *Result) Phase(name string) *Phase {
	for _, p := range r.Phases {
		if p != nil && p.Name == name {
			return p
		}
	}
	return nil
}
