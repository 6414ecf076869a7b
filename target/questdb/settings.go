package questdb

import (
	"fmt"
	"strconv"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/internal/pgwire"
)

// Transports of the ilp_transport setting.
const (
	transportHTTP = "http"
	transportTCP  = "tcp"
)

// partitionings QuestDB takes in PARTITION BY; a WAL table must be
// partitioned (not NONE).
var partitionings = []string{"NONE", "HOUR", "DAY", "WEEK", "MONTH", "YEAR"}

// knobs declares every setting of the target, once: the package doc's
// list, the settings help, the parsing and the effective settings of a
// results file all come from here.
func knobs() target.Knobs {
	return target.Knobs{
		{Name: "table", Default: DefaultTable, Parse: parseTable,
			Help: "the table; the URL's ?table= says the same (letters, digits, _)"},
		{Name: "partition_by", Default: "DAY", Parse: target.OneOf(partitionings...),
			Help: "PARTITION BY of the table on _event_time: NONE (only with wal=false), HOUR, DAY, WEEK, MONTH or YEAR"},
		{Name: "wal", Default: "true", Parse: target.ParseBool,
			Help: "true: a WAL table (writes are applied asynchronously, with DEDUP on _event_time and _id, which replaces a row with its update); false: BYPASS WAL (needs ilp_transport=tcp; takes no updates)"},
		{Name: "ilp_transport", Default: transportHTTP, Parse: target.OneOf(transportHTTP, transportTCP),
			Help: "http (an answer per batch: rejected rows are named) or tcp (no answer: a rejected row is found only by the audit)"},
		{Name: "http_port", Default: "9000", Parse: parsePort,
			Help: "QuestDB's HTTP port on the URL's host (ILP over HTTP); the URL's ?http_port= says the same"},
		{Name: "tcp_port", Default: "9009", Parse: parsePort,
			Help: "QuestDB's ILP over TCP port on the URL's host; the URL's ?tcp_port= says the same"},
		{Name: "columns", Default: columnsDoc, Parse: target.OneOf(columnsDoc, columnsFlat),
			Help: "doc (each event whole as JSON in the column doc, read with json_extract) or flat (each event's fields flattened into columns: a nested field's path joined with _, an array as its JSON; no query workload: its kinds read doc)"},
		{Name: "max_conns", Default: strconv.Itoa(defaultMaxConns), Parse: target.ParseInt(1),
			Help: "PostgreSQL-wire connection pool size (reads and queries)"},
	}
}

func parseTable(v string) (any, error) {
	if !pgwire.PlainIdentifier(v, maxTableLen) {
		return nil, fmt.Errorf("want 1 to %d letters, digits or underscores, not starting with a digit", maxTableLen)
	}
	return v, nil
}

func parsePort(v string) (any, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("want a port, 1 to 65535")
	}
	return n, nil
}

// Settings returns the settings in effect, defaults included.
func (s *store) Settings() map[string]string { return s.cfg.settings.Text() }
