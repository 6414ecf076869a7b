package results

import (
	"encoding/json"

	"github.com/freshbench/freshbench/stats"
)

// TargetEndpoint names the write target among the endpoints: it is
// measured as one, the first, beside any read endpoints.
const TargetEndpoint = "target"

// Endpoint is what one endpoint read from showed of the run: the write
// target, or one apart from it (a replica, a standby, a query node). Each
// has its own freshness polls, probe queries, completeness audit, query
// load and, with an update stream, update figures.
type Endpoint struct {
	Name         string         `json:"name"` // TargetEndpoint, then read1, read2, … in the order given
	URL          string         `json:"url"`  // credentials removed
	Freshness    Freshness      `json:"freshness"`
	Visibility   Visibility     `json:"visibility"`
	Completeness []Completeness `json:"completeness,omitempty"`
	AuditError   string         `json:"audit_error,omitempty"`
	Queries      *Queries       `json:"queries,omitempty"`
	// Updates, with an update stream, are its figures on this endpoint.
	Updates *Updates `json:"updates,omitempty"`
	// Series is a read endpoint's own per-interval record: its freshness
	// lag and its queries. The target's are in the run's (Result.Series),
	// beside the writes.
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
	Unacknowledged       int64         `json:"unacknowledged,omitempty"`
	Unexpected           int64         `json:"unexpected"`
	Duplicates           int64         `json:"duplicates"`
	Audited              bool          `json:"audited"`
}

// Target is the write target's endpoint, the first of r's; a result
// that has none yet gets it, empty, so that a runner fills it in place.
func (r *Result) Target() *Endpoint {
	if len(r.Endpoints) == 0 {
		r.Endpoints = []*Endpoint{{Name: TargetEndpoint}}
	}
	return r.Endpoints[0]
}

// Reads are r's endpoints apart from the write target, in order.
func (r *Result) Reads() []*Endpoint {
	if len(r.Endpoints) < 2 {
		return nil
	}
	return r.Endpoints[1:]
}

// UnmarshalJSON reads a result, moving the endpoints of a file before
// version 6 into the list (see legacyEndpoints).
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result // without this method
	v := struct {
		*plain
		legacyEndpoints
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	v.legacyEndpoints.moveTo(r)
	return nil
}

// legacyEndpoints are the fields in which a file before version 6 held
// its endpoints: the write target's figures at the top, the others in
// read_endpoints.
type legacyEndpoints struct {
	Freshness     *Freshness     `json:"freshness"`
	Visibility    *Visibility    `json:"visibility"`
	Completeness  []Completeness `json:"completeness"`
	AuditError    string         `json:"audit_error"`
	Queries       *Queries       `json:"queries"`
	Updates       *Updates       `json:"updates"`
	ReadEndpoints []*Endpoint    `json:"read_endpoints"`
}

// moveTo makes l r's endpoints, the target first with the URL the file
// names it by, unless r holds them in the list already.
func (l legacyEndpoints) moveTo(r *Result) {
	if len(r.Endpoints) > 0 {
		return
	}
	t := &Endpoint{
		Name: TargetEndpoint, URL: r.Environment.TargetURL,
		Completeness: l.Completeness, AuditError: l.AuditError, Queries: l.Queries, Updates: l.Updates,
	}
	if l.Freshness != nil {
		t.Freshness = *l.Freshness
	}
	if l.Visibility != nil {
		t.Visibility = *l.Visibility
	}
	r.Endpoints = append([]*Endpoint{t}, l.ReadEndpoints...)
}

// summarize derives e's summary; gens are the run's generators, each of
// which the audit must cover.
func (e *Endpoint) summarize(gens []string) EndpointSummary {
	s := EndpointSummary{
		Name: e.Name, FreshnessLag: e.Freshness.LagSummary(), VisibilityLatency: e.Visibility.LatencySummary(),
		VisibilityResolution: e.Visibility.ResolutionMs, ProbeQueryService: e.Visibility.QueryService.Summarize(),
	}
	s.addAudit(e.Completeness, gens, e.AuditError)
	return s
}

// addAudit totals into s an audit of gens: what was missing,
// unacknowledged, unexpected and duplicated, and whether every generator
// was audited.
func (s *EndpointSummary) addAudit(cs []Completeness, gens []string, auditError string) {
	s.Audited = len(cs) == len(gens) && auditError == ""
	for _, c := range cs {
		s.Missing += c.Missing
		s.Unacknowledged += c.Unacknowledged
		s.Unexpected += c.Unexpected
		s.Duplicates += c.Duplicates
		if c.NotMeasured != "" {
			s.Audited = false
		}
	}
}
