package main

import (
	"strings"
	"testing"
)

// flagHelp returns the help of each flag in a command's -h, by name.
func flagHelp(t *testing.T, command string) map[string]string {
	t.Helper()
	_, _, stderr := freshbench(t, command, "-h")
	out := map[string]string{}
	var name string
	for _, line := range strings.Split(stderr, "\n") {
		switch {
		case strings.HasPrefix(line, "  -"):
			name, _, _ = strings.Cut(strings.TrimPrefix(line, "  -"), " ")
			out[name] = ""
		case name != "" && strings.HasPrefix(line, "    \t"):
			out[name] += strings.TrimPrefix(line, "    \t") + "\n"
		}
	}
	return out
}

// calibrate declares the driver's flags through the helpers a run uses:
// each is the same flag, with the same default and help, in both.
func TestCalibrateSharesTheRunsFlags(t *testing.T) {
	run, calibrate := flagHelp(t, "run"), flagHelp(t, "calibrate")
	for _, name := range []string{"generators", "max-inflight", "doc-size", "max-memory", "poll-interval", "probe-rate", "write-timeout"} {
		if run[name] == "" || run[name] != calibrate[name] {
			t.Errorf("--%s: run says %q, calibrate %q; want one declaration", name, run[name], calibrate[name])
		}
	}
}
