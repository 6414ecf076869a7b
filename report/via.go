package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
)

// consoleVia says, for a run whose events passed through Kafka, what its
// figures mean (acknowledged = by Kafka; missing = lost in the pipeline)
// and Kafka's own account: the topic's records and the sink's consumer
// lag at the start and the end of the measured phase.
func consoleVia(w io.Writer, r *results.Result) {
	if r.Config.Via == "" {
		return
	}
	fmt.Fprintf(w, "via %s: writes acknowledged by Kafka; missing = acknowledged by Kafka, never visible: lost in the pipeline\n", redact.URL(r.Config.Via))
	a := r.ServerAccount
	switch {
	case a == nil:
		return
	case a.Error != "":
		fmt.Fprintf(w, "  Kafka's account: %s\n", a.Error)
		return
	case a.Start == nil || a.End == nil || a.Start.Kafka == nil || a.End.Kafka == nil:
		return
	}
	start, end := a.Start.Kafka, a.End.Kafka
	fmt.Fprintf(w, "  topic %s: %d records at the start of the measured phase, %d at its end\n", end.Topic, records(start), records(end))
	before := map[string]int64{}
	for _, g := range start.Groups {
		before[g.Group] = g.Lag
	}
	if len(end.Groups) == 0 {
		fmt.Fprintln(w, "  consumer lag: no group committed offsets on the topic (no sink, or it has not committed yet)")
		return
	}
	var lags []string
	for _, g := range end.Groups {
		from := "-"
		if l, ok := before[g.Group]; ok {
			from = fmt.Sprint(l)
		}
		lags = append(lags, fmt.Sprintf("%s %s → %d records", g.Group, from, g.Lag))
	}
	slices.Sort(lags)
	fmt.Fprintf(w, "  consumer lag (records the sink has not committed): %s\n", strings.Join(lags, ", "))
}

// records is how many records the topic holds, over its partitions.
func records(a *results.KafkaAccount) int64 {
	var n int64
	for _, o := range a.EndOffsets {
		n += o
	}
	return n
}
