package results

import "github.com/freshbench/freshbench/stats"

// Frontier describes a real-time database as HATtrick (SIGMOD 2022) does:
// not by one point but by how much query throughput it keeps at each
// ingest rate, and how fresh its data stays there. Each point is a QPS
// sweep run beside an ingest at one rate.
type Frontier struct {
	SLO    string           `json:"slo"` // the sweep's latency bound
	Points []*FrontierPoint `json:"points"`
}

// FrontierPoint is one ingest rate of a frontier: the highest QPS whose
// step met the SLO there and, at that step, the ingest achieved and the
// data's freshness. Found is false when no step met the SLO; the figures
// are then those of the last step, for what it is worth.
type FrontierPoint struct {
	IngestRate        string        `json:"ingest_rate"` // as given, e.g. "2000 events/s"
	IngestTarget      float64       `json:"ingest_target"`
	IngestUnit        string        `json:"ingest_unit"` // events/s or MB/s
	IngestAchieved    float64       `json:"ingest_achieved"`
	Found             bool          `json:"found"`
	QPS               float64       `json:"qps"`
	AchievedQPS       float64       `json:"achieved_qps"`
	QueryLatency      stats.Summary `json:"query_latency"`
	FreshnessLag      stats.Summary `json:"freshness_lag"`
	VisibilityLatency stats.Summary `json:"visibility_latency"`
	Missing           int64         `json:"missing"` // acknowledged events not visible after the drain, at that step
	Sweep             *QuerySweep   `json:"sweep"`
}
