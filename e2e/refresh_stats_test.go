package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/freshbench/freshbench/stats"
)

// The server's own account of its refreshes, read from _stats/refresh
// while a run goes on, so that tests about refresh intervals bound what
// freshbench measured by what the server did on this machine at that
// moment (a busy machine refreshes later and slower than the interval
// set), not by figures tuned on a quiet one.

// refreshSample is one reading of an index's _stats/refresh. The server
// took it at some instant between sent and recv.
type refreshSample struct {
	sent, recv time.Time
	count      int64 // refreshes completed that made changes searchable
	totalMs    int64 // their total time
}

// refreshSampler reads _stats/refresh of one index every interval until
// stopped.
type refreshSampler struct {
	stopc chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	samples []refreshSample
	err     error
}

// startRefreshSampler samples the index of raw, an elasticsearch:// or
// opensearch:// target URL.
func startRefreshSampler(t *testing.T, raw string, every time.Duration) *refreshSampler {
	t.Helper()
	addr, user, pass, err := statsURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	s := &refreshSampler{stopc: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			sent := time.Now()
			c, ms, err := readRefreshStats(client, addr, user, pass)
			recv := time.Now()
			s.mu.Lock()
			if err != nil && s.err == nil {
				s.err = err
			}
			if err == nil {
				s.samples = append(s.samples, refreshSample{sent: sent, recv: recv, count: c, totalMs: ms})
			}
			s.mu.Unlock()
			select {
			case <-s.stopc:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(s.halt)
	return s
}

func (s *refreshSampler) halt() {
	select {
	case <-s.stopc:
	default:
		close(s.stopc)
	}
	<-s.done
}

// stop ends the sampling and returns what the server reported. It first
// waits, up to wait, for a refresh to finish after the instant after, so
// that the last searches before it are bounded by the next refresh (a
// server that had nothing left to refresh does not do one), and for two
// to have finished after start, so that the server's interval is known
// (a starved server, whose refreshes take seconds, may finish only one
// within a short schedule).
func (s *refreshSampler) stop(t *testing.T, start, after time.Time, wait time.Duration) refreshHistory {
	t.Helper()
	waitFor(wait, 10*time.Millisecond, func() bool {
		s.mu.Lock()
		h := refreshHistory{samples: s.samples}
		s.mu.Unlock()
		return h.refreshedAfter(after) && len(newRefreshBounds(h, start, start, after).in(start, h.end())) >= 2
	})
	s.halt()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		t.Errorf("reading _stats/refresh: %v", s.err)
	}
	return refreshHistory{samples: s.samples}
}

// statsURL turns a search-engine target URL into the address of its
// index's refresh statistics.
func statsURL(raw string) (addr, user, pass string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", "", err
	}
	scheme := "http"
	if strings.HasSuffix(u.Scheme, "+https") {
		scheme = "https"
	}
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	index := strings.Trim(u.Path, "/")
	return scheme + "://" + u.Host + "/" + url.PathEscape(index) + "/_stats/refresh?filter_path=indices.*.primaries.refresh", user, pass, nil
}

// readRefreshStats returns the index's external refreshes (those that make
// changes visible to search; internal ones, for flushes and the like, do
// not) and their total time, or the plain totals where the server reports
// no external ones.
func readRefreshStats(c *http.Client, addr, user, pass string) (count, totalMs int64, err error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, addr, nil)
	if err != nil {
		return 0, 0, err
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return 0, 0, err
	}
	if res.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("status %d: %.200s", res.StatusCode, body)
	}
	var st struct {
		Indices map[string]struct {
			Primaries struct {
				Refresh struct {
					Total         int64  `json:"total"`
					TotalMs       int64  `json:"total_time_in_millis"`
					ExternalTotal *int64 `json:"external_total"`
					ExternalMs    *int64 `json:"external_total_time_in_millis"`
				} `json:"refresh"`
			} `json:"primaries"`
		} `json:"indices"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return 0, 0, fmt.Errorf("decode %.200s: %w", body, err)
	}
	if len(st.Indices) != 1 {
		return 0, 0, fmt.Errorf("want the stats of one index, got %.200s", body)
	}
	for _, ix := range st.Indices {
		r := ix.Primaries.Refresh
		if r.ExternalTotal != nil && r.ExternalMs != nil {
			return *r.ExternalTotal, *r.ExternalMs, nil
		}
		return r.Total, r.TotalMs, nil
	}
	return 0, 0, nil
}

// refreshHistory is what the server reported over a run.
type refreshHistory struct {
	samples []refreshSample
}

// end is the instant the last reading came back: no refresh after it is
// known.
func (h refreshHistory) end() time.Time {
	if len(h.samples) == 0 {
		return time.Time{}
	}
	return h.samples[len(h.samples)-1].recv
}

// intervalEnd is the end of the span over which the refreshes of a run
// whose schedule ended at to are held to the interval set: the last
// reading, which comes after to. The interval set bounds the server's
// refreshes at any time, and a refresh after the schedule (of its last
// writes) tells as much as one within it: a starved server (refreshes of
// 2.8 s each, 2 s set: 4.8 s apart) may finish only one within a short
// schedule.
func (h refreshHistory) intervalEnd(to time.Time) time.Time {
	if e := h.end(); e.After(to) {
		return e
	}
	return to
}

// refreshedAfter reports whether a refresh certainly finished after t.
func (h refreshHistory) refreshedAfter(t time.Time) bool {
	cs := h.completions()
	return len(cs) > 0 && cs[len(cs)-1].lo.After(t)
}

// completion is one refresh that the server finished at an unknown
// instant within [lo, hi]: after the reading that did not count it was
// taken, before the reading that did.
type completion struct {
	lo, hi time.Time
	ms     int64 // upper bound on its duration: the time of every refresh counted with it
}

func (h refreshHistory) completions() []completion {
	var cs []completion
	for i := 1; i < len(h.samples); i++ {
		prev, cur := h.samples[i-1], h.samples[i]
		for range cur.count - prev.count {
			cs = append(cs, completion{lo: prev.sent, hi: cur.recv, ms: cur.totalMs - prev.totalMs})
		}
	}
	return cs
}

// refreshBounds is what the server's refreshes imply for lags measured in
// a window.
type refreshBounds struct {
	cs       []completion
	start    time.Time // the run's start: no event is older
	from, to time.Time // the measured window
}

func newRefreshBounds(h refreshHistory, start, from, to time.Time) refreshBounds {
	return refreshBounds{cs: h.completions(), start: start, from: from, to: to}
}

// in returns the completions certainly within [a, b].
func (b refreshBounds) in(a, z time.Time) []completion {
	var out []completion
	for _, c := range b.cs {
		if !c.lo.Before(a) && !c.hi.After(z) {
			out = append(out, c)
		}
	}
	return out
}

// meanInterval returns bounds on the mean time between the completions
// within [a, z], their number, and their mean duration. A completion is
// known only within the readings around it, so the bounds are as far
// apart as two readings are slow: lo from the first's latest instant to
// the last's earliest, hi from the first's earliest to the last's latest.
func (b refreshBounds) meanInterval(a, z time.Time) (lo, hi time.Duration, n int, meanMs float64) {
	cs := b.in(a, z)
	n = len(cs)
	if n == 0 {
		return 0, 0, 0, 0
	}
	var ms int64
	for _, c := range cs {
		ms += c.ms
	}
	meanMs = float64(ms) / float64(n)
	if n < 2 {
		return 0, 0, n, meanMs
	}
	gaps := time.Duration(n - 1)
	return cs[n-1].lo.Sub(cs[0].hi) / gaps, cs[n-1].hi.Sub(cs[0].lo) / gaps, n, meanMs
}

// intervalError holds the server's refreshes within [a, z] to the
// interval set: no more often on average than 90 % of it (the server
// schedules the next refresh after the last one ends, so a busy one
// refreshes later, never sooner). It holds the upper bound on the mean to
// that, so that a server read slowly (a busy one answers _stats in
// hundreds of milliseconds) is not failed for the readings' imprecision,
// while one refreshing more often than set still is. Fewer than two
// refreshes leave the interval unknown: the window runs to the last
// reading, which the sampler's stop takes after two since the start.
func (b refreshBounds) intervalError(interval time.Duration, a, z time.Time) error {
	_, hi, n, _ := b.meanInterval(a, z)
	if n < 2 || hi < interval*9/10 {
		return fmt.Errorf("_stats/refresh counts %d refreshes in %s, at most %.0f ms apart on average; want at least 2 (fewer: the interval is not known), ≥ %.0f ms apart (90%% of the interval set)",
			n, z.Sub(a).Round(time.Millisecond), ms(hi), ms(interval*9/10))
	}
	return nil
}

// sinceLo is a lower bound on the time at t since the server last
// finished a refresh; false before the first one. A search at t cannot
// see an event newer than that refresh, so no freshness lag sampled at t
// is smaller.
func (b refreshBounds) sinceLo(t time.Time) (time.Duration, bool) {
	var last *completion
	for i := range b.cs {
		if !b.cs[i].lo.Before(t) {
			break
		}
		last = &b.cs[i]
	}
	if last == nil {
		return 0, false
	}
	latest := last.hi
	if latest.After(t) {
		latest = t
	}
	return t.Sub(latest), true
}

// untilLo is a lower bound on the time from t until the server next
// finished a refresh; false when none was seen after t. An event written
// at t is not searchable before then.
func (b refreshBounds) untilLo(t time.Time) (time.Duration, bool) {
	for _, c := range b.cs {
		if c.hi.Before(t) {
			continue
		}
		if c.lo.After(t) {
			return c.lo.Sub(t), true
		}
		return 0, true
	}
	return 0, false
}

// maxGapHi is an upper bound on the longest time, at a search in the
// window, from the refresh it used to the next one: the longest gap
// between two consecutive refresh completions around the window. The
// run's start counts as one (no event is older). When no refresh finished
// after the window, the server had nothing left to make searchable, and
// the window's end closes the last gap.
func (b refreshBounds) maxGapHi() time.Duration {
	prev := b.start
	var gap time.Duration
	for _, c := range b.cs {
		if c.hi.Before(b.from) {
			prev = c.lo
			continue
		}
		gap = max(gap, c.hi.Sub(prev))
		if c.lo.After(b.to) {
			return gap
		}
		prev = c.lo
	}
	return max(gap, b.to.Sub(prev))
}

// maxRefreshHi is an upper bound on the longest refresh.
func (b refreshBounds) maxRefreshHi() time.Duration {
	var ms int64
	for _, c := range b.cs {
		ms = max(ms, c.ms)
	}
	return time.Duration(ms) * time.Millisecond
}

// sample is one freshness lag or visibility latency, with the time the
// run reported it.
type sample struct {
	at time.Time
	d  time.Duration
}

// recorder is a bench observer that keeps every freshness and visibility
// sample with the time it was reported, so that each can be held against
// the server's refreshes at that moment.
type recorder struct {
	stats.NopObserver
	mu        sync.Mutex
	freshness []sample
	visible   []sample
}

func (r *recorder) Freshness(_, _ string, lag time.Duration) {
	now := time.Now()
	r.mu.Lock()
	r.freshness = append(r.freshness, sample{now, lag})
	r.mu.Unlock()
}

func (r *recorder) Visible(_, _ string, latency time.Duration) {
	now := time.Now()
	r.mu.Lock()
	r.visible = append(r.visible, sample{now, latency})
	r.mu.Unlock()
}

func (r *recorder) samples() (freshness, visible []sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sample(nil), r.freshness...), append([]sample(nil), r.visible...)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// The bounds hold around a known schedule of refreshes, read every 10 ms.
func TestRefreshBounds(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	done := []int{200, 400, 600, 800} // refreshes finish, each after 5 ms
	var h refreshHistory
	for i := range 100 {
		sent := at(10 * i)
		snap := 10*i + 1 // the server reads its counters 1 ms after the request
		var n int64
		for _, d := range done {
			if d <= snap {
				n++
			}
		}
		h.samples = append(h.samples, refreshSample{sent: sent, recv: sent.Add(2 * time.Millisecond), count: n, totalMs: 5 * n})
	}
	b := newRefreshBounds(h, t0, at(100), at(700))
	within := func(what string, got time.Duration, lo, hi int) {
		t.Helper()
		if got < time.Duration(lo)*time.Millisecond || got > time.Duration(hi)*time.Millisecond {
			t.Errorf("%s = %s, want in [%d, %d] ms", what, got, lo, hi)
		}
	}
	if len(b.cs) != len(done) || !h.refreshedAfter(at(700)) || h.refreshedAfter(at(800)) {
		t.Fatalf("%d completions (after 700 ms: %v, after 800 ms: %v), want %d, the last at 800 ms",
			len(b.cs), h.refreshedAfter(at(700)), h.refreshedAfter(at(800)), len(done))
	}
	// True values: 100 ms since the refresh at 200, 100 ms until the one
	// at 400; the bounds may only fall short by the 10 ms reading period.
	since, ok := b.sinceLo(at(300))
	within("sinceLo(300)", since, 88, 100)
	if _, ok2 := b.sinceLo(at(150)); !ok || ok2 {
		t.Errorf("sinceLo known at 300: %v, at 150 (before any refresh): %v; want true, false", ok, ok2)
	}
	until, _ := b.untilLo(at(300))
	within("untilLo(300)", until, 88, 100)
	if _, ok := b.untilLo(at(900)); ok {
		t.Error("untilLo(900): a refresh after the last one seen")
	}
	within("maxGapHi", b.maxGapHi(), 200, 215)
	within("maxRefreshHi", b.maxRefreshHi(), 5, 5)
	lo, hi, n, meanMs := b.meanInterval(t0, at(1000))
	within("meanInterval lo", lo, 185, 200)
	within("meanInterval hi", hi, 200, 215)
	if n != 4 || meanMs != 5 {
		t.Errorf("meanInterval: %d refreshes of %.1f ms on average, want 4 of 5", n, meanMs)
	}
	// The run's start counts as a refresh: from it to the first one.
	within("maxGapHi from the start", newRefreshBounds(h, t0, t0, at(100)).maxGapHi(), 200, 215)
	// Without a refresh after the window, its end closes the last gap.
	within("maxGapHi to the end", newRefreshBounds(h, t0, at(850), at(990)).maxGapHi(), 190, 211)
}

// A server that keeps a 2 s schedule passes the interval check however
// slowly its counters are read, and one that refreshes every 200 ms does
// not. The readings here take 450 ms each, as on a busy machine, and the
// server takes them 440 ms in.
func TestRefreshIntervalCheckSlowReadings(t *testing.T) {
	t0 := time.Now()
	history := func(every time.Duration) refreshHistory {
		var h refreshHistory
		for sent := t0; sent.Before(t0.Add(9 * time.Second)); sent = sent.Add(460 * time.Millisecond) {
			snap := sent.Add(440 * time.Millisecond).Sub(t0)
			n := int64(0)
			if snap >= 500*time.Millisecond {
				n = int64((snap-500*time.Millisecond)/every) + 1
			}
			h.samples = append(h.samples, refreshSample{sent: sent, recv: sent.Add(450 * time.Millisecond), count: n, totalMs: 200 * n})
		}
		return h
	}
	end := t0.Add(8 * time.Second)
	kept := newRefreshBounds(history(2*time.Second), t0, t0.Add(2*time.Second), end)
	if err := kept.intervalError(2*time.Second, t0, end); err != nil {
		t.Errorf("a server refreshing every 2 s, read slowly: %v", err)
	}
	if lo, hi, _, _ := kept.meanInterval(t0, end); lo > 2*time.Second || hi < 2*time.Second {
		t.Errorf("meanInterval [%s, %s], want it to hold the true 2s", lo, hi)
	}
	often := newRefreshBounds(history(200*time.Millisecond), t0, t0.Add(2*time.Second), end)
	if err := often.intervalError(2*time.Second, t0, end); err == nil {
		t.Error("a server refreshing every 200 ms with 2 s set passed the interval check")
	}
}

// A database that makes each write visible at its commit passes the
// visibility bound however long the pause between probe queries is; one
// that shows writes far later than their commits does not.
func TestVisibleOnCommitBound(t *testing.T) {
	write := stats.Summary{Count: 80, P50Ms: 30}
	// A busy machine: timers wake late and a probe query of 12 ms p95
	// waits for a core now and then, so the gaps reach 130 ms against a
	// 50 ms poll (up to 75 ms of pause); each probe is seen within a gap
	// of its commit, the median 95 ms after its write.
	slow := stats.Summary{Count: 80, P50Ms: 125}
	if err := visibleOnCommitError(slow, write, 130*time.Millisecond); err != nil {
		t.Errorf("a probe seen within a gap of its commit: %v", err)
	}
	// The defect: rows visible long after their commit.
	late := stats.Summary{Count: 80, P50Ms: 600}
	if err := visibleOnCommitError(late, write, 130*time.Millisecond); err == nil {
		t.Error("probes seen 570 ms after their writes' median, with gaps of at most 130 ms, passed")
	}
	if err := visibleOnCommitError(stats.Summary{}, write, 0); err == nil {
		t.Error("a run with no probe seen passed")
	}
}

// A probe seen at the first query after the refresh that made it
// searchable passes the bound however late the busy machine woke the
// poller; one seen a refresh period later than that does not.
func TestVisibilityMaxBound(t *testing.T) {
	const (
		write      = 120 * time.Millisecond
		refreshGap = 900 * time.Millisecond // a 200 ms interval on a busy server
		refresh    = 40 * time.Millisecond
	)
	// The poll is 50 ms: up to 75 ms of pause and a 30 ms query, but
	// the poller's timer woke 250 ms late, so the gap from the last miss
	// to the end of the query that saw it measured 355 ms.
	pollGap := 355 * time.Millisecond
	seen := write + refreshGap + 2*refresh + 300*time.Millisecond
	if err := visibilityMaxError(seen, write, refreshGap, refresh, pollGap); err != nil {
		t.Errorf("a probe seen within a poll gap of its refresh: %v", err)
	}
	// The defect: a probe shown one whole refresh gap later than the
	// refresh that made it searchable.
	if err := visibilityMaxError(seen+refreshGap, write, refreshGap, refresh, pollGap); err == nil {
		t.Error("a probe seen a refresh gap late passed")
	}
}

// A starved server whose refreshes take 2.8 s, with 2 s set, finishes one
// refresh within an 8 s schedule and the next after it: its interval is
// known over the readings to the end, and kept; a server refreshing every
// 200 ms still fails over the same span.
func TestRefreshIntervalCheckStarved(t *testing.T) {
	t0 := time.Now()
	end := t0.Add(8 * time.Second)
	history := func(first, every time.Duration) refreshHistory {
		var h refreshHistory
		// Read every 500 ms, each reading taking 450 ms, until the stop
		// saw a refresh after the schedule's end.
		for sent := t0; ; sent = sent.Add(500 * time.Millisecond) {
			snap := sent.Add(440 * time.Millisecond).Sub(t0)
			n := int64(0)
			if snap >= first {
				n = int64((snap-first)/every) + 1
			}
			h.samples = append(h.samples, refreshSample{sent: sent, recv: sent.Add(450 * time.Millisecond), count: n, totalMs: 2800 * n})
			if h.refreshedAfter(end) && n >= 2 {
				return h
			}
		}
	}
	starved := history(4*time.Second, 4800*time.Millisecond)
	b := newRefreshBounds(starved, t0, t0.Add(2*time.Second), end)
	if err := b.intervalError(2*time.Second, t0, starved.intervalEnd(end)); err != nil {
		t.Errorf("a starved server keeping its 2 s interval: %v", err)
	}
	often := history(500*time.Millisecond, 200*time.Millisecond)
	b = newRefreshBounds(often, t0, t0.Add(2*time.Second), end)
	if err := b.intervalError(2*time.Second, t0, often.intervalEnd(end)); err == nil {
		t.Error("a server refreshing every 200 ms with 2 s set passed the interval check")
	}
}
