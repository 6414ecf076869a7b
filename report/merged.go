package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/freshbench/freshbench/results"
)

// instanceRow is one instance of a merged result, as text: merged,
// missing, or partial, said in words.
type instanceRow struct {
	Index, File, Host, Rate, Started, Ended, Generators, Achieved, CPU, Status string
	Bad                                                                        bool
}

// instancesView is the instances a merged result was made of.
type instancesView struct {
	Headline    string
	Complete    bool
	Rows        []instanceRow
	Differences []string
}

// mergedHeadline says how many of the experiment's instances were merged.
func mergedHeadline(m *results.Merged) string {
	s := fmt.Sprintf("experiment %s: %d of %d instances merged", m.Experiment, len(m.Rows), m.Instances)
	if !m.StartAt.IsZero() {
		s += ", common start " + m.StartAt.UTC().Format(time.RFC3339Nano)
	}
	return s
}

// instanceRows lists every instance of the experiment by index: those
// merged with their figures, those missing as such.
func instanceRows(m *results.Merged) []instanceRow {
	rows := make([]instanceRow, 0, m.Instances)
	byIndex := map[int]results.MergedInstance{}
	for _, r := range m.Rows {
		byIndex[r.Instance] = r
	}
	for i := range m.Instances {
		r, ok := byIndex[i]
		if !ok {
			rows = append(rows, instanceRow{Index: strconv.Itoa(i), File: "-", Host: "-", Rate: "-", Started: "-", Ended: "-",
				Generators: "-", Achieved: "-", CPU: "-", Status: "missing: no results file", Bad: true})
			continue
		}
		row := instanceRow{
			Index: strconv.Itoa(i), File: r.File, Host: orDash(r.Host), Rate: orDash(r.Rate),
			Started: r.StartedAt.UTC().Format("15:04:05.000"), Ended: r.EndedAt.UTC().Format("15:04:05.000"),
			Generators: strconv.Itoa(len(r.Generators)), Achieved: rate(r.AchievedEventsPerSec), CPU: "-",
			Status: "complete", Bad: r.Partial(),
		}
		if r.DriverCorePercent > 0 {
			row.CPU = fmt.Sprintf("%.0f%%", r.DriverCorePercent)
		}
		switch {
		case r.EndedEarly:
			row.Status = "partial: ended early (" + orDash(r.EndReason) + ")"
		case r.AuditError != "":
			row.Status = "partial: not audited (" + r.AuditError + ")"
		}
		rows = append(rows, row)
	}
	return rows
}

func instancesSection(m *results.Merged) *instancesView {
	if m == nil {
		return nil
	}
	return &instancesView{
		Headline: mergedHeadline(m), Complete: len(m.Missing) == 0 && len(m.Partial) == 0,
		Rows: instanceRows(m), Differences: m.Differences,
	}
}

// consoleInstances writes one row per instance of a merged result, and
// the names of the settings in which instances differ.
func consoleInstances(w io.Writer, m *results.Merged) {
	fmt.Fprintln(w, mergedHeadline(m))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  instance\tfile\thost\trate\tgenerators\tachieved events/s\tdriver CPU\tstatus\n")
	for _, r := range instanceRows(m) {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Index, r.File, r.Host, r.Rate, r.Generators, r.Achieved, r.CPU, r.Status)
	}
	tw.Flush()
	if len(m.Differences) > 0 {
		names := make([]string, len(m.Differences))
		for i, d := range m.Differences {
			names[i], _, _ = strings.Cut(d, ":")
		}
		fmt.Fprintf(w, "instances differ in: %s (values in the results file)\n", strings.Join(names, ", "))
	}
	fmt.Fprintln(w)
}
