package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/freshbench/freshbench/workload"
)

// presetsCmd lists the presets, or prints one.
func presetsCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("presets")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "usage: freshbench presets [NAME]")
			return err
		}
		return usageError{err}
	}
	args = fs.Args()
	switch len(args) {
	case 0:
		presets, err := workload.Presets()
		if err != nil {
			return err
		}
		for _, p := range presets {
			fmt.Fprintf(stdout, "%-26s freshbench %-5s  %s\n%-26s replays: %s\n", p.Name(), p.Command, p.Description, "", p.Source)
		}
		fmt.Fprintln(stdout, "\nrun one with: freshbench COMMAND --preset NAME [--scale F] [--target URL]; print one with: freshbench presets NAME")
		return nil
	case 1:
		text, err := workload.PresetText(args[0])
		if err != nil {
			return usageError{err}
		}
		_, err = stdout.Write(text)
		return err
	default:
		return usagef("presets takes at most one preset name, got %d arguments", len(args))
	}
}
