package stats

import "time"

// Recorder fans each measurement out to a run's series and its observer,
// so that no measuring package feeds them one by one. Either may be
// absent (nil): the zero Recorder records nothing.
type Recorder struct {
	series *Series
	obs    Observer
}

// NewRecorder records into series and obs; either may be nil.
func NewRecorder(series *Series, obs Observer) Recorder {
	return Recorder{series: series, obs: obs}
}

// Scheduled records a batch of events generator's schedule asked for at
// intended and dispatched, late or not, with inflight writes in flight.
func (r Recorder) Scheduled(generator string, intended time.Time, events int, late bool, inflight int) {
	if r.series != nil {
		r.series.Scheduled(intended, int64(events), late, int64(inflight))
	}
	if r.obs != nil {
		r.obs.Scheduled(generator, events, late, inflight)
	}
}

// Due is a number of events due at an instant.
type Due struct {
	At     time.Time
	Events int64
}

// Unsent records events of generator never sent, due as due says.
func (r Recorder) Unsent(generator string, events int, due []Due) {
	if r.series != nil {
		for _, d := range due {
			r.series.Unsent(d.At, d.Events)
		}
	}
	if r.obs != nil {
		r.obs.Unsent(generator, events)
	}
}

// Written records a batch write of generator finished at ack: latency
// from its intended time, service from when it was sent.
func (r Recorder) Written(generator string, ack time.Time, acked, failed, bytes int, errorKinds map[string]int, latency, service time.Duration) {
	if r.series != nil {
		r.series.Written(ack, int64(acked), int64(bytes), int64(failed), latency)
		r.series.Served(ack, service)
	}
	if r.obs != nil {
		r.obs.Written(generator, acked, failed, bytes, errorKinds, latency, service)
	}
}

// Freshness records a freshness lag sample of generator on endpoint,
// taken at t.
func (r Recorder) Freshness(endpoint, generator string, t time.Time, lag time.Duration) {
	if r.series != nil {
		r.series.Freshness(t, lag)
	}
	if r.obs != nil {
		r.obs.Freshness(endpoint, generator, lag)
	}
}

// Visible records a probe event of generator first seen on endpoint,
// latency after its intended time (the series keeps no visibility).
func (r Recorder) Visible(endpoint, generator string, latency time.Duration) {
	if r.obs != nil {
		r.obs.Visible(endpoint, generator, latency)
	}
}

// Query records a query of kind to endpoint finished at done, latency
// after its intended time.
func (r Recorder) Query(endpoint, kind string, done time.Time, latency time.Duration, rows int, failed bool) {
	if r.series != nil {
		r.series.Query(done, latency, failed)
	}
	if r.obs != nil {
		r.obs.Query(endpoint, kind, latency, rows, failed)
	}
}
