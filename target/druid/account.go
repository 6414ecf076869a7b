package druid

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

var (
	_ target.AccountReporter = (*store)(nil)
	_ target.Backlogged      = (*store)(nil)
)

// The tables of Druid's account in a server account.
const (
	SupervisorsTable = "druid_supervisors"
	PartitionsTable  = "druid_partitions"
	TasksTable       = "druid_tasks"
	SegmentsTable    = "druid_segments"
)

// Account is Druid's own account of the datasource's ingestion: its Kafka
// supervisor (state and lag), per partition of the topic the offset
// Druid last learned of (Kafka's end) against the offset its tasks have
// read to, its tasks, and its segments — those still served by the
// ingesting task (realtime) and those handed off to the historicals.
// Druid refreshes the offsets of its report every offsetFetchPeriod (5 s
// here), so the lag is up to that old; OffsetsUpdated says when.
type Account struct {
	Supervisors []Supervisor
	Partitions  []Partition
	Tasks       []Task
	Segments    []Segments
}

// Supervisor is the state of a datasource's Kafka supervisor.
type Supervisor struct {
	Datasource     string `account:"datasource,key"`
	State          string `account:"state"`          // RUNNING, SUSPENDED, UNHEALTHY_SUPERVISOR, …
	DetailedState  string `account:"detailed_state"` // e.g. CONNECTING_TO_STREAM, DISCOVERING_INITIAL_TASKS
	Healthy        bool   `account:"healthy"`
	Suspended      bool   `account:"suspended"`
	AggregateLag   int64  `account:"aggregate_lag,level,unit=records"` // records in the topic not read yet, over every partition
	OffsetsUpdated string `account:"offsets_updated"`                  // when Druid last fetched the offsets its lag is of
	RecentError    string `account:"recent_error"`
}

// Partition is one partition of the topic as the supervisor reports it.
type Partition struct {
	Datasource string `account:"datasource,key"`
	Partition  int    `account:"partition,key"`
	EndOffset  int64  `account:"end_offset,counter,unit=records"` // Kafka's latest offset, as Druid last fetched it
	Consumed   int64  `account:"consumed,counter,unit=records"`   // the offset its tasks have read to
	Lag        int64  `account:"lag,level,unit=records"`
}

// Task is one of the supervisor's tasks: reading (ACTIVE) or publishing
// its segments (PUBLISHING).
type Task struct {
	Task             string `account:"task,key"`
	Type             string `account:"type"`
	RemainingSeconds int64  `account:"remaining_s,level,unit=s"` // until it stops reading and publishes
}

// Segments counts the datasource's segments as the broker's system
// tables see them.
type Segments struct {
	Datasource    string `account:"datasource,key"`
	Realtime      int64  `account:"realtime,level,unit=segments"`   // served by an ingesting task, not published yet
	Published     int64  `account:"published,level,unit=segments"`  // in the metadata store, in deep storage
	HandedOff     int64  `account:"handed_off,level,unit=segments"` // published and served by a historical
	RowsHandedOff int64  `account:"rows_handed_off,level,unit=rows"`
}

// AccountTables puts the account in the results' shape.
func (a *Account) AccountTables() []results.AccountTable {
	return []results.AccountTable{
		results.TableOf(SupervisorsTable, "Druid's Kafka supervisor of the datasource: its state and lag (records in the topic its tasks have not read), as of offsets_updated", a.Supervisors),
		results.TableOf(PartitionsTable, "per partition of the topic: Kafka's end offset as Druid last fetched it, the offset Druid's tasks have read to, and the lag between", a.Partitions),
		results.TableOf(TasksTable, "the supervisor's tasks: reading the topic (ACTIVE) or publishing and handing off their segments (PUBLISHING)", a.Tasks),
		results.TableOf(SegmentsTable, "the datasource's segments (sys.segments): served by the ingesting task (realtime), published, and handed off to a historical", a.Segments),
	}
}

// supervisorStatus is the supervisor's status report.
type supervisorStatus struct {
	State              string           `json:"state"`
	DetailedState      string           `json:"detailedState"`
	Healthy            bool             `json:"healthy"`
	Suspended          bool             `json:"suspended"`
	AggregateLag       *int64           `json:"aggregateLag"`
	OffsetsLastUpdated string           `json:"offsetsLastUpdated"`
	LatestOffsets      map[string]int64 `json:"latestOffsets"`
	MinimumLag         map[string]int64 `json:"minimumLag"`
	ActiveTasks        []taskReport     `json:"activeTasks"`
	PublishingTasks    []taskReport     `json:"publishingTasks"`
	RecentErrors       []struct {
		Message string `json:"message"`
	} `json:"recentErrors"`
}

type taskReport struct {
	ID               string           `json:"id"`
	Type             string           `json:"type"`
	RemainingSeconds int64            `json:"remainingSeconds"`
	CurrentOffsets   map[string]int64 `json:"currentOffsets"`
}

func (s *store) supervisorStatus(ctx context.Context) (supervisorStatus, error) {
	var st struct {
		Payload supervisorStatus `json:"payload"`
	}
	err := s.api.Call(ctx, "supervisor status of", http.MethodGet, s.supervisorURL("/status"), nil, &st)
	return st.Payload, err
}

// ServerAccount reads the supervisor's status and the segments.
func (s *store) ServerAccount(ctx context.Context) (results.AccountSnapshot, error) {
	st, err := s.supervisorStatus(ctx)
	if err != nil {
		return nil, err
	}
	a := &Account{}
	sup := Supervisor{Datasource: s.cfg.datasource, State: st.State, DetailedState: st.DetailedState,
		Healthy: st.Healthy, Suspended: st.Suspended, OffsetsUpdated: st.OffsetsLastUpdated}
	if st.AggregateLag != nil {
		sup.AggregateLag = *st.AggregateLag
	}
	if n := len(st.RecentErrors); n > 0 {
		sup.RecentError = st.RecentErrors[n-1].Message
	}
	a.Supervisors = []Supervisor{sup}
	consumed := map[string]int64{}
	for _, t := range append(slices.Clone(st.ActiveTasks), st.PublishingTasks...) {
		a.Tasks = append(a.Tasks, Task{Task: t.ID, Type: t.Type, RemainingSeconds: t.RemainingSeconds})
		for p, o := range t.CurrentOffsets {
			consumed[p] = max(consumed[p], o)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(st.LatestOffsets)) {
		n, _ := strconv.Atoi(p)
		end := st.LatestOffsets[p]
		a.Partitions = append(a.Partitions, Partition{Datasource: s.cfg.datasource, Partition: n,
			EndOffset: end, Consumed: consumed[p], Lag: max(end-consumed[p], 0)})
	}
	seg, err := s.segments(ctx)
	if err != nil {
		return nil, err
	}
	a.Segments = []Segments{seg}
	return a, nil
}

// segments counts the datasource's segments in sys.segments.
func (s *store) segments(ctx context.Context) (Segments, error) {
	g := Segments{Datasource: s.cfg.datasource}
	err := s.sql(ctx, "segments of", `SELECT`+
		` COUNT(*) FILTER (WHERE is_realtime = 1),`+
		` COUNT(*) FILTER (WHERE is_published = 1),`+
		` COUNT(*) FILTER (WHERE is_published = 1 AND is_available = 1 AND is_realtime = 0),`+
		// A realtime segment's num_rows is as of its announcement, not
		// its rows now: only handed-off segments' rows are counted.
		` COALESCE(SUM(num_rows) FILTER (WHERE is_published = 1 AND is_available = 1 AND is_realtime = 0), 0)`+
		` FROM sys.segments WHERE datasource = ?`, []param{str(s.cfg.datasource)}, func(row []json.RawMessage) error {
		for i, p := range []*int64{&g.Realtime, &g.Published, &g.HandedOff, &g.RowsHandedOff} {
			if i < len(row) {
				_ = json.Unmarshal(row[i], p)
			}
		}
		return nil
	})
	return g, err
}

// Backlog is the supervisor's aggregate lag: records in the topic that
// Druid's tasks have not read, as of its last offset fetch.
func (s *store) Backlog(ctx context.Context) (int64, error) {
	st, err := s.supervisorStatus(ctx)
	if err != nil {
		return 0, err
	}
	if st.AggregateLag == nil {
		return 0, fmt.Errorf("druid supervisor of %s reports no lag yet (state %s)", s.cfg.datasource, st.DetailedState)
	}
	return *st.AggregateLag, nil
}

// AccountOf reads Druid's account back from a server account (as a
// results file holds it); nil when it has none.
func AccountOf(s *results.ServerAccount) (*Account, error) {
	if s == nil || s.Table(SupervisorsTable) == nil {
		return nil, nil
	}
	a := &Account{}
	for _, t := range []struct {
		name string
		out  any
	}{{SupervisorsTable, &a.Supervisors}, {PartitionsTable, &a.Partitions}, {TasksTable, &a.Tasks}, {SegmentsTable, &a.Segments}} {
		if err := results.ReadTable(s.Table(t.name), t.out); err != nil {
			return nil, fmt.Errorf("druid account: %w", err)
		}
	}
	return a, nil
}
