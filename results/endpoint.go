package results

import "github.com/freshbench/freshbench/stats"

// TargetEndpoint names the write target among the read endpoints: with
// read endpoints, the target is measured as one too, the first.
const TargetEndpoint = "target"

// ReadEndpoint is what one read endpoint apart from the write target
// (a replica, a standby, a query node) showed of the same run: its own
// freshness polls, probe queries, completeness audit and query load.
type ReadEndpoint struct {
	Name         string         `json:"name"` // read1, read2, … in the order given
	URL          string         `json:"url"`  // credentials removed
	Freshness    Freshness      `json:"freshness"`
	Visibility   Visibility     `json:"visibility"`
	Completeness []Completeness `json:"completeness,omitempty"`
	AuditError   string         `json:"audit_error,omitempty"`
	Queries      *Queries       `json:"queries,omitempty"`
	// Updates, with an update stream, are its figures on this endpoint.
	Updates *Updates `json:"updates,omitempty"`
	// Series is the endpoint's own per-interval record: its freshness
	// lag and its queries (the write figures are the target's, in the
	// run's series).
	Series []stats.Point `json:"series,omitempty"`
}

// EndpointSummary holds the headline figures of one read endpoint, as
// Summary holds the write target's.
type EndpointSummary struct {
	Name                 string        `json:"name"`
	FreshnessLag         stats.Summary `json:"freshness_lag"`
	VisibilityLatency    stats.Summary `json:"visibility_latency"`
	VisibilityResolution float64       `json:"visibility_resolution_ms"`
	ProbeQueryService    stats.Summary `json:"probe_query_service"`
	Missing              int64         `json:"missing"`
	Unexpected           int64         `json:"unexpected"`
	Duplicates           int64         `json:"duplicates"`
	Audited              bool          `json:"audited"`
}

// Endpoints lists every endpoint r measured, the write target first
// (named TargetEndpoint, with r's own figures), then r's read endpoints:
// one list for those who show them side by side.
func (r *Result) Endpoints() []*ReadEndpoint {
	out := []*ReadEndpoint{{
		Name: TargetEndpoint, URL: r.Environment.TargetURL, Freshness: r.Freshness, Visibility: r.Visibility,
		Completeness: r.Completeness, AuditError: r.AuditError, Queries: r.Queries, Updates: r.Updates,
	}}
	return append(out, r.ReadEndpoints...)
}

// summarize derives e's summary; gens are the run's generators, each of
// which the audit must cover.
func (e *ReadEndpoint) summarize(gens []string) EndpointSummary {
	s := EndpointSummary{
		Name: e.Name, FreshnessLag: e.Freshness.LagSummary(), VisibilityLatency: e.Visibility.LatencySummary(),
		VisibilityResolution: e.Visibility.ResolutionMs, ProbeQueryService: e.Visibility.QueryService.Summarize(),
	}
	s.Missing, s.Unexpected, s.Duplicates, s.Audited = audit(e.Completeness, gens, e.AuditError)
	return s
}

// audit totals an audit of gens: what was missing, unexpected and
// duplicated, and whether every generator was audited.
func audit(cs []Completeness, gens []string, auditError string) (missing, unexpected, dups int64, audited bool) {
	audited = len(cs) == len(gens) && auditError == ""
	for _, c := range cs {
		missing += c.Missing
		unexpected += c.Unexpected
		dups += c.Duplicates
		if c.NotMeasured != "" {
			audited = false
		}
	}
	return missing, unexpected, dups, audited
}
