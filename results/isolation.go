package results

// Isolation is what one workload did to the other (freshbench isolation):
// a steady ingest and query load, an ingest burst, a recovery, a query
// burst, a recovery. Each window's figures are of what was intended in it
// (a query, a write: its intended time; a probe: its write) or sampled in
// it (a freshness lag).
type Isolation struct {
	Factor      float64            `json:"burst_factor"`  // each burst multiplies its load by this
	BurstS      float64            `json:"burst_s"`       // how long each burst lasts
	Band        float64            `json:"recovery_band"` // recovered: back within Band × the baseline
	ResolutionS float64            `json:"resolution_s"`  // the buckets recovery is judged in
	Windows     []*IsolationWindow `json:"windows"`
	Bursts      []*IsolationBurst  `json:"bursts"`
}

// The windows of an isolation run, in order.
const (
	WindowBaseline       = "baseline"
	WindowIngestBurst    = "ingest burst"
	WindowIngestRecovery = "ingest recovery"
	WindowQueryBurst     = "query burst"
	WindowQueryRecovery  = "query recovery"
)

// IsolationWindow is one window's figures, from FromS to ToS seconds
// since the run's start.
type IsolationWindow struct {
	Name         string    `json:"name"`
	FromS        float64   `json:"from_s"`
	ToS          float64   `json:"to_s"`
	WriteLatency Quantiles `json:"write_latency"` // from intended time, acknowledged batches
	WritesFailed int64     `json:"writes_failed"` // events whose write failed
	// WritesUnsent are events due in the window (by the series'
	// intervals that start in it) that were never sent: the driver
	// gave them up behind a full in-flight bound. Their latency, longer
	// than any here, is in no quantile: with unsent events, the
	// window's write latency is a lower bound.
	WritesUnsent int64               `json:"writes_unsent,omitempty"`
	Endpoints    []*WindowByEndpoint `json:"endpoints"`
}

// WindowByEndpoint is a window's figures on one read endpoint.
type WindowByEndpoint struct {
	Endpoint     string           `json:"endpoint"`
	QueryLatency Quantiles        `json:"query_latency"`          // answered queries, from intended time
	QueryErrors  map[string]int64 `json:"query_errors,omitempty"` // failed queries by query kind
	FreshnessLag Quantiles        `json:"freshness_lag"`
	Visibility   Quantiles        `json:"visibility_latency"` // probes written in the window and seen
}

// Quantiles of one figure in a window, in milliseconds; N = 0: none.
type Quantiles struct {
	N     int64   `json:"n"`
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	P99Ms float64 `json:"p99_ms"`
}

// IsolationBurst is what one burst did: its window's figures over the
// baseline's (the interference), and how long after its end the other
// figures came back within the band.
type IsolationBurst struct {
	Load  string  `json:"load"` // "ingest" or "query": what burst
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
	// WriteP95Ratio is the write latency p95 in the burst over the
	// baseline's; nil when either window had none.
	WriteP95Ratio *float64         `json:"write_p95_ratio,omitempty"`
	Endpoints     []*BurstEndpoint `json:"endpoints"`
}

// BurstEndpoint is one burst's effect on one read endpoint. A nil ratio
// is not known: a window without samples of that figure.
type BurstEndpoint struct {
	Endpoint        string   `json:"endpoint"`
	QueryP95Ratio   *float64 `json:"query_p95_ratio,omitempty"`
	QueryP99Ratio   *float64 `json:"query_p99_ratio,omitempty"`
	FreshnessRatio  *float64 `json:"freshness_p95_ratio,omitempty"`
	VisibilityRatio *float64 `json:"visibility_p95_ratio,omitempty"`
	// Recovered says whether query p95 and freshness lag p95 came back
	// within the band before the recovery window ended; RecoveryS is
	// then how long after the burst's end, to within ResolutionS, and
	// otherwise a lower bound: the recovery window's length when the
	// figures were still out of the band at its end.
	Recovered bool    `json:"recovered"`
	RecoveryS float64 `json:"recovery_s"`
	// RecoveryNotKnown: no bucket after the last one out of the band had
	// samples of both figures (nothing sent or answered there), so
	// whether they recovered is not known; RecoveryS is a lower bound.
	RecoveryNotKnown bool `json:"recovery_not_known,omitempty"`
}
