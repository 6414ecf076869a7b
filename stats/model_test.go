package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// queueModel is a step of a peak search against a database modelled at
// the level of batches and polls, so that long holds can be judged
// without running them. It follows the sim target and the ingest:
//
//   - batch k of B events is due at k·B/rate (open loop) and dispatched
//     after a random timer delay, or when an in-flight slot frees up if
//     maxInflight writes are outstanding (then it is late);
//   - the server has one queue: each batch occupies it for B/capacity
//     seconds (times a random factor), so it accepts at most capacity
//     events/s; with capacity 0 a write takes service seconds; the
//     acknowledgement leaves up to wakeJitter later (the sim's timer);
//   - an acknowledged event becomes visible visDelay after its
//     acknowledgement, or at the first refresh after that when refresh is
//     set (refreshes every refresh seconds from phase, each a little
//     late by up to refreshJitter); with visBacklog the visibility path
//     falls behind the acknowledgements by that share of the time;
//   - a freshness poll every 0.5–1.5 × poll seconds reads the newest
//     visible event's intended time and records the lag when its query
//     (1–10 ms) returns.
//
// The points cover [warmup, warmup+hold) in one-second intervals, filled
// as stats.Series fills them.
type queueModel struct {
	rate, capacity float64 // events/s
	batch          int
	maxInflight    int
	warmup, hold   float64 // seconds
	service        float64 // write service time without a capacity
	serviceNoise   float64 // service time × (1 ± serviceNoise)
	wakeJitter     float64 // acknowledgement delay after the service, uniform in [0, wakeJitter) seconds
	timerJitter    float64 // dispatch delay, uniform in [0, timerJitter) seconds
	visDelay       float64
	refresh        float64
	phase          float64
	refreshJitter  float64
	poll           float64
	lagNoise       float64 // extra query time, uniform in [0, lagNoise) seconds
	visBacklog     float64 // the visibility path falls behind by this share: visible at done·(1+visBacklog)
}

// simModel is the sim target at capacity events/s driven at rate, with
// the test machine's noise: dispatch and wake-up delays up to 3 ms, in
// batches of 50 with 16 in flight, polled every 200 ms. Like the sim, its
// queue advances by exactly B/capacity per batch: the timers' delays do
// not add up.
func simModel(rate, capacity, hold float64) queueModel {
	return queueModel{
		rate: rate, capacity: capacity, batch: 50, maxInflight: 16, warmup: 5, hold: hold,
		timerJitter: 0.003, wakeJitter: 0.003, visDelay: 0.05, poll: 0.2,
	}
}

func (m queueModel) inflightEvents() int64 { return int64(m.maxInflight * m.batch) }

type modelBatch struct{ intended, done, visible float64 }

func (m queueModel) points(rng *rand.Rand) []Point {
	end := m.warmup + m.hold
	gap := float64(m.batch) / m.rate
	n := int(math.Ceil(end/gap)) + 1
	batches := make([]modelBatch, 0, n)
	pts := make([]Point, int(math.Ceil(m.hold)))
	lat := make([][]float64, len(pts))
	for i := range pts {
		pts[i] = Point{StartS: m.warmup + float64(i), WidthS: 1}
	}
	at := func(t float64) int {
		if t < m.warmup || t >= end {
			return -1
		}
		return int(t - m.warmup)
	}
	serverFree := 0.0
	nextRefresh := m.phase
	for k := 0; ; k++ {
		intended := float64(k) * gap
		if intended >= end {
			break
		}
		dispatch := intended + m.timerJitter*rng.Float64()
		waited := false
		if k >= m.maxInflight {
			if free := batches[k-m.maxInflight].done; free > dispatch {
				dispatch, waited = free, true
			}
		}
		noise := 1 + m.serviceNoise*(2*rng.Float64()-1)
		var done float64
		if m.capacity > 0 {
			start := max(dispatch, serverFree)
			serverFree = start + float64(m.batch)/m.capacity*noise
			done = serverFree
		} else {
			done = dispatch + m.service*noise
		}
		done += m.wakeJitter * rng.Float64()
		visible := done*(1+m.visBacklog) + m.visDelay
		if m.refresh > 0 {
			for nextRefresh < visible {
				nextRefresh += m.refresh + m.refreshJitter*rng.Float64()
			}
			visible = nextRefresh
		}
		batches = append(batches, modelBatch{intended, done, visible})
		if i := at(intended); i >= 0 {
			pts[i].TargetEvents += int64(m.batch)
			pts[i].Batches++
			if waited || dispatch-intended > max(gap, 0.01) {
				pts[i].LateBatches++
			}
		}
		if i := at(done); i >= 0 {
			pts[i].AckedEvents += int64(m.batch)
			lat[i] = append(lat[i], 1000*(done-intended))
		}
	}
	for i, l := range lat {
		if len(l) == 0 {
			continue
		}
		// Selected, not sorted: sorting each second's latencies was most
		// of a simulated step's time.
		k := int(0.99 * float64(len(l)-1))
		pts[i].WriteP99Ms = selectNth(l, k)
		pts[i].WriteMaxMs = slices.Max(l[k:])
		var sum float64
		for _, v := range l {
			sum += v
		}
		pts[i].WriteMeanMs = sum / float64(len(l))
	}
	// Visibility is not monotone in k when refreshes jitter, so the
	// newest visible event at T is found by scanning forward: batches
	// become visible in the order of their acknowledgements.
	order := make([]int, len(batches))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(batches[a].visible, batches[b].visible) })
	next, newest := 0, math.Inf(-1)
	for t := m.poll * rng.Float64(); t < end; t += m.poll * (0.5 + rng.Float64()) {
		for next < len(order) && batches[order[next]].visible <= t {
			newest = max(newest, batches[order[next]].intended)
			next++
		}
		done := t + 0.001 + m.lagNoise*rng.Float64() + 0.009*rng.Float64()
		i := at(done)
		if i < 0 || math.IsInf(newest, -1) {
			continue
		}
		lag := 1000 * (done - newest)
		p := &pts[i]
		if p.FreshnessN == 0 || lag > p.FreshnessLagMs {
			p.FreshnessLagMs = lag
		}
		if p.FreshnessN == 0 || lag < p.FreshnessLagMinMs {
			p.FreshnessLagMinMs = lag
		}
		p.FreshnessN++
	}
	return pts
}

// judge applies r to the model's points as bench.judge does to a step.
func (m queueModel) judge(r Rule, rng *rand.Rand) (Verdict, []Point) {
	pts := m.points(rng)
	var acked int64
	for _, p := range pts {
		acked += p.AckedEvents
	}
	f := StepFigures{
		TargetPerSec: m.rate, AchievedPerSec: float64(acked) / m.hold, Attempted: acked, Series: pts,
		InflightEvents: m.inflightEvents(), Audited: true,
	}
	return r.Judge(f), pts
}
