package bench

import (
	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
)

func recordConfig(c Config) results.Config {
	unit := "events/s"
	if c.Ingest.Rate.Unit == pace.Bytes {
		unit = "bytes/s"
	}
	i := c.Ingest
	r := results.Config{
		Rate: i.Rate.String(), RateUnit: unit, RatePerSecond: i.Rate.PerSecond, WriteShape: i.Shape.String(),
		BatchSize: i.BatchSize, DurationS: i.Duration.Seconds(), WarmupS: i.Warmup.Seconds(),
		Generators: i.Generators, MaxInflight: i.MaxInflight, DocSize: i.DocSize, DocShape: i.DocShape, Seed: i.Seed, IDNonce: i.IDNonce,
		WriteTimeoutS: i.WriteTimeout.Seconds(), WriteRetries: i.WriteRetries, ProbeRate: i.ProbeRate,
		UpdateShare: i.UpdateShare, UpdateKeys: updateKeys(i),
		PollIntervalS: c.PollInterval.Seconds(), DrainS: c.Drain.Seconds(),
	}
	if i.Template != nil && i.Corpus == nil {
		r.DocSize, r.DocShape, r.Template = i.EventSize(), "", i.Template.Name()
	}
	if cp := i.Corpus; cp != nil {
		r.DocSize, r.DocShape = i.EventSize(), ""
		r.Corpus = &results.Corpus{Files: cp.Files(), Lines: cp.Lines(), AtEnd: "stop"}
		if cp.Loops() {
			r.Corpus.AtEnd = "loop"
		}
	}
	if b := c.budget(nil).WithDefaults(); b.Adaptive() {
		r.ProbeShare, r.ProbeMaxRate = b.Share, b.MaxRate
	}
	return r
}

// updateKeys is how the run's updates choose their events; "" without
// updates.
func updateKeys(i ingest.Config) string {
	if i.UpdateShare == 0 {
		return ""
	}
	return i.UpdateKeys.String()
}
