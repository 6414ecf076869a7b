package isolation

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// Recorder keeps every sample the run observes, each at the instant it
// belongs to, and passes every call on to Next (the metrics endpoint). A
// query, a write and a probe belong to their intended (written) time,
// latency before they were seen; a freshness lag to when it was sampled.
// A sample is 16 bytes: an hour at 2,000 queries/s holds about 115 MB.
type Recorder struct {
	Next stats.Observer

	mu         sync.Mutex
	writes     []sample
	writeFails []sample // v: the events that failed
	eps        map[string]*endpointSamples
}

type sample struct {
	at time.Time
	v  time.Duration
}

type endpointSamples struct {
	queries, fresh, visible []sample
	queryFails              []kindSample
}

type kindSample struct {
	at   time.Time
	kind string
}

// NewRecorder records and passes every call on to next (nil: nowhere).
func NewRecorder(next stats.Observer) *Recorder {
	if next == nil {
		next = stats.NopObserver{}
	}
	return &Recorder{Next: next, eps: map[string]*endpointSamples{}}
}

var _ stats.Observer = (*Recorder)(nil)

func (r *Recorder) endpoint(name string) *endpointSamples {
	e := r.eps[name]
	if e == nil {
		e = &endpointSamples{}
		r.eps[name] = e
	}
	return e
}

func (r *Recorder) Phase(name string)       { r.Next.Phase(name) }
func (r *Recorder) TargetRate(rate float64) { r.Next.TargetRate(rate) }
func (r *Recorder) Scheduled(g string, events int, late bool, inflight int) {
	r.Next.Scheduled(g, events, late, inflight)
}
func (r *Recorder) Unsent(g string, events int) { r.Next.Unsent(g, events) }

func (r *Recorder) Written(g string, acked, failed, bytes int, kinds map[string]int, latency, service time.Duration) {
	r.Next.Written(g, acked, failed, bytes, kinds, latency, service)
	at := time.Now().Add(-latency)
	r.mu.Lock()
	defer r.mu.Unlock()
	if acked > 0 {
		r.writes = append(r.writes, sample{at, latency})
	}
	if failed > 0 {
		r.writeFails = append(r.writeFails, sample{at, time.Duration(failed)})
	}
}

func (r *Recorder) Freshness(ep, g string, lag time.Duration) {
	r.Next.Freshness(ep, g, lag)
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.endpoint(ep)
	e.fresh = append(e.fresh, sample{now, lag})
}

func (r *Recorder) Visible(ep, g string, latency time.Duration) {
	r.Next.Visible(ep, g, latency)
	at := time.Now().Add(-latency)
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.endpoint(ep)
	e.visible = append(e.visible, sample{at, latency})
}

func (r *Recorder) Query(ep, kind string, latency time.Duration, rows int, failed bool) {
	r.Next.Query(ep, kind, latency, rows, failed)
	at := time.Now().Add(-latency)
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.endpoint(ep)
	if failed {
		e.queryFails = append(e.queryFails, kindSample{at, kind})
		return
	}
	e.queries = append(e.queries, sample{at, latency})
}

// Analyze reads the samples of a run that started at start and was
// planned by c: each window's figures, and each burst's interference and
// recovery on each endpoint. Call it once the run has returned.
func (r *Recorder) Analyze(start time.Time, c Config) *results.Isolation {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.eps))
	for n := range r.eps {
		names = append(names, n)
	}
	// The write target first, then the read endpoints by name.
	slices.SortFunc(names, func(a, b string) int {
		rank := func(s string) int {
			if s == results.TargetEndpoint {
				return 0
			}
			return 1
		}
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
	})
	out := &results.Isolation{Factor: c.Factor, BurstS: c.Burst.Seconds(), Band: c.Band, ResolutionS: c.Resolution.Seconds()}
	ws := c.Windows()
	for _, w := range ws {
		from, to := start.Add(w.From), start.Add(w.To)
		win := &results.IsolationWindow{Name: w.Name, FromS: w.From.Seconds(), ToS: w.To.Seconds(), WriteLatency: quantiles(in(r.writes, from, to))}
		for _, f := range in(r.writeFails, from, to) {
			win.WritesFailed += int64(f)
		}
		for _, n := range names {
			e := r.eps[n]
			we := &results.WindowByEndpoint{Endpoint: n, QueryLatency: quantiles(in(e.queries, from, to)),
				FreshnessLag: quantiles(in(e.fresh, from, to)), Visibility: quantiles(in(e.visible, from, to))}
			for _, f := range e.queryFails {
				if !f.at.Before(from) && f.at.Before(to) {
					if we.QueryErrors == nil {
						we.QueryErrors = map[string]int64{}
					}
					we.QueryErrors[f.kind]++
				}
			}
			win.Endpoints = append(win.Endpoints, we)
		}
		out.Windows = append(out.Windows, win)
	}
	base := out.Windows[0]
	for i, load := range []string{"ingest", "query"} {
		bw, rw := out.Windows[1+2*i], ws[2+2*i]
		b := &results.IsolationBurst{Load: load, FromS: bw.FromS, ToS: bw.ToS,
			WriteP95Ratio: ratio(bw.WriteLatency, base.WriteLatency)}
		for j, n := range names {
			be, ba := bw.Endpoints[j], base.Endpoints[j]
			ep := &results.BurstEndpoint{Endpoint: n,
				QueryP95Ratio: ratio(be.QueryLatency, ba.QueryLatency), FreshnessRatio: ratio(be.FreshnessLag, ba.FreshnessLag),
				VisibilityRatio: ratio(be.Visibility, ba.Visibility)}
			if q99 := be.QueryLatency; q99.N > 0 && ba.QueryLatency.N > 0 && ba.QueryLatency.P99Ms > 0 {
				v := q99.P99Ms / ba.QueryLatency.P99Ms
				ep.QueryP99Ratio = &v
			}
			e := r.eps[n]
			var known bool
			ep.Recovered, known, ep.RecoveryS = recovery(c, start.Add(rw.From), start.Add(rw.To),
				[][]sample{e.queries, e.fresh}, []float64{ba.QueryLatency.P95Ms, ba.FreshnessLag.P95Ms})
			ep.RecoveryNotKnown = !known
			b.Endpoints = append(b.Endpoints, ep)
		}
		out.Bursts = append(out.Bursts, b)
	}
	return out
}

// recovery judges the buckets of c.Resolution from `from` (a burst's end)
// to `to`. A bucket is out of the band when the p95 of some figure in it
// is above c.Band × that figure's baseline p95, within it when every
// figure with a baseline has samples there and none is out, and neither
// when it lacks samples of some figure. The figures have recovered at the
// start of the first bucket after the last one out of the band, once a
// bucket after it is within the band. When the last bucket is out, they
// have not recovered by the end; when no bucket after the last one out is
// within the band (no samples: nothing sent, nothing answered), whether
// they recovered is not known. Either way the time returned is a lower
// bound.
func recovery(c Config, from, to time.Time, figures [][]sample, baselineMs []float64) (recovered, known bool, seconds float64) {
	n := int(math.Ceil(float64(to.Sub(from)) / float64(c.Resolution)))
	lastOut, lastIn := -1, -1
	for k := range n {
		bf, bt := from.Add(time.Duration(k)*c.Resolution), from.Add(time.Duration(k+1)*c.Resolution)
		if bt.After(to) {
			bt = to
		}
		out, all := false, true
		for i, f := range figures {
			if baselineMs[i] <= 0 {
				continue
			}
			q := quantiles(in(f, bf, bt))
			out = out || q.N > 0 && q.P95Ms > c.Band*baselineMs[i]
			all = all && q.N > 0
		}
		switch {
		case out:
			lastOut = k
		case all:
			lastIn = k
		}
	}
	switch {
	case lastOut == n-1:
		return false, true, to.Sub(from).Seconds()
	case lastIn < lastOut:
		return false, false, (time.Duration(lastOut+1) * c.Resolution).Seconds()
	}
	return true, true, (time.Duration(lastOut+1) * c.Resolution).Seconds()
}

// in is the samples at or after from and before to.
func in(s []sample, from, to time.Time) []time.Duration {
	var out []time.Duration
	for _, x := range s {
		if !x.at.Before(from) && x.at.Before(to) {
			out = append(out, x.v)
		}
	}
	return out
}

// quantiles are the nearest-rank percentiles of vs.
func quantiles(vs []time.Duration) results.Quantiles {
	if len(vs) == 0 {
		return results.Quantiles{}
	}
	slices.Sort(vs)
	at := func(q float64) float64 {
		i := max(int(math.Ceil(q*float64(len(vs))))-1, 0)
		return float64(vs[i]) / float64(time.Millisecond)
	}
	return results.Quantiles{N: int64(len(vs)), P50Ms: at(0.50), P95Ms: at(0.95), P99Ms: at(0.99)}
}

// ratio is a's p95 over b's, nil when either has no sample or b's is 0.
func ratio(a, b results.Quantiles) *float64 {
	if a.N == 0 || b.N == 0 || b.P95Ms <= 0 {
		return nil
	}
	v := a.P95Ms / b.P95Ms
	return &v
}
