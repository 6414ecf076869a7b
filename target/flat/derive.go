package flat

import (
	"fmt"
	"slices"
	"strings"
)

// Derived is a column of a table made from a sample of the events.
type Derived struct {
	Name  string
	Kind  Kind
	Mixed bool     // the sample holds values of more than one kind: Text
	Path  []string // the field's keys from the top, as the sample's first event with it has them
}

// Derive flattens every event of sample by the rule and returns the
// columns they make, sorted by name. A column whose values are of more
// than one kind across the sample (a number in one event, a string in
// another) is Text, and Mixed: the text of every value fits it. An event
// the rule refuses (fields that clash, not an object) is an error naming
// its place in the sample, and so are two fields of different paths that
// make one column in different events (a_b in one, a.b in another).
func Derive(sample [][]byte) ([]Derived, error) {
	byName := make(map[string]*Derived)
	first := make(map[string]int) // the event of the sample each column was first seen in
	var cols []Column
	for i, doc := range sample {
		var err error
		if cols, err = flatten(doc, cols[:0], true); err != nil {
			return nil, fmt.Errorf("event %d of the sample: %w", i+1, err)
		}
		for _, c := range cols {
			d, ok := byName[c.Name]
			switch {
			case !ok:
				byName[c.Name] = &Derived{Name: c.Name, Kind: c.Kind, Path: c.Path}
				first[c.Name] = i
			case !slices.Equal(d.Path, c.Path):
				return nil, &Error{ErrorColumnClash, fmt.Sprintf("events %d and %d of the sample: the fields %s and %s flatten to one column %s",
					first[c.Name]+1, i+1, strings.Join(d.Path, "."), strings.Join(c.Path, "."), c.Name)}
			case d.Kind != c.Kind:
				d.Kind, d.Mixed = Text, true
			}
		}
	}
	out := make([]Derived, 0, len(byName))
	for _, d := range byName {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b Derived) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
