package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
)

// experimentFlags make a run one instance of an experiment of several
// freshbench processes (results.Experiment).
type experimentFlags struct {
	name                string
	instance, instances int
	startAt, totalRate  string
}

func addExperimentFlags(fs *flag.FlagSet) *experimentFlags {
	f := &experimentFlags{}
	fs.StringVar(&f.name, "experiment", "", "name of the experiment this process is one instance of (merge the instances' results with freshbench merge)")
	fs.IntVar(&f.instance, "instance", 0, "with --experiment: this instance's index, from 0")
	fs.IntVar(&f.instances, "instances", 1, "with --experiment: how many instances the experiment has")
	fs.StringVar(&f.startAt, "start-at", "", "with --experiment: common start of every instance's schedule, an RFC 3339 instant (2026-11-23T10:00:00Z)")
	fs.StringVar(&f.totalRate, "total-rate", "", "with --experiment: the rate of the whole experiment, split evenly over the instances (instead of --rate, which is per instance)")
	return f
}

// fileName is the stem of an instance's default results file: the
// command, the experiment and the instance, so that instances sharing a
// directory never write one file.
func (f *experimentFlags) fileName(command string) string {
	if f.name == "" {
		return command
	}
	return fmt.Sprintf("%s-%s-%d", command, f.name, f.instance)
}

// apply makes cfg one instance of the experiment the flags name, if any.
func (f *experimentFlags) apply(fs *flag.FlagSet, cfg *bench.Config) error {
	if f.name == "" {
		for _, n := range []string{"instance", "instances", "start-at", "total-rate"} {
			if given(fs, n) {
				return usagef("--%s needs --experiment NAME", n)
			}
		}
		return nil
	}
	e := &results.Experiment{Name: f.name, Instance: f.instance, Instances: f.instances}
	if f.startAt != "" {
		t, err := time.Parse(time.RFC3339Nano, f.startAt)
		if err != nil {
			return usagef("--start-at %q: want an RFC 3339 instant, e.g. %s", f.startAt, time.Now().Add(time.Minute).UTC().Format(time.RFC3339))
		}
		if time.Until(t) <= 0 {
			return usagef("--start-at %s: that instant has passed; give one far enough ahead for every instance to set up, e.g. %s", f.startAt, time.Now().Add(time.Minute).UTC().Format(time.RFC3339))
		}
		e.StartAt = t
	}
	if f.totalRate != "" {
		if given(fs, "rate") {
			return usagef("--total-rate and --rate: give one (--rate is per instance, --total-rate the experiment's, split over --instances)")
		}
		total, err := pace.ParseRate(f.totalRate)
		if err != nil {
			return usagef("--total-rate: %v", err)
		}
		cfg.Ingest.Rate = total.Share(e.Instances)
	}
	cfg.Experiment = e
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}
