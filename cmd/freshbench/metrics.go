package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/freshbench/freshbench/metrics"
	"github.com/freshbench/freshbench/stats"
)

// metricsAddr is the --metrics-addr flag of the measuring commands. It is
// checked when parsed, so that a malformed address is a usage error before
// anything runs.
type metricsAddr string

func addMetricsFlag(fs *flag.FlagSet) *metricsAddr {
	a := metricsAddr(metrics.DefaultAddr)
	fs.Var(&a, "metrics-addr", "serve live Prometheus metrics at http://host:port"+metrics.Path+
		"; empty turns them off, port 0 picks a free port, a non-loopback host exposes them to the network")
	return &a
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

// serve starts the metrics endpoint for a run against targetURL and
// returns the Observer for bench.Config.Observer and a function that stops
// the endpoint. With the flag empty it serves nothing and returns a nil
// Observer, which bench.Run treats as none.
func (a *metricsAddr) serve(ctx context.Context, targetURL string, stderr io.Writer) (stats.Observer, func(), error) {
	if *a == "" {
		return nil, func() {}, nil
	}
	reg := prometheus.NewRegistry()
	// The driver's own runtime and process figures show when freshbench
	// rather than the database is the bottleneck.
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	obs := metrics.New(reg, targetURL)
	ctx, stop := context.WithCancel(ctx)
	bound, err := metrics.Serve(ctx, string(*a), reg)
	if err != nil {
		stop()
		return nil, nil, usagef("--metrics-addr: %v (an empty --metrics-addr= turns the endpoint off)", err)
	}
	note := ""
	if !metrics.IsLoopback(bound) {
		note = " (not loopback: reachable from the network)"
	}
	fmt.Fprintf(stderr, "metrics: http://%s%s%s\n", bound, metrics.Path, note)
	return obs, stop, nil
}
