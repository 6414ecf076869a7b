package main

import (
	"strings"

	"github.com/freshbench/freshbench/invalid"
)

// flagOf maps every field the library names in an invalid.Error to the
// flag that sets it; "" marks a field no flag sets (the library's words
// then stand). TestFlagOfEveryField holds it to invalid's fields and to
// the commands' flags: a new field is one line here.
var flagOf = map[invalid.Field]string{
	invalid.Rate:              "--rate",
	invalid.WriteShape:        "--write-shape",
	invalid.QueryShape:        "--query-shape",
	invalid.Baseline:          "--baseline",
	invalid.BurstLength:       "--burst",
	invalid.Recovery:          "--recovery",
	invalid.BurstFactor:       "--burst-factor",
	invalid.RecoveryBand:      "--band",
	invalid.Resolution:        "--resolution",
	invalid.BatchSize:         "--batch-size",
	invalid.Duration:          "--duration",
	invalid.Warmup:            "--warmup",
	invalid.Generators:        "--generators",
	invalid.FirstGenerator:    "", // derived from --instance
	invalid.Inflight:          "--max-inflight",
	invalid.DocSize:           "--doc-size",
	invalid.DocShape:          "--doc-shape",
	invalid.WriteTimeout:      "--write-timeout",
	invalid.WriteRetries:      "--write-retries",
	invalid.ProbeRate:         "--probe-rate",
	invalid.PollInterval:      "--poll-interval",
	invalid.Drain:             "--drain",
	invalid.DrainMax:          "--drain-max",
	invalid.Recheck:           "--recheck",
	invalid.ProbeShare:        "--probe-share",
	invalid.ProbeMaxRate:      "--probe-max-rate",
	invalid.RefreshPeriod:     "", // declared by the target
	invalid.UpdateShare:       "--update-share",
	invalid.UpdateKeys:        "--update-keys",
	invalid.ReadEndpoint:      "--read-endpoint",
	invalid.ReadEndpointName:  "--read-endpoint",
	invalid.Mix:               "--mix",
	invalid.QPS:               "--qps",
	invalid.QPSAndConcurrency: "--qps and --concurrency",
	invalid.Concurrency:       "--concurrency",
	invalid.QueryInflight:     "--query-max-inflight",
	invalid.MissShare:         "--miss-share",
	invalid.Limit:             "--limit",
	invalid.QueryTimeout:      "--query-timeout",
	invalid.SampleSize:        "", // fixed by the query command
	invalid.Settle:            "--settle",
	invalid.Frontier:          "--frontier",
	invalid.SweepStart:        "--sweep-start",
	invalid.SweepStep:         "--sweep-step",
	invalid.SweepMax:          "--sweep-max",
	invalid.SLO:               "--slo",
	invalid.Events:            "--events",
	invalid.ParallelStreams:   "--parallel",
	invalid.Seed:              "--seed",
	invalid.ExperimentName:    "--experiment",
	invalid.Instance:          "--instance",
	invalid.Instances:         "--instances",
	invalid.Start:             "--start-at",
	invalid.Step:              "--step",
	invalid.MaxSteps:          "--max-steps",
	invalid.MaxRate:           "--max-rate",
	invalid.MaxHold:           "--max-hold",
	invalid.Precision:         "--precision",
	invalid.Levels:            "--levels",
	invalid.Trials:            "--trials",
	invalid.WarmupTrials:      "--warmup-trials",
	invalid.BatchSizes:        "--batch-sizes",
	invalid.StartRate:         "--start",
	invalid.Refinement:        "--refine",
	invalid.MaxDuration:       "--max-duration",
	invalid.Corpus:            "--events",
	invalid.Template:          "--template",
	invalid.Query:             "", // a query of the workload file's own; its error names the file and line
}

func isInvalid(err error) bool {
	_, ok := invalid.As(err)
	return ok
}

// inFlagWords is err's message with the library's field name replaced by
// the flag a user types, and "batch size 0" read as "--batch-size 0".
func inFlagWords(err error) string {
	msg := err.Error()
	e, ok := invalid.As(err)
	if !ok {
		return msg
	}
	if f := flagOf[e.Field]; f != "" {
		msg = strings.Replace(msg, string(e.Field)+" "+e.Value+":", f+" "+e.Value+":", 1)
	}
	return msg
}
