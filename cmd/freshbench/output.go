package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/freshbench/freshbench/outfile"
)

// resultsDir is where results go without --out: beside freshbench-data/,
// apart from the source tree's packages.
const resultsDir = "freshbench-results"

// output is where a command writes its results: a file, or a standard
// stream.
type output struct {
	path   string
	stream io.Writer // the stream path names; nil for a file
}

// resultsOut returns where a command writes its results, given --out
// (default freshbench-results/<command>-<time>.json), checked before
// anything runs so that no measurement is lost for want of a place to
// put it, and where its console goes: standard error when the results
// take standard output.
func resultsOut(out, command string, stdout, stderr io.Writer) (output, io.Writer, error) {
	switch outfile.StreamOf(out) {
	case outfile.Stdout:
		return output{path: out, stream: stdout}, stderr, nil
	case outfile.Stderr:
		return output{path: out, stream: stderr}, stdout, nil
	}
	if out == "" {
		out = filepath.Join(resultsDir, fmt.Sprintf("%s-%s.json", command, time.Now().Format("20060102-150405")))
	}
	if err := outfile.Check(out); err != nil {
		return output{}, nil, usagef("--out %v", err)
	}
	return output{path: out}, stdout, nil
}

// save writes b, the results, to o; when it cannot, b is kept in a file
// of the user's cache (outfile.Keep), named in the error.
func (o output) save(b []byte) error {
	if o.stream == nil {
		return outfile.Save(o.path, b)
	}
	if _, err := o.stream.Write(b); err != nil {
		return outfile.Keep(o.path, b, err)
	}
	return nil
}

func (o output) String() string {
	switch {
	case o.stream == nil:
		return o.path
	case outfile.StreamOf(o.path) == outfile.Stderr:
		return "standard error"
	}
	return "standard output"
}
