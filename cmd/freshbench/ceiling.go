package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/freshbench/freshbench/bench"
)

// addCalibrationFlag adds --calibration to a command that records the
// share of the driver ceiling its ingest used.
func addCalibrationFlag(fs *flag.FlagSet) *string {
	return fs.String("calibration", "", "this machine's calibration, saved by freshbench calibrate, whose driver ceiling the run records its share of (default: calibration.json under $FRESHBENCH_CACHE, or else under the user's cache directory in freshbench/)")
}

// loadCeilings reads the calibration whose ceiling a run records its
// share of. A file given with --calibration must be there and readable
// (exit 2): the user asked for it. The default one may be absent (the
// results file and the console say so); when it is unreadable, one line
// warns and the run goes on without it.
func loadCeilings(path string, stderr io.Writer) (bench.Ceilings, error) {
	if path != "" {
		c, err := bench.LoadCeilings(path)
		switch {
		case err != nil:
			return c, usagef("--calibration: %v; give a file freshbench calibrate saved, or run freshbench calibrate --calibration %s", err, path)
		case c.Missing:
			return c, usagef("--calibration %s: no such file; run freshbench calibrate --calibration %s to make it", path, path)
		}
		return c, nil
	}
	path, err := bench.DefaultCalibrationPath()
	if err != nil {
		fmt.Fprintf(stderr, "freshbench: warning: %v; the run goes on without a driver ceiling\n", err)
		return bench.Ceilings{}, nil
	}
	c, err := bench.LoadCeilings(path)
	if err != nil {
		fmt.Fprintf(stderr, "freshbench: warning: %v; the run goes on without a driver ceiling (run freshbench calibrate to replace it)\n", err)
	}
	return c, nil
}
