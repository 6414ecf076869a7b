package bench

import (
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

func recordConfig(c Config) results.Config {
	unit := "events/s"
	if c.Ingest.Rate.Unit == pace.Bytes {
		unit = "bytes/s"
	}
	i := c.Ingest
	return results.Config{
		Rate: i.Rate.String(), RateUnit: unit, RatePerSecond: i.Rate.PerSecond,
		BatchSize: i.BatchSize, DurationS: i.Duration.Seconds(), WarmupS: i.Warmup.Seconds(),
		Generators: i.Generators, MaxInflight: i.MaxInflight, DocSize: i.DocSize, Seed: i.Seed, IDNonce: i.IDNonce,
		WriteTimeoutS: i.WriteTimeout.Seconds(), WriteRetries: i.WriteRetries, ProbeRate: i.ProbeRate,
		PollIntervalS: c.PollInterval.Seconds(), DrainS: c.Drain.Seconds(),
	}
}

func summarize(r *results.Result, cfg Config, acct *ingest.Accounting) results.Summary {
	from, to := acct.MeasuredWindow()
	m := acct.Phase(results.PhaseMeasured)
	s := results.Summary{
		MeasuredS:    to.Sub(from).Seconds(),
		WriteLatency: m.WriteLatency.Summarize(), ServiceTime: m.ServiceTime.Summarize(),
		FreshnessLag: r.Freshness.Lag.Summarize(), VisibilityLatency: r.Visibility.Latency.Summarize(),
		VisibilityResolution: r.Visibility.ResolutionMs, ProbeQueryService: r.Visibility.QueryService.Summarize(),
		Batches: m.Batches, LateBatches: m.LateBatches, Retries: m.Retries,
		EventsDue: m.Due, EventsAcked: m.Acked, EventsAckedOnRetry: m.AckedOnRetry,
		EventsFailed: m.Failed, EventsUnsent: m.Unsent, UnsentWait: m.UnsentWait.Summarize(),
		Errors: map[string]*stats.ErrorCount{},
	}
	for k, e := range m.Errors {
		stats.AddError(s.Errors, k, e.Count, e.Sample)
	}
	if s.MeasuredS > 0 {
		rate := cfg.Ingest.Rate.PerSecond
		s.TargetEventsPerSec = cfg.Ingest.Rate.EventsPerSecond(cfg.Ingest.DocSize)
		s.TargetMBPerSec = rate * float64(cfg.Ingest.DocSize) / 1e6
		if cfg.Ingest.Rate.Unit == pace.Bytes {
			s.TargetMBPerSec = rate / 1e6
		}
		s.AchievedEventsPerSec = float64(m.Throughput) / s.MeasuredS
		s.AchievedMBPerSec = float64(m.ThroughputBytes) / s.MeasuredS / 1e6
	}
	for _, c := range r.Completeness {
		s.Missing += c.Missing
		s.Unexpected += c.Unexpected
		s.Duplicates += c.Duplicates
	}
	s.Audited = len(r.Completeness) == len(r.Generators) && r.AuditError == ""
	for _, c := range r.Completeness {
		if c.NotMeasured != "" {
			s.Audited = false
		}
	}
	return s
}
