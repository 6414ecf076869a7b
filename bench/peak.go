package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/ingest"
	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
)

// RateStep is how a peak search raises the rate from one step to the
// next: by a fixed amount in the start rate's unit, as the
// Rockset/Elasticsearch comparison did (10 MB/s at a time), or by a factor.
type RateStep struct {
	Add    pace.Rate // fixed increment; used when Factor is 0
	Factor float64   // multiply the rate by this (> 1) instead
}

// ParseRateStep reads an increment in events/s ("2000") or bytes/s
// ("10MB/s"), or a factor ("x1.5").
func ParseRateStep(s string) (RateStep, error) {
	t := strings.TrimSpace(s)
	if f, ok := strings.CutPrefix(strings.ToLower(t), "x"); ok {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v <= 1 {
			return RateStep{}, fmt.Errorf("step %q: a factor must be above 1, e.g. x1.5", s)
		}
		return RateStep{Factor: v}, nil
	}
	r, err := pace.ParseRate(t)
	if err != nil {
		return RateStep{}, fmt.Errorf("step %q: want an increment in events/s (2000) or bytes/s (10MB/s), or a factor (x1.5)", s)
	}
	return RateStep{Add: r}, nil
}

// Next returns the rate of the step after one at r.
func (s RateStep) Next(r pace.Rate) pace.Rate {
	if s.Factor > 0 {
		return r.Scale(s.Factor)
	}
	return pace.Rate{PerSecond: r.PerSecond + s.Add.PerSecond, Unit: r.Unit}
}

func (s RateStep) String() string {
	if s.Factor > 0 {
		return "x" + strconv.FormatFloat(s.Factor, 'f', -1, 64)
	}
	return "+" + s.Add.String()
}

// PeakConfig is a peak search: measured runs at a rising rate until one
// is not sustainable.
type PeakConfig struct {
	// Run is every step's run. Its rate is the first step's; its
	// duration is the step's warm-up plus the time the rate is held.
	Run      Config
	Increase RateStep
	MaxSteps int        // most rates tried (a confirmation does not count); 0 = no limit
	MaxRate  float64    // highest rate tried, in the start rate's unit; 0 = no limit
	Rule     stats.Rule // judges each step
	// Confirm repeats an unsustainable step once before the search
	// stops; if the repeat is sustainable the search goes on.
	Confirm bool
	// MaxHold, when longer than the hold (Run's duration less its
	// warm-up, then the least a step holds), makes every step hold until
	// its verdict is known, looking after each whole refresh period once
	// the hold has passed (see looker), up to MaxHold. 0 judges each step
	// once, after the hold.
	MaxHold time.Duration
	// Precision, when above 0, refines the peak after the first step
	// that is not sustainable: steps bisect between the highest
	// sustainable rate and the lowest one not sustainable until they are
	// within this share of the latter (0.05: 5 %). Refining steps do not
	// count against MaxSteps.
	Precision float64
	// DriverCeiling is the driver's calibrated ceiling at the run's
	// batch size (events/s), named when a step finds the driver fell
	// behind; 0 when unknown.
	DriverCeiling float64
	// OnStep, when set, sees the search so far after each step.
	OnStep func(search *results.Result)
}

// Validate names the first bad setting.
func (c PeakConfig) Validate() error {
	if err := c.Run.Validate(); err != nil {
		return err
	}
	inc := c.Increase
	switch {
	case inc.Factor == 0 && inc.Add.PerSecond <= 0:
		return invalid.New(invalid.Step, inc, "a positive increment (2000, 10MB/s) or a factor above 1 (x1.5)")
	case inc.Factor != 0 && inc.Factor <= 1:
		return invalid.New(invalid.Step, inc, "a factor above 1")
	case inc.Factor == 0 && inc.Add.Unit != c.Run.Ingest.Rate.Unit:
		return invalid.New(invalid.Step, inc.Add, fmt.Sprintf("the unit of the start rate %s: give both in events/s or both in bytes/s", c.Run.Ingest.Rate))
	case c.MaxSteps < 0:
		return invalid.New(invalid.MaxSteps, c.MaxSteps, "0 (no limit) or more")
	case c.MaxRate < 0:
		return invalid.New(invalid.MaxRate, c.MaxRate, "0 (no limit) or more")
	case c.MaxSteps == 0 && c.MaxRate == 0:
		return invalid.New(invalid.MaxSteps, c.MaxSteps, "a limit: a peak search needs a maximum number of steps or a maximum rate")
	case c.MaxRate > 0 && c.MaxRate < c.Run.Ingest.Rate.PerSecond:
		return invalid.New(invalid.MaxRate, pace.Rate{PerSecond: c.MaxRate, Unit: c.Run.Ingest.Rate.Unit}, fmt.Sprintf("at least the start rate %s", c.Run.Ingest.Rate))
	case c.MaxHold < 0 || c.MaxHold > 0 && c.MaxHold < c.hold():
		return invalid.New(invalid.MaxHold, c.MaxHold, fmt.Sprintf("0 (judge each step once) or at least the hold %s", c.hold()))
	case c.Precision < 0 || c.Precision >= 1:
		return invalid.New(invalid.Precision, c.Precision, "a share from 0 (no refinement) to below 1, e.g. 0.05")
	}
	return nil
}

// hold is the least a step holds its rate after its warm-up.
func (c PeakConfig) hold() time.Duration { return c.Run.Ingest.Duration - c.Run.Ingest.Warmup }

// sequential says whether steps hold until their verdict is known.
func (c PeakConfig) sequential() bool { return c.MaxHold > c.hold() }

// SearchPeak finds the peak throughput of tgt, which must be set up
// already: it runs Run at the start rate, judges the step with the rule
// (held until decided with a MaxHold), raises the rate and repeats until
// a step is not sustainable (or a limit is reached), then with a
// Precision bisects between the highest sustainable rate and the lowest
// not. A step not yet known counts as neither: the search goes on above
// it (a refinement stops there). A step whose driver fell behind stops
// the search: the driver is then the limit. Every step is a full
// measured run, kept in the result's Steps with its verdict; the peak is
// the interval between the highest sustainable and the lowest not
// sustainable step. Like Run, it returns what was measured also when ctx
// is cancelled; the step under way then has no verdict.
func SearchPeak(ctx context.Context, tgt target.Target, cfg PeakConfig) (*results.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	began := time.Now()
	res := &results.Result{
		SchemaVersion: results.SchemaVersion, Kind: results.KindPeak, Command: "peak", StartedAt: began.UTC(),
		Config: recordConfig(cfg.Run),
	}
	search := recordSearch(cfg)
	s := &searchState{cfg: cfg, rate: cfg.Run.Ingest.Rate}
	for {
		if ctx.Err() != nil {
			res.EndedEarly, res.EndReason = true, ErrInterrupted.Error()
			res.Peak = peakOf(search, res.Steps, fmt.Sprintf("%s before step %d (%s)", ErrInterrupted, len(res.Steps)+1, s.rate), began)
			break
		}
		if stop := s.limit(); stop != "" {
			res.Peak = peakOf(search, res.Steps, stop, began)
			break
		}
		n := len(res.Steps)
		step, err := runStep(ctx, tgt, cfg, s.rate, n)
		if err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", n+1, s.rate, err)
		}
		res.Steps = append(res.Steps, step)
		res.Generators = append(res.Generators, step.Generators...)
		res.EndedAt = step.EndedAt
		var stop string
		if step.Verdict == nil {
			res.EndedEarly, res.EndReason = true, step.EndReason
			stop = fmt.Sprintf("%s during step %d (%s)", step.EndReason, n+1, s.rate)
		} else {
			stop = s.after(*step.Verdict, n)
		}
		res.Peak = peakOf(search, res.Steps, stop, began)
		if cfg.OnStep != nil {
			cfg.OnStep(res)
		}
		if stop != "" {
			break
		}
	}
	res.EndedAt = time.Now().UTC()
	return res, nil
}

// searchState is where a peak search stands between its steps: the rate
// of the next step, how many rates of the coarse grid it has tried, and
// what is known of the peak.
type searchState struct {
	cfg        PeakConfig
	rate       pace.Rate
	level      int
	confirming bool // the next step runs the same rate once more
	// lo is the highest sustainable rate, hi the lowest not sustainable
	// (0: none yet); once hi is known, the search bisects between them.
	lo, hi float64
}

func (s *searchState) refining() bool { return s.hi > 0 }

// limit says why the search stops before a new rate of the coarse grid
// ("" to go on), and counts the rate when it goes on.
func (s *searchState) limit() string {
	if s.confirming || s.refining() {
		return ""
	}
	if s.cfg.MaxSteps > 0 && s.level >= s.cfg.MaxSteps {
		return fmt.Sprintf("reached the limit of %d steps", s.cfg.MaxSteps)
	}
	if s.cfg.MaxRate > 0 && s.rate.PerSecond > s.cfg.MaxRate*(1+1e-9) {
		limit := pace.Rate{PerSecond: s.cfg.MaxRate, Unit: s.rate.Unit}
		return fmt.Sprintf("the next step (%s) would exceed the rate limit %s", s.rate, limit)
	}
	s.level++
	return ""
}

// after moves the search on from step n's verdict v: to the next rate, the
// same rate once more, or the middle of [lo, hi]; it returns why the
// search stops, "" to go on.
func (s *searchState) after(v stats.Verdict, n int) string {
	refining := s.refining()
	var stop string
	switch {
	case v.DriverLimited:
		stop = fmt.Sprintf("the driver is the limit, not the target: at step %d (%s), %s", n+1, s.rate, v.Reason())
	case v.Undecided && refining:
		stop = fmt.Sprintf("the refinement stopped: step %d (%s) is not yet known: %s", n+1, s.rate, v.Reason())
	case v.Undecided:
		// Counted as neither: the steps above will tell.
		s.rate, s.confirming = s.cfg.Increase.Next(s.rate), false
	case v.Sustainable:
		s.lo, s.confirming = s.rate.PerSecond, false
		s.rate = s.cfg.Increase.Next(s.rate)
	case s.cfg.Confirm && !s.confirming && !refining:
		s.confirming = true
	case s.confirming:
		stop = fmt.Sprintf("step %d (%s) was not sustainable, confirmed by step %d: %s", n, s.rate, n+1, v.Reason())
		s.hi, s.confirming = s.rate.PerSecond, false
	default:
		stop = fmt.Sprintf("step %d (%s) was not sustainable: %s", n+1, s.rate, v.Reason())
		s.hi = s.rate.PerSecond
	}
	if s.hi == 0 || s.confirming || v.Undecided {
		return stop
	}
	// Bisect until the interval [lo, hi] is within the precision.
	if s.cfg.Precision > 0 && s.lo > 0 && s.hi-s.lo > s.cfg.Precision*s.hi*(1+1e-9) {
		s.rate = pace.Rate{PerSecond: (s.lo + s.hi) / 2, Unit: s.rate.Unit}
		return ""
	}
	if refining {
		stop = fmt.Sprintf("refined to within %s: sustainable at %s, not at %s", percent(s.cfg.Precision),
			pace.Rate{PerSecond: s.lo, Unit: s.rate.Unit}, pace.Rate{PerSecond: s.hi, Unit: s.rate.Unit})
	}
	return stop
}

func percent(share float64) string { return strconv.FormatFloat(100*share, 'g', 3, 64) + " %" }

// runStep runs and judges the n-th step (from 0) of a search at rate: held
// for the hold and judged once, or, with a maximum hold, held until its
// verdict is known (see looker). Its verdict is nil when it ended early.
func runStep(ctx context.Context, tgt target.Target, cfg PeakConfig, rate pace.Rate, n int) (*results.Result, error) {
	run := stepConfig(cfg.Run, rate, n, fmt.Sprintf("step%d", n+1))
	var lk *looker
	if cfg.sequential() {
		run.Ingest.Duration = run.Ingest.Warmup + cfg.MaxHold
		lk = &looker{rule: cfg.Rule, run: run, hold: cfg.hold().Seconds(), ceiling: cfg.DriverCeiling}
		run.Until = lk.until
	}
	step, err := Run(ctx, tgt, run)
	if err != nil {
		return nil, err
	}
	step.Kind, step.Command = results.KindStep, "peak step"
	if step.EndedEarly {
		return step, nil
	}
	var v stats.Verdict
	switch {
	case lk != nil && lk.decided != nil:
		v = lk.decided.final(step, cfg.Rule)
	case lk != nil:
		// Held to the maximum: judged at one look more, over the whole step.
		v = judge(step, run, cfg.Rule, lk.looks+1, cfg.DriverCeiling)
		v.DecidedAtS = step.Summary.MeasuredS
	default:
		v = judge(step, run, cfg.Rule, 0, cfg.DriverCeiling)
		v.DecidedAtS = step.Summary.MeasuredS
	}
	step.Verdict = &v
	return step, nil
}

// looker holds a step until its verdict is known: once the step has held
// for the hold, it judges the series so far, the target's and each read
// endpoint's, after each whole refresh period (the longest sawtooth
// period of their lags, or lookEvery when there is none or it is
// shorter), and ends the schedule when the verdict is sustainable or
// not, or when the driver fell behind. The look that ends the step
// keeps what it judged: the step's final verdict is judged on it (see
// look.final). The k-th look's bounds spend the share α·6/(π²k²) of the
// rule's error (stats.StepFigures.Look): by the union bound, the chance
// that any look decides on a wrong bound stays within the error of a
// step judged once, however many looks the step takes.
type looker struct {
	rule    stats.Rule
	run     Config
	hold    float64 // s
	ceiling float64 // the driver's, events/s; 0 unknown
	looks   int
	next    float64  // measured seconds of the next look
	cpu     cpuSince // the driver's, from the first call of until
	decided *look    // the look that ended the step; nil while none has
}

// look is what a look judged, and what it decided.
type look struct {
	figures stats.StepFigures
	verdict stats.Verdict
	heldS   float64
}

// cpuSince measures this process's CPU, and the time its threads waited
// for one, from its start on.
type cpuSince struct {
	cpu, wait     time.Duration
	wall          time.Time
	cpuOK, waitOK bool
}

func (c *cpuSince) start() {
	if c.wall.IsZero() {
		c.cpu, c.cpuOK = processCPU()
		c.wait, c.waitOK = processWait()
		c.wall = time.Now()
	}
}

// since is the driver's CPU since start: the CPU used and the time
// waited for one, each also as a percentage of one core; nil when the
// CPU used is unknown (the wait is then left at 0 too).
func (c *cpuSince) since() *results.DriverCPU {
	wall := time.Since(c.wall).Seconds()
	now, ok := processCPU()
	if !ok || !c.cpuOK || wall <= 0 {
		return nil
	}
	d := &results.DriverCPU{Seconds: (now - c.cpu).Seconds(), WallS: wall}
	d.CorePercent = 100 * d.Seconds / wall
	if now, ok := processWait(); ok && c.waitOK {
		d.WaitS = (now - c.wait).Seconds()
		d.WaitPercent = 100 * d.WaitS / wall
	}
	return d
}

// driverFigures is the driver's load: its CPU as a share of the cores it
// may use and the time it waited for one in cores (cpu; nil unknown), and
// its calibrated ceiling (events/s, 0 unknown).
func driverFigures(ceiling float64, cpu *results.DriverCPU) stats.DriverFigures {
	d := stats.DriverFigures{CeilingPerSec: ceiling}
	d.Cores, d.Quota = driverCores()
	if cpu != nil {
		d.CPUShare = cpu.CorePercent / 100 / d.Cores
		d.WaitCores = cpu.WaitPercent / 100
	}
	return d
}

// lookEvery is the least time between two looks: looks at every second
// would spend the error on looks that add a second's data each.
const lookEvery = 10.0

func (l *looker) until(series []stats.Point, reads []ReadSeries) bool {
	l.cpu.start()
	pts := measuredSeries(series, l.run.Ingest)
	if len(pts) < 2 {
		return false
	}
	pts = pts[:len(pts)-1] // the last interval is still filling
	last := pts[len(pts)-1]
	end := last.StartS + last.WidthS
	held := end - l.run.Ingest.Warmup.Seconds()
	if held < max(l.hold, l.next) {
		return false
	}
	l.looks++
	f := stats.StepFigures{Series: pts, Look: l.looks, AuditPending: true, Audited: true,
		InflightEvents: int64(l.run.Ingest.MaxInflight) * int64(l.run.Ingest.BatchSize), MaxInflight: int64(l.run.Ingest.MaxInflight),
		Driver: driverFigures(l.ceiling, l.cpu.since())}
	var target, acked, failed int64
	for _, p := range pts {
		target += p.TargetEvents
		acked += p.AckedEvents
		failed += p.FailedEvents
	}
	f.DueEvents = l.due(held)
	f.TargetPerSec, f.AchievedPerSec = float64(target)/held, float64(acked)/held
	f.Attempted, f.Failed = acked+failed, failed
	for _, r := range reads {
		// Up to the target's last whole interval: the look judges one span.
		var rp []stats.Point
		for _, p := range measuredSeries(r.Series, l.run.Ingest) {
			if p.StartS+p.WidthS <= end+1e-9 {
				rp = append(rp, p)
			}
		}
		f.ReadEndpoints = append(f.ReadEndpoints, stats.EndpointFigures{Name: r.Name, Audited: true, Series: rp})
	}
	v := l.rule.Judge(f)
	period := v.VisibilityPeriodS
	for _, t := range v.ReadEndpointTrends {
		period = max(period, t.VisibilityPeriodS)
	}
	l.next = held + max(lookEvery, period)
	// A driver that fell behind ends the step too: held longer, the step
	// would say no more of the target, and the search stops there.
	if v.Undecided && !v.DriverLimited {
		return false
	}
	l.decided = &look{figures: f, verdict: v, heldS: held}
	return true
}

// final is the verdict of the step this look ended: judged on what the
// look saw (its series, its driver figures, its share of the error),
// with what only the step's end can tell (auditEvidence, pollEvidence).
// So the look's decision stands unless the audit or the freshness polls
// find evidence it could not have: lost writes or updates, failed polls,
// a missed SLO make it not sustainable, an audit that did not run not
// yet known; a driver-limited look yields to the audit alone. A verdict
// not yet known says what ended the step.
func (k *look) final(step *results.Result, rule stats.Rule) stats.Verdict {
	f := k.figures
	f.ReadEndpoints = slices.Clone(f.ReadEndpoints)
	auditEvidence(&f, step)
	if !k.verdict.DriverLimited {
		// Behind a driver that fell behind the lag says nothing of the
		// target: only the audit overrules such a look.
		pollEvidence(&f, step)
	}
	v := rule.Judge(f)
	v.DecidedAtS = k.heldS
	if !v.Undecided {
		return v
	}
	what := k.verdict.Decision() + " on what it saw"
	if k.verdict.DriverLimited {
		what = k.verdict.Reason()
	}
	open := []string{fmt.Sprintf("the step ended at look %d after %.0f s held: %s", f.Look, k.heldS, what)}
	for _, o := range v.Open {
		if !slices.Contains(k.verdict.Open, o) {
			open = append(open, o)
		}
	}
	v.Open = open
	return v
}

// stepSeed is the seed of the n-th step (from 0) of a search or sweep: a
// fixed seed moves on by one per step, so that steps differ in their
// documents as runs with their own seeds would.
func stepSeed(seed uint64, n int) uint64 {
	if seed == 0 {
		return 0
	}
	return seed + uint64(n)
}

// stepConfig is the run of the n-th step (from 0) of a search, or trial
// of a levels run, at rate; name prefixes its phases.
func stepConfig(c Config, rate pace.Rate, n int, name string) Config {
	c.Until = nil
	c.Ingest.Rate = rate
	c.Ingest.Seed = stepSeed(c.Ingest.Seed, n)
	c.Phase = c.Phase + name + "-"
	if progress := c.Progress; progress != nil {
		phase := c.Phase
		c.Progress = func(p Progress) {
			p.Phase = phase + p.Phase
			progress(p)
		}
	}
	return c
}

// due is how many events the schedule made due over the first held
// seconds of the measured part, sent or not: the rate times the shape's
// mean factor over them. For a byte rate, in documents of the nominal
// size; 0 when there is none (a corpus or a template).
func (l *looker) due(held float64) int64 {
	in := l.run.Ingest
	if in.Rate.Unit == pace.Bytes && in.DocSize <= 0 {
		return 0
	}
	from := in.Warmup
	to := from + time.Duration(held*float64(time.Second))
	return int64(in.Rate.EventsPerSecond(in.DocSize) * in.Shape.Mean(from, to) * held)
}

// judge applies the rule to a finished step, at the look-th look of a
// step held until its verdict is known (0: judged once). Rates are
// compared in the unit the rate was given in.
//
// ceiling is the driver's calibrated ceiling (events/s, 0 unknown),
// named if the driver fell behind.
func judge(step *results.Result, c Config, rule stats.Rule, look int, ceiling float64) stats.Verdict {
	s := step.Summary
	// A step held until its verdict was known ended its schedule early:
	// its measured part ends there.
	c.Ingest.Duration = min(c.Ingest.Duration, c.Ingest.Warmup+time.Duration(math.Round(s.MeasuredS*1000))*time.Millisecond)
	f := stats.StepFigures{
		TargetPerSec: s.TargetEventsPerSec, AchievedPerSec: s.AchievedEventsPerSec, Look: look,
		Series:         measuredSeries(step.Series, c.Ingest),
		InflightEvents: int64(c.Ingest.MaxInflight) * int64(c.Ingest.BatchSize), MaxInflight: int64(c.Ingest.MaxInflight),
	}
	f.Driver = driverFigures(ceiling, step.DriverCPU)
	if c.Ingest.Rate.Unit == pace.Bytes {
		f.TargetPerSec, f.AchievedPerSec = s.TargetMBPerSec, s.AchievedMBPerSec
	}
	for _, p := range step.Phases {
		if p != nil && p.Name == results.PhaseMeasured {
			f.Attempted, f.Failed = p.Acked+p.Failed, p.Failed
		}
	}
	for _, e := range step.Reads() {
		f.ReadEndpoints = append(f.ReadEndpoints, stats.EndpointFigures{Name: e.Name, Series: measuredSeries(e.Series, c.Ingest)})
	}
	auditEvidence(&f, step)
	pollEvidence(&f, step)
	return rule.Judge(f)
}

// auditEvidence adds to f the completeness and update audits of a
// step's end, of the target and of each of f's read endpoints.
func auditEvidence(f *stats.StepFigures, step *results.Result) {
	s, tgt := step.Summary, step.Target()
	f.AuditPending, f.Missing = false, s.Missing
	f.Audited, f.LostUpdates = updateAudit(tgt.Updates, s.Audited)
	for i, e := range step.Reads() {
		es := s.ReadEndpoints[i]
		if r := endpointNamed(f, e.Name); r != nil {
			r.Missing = es.Missing
			r.Audited, r.LostUpdates = updateAudit(e.Updates, es.Audited)
		}
	}
}

// pollEvidence adds to f the freshness polls' histograms of a step's
// whole measured part, of the target and of each of f's read endpoints,
// with the polls that failed (in them as lower bounds; the rule counts
// them as such).
func pollEvidence(f *stats.StepFigures, step *results.Result) {
	tgt := step.Target()
	f.FreshnessLag, f.FreshnessFailed = tgt.Freshness.Lag, tgt.Freshness.Censored
	for _, e := range step.Reads() {
		if r := endpointNamed(f, e.Name); r != nil {
			r.FreshnessLag, r.FreshnessFailed = e.Freshness.Lag, e.Freshness.Censored
		}
	}
}

func endpointNamed(f *stats.StepFigures, name string) *stats.EndpointFigures {
	for i := range f.ReadEndpoints {
		if f.ReadEndpoints[i].Name == name {
			return &f.ReadEndpoints[i]
		}
	}
	return nil
}

// updateAudit folds an endpoint's update audit, if it has one, into
// whether it was audited, and counts its lost updates.
func updateAudit(u *results.Updates, audited bool) (bool, int64) {
	if u == nil {
		return audited, 0
	}
	if len(u.Audit) == 0 || u.AuditError != "" {
		audited = false
	}
	var lost int64
	for _, a := range u.Audit {
		lost += a.Lost
		if a.NotMeasured != "" {
			audited = false
		}
	}
	return audited, lost
}

// measuredSeries keeps the intervals that lie wholly in the measured
// phase: after the warm-up, before the end of the schedule.
func measuredSeries(pts []stats.Point, c ingest.Config) []stats.Point {
	const eps = 1e-9
	from, to := c.Warmup.Seconds(), c.Duration.Seconds()
	var out []stats.Point
	for _, p := range pts {
		if p.StartS >= from-eps && p.StartS+p.WidthS <= to+eps {
			out = append(out, p)
		}
	}
	return out
}

// peakOf is the highest sustainable step so far; stop says why the search
// ended ("" while it goes on).
func peakOf(search *results.PeakSearch, steps []*results.Result, stop string, began time.Time) *results.Peak {
	p := &results.Peak{Search: search, Step: -1, Reason: stop, ElapsedS: time.Since(began).Seconds()}
	best := 0.0
	for i, s := range steps {
		if s.Verdict == nil || !s.Verdict.Sustainable || s.Config.RatePerSecond < best {
			continue
		}
		best = s.Config.RatePerSecond
		p.Found, p.Step, p.Rate = true, i, s.Config.Rate
		p.AchievedEventsPerSec, p.AchievedMBPerSec = s.Summary.AchievedEventsPerSec, s.Summary.AchievedMBPerSec
	}
	p.Sustainable = best
	for _, s := range steps {
		switch v := s.Verdict; {
		case v == nil:
		case v.Undecided:
			p.NotYetKnown++
		case !v.Sustainable && s.Config.RatePerSecond > best && (p.NotSustainable == 0 || s.Config.RatePerSecond < p.NotSustainable):
			p.NotSustainable = s.Config.RatePerSecond
		}
	}
	if p.Found {
		unit := pace.Events
		if steps[p.Step].Config.RateUnit == "bytes/s" {
			unit = pace.Bytes
		}
		lo := pace.Rate{PerSecond: p.Sustainable, Unit: unit}
		p.Interval = "≥ " + lo.String()
		if p.NotSustainable > 0 {
			p.Interval = fmt.Sprintf("[%s, %s]", lo, pace.Rate{PerSecond: p.NotSustainable, Unit: unit})
		}
	}
	return p
}

func recordSearch(c PeakConfig) *results.PeakSearch {
	r := c.Rule
	ps := &results.PeakSearch{
		Start: c.Run.Ingest.Rate.String(), Increase: c.Increase.String(), MaxSteps: c.MaxSteps, MaxRate: c.MaxRate,
		Confirm: c.Confirm, HoldS: (c.Run.Ingest.Duration - c.Run.Ingest.Warmup).Seconds(),
		MinAchieved: r.MinAchieved, MaxErrorRate: r.MaxErrorRate, MaxLateShare: r.MaxLateShare,
		MaxTrendMsPerS: 1000 * r.MaxGrowth, Precision: c.Precision,
	}
	if c.sequential() {
		ps.MaxHoldS = c.MaxHold.Seconds()
	}
	if r.SLO != nil {
		ps.SLO = r.SLO.Text
	}
	return ps
}
