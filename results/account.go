package results

import (
	"time"
)

// ServerAccount is what the database server itself reports, at one moment,
// about how its copies of the data take new writes: per shard copy, its
// refreshes (Elasticsearch, OpenSearch); per standby, its replication
// (PostgreSQL); per WAL table, how far its apply is behind its commits
// (QuestDB). The client's measurement and this account, side by side,
// let a reader check that they agree.
type ServerAccount struct {
	At        time.Time         `json:"at"`
	Copies    []CopyAccount     `json:"copies,omitempty"`
	Standbys  []StandbyAccount  `json:"standbys,omitempty"`
	WALTables []WALTableAccount `json:"wal_tables,omitempty"`
	// Kafka is the account of the Kafka topic the events passed through
	// on their way to the database (a run --via kafka://…); nil otherwise.
	Kafka *KafkaAccount `json:"kafka,omitempty"`
}

// KafkaAccount is Kafka's own account of a topic and of the consumer
// groups that sink it into the database: per partition, the end offset
// (records the broker holds) and each group's committed offset. A
// group's lag is how many records it has not committed yet: records in
// the pipeline, not yet known to be in the database. A sink commits
// after it has written, on its own schedule (Kafka Connect: every
// offset.flush.interval.ms), so the lag counts written records until the
// next commit too.
type KafkaAccount struct {
	Topic      string          `json:"topic"`
	EndOffsets map[int32]int64 `json:"end_offsets"` // by partition
	Groups     []KafkaGroupLag `json:"groups,omitempty"`
}

// KafkaGroupLag is one consumer group's position on the topic.
type KafkaGroupLag struct {
	Group string `json:"group"`
	// Committed is the group's committed offset by partition; a
	// partition it never committed is absent (its lag counts from 0).
	Committed map[int32]int64 `json:"committed"`
	Lag       int64           `json:"lag"` // records not committed, over every partition
}

// WALTableAccount is one row of QuestDB's wal_tables(): a table whose
// writes are committed to a write-ahead log and applied to the table (made
// visible to queries) later, by a separate job.
type WALTableAccount struct {
	Table     string `json:"table"`
	Suspended bool   `json:"suspended"` // the apply stopped (an error, or ALTER TABLE … SUSPEND WAL)
	// SequencerTxn is the last transaction committed to the log (each
	// acknowledged ILP request or INSERT is one); WriterTxn the last one
	// applied to the table. Their difference is the apply backlog.
	SequencerTxn int64  `json:"sequencer_txn"`
	WriterTxn    int64  `json:"writer_txn"`
	ErrorTag     string `json:"error_tag,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
}

// Backlog is the transactions committed but not yet visible to queries.
func (w WALTableAccount) Backlog() int64 { return w.SequencerTxn - w.WriterTxn }

// CopyAccount is one shard copy of an Elasticsearch or OpenSearch index,
// from the index stats API (_stats/refresh?level=shards).
type CopyAccount struct {
	Index       string `json:"index"`
	Shard       int    `json:"shard"`
	Primary     bool   `json:"primary"`
	Node        string `json:"node"`                   // the node's name
	NodeAddress string `json:"node_address,omitempty"` // its HTTP address, host:port
	// Replication is the index's replication type, document or segment;
	// "" on Elasticsearch, which has only the one.
	Replication string `json:"replication,omitempty"`
	// The refresh counters since the copy started: every refresh, and
	// those of them that opened a new reader for searches (external;
	// Elasticsearch 7.7 and later, OpenSearch).
	RefreshTotal          int64 `json:"refresh_total"`
	RefreshTimeMS         int64 `json:"refresh_time_ms"`
	ExternalRefreshTotal  int64 `json:"external_refresh_total"`
	ExternalRefreshTimeMS int64 `json:"external_refresh_time_ms"`
	// SegmentReplication is the lag OpenSearch reports for a replica
	// under segment replication; nil for other copies.
	SegmentReplication *SegmentReplication `json:"segment_replication,omitempty"`
}

// SegmentReplication is OpenSearch's account of a segment-replication
// replica (_cat/segment_replication): how far it is behind its primary.
type SegmentReplication struct {
	CheckpointsBehind int64 `json:"checkpoints_behind"`
	BytesBehind       int64 `json:"bytes_behind"`
	CurrentLagMS      int64 `json:"current_lag_ms"`        // of the replication round under way
	LastCompletedLag  int64 `json:"last_completed_lag_ms"` // of the last round that finished
	RejectedRequests  int64 `json:"rejected_requests"`
}

// searchRefreshes counts the refreshes that made new documents visible to
// searches on the copy: its external refreshes, except on a replica under
// segment replication, which never refreshes from its own indexing but
// opens a new reader (an internal refresh) after each replication round.
func (c CopyAccount) searchRefreshes() int64 {
	if c.Replication == "segment" && !c.Primary {
		return c.RefreshTotal
	}
	return c.ExternalRefreshTotal
}

// StandbyAccount is one row of PostgreSQL's pg_stat_replication on the
// primary: a standby streaming from it. The lags are null when the server
// has none to report (e.g. a standby idle and caught up).
type StandbyAccount struct {
	ApplicationName string   `json:"application_name"`
	State           string   `json:"state"`      // streaming, catchup, …
	SyncState       string   `json:"sync_state"` // async, sync, potential, quorum
	WriteLagMS      *float64 `json:"write_lag_ms"`
	FlushLagMS      *float64 `json:"flush_lag_ms"`
	ReplayLagMS     *float64 `json:"replay_lag_ms"`
	// ReplayLagBytes is how much WAL the primary has written that the
	// standby has not replayed yet; null before it reported any.
	ReplayLagBytes *int64 `json:"replay_lag_bytes"`
}

// Account is the server's account of the measured phase of a run: taken
// at its start and at its end, and the figures that follow. Error says why
// it is missing or partial: the run goes on without it.
type Account struct {
	Start *ServerAccount `json:"start,omitempty"`
	End   *ServerAccount `json:"end,omitempty"`
	// Samples are the account taken between the two ends, in order:
	// about every 1/120 of the measured phase, at least a second apart.
	Samples []*ServerAccount `json:"samples,omitempty"`
	// Refreshes holds, per shard copy present at both ends, its refreshes
	// in between (see CopyRefreshes).
	Refreshes []CopyRefreshes `json:"refreshes,omitempty"`
	// WALApply holds, per WAL table present at both ends, its commits and
	// applies in between (see TableWALApply).
	WALApply []TableWALApply `json:"wal_apply,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// TableWALApply is one WAL table's log between the two accounts: the
// transactions committed and applied in the window, and the backlog
// (committed, not yet applied) at each end.
type TableWALApply struct {
	Table        string `json:"table"`
	Committed    int64  `json:"committed_txns"`
	Applied      int64  `json:"applied_txns"`
	BacklogStart int64  `json:"backlog_start_txns"`
	BacklogEnd   int64  `json:"backlog_end_txns"`
}

// CopyRefreshes is one shard copy's refreshes between the two accounts.
type CopyRefreshes struct {
	Index   string `json:"index"`
	Shard   int    `json:"shard"`
	Primary bool   `json:"primary"`
	Node    string `json:"node"`
	// Refreshes that made new documents visible to searches on the copy
	// (for a segment-replication replica: replication rounds), and the
	// mean time between them over the window; 0 when there were none.
	Refreshes int64   `json:"refreshes"`
	PeriodMS  float64 `json:"period_ms,omitempty"`
	// RefreshTimeMS is the time the copy spent refreshing in the window.
	RefreshTimeMS int64 `json:"refresh_time_ms"`
}

// NewAccount derives the figures of an account from its two ends.
func NewAccount(start, end *ServerAccount) *Account {
	a := &Account{Start: start, End: end}
	window := end.At.Sub(start.At)
	type key struct {
		index string
		shard int
		node  string
	}
	before := make(map[key]CopyAccount, len(start.Copies))
	for _, c := range start.Copies {
		before[key{c.Index, c.Shard, c.Node}] = c
	}
	for _, c := range end.Copies {
		b, ok := before[key{c.Index, c.Shard, c.Node}]
		// A copy that restarted (its counters went back) or moved counts
		// from zero in the window, which would overstate its refreshes.
		if !ok || c.RefreshTotal < b.RefreshTotal {
			continue
		}
		r := CopyRefreshes{
			Index: c.Index, Shard: c.Shard, Primary: c.Primary, Node: c.Node,
			Refreshes:     c.searchRefreshes() - b.searchRefreshes(),
			RefreshTimeMS: c.RefreshTimeMS - b.RefreshTimeMS,
		}
		if r.Refreshes > 0 {
			r.PeriodMS = float64(window) / float64(time.Millisecond) / float64(r.Refreshes)
		}
		a.Refreshes = append(a.Refreshes, r)
	}
	a.WALApply = walApply(start.WALTables, end.WALTables)
	return a
}

// walApply pairs the WAL tables of the two ends by name. A table that is
// missing at one end, or whose counters went back (dropped and created
// again), has no window to report.
func walApply(start, end []WALTableAccount) []TableWALApply {
	before := make(map[string]WALTableAccount, len(start))
	for _, w := range start {
		before[w.Table] = w
	}
	var out []TableWALApply
	for _, w := range end {
		b, ok := before[w.Table]
		if !ok || w.SequencerTxn < b.SequencerTxn || w.WriterTxn < b.WriterTxn {
			continue
		}
		out = append(out, TableWALApply{Table: w.Table,
			Committed: w.SequencerTxn - b.SequencerTxn, Applied: w.WriterTxn - b.WriterTxn,
			BacklogStart: b.Backlog(), BacklogEnd: w.Backlog()})
	}
	return out
}
