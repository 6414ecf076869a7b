package stats

import "time"

// Observer sees every measurement as it happens, for live metrics
// (Prometheus) and progress. Implementations must be safe for concurrent
// use and fast: they are called on the hot path.
type Observer interface {
	// Phase is called when the run enters a phase (warmup, measured,
	// drain, or a peak step's name).
	Phase(name string)
	// TargetRate is called when a run's schedule starts, with the rate it
	// asks for in events per second, and with 0 when it has ended.
	TargetRate(eventsPerSec float64)
	// Scheduled is called when a batch is dispatched.
	Scheduled(generator string, events int, late bool, inflight int)
	// Unsent is called when a generator gives up events it never sent
	// (the run ended with them still waiting for a write slot).
	Unsent(generator string, events int)
	// Written is called when a batch write finished.
	Written(generator string, acked, failed, bytes int, errorKinds map[string]int, latency, service time.Duration)
	// Freshness is called for every freshness lag sample taken on a read
	// endpoint, named as the results file names it ("target" for the
	// write target).
	Freshness(endpoint, generator string, lag time.Duration)
	// Visible is called when a probe event was first seen on a read
	// endpoint.
	Visible(endpoint, generator string, latency time.Duration)
	// Query is called when a query of the query load sent to a read
	// endpoint finished.
	Query(endpoint, kind string, latency time.Duration, rows int, failed bool)
}

// NopObserver ignores everything.
type NopObserver struct{}

func (NopObserver) Phase(string)                                                                {}
func (NopObserver) TargetRate(float64)                                                          {}
func (NopObserver) Scheduled(string, int, bool, int)                                            {}
func (NopObserver) Unsent(string, int)                                                          {}
func (NopObserver) Written(string, int, int, int, map[string]int, time.Duration, time.Duration) {}
func (NopObserver) Freshness(string, string, time.Duration)                                     {}
func (NopObserver) Visible(string, string, time.Duration)                                       {}
func (NopObserver) Query(string, string, time.Duration, int, bool)                              {}
