package postgres

import (
	"fmt"
	"strconv"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/internal/pgwire"
)

// knobs declares every setting of the target, once: the package doc's
// list, the settings help, the parsing and the effective settings of a
// results file all come from here.
func knobs() target.Knobs {
	return target.Knobs{
		{Name: "table", Default: DefaultTable, Parse: parseTable,
			Help: "the table; the URL's ?table= says the same (letters, digits, _)"},
		{Name: "write_method", Default: defaultWriteMethod, Parse: target.OneOf(WriteMethods()...),
			Help: "insert, copy or pipeline: how a batch is written in one transaction"},
		{Name: "gin", Default: "false", Parse: parseGIN,
			Help: "GIN index on doc: false, true (jsonb_ops) or jsonb_path_ops (smaller, serves @> only)"},
		{Name: "unlogged", Default: "false", Parse: target.ParseBool,
			Help: "true: CREATE UNLOGGED TABLE (no WAL, emptied after a crash)"},
		{Name: "max_conns", Default: strconv.Itoa(defaultMaxConns), Parse: target.ParseInt(1),
			Help: "connection pool size; the URL's pool_max_conns says the same"},
		{Name: "synchronous_commit", Parse: parseSynchronousCommit,
			Help: "synchronous_commit of every session: on, off, local, remote_write or remote_apply; unset: the server's"},
	}
}

func parseTable(v string) (any, error) {
	if !pgwire.PlainIdentifier(v, maxTableLen) {
		return nil, fmt.Errorf("want 1 to %d letters, digits or underscores, not starting with a digit", maxTableLen)
	}
	return v, nil
}

// parseGIN returns the operator class of the GIN index, or "false" for
// none.
func parseGIN(v string) (any, error) {
	switch v {
	case "false", "0", "no", "off":
		return "false", nil
	case "true", "1", "yes", "on", "jsonb_ops":
		return "jsonb_ops", nil
	case "jsonb_path_ops":
		return v, nil
	}
	return nil, fmt.Errorf("want true, false, jsonb_ops or jsonb_path_ops")
}

// parseSynchronousCommit checks the value here, so that a typo is the
// user's to fix before connecting rather than a failed connection.
func parseSynchronousCommit(v string) (any, error) {
	if v == "" {
		return v, nil
	}
	return target.OneOf("on", "off", "local", "remote_write", "remote_apply")(v)
}

// Settings returns the settings in effect, defaults included.
func (s *store) Settings() map[string]string { return s.cfg.settings.Text() }
