package main

import (
	"strings"

	"github.com/freshbench/freshbench/invalid"
)

// flagFor maps the library's name of a field to the flag that sets it.
func flagFor(field string) (string, bool) {
	f, ok := map[string]string{
		"rate": "--rate", "batch size": "--batch-size", "duration": "--duration",
		"warm-up": "--warmup", "generators": "--generators", "in-flight bound": "--max-inflight",
		"document size": "--doc-size", "document shape": "--doc-shape", "write timeout": "--write-timeout", "write retries": "--write-retries",
		"probe rate": "--probe-rate", "poll interval": "--poll-interval", "drain": "--drain",
		"probe share": "--probe-share", "probe max rate": "--probe-max-rate",
		"drain maximum": "--drain-max", "recheck": "--recheck",
		"memory limit": "--max-memory", "mix": "--mix", "QPS": "--qps", "QPS and concurrency": "--qps and --concurrency", "concurrency": "--concurrency",
		"query in-flight bound": "--query-max-inflight", "miss share": "--miss-share", "limit": "--limit",
		"query timeout": "--query-timeout", "settle": "--settle", "events": "--events",
		"parallel streams": "--parallel", "seed": "--seed",
		"experiment name": "--experiment", "instance": "--instance", "instances": "--instances", "start": "--start-at",
		"step": "--step", "maximum steps": "--max-steps", "maximum rate": "--max-rate",
		"levels": "--levels", "trials": "--trials", "warm-up trials": "--warmup-trials",
		"batch sizes": "--batch-sizes", "start rate": "--start", "refinement": "--refine", "maximum duration": "--max-duration",
		"read endpoint": "--read-endpoint", "frontier": "--frontier",
		"update share": "--update-share", "update keys": "--update-keys",
		"sweep start": "--sweep-start", "sweep step": "--sweep-step", "sweep maximum": "--sweep-max", "SLO": "--slo",
	}[field]
	return f, ok
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
	if f, ok := flagFor(e.Field); ok {
		msg = strings.Replace(msg, e.Field+" "+e.Value+":", f+" "+e.Value+":", 1)
	}
	return msg
}
