package results

import (
	"slices"
	"strings"
	"time"
)

// ServerAccount is what the database server itself reports, at one moment,
// about how its copies of the data take new writes (refreshes per shard
// copy, replication per standby, the apply of a write-ahead log, a Kafka
// topic's offsets). Each database says it in its own type, in its own
// package, and puts it in this shape (see AccountOf): tables of named,
// typed values, each column with its unit and its role, which results and
// report read without knowing the database. The client's measurement and
// this account, side by side, let a reader check that they agree.
type ServerAccount struct {
	At time.Time `json:"at"`
	// WithinMS is how far At may be from the instant the server read
	// its counters: half the request's round trip, which a busy server
	// stretches to hundreds of milliseconds, so that a count over the
	// time between two accounts is bounded by that time and both.
	WithinMS float64        `json:"within_ms,omitempty"`
	Tables   []AccountTable `json:"tables,omitempty"`
}

// AccountSnapshot is a database's account at one moment, in its own
// type: what a target.AccountReporter returns.
type AccountSnapshot interface {
	AccountTables() []AccountTable
}

// AccountSnapshots is the account of several sources at once (a database
// and the intermediary in front of it): their tables in turn.
type AccountSnapshots []AccountSnapshot

func (s AccountSnapshots) AccountTables() []AccountTable {
	var out []AccountTable
	for _, a := range s {
		out = append(out, a.AccountTables()...)
	}
	return out
}

// AccountTable is one table of an account: a kind of thing the server
// reports on (its shard copies, its standbys), one row each.
type AccountTable struct {
	Name    string          `json:"name"`
	Note    string          `json:"note,omitempty"` // what the table is, for a reader
	Columns []AccountColumn `json:"columns"`
	Rows    [][]Value       `json:"rows,omitempty"`
}

// AccountColumn names one value of each row: its name, its unit ("ms",
// "bytes", "transactions"; "" for a name or a flag) and its role.
type AccountColumn struct {
	Name string `json:"name"`
	Unit string `json:"unit,omitempty"`
	Role Role   `json:"role,omitempty"`
}

// Role says how a column's values read over a window of time.
type Role string

const (
	// RoleKey columns name the row: rows of two accounts with the same
	// keys are the same thing (a shard copy on a node, a standby).
	RoleKey Role = "key"
	// RoleCounter columns count since the thing started: over a window,
	// the figure is the increase.
	RoleCounter Role = "counter"
	// RoleLevel columns are a level at the moment (a lag, a backlog):
	// over a window, the figures are its values at the two ends.
	RoleLevel Role = "level"
	// RoleAttribute (no role) columns describe the row as it is.
	RoleAttribute Role = ""
)

// Table returns the account's table called name, nil when it has none.
func (a *ServerAccount) Table(name string) *AccountTable {
	if a == nil {
		return nil
	}
	for i := range a.Tables {
		if a.Tables[i].Name == name {
			return &a.Tables[i]
		}
	}
	return nil
}

// Column returns the index of the column called name, -1 when there is
// none.
func (t *AccountTable) Column(name string) int {
	return slices.IndexFunc(t.Columns, func(c AccountColumn) bool { return c.Name == name })
}

// Finding is one check of the server's account against freshbench's own
// figures: what was held against what, the verdict, and the figures.
type Finding struct {
	Check   string  `json:"check"`
	Verdict Verdict `json:"verdict"`
	Detail  string  `json:"detail"`
}

// Verdict of a Finding.
type Verdict string

const (
	Agrees    Verdict = "agrees"
	Disagrees Verdict = "disagrees"
	// NotYetKnown is the verdict the figures cannot decide.
	NotYetKnown Verdict = "not yet known"
)

// Account is the server's account of the measured phase of a run: taken
// at its start and at its end, and the figures that follow. Error says why
// it is missing or partial: the run goes on without it.
type Account struct {
	Start *ServerAccount `json:"start,omitempty"`
	End   *ServerAccount `json:"end,omitempty"`
	// Samples are the account taken between the two ends, in order:
	// about every 1/120 of the measured phase, at least a second apart.
	Samples []*ServerAccount `json:"samples,omitempty"`
	// Window holds, per table of both ends, the figures of its rows
	// present at both (see NewAccount).
	Window []AccountTable `json:"window,omitempty"`
	// Findings are the database's checks of this account against
	// freshbench's figures, when it makes any (target.AccountChecker).
	Findings []Finding `json:"findings,omitempty"`
	// LateStart says why the account starts after the measured phase
	// began: its reading there got no answer, and Start is the first
	// later one that did (its At says when). The window and the checks
	// are of the account's own span.
	LateStart string `json:"late_start,omitempty"`
	Error     string `json:"error,omitempty"`
}

// EdgeBatches is how many of r's batches may fall on either side of
// each end of the account, first and last: the ends are taken while
// writes are in flight, so the batches intended over the longest write
// before a boundary of the measured phase, and over the account's
// request after it, may be counted in the server's window or not. A
// request begins at its boundary or later and is dated halfway through
// (the At of its ServerAccount), so it ended by boundary + 2·(At −
// boundary). A check of counts over the window against r's allows them.
func (a *Account) EdgeBatches(r *Result) (first, last int64) {
	s := r.Summary
	if s.MeasuredS <= 0 {
		return 0, 0
	}
	from, to := r.MeasuredWindow()
	edge := func(boundary time.Time, read *ServerAccount) int64 {
		span := s.WriteLatency.MaxMs / 1000
		if read != nil && read.At.After(boundary) {
			span += 2 * read.At.Sub(boundary).Seconds()
		}
		return int64(float64(s.Batches)/s.MeasuredS*span) + 1
	}
	return edge(from, a.Start), edge(to, a.End)
}

// MeasuredWindow is when r's measured phase began and ended.
func (r *Result) MeasuredWindow() (from, to time.Time) {
	from = r.StartedAt.Add(time.Duration(r.Config.WarmupS * float64(time.Second)))
	return from, from.Add(time.Duration(r.Summary.MeasuredS * float64(time.Second)))
}

// NewAccount derives the figures of an account from its two ends: per
// table, per row present at both ends (by its keys), its attributes at
// the end, each counter's increase, and each level at the start and the
// end (named name_start and name_end). A table without keys has no rows
// to pair; a row whose counters went back (the thing restarted, or was
// dropped and made again) has no window to report.
func NewAccount(start, end *ServerAccount) *Account {
	a := &Account{Start: start, End: end}
	for _, e := range end.Tables {
		if s := start.Table(e.Name); s != nil {
			if w, ok := windowTable(s, &e); ok {
				a.Window = append(a.Window, w)
			}
		}
	}
	return a
}

// WindowTable returns the account's window table called name, nil when
// it has none.
func (a *Account) WindowTable(name string) *AccountTable {
	if a == nil {
		return nil
	}
	return (&ServerAccount{Tables: a.Window}).Table(name)
}

// windowTable pairs the rows of one table at the two ends.
func windowTable(start, end *AccountTable) (AccountTable, bool) {
	w := AccountTable{Name: end.Name, Note: end.Note}
	var keys []int
	for i, c := range end.Columns {
		switch c.Role {
		case RoleKey:
			keys = append(keys, i)
			w.Columns = append(w.Columns, c)
		case RoleLevel:
			w.Columns = append(w.Columns, AccountColumn{c.Name + "_start", c.Unit, RoleLevel},
				AccountColumn{c.Name + "_end", c.Unit, RoleLevel})
		default:
			w.Columns = append(w.Columns, c)
		}
	}
	if len(keys) == 0 {
		return w, false
	}
	key := func(t *AccountTable, row []Value) (string, bool) {
		var b strings.Builder
		for _, i := range keys {
			j := t.Column(end.Columns[i].Name)
			if j < 0 || j >= len(row) {
				return "", false
			}
			b.WriteString(row[j].String())
			b.WriteByte(0)
		}
		return b.String(), true
	}
	before := make(map[string][]Value, len(start.Rows))
	for _, r := range start.Rows {
		if k, ok := key(start, r); ok {
			before[k] = r
		}
	}
	for _, r := range end.Rows {
		k, ok := key(end, r)
		b, found := before[k]
		if !ok || !found {
			continue
		}
		if row, ok := windowRow(start, end, b, r); ok {
			w.Rows = append(w.Rows, row)
		}
	}
	return w, true
}

// windowRow is one row's figures over the window, false when a counter
// went back.
func windowRow(start, end *AccountTable, b, e []Value) ([]Value, bool) {
	at := func(t *AccountTable, row []Value, name string) Value {
		if j := t.Column(name); j >= 0 && j < len(row) {
			return row[j]
		}
		return Value{}
	}
	var row []Value
	for i, c := range end.Columns {
		v := Value{}
		if i < len(e) {
			v = e[i]
		}
		switch c.Role {
		case RoleCounter:
			d, ok := v.Sub(at(start, b, c.Name))
			if !ok {
				return nil, false
			}
			row = append(row, d)
		case RoleLevel:
			row = append(row, at(start, b, c.Name), v)
		default:
			row = append(row, v)
		}
	}
	return row, true
}
