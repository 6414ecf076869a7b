package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
	"github.com/freshbench/freshbench/via"
)

// addViaFlag adds --via to a command that streams events into the target
// whose flags are tf.
func addViaFlag(fs *flag.FlagSet, tf *targetFlags) {
	fs.StringVar(&tf.via, "via", "", "produce the events to a Kafka topic instead of writing them to --target, kafka://host:port/topic?key=value&…: "+
		"a write is acknowledged when Kafka acknowledges it; a sink (Kafka Connect, the database's own ingestion) must write the topic into --target, "+
		"where the freshness polls, probes, audit and queries still run. Its settings, as query parameters:\n"+via.Knobs().Help("  "))
}

// checkVia refuses, before anything runs, a --via that is not a kafka://
// URL or that goes with a target no sink can reach.
func (f *targetFlags) checkVia() error {
	if f.via == "" {
		return nil
	}
	if err := via.Check(f.via); err != nil {
		return usagef("--via: %v", err)
	}
	if t, err := url.Parse(f.url); err == nil && inProcess(t.Scheme) {
		return usagef("--via: a %s:// target lives inside freshbench, where no sink can write; give a database's URL as --target", t.Scheme)
	}
	return nil
}

// inProcess says whether the targets of scheme live inside freshbench, as
// their driver declares.
func inProcess(scheme string) bool {
	d, ok := all.Registry().Lookup(scheme)
	return ok && d.InProcess
}

// pipe puts the Kafka topic of --via in front of tgt, when given.
func (f *targetFlags) pipe(ctx context.Context, tgt target.Target) (target.Target, error) {
	if f.via == "" {
		return tgt, nil
	}
	k, err := via.Open(ctx, f.via, f.writeTimeout)
	if errors.Is(err, target.ErrBadURL) || errors.Is(err, target.ErrBadSetting) {
		return nil, usagef("--via: %v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("--via: %w", err)
	}
	return k.Wrap(tgt), nil
}
