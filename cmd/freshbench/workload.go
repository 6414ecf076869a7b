package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/freshbench/freshbench/query"
	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/workload"
)

// workloadFlags read a command's flags from a workload file or a preset.
type workloadFlags struct {
	file, preset string
	scale        float64
	queries      []query.Own // the file's queries of one's own
	// origins are where the file set each flag it set: FILE:LINE.
	origins map[string]string
}

func addWorkloadFlags(fs *flag.FlagSet) *workloadFlags {
	w := &workloadFlags{}
	fs.StringVar(&w.file, "workload", "", "YAML file of this command's flags (names as here, without dashes); flags on the command line override it")
	fs.StringVar(&w.preset, "preset", "", "a workload shipped with freshbench that replays a published setup (freshbench presets lists them)")
	fs.Float64Var(&w.scale, "scale", 1, "with --workload or --preset: multiply its rates, durations and data set sizes by this factor, e.g. 0.01 to fit a small machine")
	return w
}

// repeatable is a flag that takes one value per use (--set, --read-endpoint):
// a list in a file sets it once per item.
type repeatable interface{ repeatable() }

func (settings) repeatable()   {}
func (*readFlags) repeatable() {}

// parse parses args into fs and applies the workload file or preset
// they name (see apply): what run, peak and query begin with.
func (w *workloadFlags) parse(fs *flag.FlagSet, command string, args []string, stderr io.Writer) (*results.Workload, error) {
	if err := parse(fs, args, stderr); err != nil {
		return nil, err
	}
	return w.apply(fs, command, args)
}

// apply sets every flag the file or preset names that the command line
// did not give, after scaling, and returns what the results file records
// of it; nil without --workload or --preset. args are the command line's,
// for the credentials to hide.
func (w *workloadFlags) apply(fs *flag.FlagSet, command string, args []string) (*results.Workload, error) {
	if w.file == "" && w.preset == "" {
		if given(fs, "scale") {
			return nil, usagef("--scale: scales a workload: give --workload or --preset too")
		}
		return nil, nil
	}
	if w.file != "" && w.preset != "" {
		return nil, usagef("--workload and --preset: give one")
	}
	var f *workload.File
	var err error
	if w.preset != "" {
		f, err = workload.Preset(w.preset)
		if err != nil {
			return nil, usagef("--preset: %v", err)
		}
	} else if f, err = workload.Read(w.file); err != nil {
		return nil, usageError{err}
	}
	if !(w.scale > 0) {
		return nil, usagef("--scale %g: want a factor above 0, e.g. 0.1", w.scale)
	}
	if f.Command != "" && f.Command != command {
		return nil, usagef("%s is a workload for freshbench %s, not %s", f.Path, f.Command, command)
	}
	if err := f.Scale(w.scale); err != nil {
		return nil, usageError{err}
	}
	w.queries = f.Queries
	var onCommandLine []string
	fs.Visit(func(fl *flag.Flag) { onCommandLine = append(onCommandLine, fl.Name) })
	for _, e := range f.Flags {
		if notInWorkload(e.Name) {
			return nil, usageError{&workload.Error{Path: f.Path, Line: e.Line, Field: e.Name, Err: errors.New("not a workload flag: it chooses where the file applies or where results go; give it on the command line")}}
		}
		fl := fs.Lookup(e.Name)
		if fl == nil {
			return nil, usageError{&workload.Error{Path: f.Path, Line: e.Line, Field: e.Name, Err: fmt.Errorf("freshbench %s has no flag --%s (see freshbench %s -h)", command, e.Name, command)}}
		}
		if slices.Contains(onCommandLine, e.Name) {
			continue
		}
		values := []string{e.Joined()}
		if _, ok := fl.Value.(repeatable); ok {
			values = e.Values
		}
		for _, v := range values {
			if err := fs.Set(e.Name, v); err != nil {
				return nil, usageError{&workload.Error{Path: f.Path, Line: e.Line, Field: e.Name, Err: err}}
			}
		}
		if w.origins == nil {
			w.origins = map[string]string{}
		}
		w.origins[e.Name] = fmt.Sprintf("%s:%d", f.Path, e.Line)
	}
	secrets := redact.Secrets(os.Getenv, args...)
	rec := &results.Workload{
		Source: f.Path, Description: f.Description, Replays: f.Source, Scale: w.scale,
		Flags: map[string]string{}, FromCommandLine: onCommandLine,
	}
	fs.Visit(func(fl *flag.Flag) {
		v := fl.Value.String()
		if strings.Contains(v, "://") {
			v = redact.URL(v)
		}
		rec.Flags[fl.Name] = redact.Text(v, secrets)
	})
	return rec, nil
}

// notInWorkload names the flags a workload file may not set: which file or preset
// to read, and where the results go, belong to the command line.
func notInWorkload(name string) bool {
	return slices.Contains([]string{"workload", "preset", "scale", "out"}, name)
}

// locate adds to bad input about a flag the file set where the file set
// it: most values are checked only once the command reads them, after
// the file was applied.
func (w *workloadFlags) locate(err error) error {
	if err == nil || len(w.origins) == 0 || !errors.As(err, new(usageError)) && !isInvalid(err) {
		return err
	}
	msg := inFlagWords(err)
	first, at := "", len(msg)
	for name := range w.origins {
		if i := flagIndex(msg, name); i >= 0 && i < at {
			first, at = name, i
		}
	}
	if first == "" {
		return err
	}
	return usageError{fmt.Errorf("%w (--%s is from %s)", err, first, w.origins[first])}
}

// flagIndex is where --name first appears in msg as a whole flag, or -1.
func flagIndex(msg, name string) int {
	flag := "--" + name
	for from := 0; ; {
		i := strings.Index(msg[from:], flag)
		if i < 0 {
			return -1
		}
		end := from + i + len(flag)
		if end == len(msg) || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz-", rune(msg[end])) {
			return from + i
		}
		from = end
	}
}
