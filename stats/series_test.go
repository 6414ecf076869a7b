package stats

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// A series of an hour at full resolution costs little: each finished
// interval keeps its latency histograms in a compact form, not two live
// HDR histograms of about 3.7 KB each (issue 12, item 19: a long run's
// memory grew with every second).
func TestSeriesMemoryPerInterval(t *testing.T) {
	const intervals = 3600
	start := time.Unix(0, 0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := NewSeries(start, intervals)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range intervals {
		at := start.Add(time.Duration(i) * time.Second)
		s.Scheduled(at, 500, false, 3)
		for range 100 {
			lat := time.Duration(5+r.IntN(200)) * time.Millisecond
			s.Written(at.Add(time.Duration(r.IntN(1000))*time.Millisecond), 500, 500_000, 0, lat)
			s.Query(at.Add(time.Duration(r.IntN(1000))*time.Millisecond), lat/2, false)
		}
		s.Freshness(at, time.Second)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	per := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / intervals
	t.Logf("series retains %.0f bytes per one-second interval (%.2f MB per hour)", per, per*3600/1e6)
	if per > 1500 {
		t.Errorf("series retains %.0f bytes per interval, want at most 1500 (%.1f MB per hour of run)", per, per*3600/1e6)
	}
}

// The latency figures of each interval are the same whether its
// histograms are still live or kept compact, before and after coarsening
// merges intervals, and when a late write lands in an interval already
// kept compact.
func TestSeriesLatencyFiguresSurviveCompaction(t *testing.T) {
	start := time.Unix(0, 0)
	const n, maxPoints = 64, 16 // coarsened twice: 4 s per point
	s := NewSeries(start, maxPoints)
	r := rand.New(rand.NewPCG(3, 4))
	want := map[int]*Histogram{} // by final 4 s point
	wantQ := map[int]*Histogram{}
	for i := range n {
		at := start.Add(time.Duration(i) * time.Second)
		for range 20 {
			lat := time.Duration(1+r.IntN(5000)) * time.Millisecond
			s.Written(at, 1, 100, 0, lat)
			if want[i/4] == nil {
				want[i/4], wantQ[i/4] = newCoarseHistogram(), newCoarseHistogram()
			}
			want[i/4].Record(lat)
			if i%3 == 0 {
				s.Query(at, lat*2, false)
				wantQ[i/4].Record(lat * 2)
			}
		}
		if i == 40 { // a late write into an interval long finished
			s.Written(start.Add(2*time.Second), 1, 100, 0, time.Hour/2)
			want[0].Record(time.Hour / 2)
		}
	}
	pts := s.Points()
	if len(pts) != n/4 || pts[0].WidthS != 4 {
		t.Fatalf("%d points of %g s, want %d of 4 s", len(pts), pts[0].WidthS, n/4)
	}
	for k, p := range pts {
		w, q := want[k].Summarize(), wantQ[k].Summarize()
		if p.WriteP99Ms != w.P99Ms || p.WriteMaxMs != w.MaxMs || p.QueryP99Ms != q.P99Ms {
			t.Errorf("point %d: write p99 %g max %g, query p99 %g; want %g, %g, %g",
				k, p.WriteP99Ms, p.WriteMaxMs, p.QueryP99Ms, w.P99Ms, w.MaxMs, q.P99Ms)
		}
	}
}

// An interval keeps the largest backlog sampled in it, also when
// coarsening merges intervals.
func TestSeriesBacklogKeepsTheLargest(t *testing.T) {
	start := time.Unix(0, 0)
	s := NewSeries(start, 4)
	for i, n := range []int64{10, 500, 30, 0, 7, 2000, 40, 1} {
		s.Backlog(start.Add(time.Duration(i)*time.Second+time.Millisecond), n)
		s.Backlog(start.Add(time.Duration(i)*time.Second+2*time.Millisecond), n/2)
	}
	var got []int64
	for _, p := range s.Points() {
		got = append(got, p.Backlog)
	}
	if want := []int64{500, 30, 2000, 40}; !slices.Equal(got, want) {
		t.Errorf("backlog per 2 s interval %v, want %v", got, want)
	}
}
