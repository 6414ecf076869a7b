package results

import (
	"fmt"
	"time"

	"github.com/freshbench/freshbench/invalid"
)

// Experiment places one result among the instances of an experiment:
// RockBench's multi-instance method, where N freshbench processes (on one
// machine or many) drive one database, each with generators of its own,
// and each measures only the events it generated, so that no two clocks
// are ever compared. Merging their results files gives the figures of the
// whole experiment.
type Experiment struct {
	Name      string `json:"name"`
	Instance  int    `json:"instance"`  // from 0
	Instances int    `json:"instances"` // how many the experiment has
	// StartAt is the common wall-clock start of every instance's
	// schedule, so that their warm-ups and measured windows line up (to
	// within the skew of the machines' clocks). Zero: each instance
	// started when it was ready.
	StartAt time.Time `json:"start_at,omitzero"`
}

// Validate names the first bad setting.
func (e Experiment) Validate() error {
	switch {
	case e.Name == "":
		return invalid.New(invalid.ExperimentName, e.Name, "a name shared by every instance, e.g. pg-3x")
	case e.Instances < 1:
		return invalid.New(invalid.Instances, e.Instances, "1 or more")
	case e.Instance < 0 || e.Instance >= e.Instances:
		return invalid.New(invalid.Instance, e.Instance, fmt.Sprintf("0..%d (one less than the instance count %d)", e.Instances-1, e.Instances))
	}
	return nil
}

// String names the instance, e.g. "pg-3x 2/3" (counted from 1 for
// people).
func (e Experiment) String() string {
	return fmt.Sprintf("%s %d/%d", e.Name, e.Instance+1, e.Instances)
}
