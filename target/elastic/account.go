package elastic

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

var _ target.AccountReporter = (*Target)(nil)

// CopiesTable names the table of shard copies in a server account.
const CopiesTable = "copies"

// Account is the server's account of the index: its shard copies, from
// the index stats API (_stats/refresh?level=shards).
type Account struct {
	Copies []Copy
}

// AccountTables puts the account in the results' shape.
func (a Account) AccountTables() []results.AccountTable {
	return []results.AccountTable{results.TableOf(CopiesTable,
		"each shard copy of the index: its refreshes (search_refreshes made new documents visible to searches on it) and, for a segment-replication replica, its lag",
		a.Copies)}
}

// Copy is one shard copy of an Elasticsearch or OpenSearch index.
type Copy struct {
	Index       string `account:"index,key"`
	Shard       int    `account:"shard,key"`
	Primary     bool   `account:"primary"`
	Node        string `account:"node,key"`     // the node's name
	NodeAddress string `account:"node_address"` // its HTTP address, host:port
	// Replication is the index's replication type, document or segment;
	// "" on Elasticsearch, which has only the one.
	Replication string `account:"replication"`
	// The refresh counters since the copy started: every refresh, and
	// those of them that opened a new reader for searches (external;
	// Elasticsearch 7.7 and later, OpenSearch).
	RefreshTotal          int64 `account:"refresh_total,counter,unit=refreshes"`
	RefreshTimeMS         int64 `account:"refresh_time,counter,unit=ms"`
	ExternalRefreshTotal  int64 `account:"external_refresh_total,counter,unit=refreshes"`
	ExternalRefreshTimeMS int64 `account:"external_refresh_time,counter,unit=ms"`
	// SearchRefreshes counts the refreshes that made new documents
	// visible to searches on the copy (see searchRefreshes).
	SearchRefreshes int64 `account:"search_refreshes,counter,unit=refreshes"`
	// SegmentReplication is the lag OpenSearch reports for a replica
	// under segment replication; nil for other copies.
	SegmentReplication *SegmentReplication
}

// SegmentReplication is OpenSearch's account of a segment-replication
// replica (_cat/segment_replication): how far it is behind its primary.
type SegmentReplication struct {
	CheckpointsBehind int64 `account:"checkpoints_behind,level,unit=checkpoints"`
	BytesBehind       int64 `account:"bytes_behind,level,unit=bytes"`
	CurrentLagMS      int64 `account:"current_lag,level,unit=ms"`        // of the replication round under way
	LastCompletedLag  int64 `account:"last_completed_lag,level,unit=ms"` // of the last round that finished
	RejectedRequests  int64 `account:"rejected_requests,counter,unit=requests"`
}

// searchRefreshes counts the refreshes that made new documents visible to
// searches on the copy: its external refreshes, except on a replica under
// segment replication, which never refreshes from its own indexing but
// opens a new reader (an internal refresh) after each replication round.
func (c Copy) searchRefreshes() int64 {
	if c.Replication == ReplicationSegment && !c.Primary {
		return c.RefreshTotal
	}
	return c.ExternalRefreshTotal
}

// Copies reads the shard copies of an account taken of this target.
func Copies(a *results.ServerAccount) ([]Copy, error) {
	var out []Copy
	return out, results.ReadTable(a.Table(CopiesTable), &out)
}

// CopyRefreshes is one shard copy's refreshes over an account's window.
type CopyRefreshes struct {
	Index   string `account:"index"`
	Shard   int    `account:"shard"`
	Primary bool   `account:"primary"`
	Node    string `account:"node"`
	// Refreshes that made new documents visible to searches on the copy
	// (for a segment-replication replica: replication rounds), and the
	// mean time between them over the window; 0 when there were none.
	Refreshes int64 `account:"search_refreshes"`
	PeriodMS  float64
	// RefreshTimeMS is the time the copy spent refreshing in the window.
	RefreshTimeMS int64 `account:"refresh_time"`
}

// Refreshes reads, per shard copy present at both ends of a, its
// refreshes in between.
func Refreshes(a *results.Account) ([]CopyRefreshes, error) {
	var out []CopyRefreshes
	if err := results.ReadTable(a.WindowTable(CopiesTable), &out); err != nil || a.Start == nil || a.End == nil {
		return out, err
	}
	window := a.End.At.Sub(a.Start.At)
	for i, r := range out {
		if r.Refreshes > 0 {
			out[i].PeriodMS = float64(window) / float64(time.Millisecond) / float64(r.Refreshes)
		}
	}
	return out, nil
}

// ServerAccount reports every shard copy of the index.
func (t *Target) ServerAccount(ctx context.Context) (results.AccountSnapshot, error) {
	copies, err := t.copies(ctx)
	return Account{Copies: copies}, err
}

// copies reports every shard copy of the index (of each index, for an
// alias): its node, whether it is the primary, its refresh counters and,
// on OpenSearch, its replication type and, for a replica under segment
// replication, the lag the server reports.
func (t *Target) copies(ctx context.Context) ([]Copy, error) {
	var acct Account
	nodes, err := t.nodeNames(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: server account: %w", t.display, err)
	}
	var stats struct {
		Indices map[string]struct {
			Shards map[string][]struct {
				Routing struct {
					Primary bool   `json:"primary"`
					Node    string `json:"node"`
				} `json:"routing"`
				Refresh struct {
					Total                     int64 `json:"total"`
					TotalTimeInMillis         int64 `json:"total_time_in_millis"`
					ExternalTotal             int64 `json:"external_total"`
					ExternalTotalTimeInMillis int64 `json:"external_total_time_in_millis"`
				} `json:"refresh"`
			} `json:"shards"`
		} `json:"indices"`
	}
	if err := t.getJSON(ctx, "/"+t.ip+"/_stats/refresh",
		"level=shards&filter_path=indices.*.shards.*.routing,indices.*.shards.*.refresh", &stats); err != nil {
		return nil, fmt.Errorf("%s: server account: refresh stats: %w", t.display, err)
	}
	types, lags, err := t.replication(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: server account: %w", t.display, err)
	}
	for index, ix := range stats.Indices {
		for sh, copies := range ix.Shards {
			shard, err := strconv.Atoi(sh)
			if err != nil {
				return nil, fmt.Errorf("%s: server account: shard %q of %s is not a number", t.display, sh, index)
			}
			for _, c := range copies {
				n := nodes[c.Routing.Node]
				ca := Copy{
					Index: index, Shard: shard, Primary: c.Routing.Primary,
					Node: cmp.Or(n.Name, c.Routing.Node), NodeAddress: n.HTTP.PublishAddress,
					Replication:  types[index],
					RefreshTotal: c.Refresh.Total, RefreshTimeMS: c.Refresh.TotalTimeInMillis,
					ExternalRefreshTotal: c.Refresh.ExternalTotal, ExternalRefreshTimeMS: c.Refresh.ExternalTotalTimeInMillis,
				}
				if !ca.Primary {
					ca.SegmentReplication = lags[copyKey{index, shard, ca.Node}]
				}
				ca.SearchRefreshes = ca.searchRefreshes()
				acct.Copies = append(acct.Copies, ca)
			}
		}
	}
	slices.SortFunc(acct.Copies, func(a, b Copy) int {
		if a.Primary != b.Primary { // primary first
			if a.Primary {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Index, b.Index), cmp.Compare(a.Shard, b.Shard), cmp.Compare(a.Node, b.Node))
	})
	return acct.Copies, nil
}

// nodeInfo is a node's name and HTTP address from the nodes info API.
type nodeInfo struct {
	Name string `json:"name"`
	HTTP struct {
		PublishAddress string `json:"publish_address"`
	} `json:"http"`
}

// nodeNames maps the ids of the cluster's nodes, which the stats name
// copies by, to their names and HTTP addresses.
func (t *Target) nodeNames(ctx context.Context) (map[string]nodeInfo, error) {
	var info struct {
		Nodes map[string]nodeInfo `json:"nodes"`
	}
	if err := t.getJSON(ctx, "/_nodes/http", "filter_path=nodes.*.name,nodes.*.http.publish_address", &info); err != nil {
		return nil, fmt.Errorf("nodes info: %w", err)
	}
	return info.Nodes, nil
}

// copyKey names one shard copy: index, shard number and node name.
type copyKey struct {
	index string
	shard int
	node  string
}

// replication returns, on OpenSearch, the replication type of each index
// (document or segment) and, when some index replicates segments, the lag
// of each of its replicas. Elasticsearch has one replication type and
// neither figure.
func (t *Target) replication(ctx context.Context) (map[string]string, map[copyKey]*SegmentReplication, error) {
	if t.cfg.product != OpenSearch {
		return nil, nil, nil
	}
	var settings map[string]struct {
		Settings map[string]string `json:"settings"`
		Defaults map[string]string `json:"defaults"`
	}
	const key = "index.replication.type"
	if err := t.getJSON(ctx, "/"+t.ip+"/_settings/"+key, "flat_settings=true&include_defaults=true", &settings); err != nil {
		return nil, nil, fmt.Errorf("replication type: %w", err)
	}
	types := make(map[string]string, len(settings))
	segment := false
	for index, s := range settings {
		typ := strings.ToLower(cmp.Or(s.Settings[key], s.Defaults[key]))
		types[index] = typ
		segment = segment || typ == ReplicationSegment
	}
	if !segment {
		return types, nil, nil
	}
	lags, err := t.segmentReplication(ctx)
	return types, lags, err
}

// shardIDPattern parses the shardId of _cat/segment_replication: [index][n].
var shardIDPattern = regexp.MustCompile(`^\[(.+)\]\[(\d+)\]$`)

// segmentReplication reads OpenSearch's lag of each segment-replication
// replica of the index, in milliseconds and bytes.
func (t *Target) segmentReplication(ctx context.Context) (map[copyKey]*SegmentReplication, error) {
	var rows []map[string]string
	err := t.getJSON(ctx, "/_cat/segment_replication/"+t.ip,
		"format=json&time=ms&bytes=b&h=shardId,target_node,checkpoints_behind,bytes_behind,current_lag,last_completed_lag,rejected_requests", &rows)
	if err != nil {
		return nil, fmt.Errorf("segment replication: %w", err)
	}
	out := make(map[copyKey]*SegmentReplication, len(rows))
	for _, r := range rows {
		m := shardIDPattern.FindStringSubmatch(r["shardId"])
		if m == nil {
			return nil, fmt.Errorf("segment replication: unexpected shardId %q", r["shardId"])
		}
		shard, _ := strconv.Atoi(m[2])
		var sr SegmentReplication
		for _, f := range []struct {
			name string
			to   *int64
		}{
			{"checkpoints_behind", &sr.CheckpointsBehind}, {"bytes_behind", &sr.BytesBehind},
			{"current_lag", &sr.CurrentLagMS}, {"last_completed_lag", &sr.LastCompletedLag},
			{"rejected_requests", &sr.RejectedRequests},
		} {
			v, err := strconv.ParseInt(r[f.name], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("segment replication: %s of %s is %q, not a whole number", f.name, r["shardId"], r[f.name])
			}
			*f.to = v
		}
		out[copyKey{m[1], shard, r["target_node"]}] = &sr
	}
	return out, nil
}

// getJSON GETs path and decodes a 2xx response into out.
func (t *Target) getJSON(ctx context.Context, path, query string, out any) error {
	res, err := t.do(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return err
	}
	if !is2xx(res.status) {
		return serverError(res.status, res.body)
	}
	if err := json.Unmarshal(res.body, out); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}
