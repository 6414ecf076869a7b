package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/via"
)

// addViaFlag adds --via to a command that streams events into the target
// whose flags are tf.
func addViaFlag(fs *flag.FlagSet, tf *targetFlags) {
	var knobs strings.Builder
	for _, k := range via.Knobs() {
		def := k.Default
		if def == "" {
			def = "unset"
		}
		fmt.Fprintf(&knobs, "\n  %s (default %s): %s", k.Name, def, k.Help)
	}
	fs.StringVar(&tf.via, "via", "", "produce the events to a Kafka topic instead of writing them to --target, kafka://host:port/topic?key=value&…: "+
		"a write is acknowledged when Kafka acknowledges it; a sink (Kafka Connect, the database's own ingestion) must write the topic into --target, "+
		"where the freshness polls, probes, audit and queries still run. Its settings, as query parameters:"+knobs.String())
}

// inProcess are the schemes of targets that live inside freshbench: no
// sink outside it can write into them.
var inProcess = map[string]bool{"sim": true, "discard": true}

// checkVia refuses, before anything runs, a --via that is not a kafka://
// URL or that goes with a target no sink can reach.
func (f *targetFlags) checkVia() error {
	if f.via == "" {
		return nil
	}
	if err := via.Check(f.via); err != nil {
		return usagef("--via: %v", err)
	}
	if t, err := url.Parse(f.url); err == nil && inProcess[t.Scheme] {
		return usagef("--via: a %s:// target lives inside freshbench, where no sink can write; give a database's URL as --target", t.Scheme)
	}
	return nil
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
