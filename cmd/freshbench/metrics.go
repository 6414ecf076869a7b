package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/freshbench/freshbench/metrics"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// metricsFlags are the metrics flags of the measuring commands.
type metricsFlags struct {
	addr   metricsAddr
	linger linger
}

// metricsAddr is the --metrics-addr flag. It is checked when parsed, so
// that a malformed address is a usage error before anything runs.
type metricsAddr string

func addMetricsFlags(fs *flag.FlagSet) *metricsFlags {
	f := &metricsFlags{addr: metricsAddr(metrics.DefaultAddr)}
	fs.Var(&f.addr, "metrics-addr", "serve live Prometheus metrics at http://host:port"+metrics.Path+
		"; empty turns them off, port 0 picks a free port, a non-loopback host exposes them to the network")
	fs.Var(&f.linger, "metrics-linger", "after the measurement, keep serving the metrics this long, so that Prometheus scrapes the final values (more than its scrape interval)")
	return f
}

func (a *metricsAddr) String() string { return string(*a) }

func (a *metricsAddr) Set(v string) error {
	if v != "" {
		_, port, err := net.SplitHostPort(v)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
			return fmt.Errorf("want host:port such as %s, or empty to turn the endpoint off", metrics.DefaultAddr)
		}
	}
	*a = metricsAddr(v)
	return nil
}

// linger is the --metrics-linger flag, checked when parsed.
type linger time.Duration

func (l *linger) String() string { return time.Duration(*l).String() }

func (l *linger) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("want a duration of 0 or more, such as 30s")
	}
	*l = linger(d)
	return nil
}

// serve starts the metrics endpoint for a run against targetURL, an
// instance of experiment e if not nil, and returns the Observer for
// bench.Config.Observer and a function that stops the endpoint once it
// has lingered. With --metrics-addr empty it serves nothing and returns a
// nil Observer, which bench.Run treats as none.
func (f *metricsFlags) serve(ctx context.Context, targetURL string, e *results.Experiment, stderr io.Writer) (stats.Observer, func(), error) {
	if f.addr == "" {
		return nil, func() {}, nil
	}
	reg := prometheus.NewRegistry()
	// The driver's own runtime and process figures show when freshbench
	// rather than the database is the bottleneck.
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	obs := metrics.New(reg, targetURL, e)
	srv, err := metrics.Serve(ctx, string(f.addr), reg)
	if err != nil {
		return nil, nil, usagef("--metrics-addr: %v (an empty --metrics-addr= turns the endpoint off)", err)
	}
	note := ""
	if !metrics.IsLoopback(srv.Addr()) {
		note = " (not loopback: reachable from the network)"
	}
	fmt.Fprintf(stderr, "metrics: http://%s%s%s\n", srv.Addr(), metrics.Path, note)
	return obs, func() { srv.Close(time.Duration(f.linger)) }, nil
}
