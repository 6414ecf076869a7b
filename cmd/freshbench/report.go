package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/freshbench/freshbench/outfile"
	"github.com/freshbench/freshbench/report"
	"github.com/freshbench/freshbench/results"
)

func reportCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report")
	var out string
	const outUsage = "HTML file to write, - for standard output (default: the results file's name with .html)"
	fs.StringVar(&out, "o", "", outUsage)
	fs.StringVar(&out, "out", "", outUsage)
	files, err := parseFiles(fs, "results.json", args, stderr)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usagef("want one results file, got %d: freshbench report results.json [-o report.html]", len(files))
	}
	res, err := readResults(files[0])
	if err != nil {
		return err
	}
	stream := outfile.StreamOf(out)
	if out == "" {
		out = strings.TrimSuffix(files[0], filepath.Ext(files[0])) + ".html"
	}
	if stream == outfile.NoStream {
		if err := outfile.Check(out); err != nil {
			return usagef("-o %v", err)
		}
	}
	var page bytes.Buffer
	if err := report.HTML(&page, res); err != nil {
		return err
	}
	switch stream {
	case outfile.Stdout:
		_, err := page.WriteTo(stdout)
		return err
	case outfile.Stderr:
		_, err := page.WriteTo(stderr)
		return err
	}
	if err := outfile.Write(out, page.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s\n", out)
	return nil
}

func compareCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare")
	files, err := parseFiles(fs, "a.json b.json ...", args, stderr)
	if err != nil {
		return err
	}
	if len(files) < 2 {
		return usagef("want two or more results files, got %d: freshbench compare a.json b.json ... (the first is the baseline)", len(files))
	}
	rs := make([]*results.Result, len(files))
	for i, f := range files {
		if rs[i], err = readResults(f); err != nil {
			return err
		}
	}
	report.Compare(stdout, compareNames(files), rs)
	return nil
}

// readResults reads a results file given on the command line; a file that
// is missing or is not a results file of this version is bad input.
func readResults(path string) (*results.Result, error) {
	res, err := results.ReadFile(path)
	if err != nil {
		return nil, usageError{err}
	}
	if res.Kind == results.KindCalibration {
		return nil, usagef("%s is a calibration, which report and compare do not render yet: freshbench calibrate printed its table", path)
	}
	return res, nil
}

// compareNames labels each file by its base name without .json, or by its
// path as given when two base names are the same.
func compareNames(files []string) []string {
	names := make([]string, len(files))
	seen := map[string]int{}
	for i, f := range files {
		names[i] = strings.TrimSuffix(filepath.Base(f), ".json")
		seen[names[i]]++
	}
	for i, f := range files {
		if seen[names[i]] > 1 {
			names[i] = f
		}
	}
	return names
}

// parseFiles parses fs's flags, which may come before, between or after
// the file arguments, and returns the files in order.
func parseFiles(fs *flag.FlagSet, synopsis string, args []string, stderr io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var files []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintf(stderr, "usage: %s %s [flags]\n", fs.Name(), synopsis)
			fs.PrintDefaults()
			return nil, err
		}
		if err != nil {
			return nil, usageError{err}
		}
		if fs.NArg() == 0 {
			return files, nil
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
