package sqlite

import (
	"fmt"

	"github.com/freshbench/freshbench/target"
)

// knobs declares every setting of the target, once. The journal mode is
// always WAL.
func knobs() target.Knobs {
	return target.Knobs{
		{Name: "table", Default: "freshbench_events", Parse: parseTable,
			Help: "the table; the URL's ?table= says the same (letters, digits, _)"},
		{Name: "synchronous", Default: "NORMAL", Parse: target.OneOf("OFF", "NORMAL", "FULL", "EXTRA"),
			Help: "PRAGMA synchronous: OFF, NORMAL, FULL or EXTRA (how often SQLite waits for the disk)"},
	}
}

func parseTable(v string) (any, error) {
	if !identRe.MatchString(v) {
		return nil, fmt.Errorf("want letters, digits and _, not starting with a digit")
	}
	return v, nil
}

// Settings returns the settings in effect, defaults included.
func (t *Target) Settings() map[string]string { return t.settings.Text() }
