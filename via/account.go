package via

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

// The tables of Kafka's account in a server account.
const (
	PartitionsTable = "kafka_partitions"
	GroupsTable     = "kafka_groups"
	CommitsTable    = "kafka_commits"
)

// Account is Kafka's own account of a topic and of the consumer groups
// that sink it into the database: per partition, the end offset (records
// the broker holds) and each group's committed offset. A group's lag is
// how many records it has not committed yet: records in the pipeline,
// not yet known to be in the database. A sink commits after it has
// written, on its own schedule (Kafka Connect: every
// offset.flush.interval.ms), so the lag counts written records until the
// next commit too.
type Account struct {
	Topic      string
	EndOffsets map[int32]int64 // by partition
	Groups     []GroupLag
}

// GroupLag is one consumer group's position on the topic.
type GroupLag struct {
	Group string
	// Committed is the group's committed offset by partition; a
	// partition it never committed is absent (its lag counts from 0).
	Committed map[int32]int64
	Lag       int64 // records not committed, over every partition
}

// The rows of the account's tables.
type (
	partitionRow struct {
		Topic     string `account:"topic,key"`
		Partition int32  `account:"partition,key"`
		EndOffset int64  `account:"end_offset,counter,unit=records"`
	}
	groupRow struct {
		Topic string `account:"topic,key"`
		Group string `account:"group,key"`
		Lag   int64  `account:"lag,level,unit=records"`
	}
	commitRow struct {
		Topic     string `account:"topic,key"`
		Group     string `account:"group,key"`
		Partition int32  `account:"partition,key"`
		Committed int64  `account:"committed,counter,unit=records"`
	}
)

// AccountTables puts the account in the results' shape: the topic's
// partitions (records appended to each), the consumer groups (records
// not committed) and each group's commits by partition.
func (a *Account) AccountTables() []results.AccountTable {
	var parts []partitionRow
	for _, p := range slices.Sorted(maps.Keys(a.EndOffsets)) {
		parts = append(parts, partitionRow{a.Topic, p, a.EndOffsets[p]})
	}
	var groups []groupRow
	var commits []commitRow
	for _, g := range a.Groups {
		groups = append(groups, groupRow{a.Topic, g.Group, g.Lag})
		for _, p := range slices.Sorted(maps.Keys(g.Committed)) {
			commits = append(commits, commitRow{a.Topic, g.Group, p, g.Committed[p]})
		}
	}
	return []results.AccountTable{
		results.TableOf(PartitionsTable, "the Kafka topic's partitions: the records it holds (end_offset)", parts),
		results.TableOf(GroupsTable, "the consumer groups that sink the topic: records acknowledged by Kafka they have not committed (lag)", groups),
		results.TableOf(CommitsTable, "each group's committed offset, by partition", commits),
	}
}

// AccountOf reads Kafka's account out of a server account of a pipeline;
// nil when it holds none.
func AccountOf(s *results.ServerAccount) (*Account, error) {
	var parts []partitionRow
	var groups []groupRow
	var commits []commitRow
	for _, t := range []struct {
		name string
		out  any
	}{{PartitionsTable, &parts}, {GroupsTable, &groups}, {CommitsTable, &commits}} {
		if err := results.ReadTable(s.Table(t.name), t.out); err != nil {
			return nil, err
		}
	}
	if s.Table(PartitionsTable) == nil {
		return nil, nil
	}
	a := &Account{EndOffsets: map[int32]int64{}}
	for _, p := range parts {
		a.Topic, a.EndOffsets[p.Partition] = p.Topic, p.EndOffset
	}
	for _, g := range groups {
		gl := GroupLag{Group: g.Group, Lag: g.Lag, Committed: map[int32]int64{}}
		for _, c := range commits {
			if c.Group == g.Group {
				gl.Committed[c.Partition] = c.Committed
			}
		}
		a.Groups = append(a.Groups, gl)
	}
	slices.SortFunc(a.Groups, func(x, y GroupLag) int { return cmp.Compare(x.Group, y.Group) })
	return a, nil
}

var _ target.AccountChecker = (*pipeline)(nil)

// checkRecords names the check CheckAccount makes.
const checkRecords = "records appended to the topic against events acknowledged"

// CheckAccount holds the records appended to the topic over the measured
// phase against the events Kafka acknowledged in it: each is one record.
// The two ends of the account are taken while writes are in flight, so
// at each the batches intended from the longest write latency before the
// boundary to the end of the account's request after it may fall on
// either side, whole (a batch is appended at once); an event retried or
// failed may have been appended too. The database's own checks do not
// apply: it is the sink that writes to it.
func (p *pipeline) CheckAccount(a *results.Account, r *results.Result) []results.Finding {
	return []results.Finding{checkAppended(a, r)}
}

// checkAppended is CheckAccount's check.
func checkAppended(a *results.Account, r *results.Result) results.Finding {
	f := results.Finding{Check: checkRecords, Verdict: results.NotYetKnown}
	var parts []partitionRow
	if err := results.ReadTable(a.WindowTable(PartitionsTable), &parts); err != nil {
		f.Detail = err.Error()
		return f
	}
	var appended int64
	for _, p := range parts {
		appended += p.EndOffset
	}
	s := r.Summary
	switch {
	case a.WindowTable(PartitionsTable) == nil || len(parts) == 0:
		f.Detail = "the account has no window of the topic's partitions"
		return f
	case r.Experiment != nil && r.Experiment.Instances > 1:
		f.Detail = fmt.Sprintf("%d records appended; the other instances of experiment %s write to the topic too", appended, r.Experiment.Name)
		return f
	case s.MeasuredS <= 0:
		f.Detail = fmt.Sprintf("%d records appended; no measured phase to hold them against", appended)
		return f
	}
	first, last := a.EdgeBatches(r)
	first, last = first*int64(r.Config.BatchSize), last*int64(r.Config.BatchSize)
	// A retry sends its batch again.
	low, high := s.EventsAcked-first-last, s.EventsAcked+first+last+s.EventsFailed+s.Retries*int64(r.Config.BatchSize)
	f.Verdict = results.Agrees
	if appended < low || appended > high {
		f.Verdict = results.Disagrees
	}
	f.Detail = fmt.Sprintf("%d records appended to the topic over the measured phase, for %d events acknowledged (%d to %d allowed: %d and %d at the edges, the batches of the longest write, %.0f ms, and of the account's request, and one more for each event failed and each event of a batch retried)",
		appended, s.EventsAcked, low, high, first, last, s.WriteLatency.MaxMs)
	return f
}
