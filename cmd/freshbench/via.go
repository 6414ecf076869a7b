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
// URL or that goes with a target no sink can reach, a target that takes
// its writes only through a via without one, and updates (updateShare
// above 0) that the target's database cannot take, with its reason.
func (f *targetFlags) checkVia(updateShare float64) error {
	d, known := driverOf(f.url)
	if known && updateShare > 0 && d.NoUpdates != "" {
		return usagef("--update-share %g: a %s target takes no updates: %s; give --update-share 0", updateShare, d.Name, d.NoUpdates)
	}
	if f.via == "" {
		if known && d.ViaOnly {
			return usagef("--target: %s ingests only from a Kafka topic, with its own Kafka ingestion; give --via kafka://host:port/topic (scripts/kafka.sh url)", d.Name)
		}
		return nil
	}
	if err := via.Check(f.via); err != nil {
		return usagef("--via: %v", err)
	}
	if known && d.InProcess {
		return usagef("--via: a %s:// target lives inside freshbench, where no sink can write; give a database's URL as --target", d.Schemes[0])
	}
	return nil
}

// driverOf is the driver of the target URL raw, as registered.
func driverOf(raw string) (target.Driver, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return target.Driver{}, false
	}
	return all.Registry().Lookup(u.Scheme)
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
