// Package noop is a server that speaks enough of Elasticsearch's (and
// OpenSearch's) REST API and of PostgreSQL's wire protocol for a whole
// freshbench run, seed or query workload against it, and does next to no
// work: it acknowledges every write and stores no document. Pointed at
// it, freshbench measures itself: the driver's ceiling on this machine
// and its CPU per event (freshbench calibrate), as Elastic's client
// benchmarks point their clients at a no-op server.
//
// # What it keeps, and why
//
// A server that kept nothing at all would have to answer the freshness
// query, the visibility probes and the completeness audit with nothing.
// Those answers would read as a lag as old as the run and every event
// lost; or, made to say "not measured" as discard:// does, the freshness
// and probe loops would stop after their first query, and a calibration
// would leave out their cost and could not judge a step by the rule a
// peak search uses (which needs the lag sampled and the run audited).
//
// So the server keeps exactly what those queries read, and it is a
// database that makes every event visible the moment it acknowledges
// it: per generator, the newest _event_time written (the freshness
// query), the set of _seq values written, as spans (the count and the
// audit), and the _id of the first document of each write request,
// which is where freshbench's ingest takes its probes from (the newest
// 2^18 of them; a probe asked for after that many more requests reads
// as not visible). Figures measured against it are therefore true of a
// database with zero visibility delay: the freshness lag and visibility
// latency are freshbench's own floor at that rate and batch size (its
// batching, pacing, write and poll intervals), and a complete audit
// checks freshbench's accounting end to end. It also keeps the first 100
// documents of each index or table, for the query workload to draw its
// parameters from; queries on the documents' fields find nothing.
//
// It keeps all of this in memory, in a few bytes per generator and per
// gap in its _seq values plus the bounded ids and samples, whatever the
// number of events. It does not parse document sources beyond a scan for
// generator_identifier, _event_time and _seq, and it does not check that
// a _id is new: a re-sent document is acknowledged again and counted
// once.
package noop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Config says where the server listens; an empty address leaves that
// protocol off.
type Config struct {
	HTTPAddr     string // Elasticsearch and OpenSearch, e.g. 127.0.0.1:0
	PostgresAddr string // PostgreSQL
	// Version is what the server says it is, in the root call and
	// server_version; freshbench records it in every results file.
	Version string
}

// Server is a running no-op server.
type Server struct {
	http   *http.Server
	httpLn net.Listener
	pg     *postgres
	pgLn   net.Listener
	wg     sync.WaitGroup
}

// Start listens on the configured addresses and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.HTTPAddr == "" && cfg.PostgresAddr == "" {
		return nil, errors.New("noop: no address to listen on")
	}
	version := Product + " " + cfg.Version
	s := &Server{}
	if cfg.HTTPAddr != "" {
		ln, err := net.Listen("tcp", cfg.HTTPAddr)
		if err != nil {
			return nil, fmt.Errorf("noop: listen for HTTP: %w", err)
		}
		s.httpLn = ln
		s.http = &http.Server{Handler: newElastic(version), ReadHeaderTimeout: 10 * time.Second}
		s.wg.Go(func() { _ = s.http.Serve(ln) }) // returns ErrServerClosed on Close
	}
	if cfg.PostgresAddr != "" {
		ln, err := net.Listen("tcp", cfg.PostgresAddr)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("noop: listen for PostgreSQL: %w", err)
		}
		s.pgLn = ln
		s.pg = newPostgres(version)
		s.wg.Go(func() { s.pg.serve(ln) })
	}
	return s, nil
}

// ElasticsearchURL is the --target URL of the Elasticsearch endpoint,
// for an index of that name; "" when HTTP is off.
func (s *Server) ElasticsearchURL(index string) string { return s.httpURL("elasticsearch", index) }

// OpenSearchURL is the --target URL of the same endpoint, for
// freshbench's OpenSearch client.
func (s *Server) OpenSearchURL(index string) string { return s.httpURL("opensearch", index) }

func (s *Server) httpURL(scheme, index string) string {
	if s.httpLn == nil {
		return ""
	}
	return scheme + "://" + s.httpLn.Addr().String() + "/" + index
}

// PostgresURL is the --target URL of the PostgreSQL endpoint, for a table
// of that name; "" when it is off. Any user and password are accepted;
// TLS is not offered.
func (s *Server) PostgresURL(table string) string {
	if s.pgLn == nil {
		return ""
	}
	return "postgres://freshbench@" + s.pgLn.Addr().String() + "/freshbench?sslmode=disable&table=" + table
}

// Close stops listening, closes every connection and waits for the
// server's goroutines.
func (s *Server) Close() error {
	var errs []error
	if s.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.http.Shutdown(ctx); err != nil {
			errs = append(errs, s.http.Close())
		}
	}
	if s.pg != nil {
		errs = append(errs, s.pg.close(s.pgLn))
	}
	s.wg.Wait()
	return errors.Join(errs...)
}
