package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rule is the sustainability test of docs/design.md: over a step, the
// acknowledged rate keeps up with the target, no backlog grows (late
// batches do not accumulate; neither the write latency nor the freshness
// lag trends upward, the lag judged over whole visibility periods), no
// acknowledged event is lost, and errors stay under a bound. An optional
// freshness bound (an SLO such as p95 < 2 s) can be added.
//
// Why the trend rule looks as it does. A step at a rate e above what the
// database sustains (an overload of share e: rate = capacity·(1+e)) queues
// e·capacity events more every second, so the time an event waits grows
// by e seconds per second: the write latency (measured from the intended
// time) and the freshness lag both rise with slope e, whatever the hold.
// A fixed allowance on the rise over a step (the slope times the hold)
// lets a short step pass an overload that a long one fails: 1.5 % is
// +300 ms over 20 s, +0.9 s over a minute. A tolerance on the slope itself
// does not depend on the hold. The slope is measured with an error that
// shrinks as the hold grows (∝ hold^−1.5, see fitTrend), so the rule asks
// that the trend be bounded below MaxGrowth at 99.5 % confidence: a step
// whose trend's lower bound exceeds it is not sustainable ("growing"),
// one whose upper bound alone does is not yet known ("too short to
// tell", with the hold that would tell). An overload above MaxGrowth is
// therefore never sustainable at any hold; a step at or below its
// capacity passes once the hold is long enough for its noise, and the
// verdict names that hold when it is not.
//
// A step held until its verdict is known is judged at several looks;
// StepFigures.Look spends the 99.5 % over them (see lookAlpha), so that
// the looks together err no more often than one look does.
type Rule struct {
	MinAchieved  float64 // fraction of the target, e.g. 0.98
	MaxErrorRate float64 // failed / attempted events (and failed / sent freshness polls), e.g. 0.001
	MaxLateShare float64 // late batches / batches in the second half, e.g. 0.05
	// MaxGrowth is the growth of a backlog tolerated, in seconds of
	// latency per second: an overload share. 0.005 lets the write latency
	// and freshness lag trends rise by at most 5 ms a second, and so
	// resolves a capacity to within 0.5 %. 0 judges no trend.
	MaxGrowth float64
	SLO       *SLO // optional freshness bound
}

// DefaultRule is the rule freshbench uses unless told otherwise.
func DefaultRule() Rule {
	return Rule{MinAchieved: 0.98, MaxErrorRate: 0.001, MaxLateShare: 0.05, MaxGrowth: 0.005}
}

// SLO bounds a percentile of the freshness lag, e.g. p95<2s.
type SLO struct {
	Quantile float64
	Bound    time.Duration
	Text     string
}

// ParseSLO reads "p95<2s" or "p99.9<500ms".
func ParseSLO(s string) (*SLO, error) {
	bad := fmt.Errorf("SLO %q: want pNN<duration, e.g. p95<2s", s)
	p, d, ok := strings.Cut(strings.TrimSpace(s), "<")
	if !ok || !strings.HasPrefix(p, "p") {
		return nil, bad
	}
	var q float64
	if _, err := fmt.Sscanf(p[1:], "%g", &q); err != nil || q <= 0 || q >= 100 {
		return nil, bad
	}
	bound, err := time.ParseDuration(d)
	if err != nil || bound <= 0 {
		return nil, bad
	}
	return &SLO{Quantile: q / 100, Bound: bound, Text: s}, nil
}

// StepFigures is what a verdict is judged from.
type StepFigures struct {
	TargetPerSec   float64
	AchievedPerSec float64
	Attempted      int64 // events acknowledged + failed
	Failed         int64
	Series         []Point // the step's measured part, in order
	// FreshnessLag holds one value per freshness poll of the measured
	// part; a poll that failed is among them as a lower bound.
	FreshnessLag *Histogram
	// DueEvents is what the schedule made due over Series, sent or not,
	// when the step is still running: a driver behind its schedule has
	// not yet handed out the units due since, and Series holds no target
	// for them. 0 when Series holds them all (a finished step counts the
	// units never sent). The achieved share is then of DueEvents, once
	// they exceed Series' target by more than InflightEvents.
	DueEvents int64
	// InflightEvents is the most events the in-flight bound holds (most
	// in-flight writes × batch size); 0 when unknown.
	InflightEvents int64
	// FreshnessFailed counts the freshness polls of the measured part
	// that failed or timed out: their lag is known only to be at least
	// what FreshnessLag holds for them.
	FreshnessFailed int64
	// Completeness after the drain: whether every generator was audited,
	// and how many acknowledged events were missing (lost writes).
	Audited bool
	Missing int64
	// LostUpdates, with an update stream, are the updated events that
	// show an older revision than the one acknowledged last.
	LostUpdates int64
	// MaxInflight is the most writes the in-flight bound holds; 0 when
	// unknown. With the series' service times it tells a driver that
	// fell behind from a target that did (see Rule.driverBehind).
	MaxInflight int64
	// Driver is what is known of the driver's own load.
	Driver DriverFigures
	// Look, for a step judged sequentially (while it holds, until its
	// verdict is known), is the number of this look, from 1; its bounds
	// spend the share of the error lookAlpha gives it. 0 is a step judged
	// once, at its end.
	Look int
	// AuditPending says the completeness audit is still to come (a look
	// while the step holds): lost writes are then neither evidence nor
	// an open question yet, and the caller audits before it decides.
	AuditPending bool
	// ReadEndpoints are the figures of the endpoints read apart from the
	// write target (replicas, standbys): each is held to the rules on
	// lost writes, failed freshness polls, the SLO and the freshness
	// lag's trend, as the target is.
	ReadEndpoints []EndpointFigures
}

// DriverFigures are the driver's own load over a step.
type DriverFigures struct {
	// CPUShare is the CPU the driver used as a share of the cores it may
	// use (1: all of them busy all the time); 0 when unknown.
	CPUShare float64
	// WaitCores is the time the driver's threads were ready to run but
	// waited for a CPU, per second, in cores (1: one thread waiting all
	// the time); 0 when unknown. Several threads wait at once, so it is
	// not a share of Cores and may exceed it (a driver held to 0.1 core
	// by a quota waited 2.2). It is told, not judged: a driver that needs
	// little CPU still waits at each wake-up on a busy machine (measured:
	// 2.5 % of a core used, 81 % of one waited, beside six CPU hogs on
	// two cores), so the wait alone does not say it was short of CPU.
	WaitCores float64
	// Cores is how many it may use: GOMAXPROCS, or its cgroup's CPU
	// quota when that is less (Quota), which may be a fraction of one.
	Cores float64
	Quota bool
	// CeilingPerSec is the driver's calibrated ceiling at the step's
	// batch size (events/s); 0 when unknown.
	CeilingPerSec float64
}

// driverBusy is the share of its cores at which the driver is taken to
// be at its limit: the scheduler's and the runtime's own work leave it
// little more.
const driverBusy = 0.9

// EndpointFigures are what a verdict judges of one read endpoint: its
// completeness audit and its freshness polls (see StepFigures).
type EndpointFigures struct {
	Name            string
	FreshnessLag    *Histogram
	FreshnessFailed int64
	Audited         bool
	Missing         int64
	LostUpdates     int64
	// Series is the endpoint's own measured part, in order: its freshness
	// lag's trend is judged as the target's.
	Series []Point
}

// EndpointTrend is the freshness lag's trend on one read endpoint, in
// ms per second, with the upper bound of its 99.5 % confidence interval
// and the refresh period read from its sawtooth (0 when none).
type EndpointTrend struct {
	Name              string  `json:"name"`
	LagSlopeMs        float64 `json:"freshness_lag_trend_ms_per_s"`
	LagUpperMs        float64 `json:"freshness_lag_trend_upper_ms_per_s"`
	VisibilityPeriodS float64 `json:"visibility_period_s,omitempty"`
}

// Verdict says whether a step was sustainable and why. It is one of
// three: sustainable (every rule passed), not sustainable (Reasons holds
// evidence of a backlog: a trend whose lower bound is above the
// tolerance, lost writes, failed polls, a shortfall, late batches) or
// not yet known (Undecided: no evidence of a backlog, but Open holds what
// the step could not rule out yet, such as a trend whose upper bound is
// above the tolerance on too few refreshes). Not yet known is never
// counted as either of the others.
type Verdict struct {
	Sustainable bool     `json:"sustainable"`
	Undecided   bool     `json:"undecided,omitempty"`
	Reasons     []string `json:"reasons,omitempty"` // every rule that failed: evidence of a backlog
	Open        []string `json:"open,omitempty"`    // what the step could not rule out yet
	// Looks is the number of times the step was judged before this
	// verdict (sequential holds); the bounds are widened for it (see
	// Rule.Judge). 0 or 1: judged once, at the end.
	Looks int `json:"looks,omitempty"`
	// DecidedAtS is how long the step had held (its measured part, s)
	// when its verdict was given.
	DecidedAtS float64 `json:"decided_at_s,omitempty"`
	// The trends in ms per second (an overload of share e shows as
	// 1000·e), each with the upper bound of its 99.5 % confidence
	// interval; the freshness lag's is that of its floors when it is a
	// refresh sawtooth.
	LagSlopeMs   float64 `json:"freshness_lag_trend_ms_per_s"`
	LagUpperMs   float64 `json:"freshness_lag_trend_upper_ms_per_s"`
	WriteSlopeMs float64 `json:"write_latency_trend_ms_per_s"`
	WriteUpperMs float64 `json:"write_latency_trend_upper_ms_per_s"`
	// VisibilityPeriodS is the refresh period read from the lag's
	// sawtooth, 0 when the lag showed none.
	VisibilityPeriodS float64 `json:"visibility_period_s,omitempty"`
	// NeedHoldS, when set, is the hold that would be long enough to judge
	// the trends: the step was too short for its noise or its visibility
	// period.
	NeedHoldS       float64 `json:"hold_needed_s,omitempty"`
	LateShare       float64 `json:"late_share_second_half"`
	ErrorRate       float64 `json:"error_rate"`
	Achieved        float64 `json:"achieved_share"`
	Missing         int64   `json:"missing"`                          // acknowledged events not visible after the drain
	FreshnessFailed int64   `json:"freshness_polls_failed,omitempty"` // counted as over any SLO bound
	// DriverLimited says the driver fell behind, not the target: the
	// step says nothing of the target (it is not yet known), and a
	// search stops there, naming the driver as its limit.
	DriverLimited bool `json:"driver_limited,omitempty"`
	// ReadEndpointTrends holds each read endpoint's freshness lag trend.
	ReadEndpointTrends []EndpointTrend `json:"read_endpoint_trends,omitempty"`
}

// The three decisions a verdict can be.
const (
	DecisionSustainable    = "sustainable"
	DecisionNotSustainable = "not sustainable"
	DecisionNotYetKnown    = "not yet known"
)

// Decision is the verdict in words: DecisionSustainable,
// DecisionNotSustainable or DecisionNotYetKnown.
func (v Verdict) Decision() string {
	switch {
	case v.Sustainable:
		return DecisionSustainable
	case v.Undecided:
		return DecisionNotYetKnown
	}
	return DecisionNotSustainable
}

// Reason is why, in one line: the evidence of a backlog of a step not
// sustainable, what a step not yet known could not rule out.
func (v Verdict) Reason() string {
	switch {
	case v.Sustainable:
		return "sustainable"
	case v.Undecided:
		return strings.Join(v.Open, "; ")
	}
	return strings.Join(v.Reasons, "; ")
}

// String is the decision with its reason.
func (v Verdict) String() string {
	if v.Sustainable {
		return DecisionSustainable
	}
	return v.Decision() + ": " + v.Reason()
}

// judging collects a verdict's evidence of a backlog (fail) and what it
// could not rule out yet (open).
type judging struct {
	fail, open func(format string, args ...any)
}

// prefixed says each reason of j with prefix first.
func (j judging) prefixed(prefix string) judging {
	return judging{
		fail: func(format string, args ...any) { j.fail(prefix+format, args...) },
		open: func(format string, args ...any) { j.open(prefix+format, args...) },
	}
}

// Judge applies the rule to one step. A step with any evidence of a
// backlog is not sustainable; one without, but with something it could
// not rule out (a trend bounded too loosely, too few refreshes, an audit
// that did not run), is not yet known; the rest are sustainable.
func (r Rule) Judge(f StepFigures) Verdict {
	v := Verdict{Missing: f.Missing, FreshnessFailed: f.FreshnessFailed, Looks: f.Look}
	jg := judging{
		fail: func(format string, args ...any) { v.Reasons = append(v.Reasons, fmt.Sprintf(format, args...)) },
		open: func(format string, args ...any) { v.Open = append(v.Open, fmt.Sprintf(format, args...)) },
	}
	r.judge(f, &v, jg)
	switch {
	case len(v.Reasons) > 0:
		v.Open = nil // decided: what else is open does not matter
	case len(v.Open) > 0:
		v.Undecided = true
	default:
		v.Sustainable = true
	}
	return v
}

func (r Rule) judge(f StepFigures, v *Verdict, jg judging) {
	fail := jg.fail
	if f.TargetPerSec > 0 {
		v.Achieved = f.AchievedPerSec / f.TargetPerSec
	}
	shortfall, unsent := f.dueShortfall(v)
	behind := f.InflightEvents > 0 && shortfall > f.InflightEvents
	if f.Attempted > 0 {
		v.ErrorRate = float64(f.Failed) / float64(f.Attempted)
	}
	if v.ErrorRate > r.MaxErrorRate {
		fail("error rate %.2f%% (> %.2f%%)", 100*v.ErrorRate, 100*r.MaxErrorRate)
	}
	own := EndpointFigures{FreshnessLag: f.FreshnessLag, FreshnessFailed: f.FreshnessFailed, Audited: f.Audited, Missing: f.Missing, LostUpdates: f.LostUpdates}
	r.judgeEndpoint(own, f.Series, f.AuditPending, jg)
	for _, e := range f.ReadEndpoints {
		r.judgeEndpoint(e, nil, f.AuditPending, jg.prefixed("on read endpoint "+e.Name+": "))
	}
	half := f.Series[len(f.Series)/2:]
	v.LateShare = lateShare(half)
	late := v.LateShare > r.MaxLateShare
	if short := v.Achieved < r.MinAchieved || behind; short || late {
		if why := r.driverBehind(f, short); why != "" && !short && f.Driver.CPUShare < driverBusy {
			// The rate was kept, the slots were free and the driver had
			// CPU to spare: it sent some batches late because its timers
			// fired late (a busy machine), which is neither evidence of a
			// backlog nor a limit of the driver's. The rest judges the step.
			late = false
		} else if why != "" {
			// The writes, the lag and their trends all count from the
			// intended time: behind a driver that fell behind, they say
			// nothing of the target. Errors and lost writes still do, and
			// when they failed the step it is the target's, not the
			// driver's limit.
			if len(v.Reasons) > 0 {
				return
			}
			v.DriverLimited = true
			jg.open("the driver fell behind: achieved %.1f%% of the target rate, %s%s, while %s", 100*v.Achieved, lateText(half), unsent, why)
			return
		}
	}
	if v.Achieved < r.MinAchieved {
		fail("achieved %.1f%% of the target rate (< %.0f%%)", 100*v.Achieved, 100*r.MinAchieved)
	}
	if behind {
		fail("%d events fewer acknowledged than scheduled over the measured part, more than the %d the in-flight bound holds: the writes fell behind", shortfall, f.InflightEvents)
	}
	if late {
		fail("%.0f%% of batches late in the second half (> %.0f%%): the in-flight bound is saturated", 100*v.LateShare, 100*r.MaxLateShare)
	}
	sampled := 0
	for _, p := range half {
		if p.FreshnessN > 0 {
			sampled++
		}
	}
	// Without lag samples a backlog cannot be ruled out.
	if len(half) >= 3 && sampled < 3 {
		jg.open("freshness lag sampled in only %d of the second half's %d intervals (failing queries or a poll interval longer than the step?): a backlog cannot be ruled out", sampled, len(half))
	}
	if r.MaxGrowth > 0 {
		r.judgeTrends(f, v, jg)
	}
}

// dueShortfall is how many events the schedule made due over the
// measured part that were not acknowledged, and the clause naming the
// units due but not yet sent ("" when they do not count), setting v's
// achieved share when they do.
//
// Every scheduled event is acknowledged or still in flight at the
// part's end, and no more can be in flight than the bound holds: a
// larger shortfall means writes fell behind the schedule, whatever
// share of the target it is. A driver behind its schedule has not yet
// recorded the units due since it fell behind: beyond the tolerance a
// shortfall gets (what the in-flight bound holds; a batch or two behind
// is a busy machine's late timers), they count as due.
func (f StepFigures) dueShortfall(v *Verdict) (shortfall int64, unsent string) {
	var target, acked int64
	for _, p := range f.Series {
		target += p.TargetEvents
		acked += p.AckedEvents
	}
	if f.DueEvents-target > f.InflightEvents {
		unsent = fmt.Sprintf(", %d events due not yet sent", f.DueEvents-target)
		target = f.DueEvents
		v.Achieved = float64(acked) / float64(target)
	}
	return target - acked, unsent
}

// driverBehind says why a shortfall (short) or late batches are the
// driver's, or "": the driver's CPU was at its share of the machine, or
// the target answered promptly: the in-flight slots were free in at
// least nine intervals in ten of the second half and, for a shortfall,
// the service times (sent to acknowledged) show no growth (their trend's
// lower bound is within the tolerance). A target that falls behind fills
// the slots or slows its answers; a batch is late only when it waited
// for a slot or when the driver sent it late, so lateness with the slots
// free is the driver's alone.
func (r Rule) driverBehind(f StepFigures, short bool) string {
	d := f.Driver
	cpu := ""
	if d.CPUShare > 0 {
		cpu = fmt.Sprintf("the driver used %.0f%% of its %s core(s)", 100*d.CPUShare, strconv.FormatFloat(d.Cores, 'g', 3, 64))
		if d.Quota {
			cpu += " (its cgroup's CPU quota)"
		}
		if d.CeilingPerSec > 0 {
			cpu += fmt.Sprintf(" (its calibrated ceiling at this batch size: %.0f events/s)", d.CeilingPerSec)
		}
		// A wait that rounds to 0 % is not worth a word.
		if d.WaitCores >= 0.005 {
			cpu += fmt.Sprintf("; its threads waited for a CPU as long as %.0f%% of one core's time", 100*d.WaitCores)
		}
	}
	if d.CPUShare >= driverBusy {
		return cpu
	}
	half := f.Series[len(f.Series)/2:]
	if f.MaxInflight <= 0 || len(half) < 3 {
		return ""
	}
	full := 0
	var t, y []float64
	for _, p := range half {
		if p.Inflight >= f.MaxInflight {
			full++
		}
	}
	for _, p := range f.Series {
		if p.ServiceMeanMs > 0 {
			t = append(t, p.StartS+p.WidthS/2)
			y = append(y, p.ServiceMeanMs)
		}
	}
	if 10*full > len(half) {
		return ""
	}
	if !short {
		why := "the in-flight slots were free"
		if cpu != "" {
			why += "; " + cpu
		}
		return why
	}
	if len(t) < 3 {
		return ""
	}
	tol := 1000 * r.MaxGrowth
	if tol <= 0 {
		tol = 5 // no trend rule: still, a service time that grows is the target's
	}
	s := fitTrend(t, y, 0, true, confidenceAlpha)
	if s.lower > tol {
		return ""
	}
	why := fmt.Sprintf("the target answered promptly (in-flight slots free, service time %s ms/s, flat)", strconv.FormatFloat(s.slope, 'f', 2, 64))
	if cpu != "" {
		why += "; " + cpu
	}
	return why
}

// judgeEndpoint applies the rules on lost writes, failed freshness polls
// and the SLO to one endpoint's figures; series, when the endpoint's
// lag histogram is missing, counts its polls. auditPending leaves the
// audit out: it is still to come.
func (r Rule) judgeEndpoint(e EndpointFigures, series []Point, auditPending bool, jg judging) {
	failf := jg.fail
	switch {
	case auditPending:
	case !e.Audited:
		jg.open("completeness not audited after the drain: lost writes cannot be ruled out")
	case e.Missing > 0:
		failf("%d acknowledged events missing after the drain: lost writes", e.Missing)
	case e.LostUpdates > 0:
		failf("%d updated events show an older revision than the one acknowledged last: lost updates", e.LostUpdates)
	}
	var polls int64
	if e.FreshnessLag != nil {
		polls = e.FreshnessLag.Count()
	} else {
		for _, p := range series {
			polls += p.FreshnessN
		}
	}
	if polls > 0 && float64(e.FreshnessFailed) > r.MaxErrorRate*float64(polls) {
		failf("%d of %d freshness polls failed (> %.2f%%): while they failed, the lag is known only as a lower bound", e.FreshnessFailed, polls, 100*r.MaxErrorRate)
	}
	if r.SLO != nil && e.FreshnessLag != nil && e.FreshnessLag.Count() > 0 {
		r.judgeSLO(e.FreshnessLag, e.FreshnessFailed, failf)
	}
}

// judgeSLO holds the freshness lag to the SLO. A failed poll's value is
// only a lower bound; it counts as over the bound, so that a step cannot
// meet the SLO on the polls that succeeded alone. Of the n values, the
// quantile q is under the bound when ⌈q·n⌉ of them are, and the failed
// ones may be among those: the value of rank ⌈q·n⌉ + failed must be
// under the bound.
func (r Rule) judgeSLO(lag *Histogram, failed int64, fail func(string, ...any)) {
	n := lag.Count()
	rank := int64(math.Ceil(r.SLO.Quantile*float64(n))) + failed
	if rank > n {
		fail("freshness lag p%g not measured: %d of %d polls failed, counted as over the SLO %s", 100*r.SLO.Quantile, failed, n, r.SLO.Text)
		return
	}
	got := lag.Quantile(float64(rank) / float64(n))
	if got > r.SLO.Bound {
		counted := ""
		if failed > 0 {
			counted = fmt.Sprintf(" (%d failed polls counted as over it)", failed)
		}
		fail("freshness lag p%g %s exceeds the SLO %s%s", 100*r.SLO.Quantile, got.Round(time.Millisecond), r.SLO.Text, counted)
	}
}

// judgeTrends applies the trend rule (see Rule) to the write latency and
// the freshness lag over the whole measured part, and to the freshness
// lag of every read endpoint over its own series: a replica or standby
// that falls further behind is a backlog too, however well the target
// keeps up.
func (r Rule) judgeTrends(f StepFigures, v *Verdict, jg judging) {
	alpha := lookAlpha(f.Look)
	j := newTrendJudge(r, f.Series, v, jg, alpha)
	if j == nil {
		return
	}
	var wt, wy []float64
	for _, p := range f.Series {
		y := p.WriteMeanMs
		if y == 0 {
			y = p.WriteP99Ms // a results file from before the mean was kept
		}
		if p.AckedEvents+p.FailedEvents > 0 {
			wt = append(wt, p.StartS+p.WidthS/2)
			wy = append(wy, y)
		}
	}
	v.WriteSlopeMs, v.WriteUpperMs = j.judge("write latency", fitTrend(wt, wy, 0, true, alpha), j.shortHold)
	v.LagSlopeMs, v.LagUpperMs, v.VisibilityPeriodS = j.lag(f.Series)
	for _, e := range f.ReadEndpoints {
		ej := newTrendJudge(r, e.Series, v, jg.prefixed("on read endpoint "+e.Name+": "), alpha)
		if ej == nil {
			continue
		}
		t := EndpointTrend{Name: e.Name}
		t.LagSlopeMs, t.LagUpperMs, t.VisibilityPeriodS = ej.lag(e.Series)
		v.ReadEndpointTrends = append(v.ReadEndpointTrends, t)
	}
}

// trendJudge fits the trends of one series against the rule's tolerance
// and names the hold a step too short to tell would need.
type trendJudge struct {
	tol, width, holdS float64 // ms per s; the series' interval and span in s
	alpha             float64 // the one-sided error of the bounds at this look
	v                 *Verdict
	judging
}

// newTrendJudge returns nil for an empty series.
func newTrendJudge(r Rule, pts []Point, v *Verdict, jg judging, alpha float64) *trendJudge {
	if len(pts) == 0 {
		return nil
	}
	last := pts[len(pts)-1]
	return &trendJudge{
		tol: 1000 * r.MaxGrowth, width: pts[0].WidthS, holdS: last.StartS + last.WidthS - pts[0].StartS,
		alpha: alpha, v: v, judging: jg,
	}
}

func (j *trendJudge) need(hold float64) {
	hold = 10 * math.Ceil(hold/10)
	j.v.NeedHoldS = max(j.v.NeedHoldS, hold)
}

// shortHold is the hold at which the fit's bound would be tight enough: a
// flat trend passes reliably once q·se is within the margin left under
// the tolerance (at most half of it). Under independent noise the error
// shrinks as hold^−1.5; noise that wanders slowly (a queue near
// saturation, a sawtooth beating against the one-second intervals)
// shrinks more slowly than a short step can tell, so the hold is scaled
// as if the error shrank only as hold^−1, and by a quarter more, since
// the noise seen in a short step is itself only an estimate.
func (j *trendJudge) shortHold(f fit) float64 {
	margin := min(j.tol-max(f.slope, 0), j.tol/2)
	if margin <= 0 || f.se <= 0 || math.IsInf(f.se, 1) {
		return 2 * j.holdS
	}
	return j.holdS * 1.25 * math.Max(1, f.q*f.se/margin)
}

func (j *trendJudge) judge(what string, f fit, needHold func(fit) float64) (slope, upper float64) {
	tol := j.tol
	switch {
	case math.IsInf(f.upper, 1) || math.IsNaN(f.upper):
		j.need(max(20, needHold(f)))
		j.open("%s sampled in only %d intervals: too short to judge a trend; a hold of at least %s is needed", what, f.n, secs(j.v.NeedHoldS))
		return f.slope, 0
	case f.lower > tol:
		j.fail("%s grows %.1f ms/s (at least %.1f ms/s at %s confidence; %.1f ms/s tolerated): a backlog builds", what, f.slope, f.lower, confidence(j.alpha), tol)
	case f.upper > tol:
		j.need(needHold(f))
		j.open("%s trend %.1f ms/s could be as high as %.1f ms/s (%.1f ms/s tolerated): the step is too short to tell at this noise; a hold of at least %s is needed", what, f.slope, f.upper, tol, secs(j.v.NeedHoldS))
	}
	return f.slope, f.upper
}

// lag judges the freshness lag's trend over pts: through the floors of
// its sawtooth when it is one (a refresh period), else through the lag
// itself. It returns the trend, the upper bound of its confidence
// interval and the sawtooth's period (0 when none).
func (j *trendJudge) lag(pts []Point) (slope, upper, periodS float64) {
	tol, width, holdS, alpha := j.tol, j.width, j.holdS, j.alpha
	ls := lagSeriesOf(pts)
	lt, hi := ls.t, ls.hi
	if len(lt) < 3 {
		return 0, 0, 0 // the sampling rule above has failed the step already, or it is too short to judge
	}
	saw := findSawtooth(lt, hi, ls.lo, width)
	if !saw.ramps {
		slope, upper = j.judge("freshness lag", fitTrend(lt, hi, 0, true, alpha), j.shortHold)
		return slope, upper, 0
	}
	floorSigma, spread := ls.floorSpread(saw, width)
	periodS = saw.periodS
	periods := func(periodS float64) float64 {
		hold := float64(periodsNeeded(spread, periodS, tol, alpha)+1) * periodS
		if periodS < 4*width {
			// With fewer than four intervals a period, whether a longer
			// step resolves the sawtooth depends on its phase: the hold
			// named must also serve a plain fit through the lag.
			hold = max(hold, j.shortHold(fitTrend(lt, hi, 0, true, alpha)))
		}
		return hold
	}
	switch k := len(saw.drops); k {
	case 0:
		f := fitTrend(lt, hi, 0, true, alpha)
		if f.upper < 1000 {
			// Ageing is a second per second. A lag that rises surely
			// slower, without a drop, is events becoming visible ever
			// later: a backlog (a sink that carries part of the rate),
			// judged as one.
			slope, upper = j.judge("freshness lag", f, j.shortHold)
			return slope, upper, 0
		}
		// Ageing through the whole step: nothing became visible, or the
		// period is longer than the step.
		slope = f.slope
		j.need(periods(holdS + width))
		j.open("freshness lag grows %.0f ms/s through the whole step: nothing became visible, or the visibility period is longer than the step (then a hold of at least %s is needed to judge it over whole periods)", f.slope, secs(j.v.NeedHoldS))
	case 1, 2:
		// Fewer than three floors say nothing of their own spread.
		j.need(periods(max(saw.periodS, width)))
		j.open("freshness lag is a refresh sawtooth with a period of about %s, and the step holds only %d refreshes: a hold of at least %s is needed to judge its trend over whole periods", secs(saw.periodS), k, secs(j.v.NeedHoldS))
	default:
		slope, upper = j.judge("freshness lag (its floor after each refresh)", fitTrend(saw.floorT, saw.floorMs, floorSigma, false, alpha), func(f fit) float64 {
			// Not shortHold: its bound keeps the quantile of the few
			// floors seen (63.7 for three), where more floors bring it
			// down to about 3; periodsNeeded counts that in.
			spread = max(spread, f.sigma)
			return periods(saw.periodS)
		})
	}
	return slope, upper, periodS
}

// lagSeries is the freshness lag of a step's intervals that had polls:
// each interval's start, its largest lag (hi) and its smallest (lo, the
// largest where the smallest is not known), and its polls per second.
type lagSeries struct {
	t, hi, lo, samples []float64
	haveMin            bool // the smallest lag of each interval is known
}

func lagSeriesOf(pts []Point) lagSeries {
	var ls lagSeries
	for _, p := range pts {
		if p.FreshnessN == 0 {
			continue
		}
		ls.t = append(ls.t, p.StartS)
		ls.hi = append(ls.hi, p.FreshnessLagMs)
		low := p.FreshnessLagMinMs
		if low > 0 {
			ls.haveMin = true
		} else {
			low = p.FreshnessLagMs
		}
		ls.lo = append(ls.lo, low)
		ls.samples = append(ls.samples, float64(p.FreshnessN)/p.WidthS)
	}
	return ls
}

// floorSpread returns how precisely one floor of the sawtooth saw is read
// (floorSigma) and how much the floors spread (spread, at least that), in
// ms, for intervals of width seconds.
func (ls lagSeries) floorSpread(saw sawtooth, width float64) (floorSigma, spread float64) {
	// A floor is read at the first poll after its refresh, up to a poll
	// gap later, and polls are spread from 0.5 to 1.5 poll intervals:
	// half the mean gap is the spread of a uniform delay up to 1.7 gaps.
	// Without the smallest lag of each interval, a floor is known only to
	// within an interval.
	floorSigma = 1000 * width / math.Sqrt(12)
	if ls.haveMin {
		floorSigma = 1000 / median(ls.samples) / 2
	}
	// The floors themselves may spread much more than the poll resolution
	// (a refresh that takes longer some times than others: a second and
	// more on Elasticsearch with a 30 s interval). Successive floors
	// differ by √2 times their spread: the median of those differences
	// × 1.048 estimates it, and overstates it when the floors trend,
	// which only lengthens the hold named.
	spread = floorSigma
	if k := len(saw.floorMs); k >= 2 {
		d := make([]float64, k-1)
		for i := 1; i < k; i++ {
			d[i-1] = math.Abs(saw.floorMs[i] - saw.floorMs[i-1])
		}
		spread = max(spread, 1.048*median(d))
	}
	return floorSigma, spread
}

// confidence is the level of a one-sided bound of error alpha, e.g.
// "99.5%".
func confidence(alpha float64) string {
	return fmt.Sprintf("%.4g%%", 100*(1-alpha))
}

// secs renders seconds as a duration, to the second.
func secs(s float64) string { return (time.Duration(math.Round(s)) * time.Second).String() }

// lateText tells the late share of the second half's points, or that
// no batch was sent in them: a share of nothing is not 0 %.
func lateText(half []Point) string {
	if late, batches := lateCounts(half); batches > 0 {
		return fmt.Sprintf("%.0f%% of batches late in the second half", 100*float64(late)/float64(batches))
	}
	return "no batch sent in the second half"
}

// lateShare is late batches over all batches of the points, 0 when none
// was sent.
func lateShare(pts []Point) float64 {
	if late, batches := lateCounts(pts); batches > 0 {
		return float64(late) / float64(batches)
	}
	return 0
}

// lateCounts adds up the points' late batches and all their batches.
func lateCounts(pts []Point) (late, batches int64) {
	for _, p := range pts {
		batches += p.Batches
		late += p.LateBatches
	}
	return late, batches
}
