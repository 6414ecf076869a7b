package metrics

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultAddr is where the command line serves metrics unless told
// otherwise: loopback only, so that a benchmark run does not expose an
// endpoint to the network by default, on the port of the OpenTelemetry
// Prometheus exporter convention (9464).
const DefaultAddr = "127.0.0.1:9464"

// Path is the URL path of the metrics endpoint.
const Path = "/metrics"

// IsLoopback tells whether addr (host:port) binds to loopback only. An
// empty host binds every interface and is not loopback; a host name other
// than localhost is not trusted to resolve to loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server is a metrics endpoint being served.
type Server struct {
	addr string
	stop context.CancelFunc
	done chan struct{} // closed once the endpoint has shut down
}

// Addr is the address the endpoint is bound to.
func (s *Server) Addr() string { return s.addr }

// Close keeps serving for linger, so that a scraper gets one more scrape
// of a run that has just ended (its final values), then shuts the
// endpoint down and returns once it has. A linger longer than the scrape
// interval is enough; 0 closes at once.
func (s *Server) Close(linger time.Duration) {
	t := time.NewTimer(linger)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.done: // the context given to Serve ended
	}
	s.stop()
	<-s.done
}

// Serve serves g's metrics over HTTP at Path on addr until ctx ends or
// the Server is closed: with port 0 (for example "127.0.0.1:0") the
// system picks a free port. It binds whatever it is given; refusing a
// non-loopback address that the user did not ask for is the caller's
// decision (see IsLoopback).
//
// The endpoint answers in the text format, or in protobuf when the
// scraper asks for it (Prometheus does with native histograms enabled),
// which alone carries the native histograms.
func Serve(ctx context.Context, addr string, g prometheus.Gatherer) (*Server, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("metrics endpoint: %s is already in use by another process; choose another address, or port 0 for a free one: %w", addr, err)
		}
		return nil, fmt.Errorf("metrics endpoint: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(g, promhttp.HandlerOpts{
		// A metric that fails to gather should not hide all the others
		// in the middle of a run.
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      log.Default(),
		// Bound the work a slow or stuck scraper can cause.
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "freshbench metrics: %s\n", Path)
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		// Scrapes of a run's metrics come from the same machine or a
		// nearby Prometheus; keep-alive connections are reused across
		// scrapes, so a generous idle timeout costs nothing.
		IdleTimeout: 2 * time.Minute,
	}
	go func() {
		// Serve returns ErrServerClosed after Shutdown; any other error
		// (the listener failed) ends the endpoint, not the run.
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("metrics endpoint %s: %v", ln.Addr(), err)
		}
	}()
	ctx, stop := context.WithCancel(ctx)
	s := &Server{addr: ln.Addr().String(), stop: stop, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		<-ctx.Done()
		// Let a scrape under way finish, briefly: the run is ending.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
	}()
	return s, nil
}
