package questdb

import (
	"strings"
	"sync"

	"github.com/freshbench/freshbench/target/flat"
)

// The values of the columns setting.
const (
	// columnsDoc keeps each event whole, as JSON, in the column doc.
	columnsDoc = "doc"
	// columnsFlat flattens each event into columns by the flat rule.
	columnsFlat = "flat"
)

// flatRule states the flat rule in the words of the layout and the docs.
var flatRule = flat.Rule("VARCHAR") + "; a column is created, by ILP, with the first event that has the field"

// flatColumns counts the distinct columns the events written so far
// flattened to, for the layout.
type flatColumns struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (c *flatColumns) add(cols []flat.Column) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = make(map[string]bool)
	}
	for _, col := range cols {
		c.seen[strings.ToLower(col.Name)] = true
	}
}

func (c *flatColumns) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}
