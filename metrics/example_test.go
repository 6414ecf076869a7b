package metrics_test

import (
	"context"
	"fmt"
	"log"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/freshbench/freshbench/metrics"
	"github.com/freshbench/freshbench/stats"
)

// A run exposes its measurements on a fresh registry, together with the
// driver's own Go runtime and process metrics, which show when the driver
// rather than the database is the bottleneck. The Observer then goes into
// bench.Config.Observer.
func Example() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop() // ends the endpoint

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var obs stats.Observer = metrics.New(reg, "sqlite", nil)

	// metrics.DefaultAddr in the command line; port 0 here so that the
	// example never collides with a running freshbench.
	srv, err := metrics.Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(metrics.IsLoopback(srv.Addr()))
	obs.Phase("measured")
	// Output: true
}
