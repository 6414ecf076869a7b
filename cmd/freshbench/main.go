// Command freshbench measures how soon a real-time database makes streamed
// events queryable, how much ingest it sustains, and how fast it answers
// queries meanwhile. It is a thin layer over the freshbench packages.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/freshbench/freshbench/bench"
	"github.com/freshbench/freshbench/outfile"
	"github.com/freshbench/freshbench/redact"
)

// usageError is bad input: printed as one line, exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"run", "stream events into a target and measure write latency, freshness lag, visibility latency, completeness", runCmd},
		{"seed", "load a data set into the target before measuring it, unmeasured; safe to repeat (resumes)", seedCmd},
		{"peak", "step the rate up until the target cannot keep up; report the peak sustainable throughput and every step", peakCmd},
		{"query", "send parameterized queries open-loop at --qps or closed-loop at --concurrency, alone or beside an ingest (--rate); --sweep finds the highest QPS under a latency bound", queryCmd},
		{"isolation", "measure what a burst of each load does to the other: steady ingest and queries, an ingest burst, recovery, a query burst, recovery; interference and recovery time per read endpoint", isolationCmd},
		{"merge", "merge the results files of an experiment's instances (--experiment) into one: histograms added exactly, missing instances named", mergeCmd},
		{"noop", "serve a no-op Elasticsearch, OpenSearch and PostgreSQL endpoint that acknowledges every write, to measure freshbench itself", noopCmd},
		{"calibrate", "find this machine's driver ceiling (events/s) and CPU per 100k events for each batch size, against a noop server", calibrateCmd},
		{"presets", "list the shipped workloads that replay published setups, or print one (freshbench presets NAME)", presetsCmd},
		{"audit", "re-check, on the target, the events a run found late or missing (freshbench audit results.json): which turned up since", auditCmd},
		{"report", "render a results file as a self-contained HTML report", reportCmd},
		{"compare", "compare results files: headline figures with ratios, differing configuration and environment", compareCmd},
		{"sample", "print generated sample documents", sampleCmd},
		{"version", "print the version", versionCmd},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, args[1:], stdout, stderr)
			if err == nil || errors.Is(err, flag.ErrHelp) {
				return 0
			}
			// Messages quote what the target's client said, which may
			// quote what it was given: hide every credential of the
			// arguments and the environment, whatever the wording.
			// A value the user can fix is said in flag words, exit 2.
			fixable := errors.As(err, new(usageError)) || isInvalid(err)
			msg := err.Error()
			if fixable {
				msg = inFlagWords(err)
			}
			msg = redact.Text(msg, redact.Secrets(os.Getenv, args[1:]...))
			fmt.Fprintf(stderr, "freshbench %s: %s\n", c.name, msg)
			switch {
			case fixable:
				return 2
			case errors.As(err, new(*outfile.Error)):
				return 3 // the command's own output failed
			}
			return 1
		}
	}
	fmt.Fprintf(stderr, "freshbench: unknown command %q; run freshbench help\n", args[0])
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: freshbench <command> [flags]   (freshbench <command> -h for its flags)")
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
}

// newFlagSet returns a flag set whose parse errors become usage errors.
func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet("freshbench "+name, flag.ContinueOnError)
}

func parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stderr)
		fmt.Fprintf(stderr, "usage: %s [flags]\n", fs.Name())
		fs.PrintDefaults()
		return err
	}
	if err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (flags go before it? see -h)", fs.Arg(0))
	}
	return nil
}

func versionString() string { return bench.ToolVersion() }
