package main

import (
	"context"
	"io"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/report"
)

// auditCmd re-checks the events a run found late or missing.
func auditCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit")
	tf := addTargetFlags(fs)
	files, err := parseFiles(fs, "results.json", args, stderr)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usagef("want one results file, got %d: freshbench audit results.json [--target URL]", len(files))
	}
	res, err := readResults(files[0])
	if err != nil {
		return err
	}
	if tf.url == "" {
		// The run's own target; a URL whose password the results removed
		// needs --target again.
		tf.url = res.Environment.TargetURL
	}
	if d, known := driverOf(tf.url); known && d.InProcess {
		return usagef("--target: a %s:// target kept its events only within the run that wrote them, and an audit now would find none; re-check them within the run with --recheck, or audit a database's URL", d.Schemes[0])
	}
	tgt, _, err := tf.open(ctx)
	if err != nil {
		return err
	}
	defer tgt.Close()
	report.Recheck(stdout, bench.Recheck(ctx, tgt, res))
	return nil
}
