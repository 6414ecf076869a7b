package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/merge"
	"github.com/freshbench/freshbench/report"
	"github.com/freshbench/freshbench/results"
)

func mergeCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("merge")
	out := fs.String("out", "", "merged results file, - for standard output (default freshbench-results/merge-<time>.json)")
	files, err := parseFiles(fs, "instance-0.json instance-1.json ...", args, stderr)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usagef("want the results files of an experiment's instances: freshbench merge --out merged.json instance-0.json instance-1.json ...")
	}
	o, stdout, err := resultsOut(*out, "merge", stdout, stderr)
	if err != nil {
		return err
	}
	ins := make([]merge.Input, len(files))
	for i, f := range files {
		res, err := readResults(f)
		if err != nil {
			return err
		}
		ins[i] = merge.Input{Name: f, Result: res}
	}
	res, err := merge.Merge(ins)
	if errors.Is(err, merge.ErrNoExperiment) {
		return usagef("%v (run each instance with --experiment NAME --instance I --instances N)", err)
	}
	if err != nil {
		return usageError{err}
	}
	// The merged file is this program's writing; the instances' versions
	// are in its differences when they differ.
	res.Tool = results.Tool{Name: "freshbench", Version: bench.ToolVersion()}
	b, err := results.Marshal(res)
	if err != nil {
		return err
	}
	if err := o.save(b); err != nil {
		return err
	}
	report.Console(stdout, res)
	if res.Target().Queries != nil {
		fmt.Fprintln(stdout)
		report.ConsoleQueries(stdout, res)
	}
	fmt.Fprintf(stdout, "results: %s\n", o)
	return nil
}
