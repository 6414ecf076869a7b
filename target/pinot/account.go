package pinot

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

var (
	_ target.AccountReporter = (*store)(nil)
	_ target.Backlogged      = (*store)(nil)
)

// The tables of Pinot's account in a server account.
const (
	PartitionsTable = "pinot_partitions"
	SegmentsTable   = "pinot_segments"
)

// Account is Pinot's own account of the table's ingestion: per partition
// of the topic, its consuming segment, the offset it started from (the
// one the controller committed with the segment before: where a server
// restarted after a crash reads again from), the offset the server has
// consumed to, and Kafka's end offset, read at the same moment; and the
// table's segments by state as the controller's external view has them.
// Pinot 0.11 reports no lag of its own: the lag here is Kafka's end less
// Pinot's consumed offset.
type Account struct {
	Partitions []Partition
	Segments   []Segments
}

// Partition is one partition of the topic and the segment consuming it.
type Partition struct {
	Table       string `account:"table,key"`
	Partition   int    `account:"partition,key"`
	Segment     string `account:"segment"`
	Server      string `account:"server"`
	State       string `account:"state"`                             // the consumer's: CONSUMING, …; "not reported" when no server answered for it
	StartOffset int64  `account:"start_offset,counter,unit=records"` // where the consuming segment began: committed
	Consumed    int64  `account:"consumed,counter,unit=records"`     // the offset the server has consumed to (the start offset when it does not say)
	EndOffset   int64  `account:"end_offset,counter,unit=records"`   // Kafka's, read with the others
	Lag         int64  `account:"lag,level,unit=records"`            // end offset less consumed
	Uncommitted int64  `account:"uncommitted,level,unit=records"`    // consumed less start offset: held only by the consuming segment
}

// Segments counts the table's segments by the state its servers serve
// them in.
type Segments struct {
	Table     string `account:"table,key"`
	Consuming int64  `account:"consuming,level,unit=segments"` // being filled from the topic, queryable
	Online    int64  `account:"online,level,unit=segments"`    // committed and served
	Other     int64  `account:"other,level,unit=segments"`     // OFFLINE, ERROR, or in the ideal state and served by no server
}

// AccountTables puts the account in the results' shape.
func (a *Account) AccountTables() []results.AccountTable {
	return []results.AccountTable{
		results.TableOf(PartitionsTable, "per partition of the topic: Pinot's consuming segment, the offset it started from (committed), the offset its server has consumed to, Kafka's end offset, and the lag between", a.Partitions),
		results.TableOf(SegmentsTable, "the table's segments as its servers serve them (the controller's external view): consuming, committed and online, and any other", a.Segments),
	}
}

// ServerAccount reads the consuming segments, Kafka's end offsets and
// the external view.
func (s *store) ServerAccount(ctx context.Context) (results.AccountSnapshot, error) {
	ps, err := s.partitions(ctx)
	if err != nil {
		return nil, err
	}
	seg, err := s.segments(ctx)
	if err != nil {
		return nil, err
	}
	return &Account{Partitions: ps, Segments: []Segments{seg}}, nil
}

// Backlog is Pinot's lag over every partition: records in the topic its
// server has not consumed (while the server is down: since the committed
// start of the consuming segment, which a restarted server reads again).
func (s *store) Backlog(ctx context.Context) (int64, error) {
	ps, err := s.partitions(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, p := range ps {
		n += p.Lag
	}
	return n, nil
}

// llcPartition is the partition in the name of a low-level consumer's
// segment, table__partition__sequence__time.
func llcPartition(segment string) (int, bool) {
	f := strings.Split(segment, "__")
	if len(f) != 4 {
		return 0, false
	}
	p, err := strconv.Atoi(f[1])
	return p, err == nil
}

// partitions reads, per partition, the segment the ideal state has
// consuming, its start offset, what its server says it consumed, and
// Kafka's end offset.
func (s *store) partitions(ctx context.Context) ([]Partition, error) {
	var ideal struct {
		Realtime map[string]map[string]string `json:"REALTIME"`
	}
	if err := s.api.Call(ctx, "ideal state of", http.MethodGet, s.tableURL("/idealstate"), nil, &ideal); err != nil {
		return nil, err
	}
	var info struct {
		Segments map[string][]struct {
			Server  string            `json:"serverName"`
			State   string            `json:"consumerState"`
			Offsets map[string]string `json:"partitionToOffsetMap"`
		} `json:"_segmentToConsumingInfoMap"`
	}
	if err := s.api.Call(ctx, "consuming segments of", http.MethodGet, s.tableURL("/consumingSegmentsInfo"), nil, &info); err != nil {
		return nil, err
	}
	ends, err := s.endOffsets(ctx)
	if err != nil {
		return nil, err
	}
	var out []Partition
	for _, seg := range slices.Sorted(maps.Keys(ideal.Realtime)) {
		var server string
		for srv, st := range ideal.Realtime[seg] {
			if st == "CONSUMING" {
				server = srv
			}
		}
		pn, ok := llcPartition(seg)
		if server == "" || !ok {
			continue
		}
		var meta map[string]string
		if err := s.api.Call(ctx, "segment of", http.MethodGet,
			s.cfg.controller+"/segments/"+url.PathEscape(s.cfg.table)+"/"+url.PathEscape(seg)+"/metadata", nil, &meta); err != nil {
			return nil, err
		}
		p := Partition{Table: s.cfg.table, Partition: pn, Segment: seg, Server: server, State: "not reported", EndOffset: ends[int32(pn)]}
		p.StartOffset, _ = strconv.ParseInt(meta["segment.realtime.startOffset"], 10, 64)
		p.Consumed = p.StartOffset
		for _, c := range info.Segments[seg] {
			if o, err := strconv.ParseInt(c.Offsets[strconv.Itoa(pn)], 10, 64); err == nil {
				p.Server, p.State, p.Consumed = c.Server, c.State, o
			}
		}
		p.Lag = max(p.EndOffset-p.Consumed, 0)
		p.Uncommitted = p.Consumed - p.StartOffset
		out = append(out, p)
	}
	return out, nil
}

// segments counts the external view's segments by state.
func (s *store) segments(ctx context.Context) (Segments, error) {
	var ideal, ev struct {
		Realtime map[string]map[string]string `json:"REALTIME"`
	}
	if err := s.api.Call(ctx, "ideal state of", http.MethodGet, s.tableURL("/idealstate"), nil, &ideal); err != nil {
		return Segments{}, err
	}
	if err := s.api.Call(ctx, "external view of", http.MethodGet, s.tableURL("/externalview"), nil, &ev); err != nil {
		return Segments{}, err
	}
	g := Segments{Table: s.cfg.table}
	for seg := range ideal.Realtime {
		state := ""
		for _, st := range ev.Realtime[seg] {
			state = st
		}
		switch state {
		case "CONSUMING":
			g.Consuming++
		case "ONLINE":
			g.Online++
		default:
			g.Other++
		}
	}
	return g, nil
}

// endOffsets reads Kafka's end offset of each partition of the topic,
// with a client made at the first read.
func (s *store) endOffsets(ctx context.Context) (map[int32]int64, error) {
	brokers, topic := s.Source()
	if topic == "" {
		return nil, fmt.Errorf("pinot %s: %w", s.cfg.redacted, errNoVia)
	}
	s.mu.Lock()
	if s.kafka == nil {
		kc, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
		if err != nil {
			s.mu.Unlock()
			return nil, fmt.Errorf("pinot account of %s: kafka %s: %w", s.cfg.table, brokers, err)
		}
		s.kafka = kadm.NewClient(kc)
	}
	adm := s.kafka
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.api.Timeout)
	defer cancel()
	listed, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("pinot account of %s: end offsets of topic %s: %w", s.cfg.table, topic, err)
	}
	ends := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return ends, nil
}

// AccountOf reads Pinot's account back from a server account (as a
// results file holds it); nil when it has none.
func AccountOf(s *results.ServerAccount) (*Account, error) {
	if s == nil || s.Table(PartitionsTable) == nil {
		return nil, nil
	}
	a := &Account{}
	if err := results.ReadTable(s.Table(PartitionsTable), &a.Partitions); err != nil {
		return nil, fmt.Errorf("pinot account: %w", err)
	}
	if err := results.ReadTable(s.Table(SegmentsTable), &a.Segments); err != nil {
		return nil, fmt.Errorf("pinot account: %w", err)
	}
	return a, nil
}
