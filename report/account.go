package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/freshbench/freshbench/results"
)

// accountView is the server's own account of the measured phase, as any
// database gives it: its tables over the window between the two accounts
// (or, for tables that pair no rows, as they stood at the end), and the
// checks of it against freshbench's figures.
type accountView struct {
	Status   string // where the account comes from, or why it is missing
	Tables   []accountTableView
	Findings []findingView
}

type accountTableView struct {
	Name, Note string
	Head       []string
	Rows       [][]string
}

type findingView struct {
	Check, Verdict, Detail, Class string
}

// accountSection builds the view of r's server account; nil when the
// target gave none.
func accountSection(r *results.Result) *accountView {
	a := r.ServerAccount
	if a == nil {
		return nil
	}
	v := &accountView{}
	if a.Start != nil && a.End != nil {
		late := ""
		if from, _ := r.MeasuredWindow(); a.LateStart != "" {
			late = fmt.Sprintf(", starting %s into the phase: %s", a.Start.At.Sub(from).Round(time.Millisecond), a.LateStart)
		}
		v.Status = fmt.Sprintf("Taken at the start and the end of the measured phase, %s apart (and %d times in between)%s. Counters show their increase between the two, levels their value at each end.",
			a.End.At.Sub(a.Start.At).Round(time.Millisecond), len(a.Samples), late)
	}
	if a.Error != "" {
		v.Status = strings.TrimSpace(v.Status + " Not complete: " + a.Error)
	}
	for _, t := range accountTables(a) {
		v.Tables = append(v.Tables, tableView(t))
	}
	for _, f := range a.Findings {
		class := map[results.Verdict]string{results.Agrees: "ok", results.Disagrees: "bad", results.NotYetKnown: "warn"}[f.Verdict]
		v.Findings = append(v.Findings, findingView{f.Check, string(f.Verdict), f.Detail, class})
	}
	return v
}

// accountTables are the window's tables, and those of the end that have
// no window.
func accountTables(a *results.Account) []results.AccountTable {
	out := a.Window
	if a.End == nil {
		return out
	}
	for _, t := range a.End.Tables {
		if a.WindowTable(t.Name) == nil {
			out = append(out, t)
		}
	}
	return out
}

// tableView formats a table: each column headed by its name and unit,
// leaving out the columns the server gave no value in (a lag only some
// copies have, when none of these has it).
func tableView(t results.AccountTable) accountTableView {
	v := accountTableView{Name: t.Name, Note: t.Note}
	var shown []int
	for i, c := range t.Columns {
		if c.Role != results.RoleKey && !slices.ContainsFunc(t.Rows, func(r []results.Value) bool { return i < len(r) && !r[i].IsNull() }) {
			continue
		}
		shown = append(shown, i)
		h := c.Name
		if c.Unit != "" {
			h += " (" + c.Unit + ")"
		}
		v.Head = append(v.Head, h)
	}
	for _, r := range t.Rows {
		row := make([]string, len(shown))
		for j, i := range shown {
			row[j] = "-"
			if i < len(r) {
				row[j] = r[i].String()
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// consoleAccount writes the server's account of the measured phase: each
// table, then each check of it against freshbench's figures.
func consoleAccount(w io.Writer, r *results.Result) {
	v := accountSection(r)
	if v == nil {
		return
	}
	fmt.Fprintf(w, "server's account: %s\n", orDash(v.Status))
	for _, t := range v.Tables {
		fmt.Fprintf(w, "  %s", t.Name)
		if t.Note != "" {
			fmt.Fprintf(w, ": %s", t.Note)
		}
		fmt.Fprintln(w)
		if len(t.Rows) == 0 {
			fmt.Fprintln(w, "    (no rows)")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "    %s\t\n", strings.Join(t.Head, "\t"))
		for _, row := range t.Rows {
			fmt.Fprintf(tw, "    %s\t\n", strings.Join(row, "\t"))
		}
		tw.Flush()
	}
	for _, f := range v.Findings {
		fmt.Fprintf(w, "  check, %s: %s: %s\n", f.Check, f.Verdict, f.Detail)
	}
}
