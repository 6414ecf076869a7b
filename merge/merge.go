// Package merge merges the results of the instances of one experiment
// (results.Experiment) into one result of kind results.KindMerged:
// RockBench's multi-instance method, where each instance measured only its
// own events. HDR histograms are added and counts summed, and every
// summary figure is worked out again from them by results.Summarize, so a
// merged latency percentile is exactly the one a single process recording
// every instance's samples would report, never an average of the
// instances' percentiles. Only the per-interval latency figures of the
// series are upper bounds (see mergeSeries).
package merge

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/stats"
)

// Input is one instance's result and the file it came from.
type Input struct {
	Name   string // the file's path, for messages
	Result *results.Result
}

// ErrNoExperiment is the refusal of a result that was not run as an
// instance of an experiment: without an instance index and count, a
// missing instance could not be told, nor a file given twice.
var ErrNoExperiment = errors.New("was not run as an instance of an experiment")

// Merge merges the results of the instances of one experiment, given in
// any order. Every error is a refusal of the inputs, naming the file and
// what to change: a result that is not a run or a query beside an
// ingest, one without an experiment, an instance given twice, or a
// setting that differs where it must agree (see mustAgree). Settings
// allowed to differ (see mayDiffer) are listed in Merged.Differences.
// Instances of the experiment with no input are named in Merged.Missing,
// those that ended early or whose audit failed in Merged.Partial; either
// makes the merged result EndedEarly, with a reason naming them.
func Merge(inputs []Input) (*results.Result, error) {
	ins, err := check(inputs)
	if err != nil {
		return nil, err
	}
	ref := ins[0].Result
	res := &results.Result{
		SchemaVersion: results.SchemaVersion, Kind: results.KindMerged, Command: "merge",
		Tool: ref.Tool, Environment: environment(ins), Config: config(ins),
		Phases: phases(ins), Series: series(ins, func(r *results.Result) []stats.Point { return r.Series }), Merged: merged(ins),
		Endpoints:                endpoints(ins),
		VisibleEverywhere:        everywhere(ins, func(r *results.Result) *results.Visibility { return r.VisibleEverywhere }),
		UpdatesVisibleEverywhere: everywhere(ins, func(r *results.Result) *results.Visibility { return r.UpdatesVisibleEverywhere }),
	}
	var longest float64
	var rates results.Summary // the sums of the instances' target and achieved rates
	for _, in := range ins {
		r := in.Result
		if res.StartedAt.IsZero() || r.StartedAt.Before(res.StartedAt) {
			res.StartedAt = r.StartedAt
		}
		if r.EndedAt.After(res.EndedAt) {
			res.EndedAt = r.EndedAt
		}
		res.Generators = append(res.Generators, r.Generators...)
		s := r.Summary
		longest = max(longest, s.MeasuredS)
		rates.TargetEventsPerSec += s.TargetEventsPerSec
		rates.TargetMBPerSec += s.TargetMBPerSec
		rates.AchievedEventsPerSec += s.AchievedEventsPerSec
		rates.AchievedMBPerSec += s.AchievedMBPerSec
	}
	s := results.Summarize(res, longest)
	// Each instance's rates are over its own measured window; the
	// experiment's are their sum (the windows share a start, but one
	// that ended early is shorter).
	s.TargetEventsPerSec, s.TargetMBPerSec = rates.TargetEventsPerSec, rates.TargetMBPerSec
	s.AchievedEventsPerSec, s.AchievedMBPerSec = rates.AchievedEventsPerSec, rates.AchievedMBPerSec
	res.Summary = s
	for _, e := range res.Endpoints {
		if e.Queries != nil {
			e.Queries.Beside = s.Beside()
		}
	}
	if reason := incomplete(res.Merged, ins); reason != "" {
		res.EndedEarly, res.EndReason = true, reason
	}
	return res, nil
}

// check refuses inputs that cannot merge and returns them by instance.
func check(inputs []Input) ([]Input, error) {
	if len(inputs) == 0 {
		return nil, errors.New("no results to merge")
	}
	for _, in := range inputs {
		if err := mergeable(in); err != nil {
			return nil, err
		}
	}
	ins := slices.Clone(inputs)
	slices.SortStableFunc(ins, func(a, b Input) int {
		return cmp.Compare(a.Result.Experiment.Instance, b.Result.Experiment.Instance)
	})
	for i := 1; i < len(ins); i++ {
		if a, b := ins[i-1], ins[i]; a.Result.Experiment.Instance == b.Result.Experiment.Instance {
			return nil, fmt.Errorf("instance %d twice: in %s and in %s; give each instance's results file once", a.Result.Experiment.Instance, a.Name, b.Name)
		}
	}
	ref := ins[0]
	for _, in := range ins[1:] {
		for _, f := range mustAgree {
			if a, b := f.get(ref.Result), f.get(in.Result); a != b {
				return nil, fmt.Errorf("%s differs: %s in %s, %s in %s; only the instances of one experiment, run with the same %s, merge", f.name, a, ref.Name, b, in.Name, f.name)
			}
		}
	}
	return ins, nil
}

// kindWords name the kinds of result that do not merge.
var kindWords = map[string]string{
	results.KindPeak:  "a peak search",
	results.KindStep:  "a step of a peak search",
	results.KindSweep: "a QPS sweep",
}

func mergeable(in Input) error {
	r := in.Result
	switch {
	case r == nil:
		return fmt.Errorf("%s: no result", in.Name)
	case r.Kind == results.KindMerged:
		return fmt.Errorf("%s is merged already: merge the instances' own results files", in.Name)
	case r.Kind != results.KindRun && r.Kind != results.KindQuery:
		what := kindWords[r.Kind]
		if what == "" {
			what = "of kind " + strconv.Quote(r.Kind)
		}
		return fmt.Errorf("%s is %s: only run results and queries beside an ingest merge", in.Name, what)
	case r.Kind == results.KindQuery && len(r.Generators) == 0:
		return fmt.Errorf("%s is a query load without an ingest: only run results and queries beside an ingest merge", in.Name)
	case r.Experiment == nil:
		return fmt.Errorf("%s %w: only the instances of one experiment merge", in.Name, ErrNoExperiment)
	}
	if err := r.Experiment.Validate(); err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	return nil
}

// setting is one configuration value of a result, as text.
type setting struct {
	name string
	get  func(*results.Result) string
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func secs(v float64) string { return num(v) + "s" }

// queryField reads a setting of the query load, "none" without one.
func queryField(f func(*results.Queries) string) func(*results.Result) string {
	return func(r *results.Result) string {
		if r.Target().Queries == nil {
			return "none"
		}
		return f(r.Target().Queries)
	}
}

// mustAgree are the settings that make instances one experiment: merging
// instances that differ in them would add up figures of different
// measurements.
var mustAgree = []setting{
	{"kind", func(r *results.Result) string { return r.Kind }},
	{"target", func(r *results.Result) string { return r.Environment.Target }},
	{"experiment name", func(r *results.Result) string { return strconv.Quote(r.Experiment.Name) }},
	{"instances", func(r *results.Result) string { return strconv.Itoa(r.Experiment.Instances) }},
	{"start", func(r *results.Result) string {
		if r.Experiment.StartAt.IsZero() {
			return "none"
		}
		return r.Experiment.StartAt.UTC().Format(time.RFC3339Nano)
	}},
	{"rate unit", func(r *results.Result) string { return r.Config.RateUnit }},
	{"batch size", func(r *results.Result) string { return strconv.Itoa(r.Config.BatchSize) }},
	{"duration", func(r *results.Result) string { return secs(r.Config.DurationS) }},
	{"warm-up", func(r *results.Result) string { return secs(r.Config.WarmupS) }},
	{"document size", func(r *results.Result) string { return strconv.Itoa(r.Config.DocSize) }},
	{"in-flight bound", func(r *results.Result) string { return strconv.Itoa(r.Config.MaxInflight) }},
	{"write timeout", func(r *results.Result) string { return secs(r.Config.WriteTimeoutS) }},
	{"write retries", func(r *results.Result) string { return strconv.Itoa(r.Config.WriteRetries) }},
	{"probe rate", func(r *results.Result) string { return num(r.Config.ProbeRate) }},
	{"polling", func(r *results.Result) string { return r.Config.Polling() }},
	{"drain", func(r *results.Result) string { return secs(r.Config.DrainS) }},
	{"target settings", func(r *results.Result) string {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(r.Config.TargetSettings)) {
			kv = append(kv, k+"="+r.Config.TargetSettings[k])
		}
		return strconv.Quote(strings.Join(kv, ","))
	}},
	// Events that passed through Kafka and its sink are of another
	// measurement than direct writes, or writes with other producer
	// settings (the broker's address may differ).
	{"via settings", func(r *results.Result) string {
		if r.Config.Via == "" {
			return "none (direct writes)"
		}
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(r.Config.ViaSettings)) {
			kv = append(kv, k+"="+r.Config.ViaSettings[k])
		}
		return strconv.Quote(strings.Join(kv, ","))
	}},
	{"update share", func(r *results.Result) string { return num(r.Config.UpdateShare) }},
	{"update keys", func(r *results.Result) string { return r.Config.UpdateKeys }},
	{"query mode", queryField(func(q *results.Queries) string { return q.Mode })},
	{"mix", queryField(func(q *results.Queries) string { return q.Mix })},
	{"limit", queryField(func(q *results.Queries) string { return strconv.Itoa(q.Limit) })},
	{"miss share", queryField(func(q *results.Queries) string { return num(q.MissShare) })},
	{"query timeout", queryField(func(q *results.Queries) string { return secs(q.TimeoutS) })},
	{"settle", queryField(func(q *results.Queries) string { return secs(q.SettleS) })},
	{"query in-flight bound", queryField(func(q *results.Queries) string { return strconv.Itoa(q.MaxInflight) })},
	// Read endpoints merge by name, the figures of each with the same
	// endpoint's in every instance.
	{"read endpoints", func(r *results.Result) string {
		names := []string{}
		for _, e := range r.Reads() {
			names = append(names, e.Name)
		}
		return strconv.Quote(strings.Join(names, ","))
	}},
}

// mayDiffer are the settings instances may differ in: how much load each
// drives, and where and with what it ran. The merged rate, generators,
// QPS and concurrency are their sums.
var mayDiffer = []setting{
	{"rate", func(r *results.Result) string { return r.Config.Rate }},
	{"generators", func(r *results.Result) string { return strconv.Itoa(r.Config.Generators) }},
	{"seed", func(r *results.Result) string { return strconv.FormatUint(r.Config.Seed, 10) }},
	{"id nonce", func(r *results.Result) string { return strconv.FormatUint(r.Config.IDNonce, 10) }},
	{"host", func(r *results.Result) string { return r.Environment.Host }},
	{"target URL", func(r *results.Result) string { return r.Environment.TargetURL }},
	{"tool version", func(r *results.Result) string { return r.Tool.Version }},
	{"QPS", queryField(func(q *results.Queries) string { return num(q.TargetQPS) })},
	{"concurrency", queryField(func(q *results.Queries) string { return strconv.Itoa(q.Concurrency) })},
	{"query seed", queryField(func(q *results.Queries) string { return strconv.FormatUint(q.Seed, 10) })},
}

// differences lists each setting of mayDiffer that differs, with every
// file's value.
func differences(ins []Input) []string {
	var out []string
	for _, f := range mayDiffer {
		ref := f.get(ins[0].Result)
		if !slices.ContainsFunc(ins, func(in Input) bool { return f.get(in.Result) != ref }) {
			continue
		}
		vals := make([]string, len(ins))
		for i, in := range ins {
			vals[i] = fmt.Sprintf("%s (%s)", f.get(in.Result), in.Name)
		}
		out = append(out, f.name+": "+strings.Join(vals, ", "))
	}
	return out
}

// environment is the first instance's, with every host and target URL
// and the cores of every host.
func environment(ins []Input) results.Environment {
	env := ins[0].Result.Environment
	var hosts, urls []string
	cores := 0
	for _, in := range ins {
		e := in.Result.Environment
		if !slices.Contains(hosts, e.Host) {
			hosts = append(hosts, e.Host)
			cores += e.Cores
		}
		if !slices.Contains(urls, e.TargetURL) {
			urls = append(urls, e.TargetURL)
		}
	}
	env.Host, env.TargetURL, env.Cores = strings.Join(hosts, ", "), strings.Join(urls, ", "), cores
	return env
}

// config is the settings every instance shares, with the experiment's
// rate and generators (the sums of the instances'), and a seed or id
// nonce only when every instance had the same.
func config(ins []Input) results.Config {
	c := ins[0].Result.Config
	c.RatePerSecond, c.Generators = 0, 0
	for _, in := range ins {
		x := in.Result.Config
		c.RatePerSecond += x.RatePerSecond
		c.Generators += x.Generators
		if x.Seed != c.Seed {
			c.Seed = 0
		}
		if x.IDNonce != c.IDNonce {
			c.IDNonce = 0
		}
	}
	unit := pace.Events
	if c.RateUnit == "bytes/s" {
		unit = pace.Bytes
	}
	c.Rate = pace.Rate{PerSecond: c.RatePerSecond, Unit: unit}.String()
	return c
}

func merged(ins []Input) *results.Merged {
	e := ins[0].Result.Experiment
	m := &results.Merged{
		Experiment: e.Name, Instances: e.Instances, StartAt: e.StartAt,
		Missing: []int{}, Partial: []int{}, Differences: differences(ins),
	}
	have := map[int]bool{}
	for _, in := range ins {
		r := in.Result
		row := results.MergedInstance{
			Instance: r.Experiment.Instance, File: in.Name, Host: r.Environment.Host, Rate: r.Config.Rate,
			StartedAt: r.StartedAt, EndedAt: r.EndedAt, EndedEarly: r.EndedEarly, EndReason: r.EndReason,
			AuditError: r.Target().AuditError, Generators: r.Generators,
			AchievedEventsPerSec: r.Summary.AchievedEventsPerSec, AchievedMBPerSec: r.Summary.AchievedMBPerSec,
		}
		if r.DriverCPU != nil {
			row.DriverCorePercent = r.DriverCPU.CorePercent
		}
		m.Rows = append(m.Rows, row)
		if row.Partial() {
			m.Partial = append(m.Partial, row.Instance)
		}
		have[row.Instance] = true
	}
	for i := range e.Instances {
		if !have[i] {
			m.Missing = append(m.Missing, i)
		}
	}
	return m
}

// incomplete names the instances missing and partial, "" when none is.
func incomplete(m *results.Merged, ins []Input) string {
	var parts []string
	if n := len(m.Missing); n > 0 {
		idx := make([]string, n)
		for i, v := range m.Missing {
			idx[i] = strconv.Itoa(v)
		}
		word := "instance"
		if n > 1 {
			word = "instances"
		}
		parts = append(parts, fmt.Sprintf("no results file for %s %s", word, strings.Join(idx, ", ")))
	}
	for _, row := range m.Rows {
		switch {
		case row.EndedEarly:
			parts = append(parts, fmt.Sprintf("instance %d (%s) ended early: %s", row.Instance, row.File, row.EndReason))
		case row.AuditError != "":
			parts = append(parts, fmt.Sprintf("instance %d (%s) was not audited: %s", row.Instance, row.File, row.AuditError))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d instances merged; %s", len(ins), m.Instances, strings.Join(parts, "; "))
}

// add merges src, when there is one, into dst.
func add(dst, src *stats.Histogram) {
	if src != nil {
		dst.Merge(src)
	}
}

func addErrors(dst, src map[string]*stats.ErrorCount) {
	for _, k := range slices.Sorted(maps.Keys(src)) {
		if e := src[k]; e != nil {
			stats.AddError(dst, k, e.Count, e.Sample)
		}
	}
}

// phases adds up each phase of every instance, in the order the phases
// first appear.
func phases(ins []Input) []*results.Phase {
	res := &results.Result{}
	for _, in := range ins {
		for _, p := range in.Result.Phases {
			if p == nil {
				continue
			}
			m := res.Phase(p.Name)
			if m == nil {
				m = results.NewPhase(p.Name)
				res.Phases = append(res.Phases, m)
			}
			m.Batches += p.Batches
			m.LateBatches += p.LateBatches
			m.Due += p.Due
			m.Dispatched += p.Dispatched
			m.Unsent += p.Unsent
			m.Acked += p.Acked
			m.AckedBytes += p.AckedBytes
			m.Failed += p.Failed
			m.AckedOnRetry += p.AckedOnRetry
			m.Retries += p.Retries
			m.UpdatesDispatched += p.UpdatesDispatched
			m.UpdatesAcked += p.UpdatesAcked
			m.UpdatesFailed += p.UpdatesFailed
			m.Throughput += p.Throughput
			m.ThroughputBytes += p.ThroughputBytes
			addErrors(m.Errors, p.Errors)
			add(m.WriteLatency, p.WriteLatency)
			add(m.ServiceTime, p.ServiceTime)
			add(m.Lateness, p.Lateness)
			add(m.UnsentWait, p.UnsentWait)
		}
	}
	return res.Phases
}

// endpoints merges each endpoint of the instances, the target first
// (see endpoint).
func endpoints(ins []Input) []*results.Endpoint {
	var out []*results.Endpoint
	for i := range ins[0].Result.Endpoints {
		out = append(out, endpoint(ins, i))
	}
	return out
}

// endpoint merges the i-th endpoint of every instance (0: the target),
// which check found to be the same one, with its audit: the instances'
// generators are their own, so their audits join, naming the instance
// of each error.
func endpoint(ins []Input, i int) *results.Endpoint {
	e := &results.Endpoint{Freshness: newFreshness(), Visibility: newVisibility()}
	var urls, audit []string
	for _, in := range ins {
		x := in.Result.Endpoints[i]
		e.Name = x.Name
		if !slices.Contains(urls, x.URL) {
			urls = append(urls, x.URL)
		}
		addFreshness(&e.Freshness, x.Freshness)
		addVisibility(&e.Visibility, x.Visibility)
		e.Completeness = append(e.Completeness, x.Completeness...)
		if x.AuditError != "" {
			audit = append(audit, fmt.Sprintf("instance %d (%s): %s", in.Result.Experiment.Instance, in.Name, x.AuditError))
		}
	}
	e.URL = strings.Join(urls, ", ")
	e.Visibility.SetResolution()
	e.AuditError = strings.Join(audit, "; ")
	e.Queries = queries(ins, func(r *results.Result) *results.Queries { return r.Endpoints[i].Queries })
	e.Updates = updates(ins, i)
	if i > 0 { // the target's series is the run's
		e.Series = series(ins, func(r *results.Result) []stats.Point { return r.Endpoints[i].Series })
	}
	return e
}

// updates merges the update figures of the i-th endpoint of every
// instance, their audits joined (each instance's generators are its
// own); nil without an update stream.
func updates(ins []Input, i int) *results.Updates {
	if ins[0].Result.Endpoints[i].Updates == nil {
		return nil
	}
	u := &results.Updates{Freshness: newFreshness(), Visibility: newVisibility()}
	var audit []string
	for _, in := range ins {
		x := in.Result.Endpoints[i].Updates
		if x == nil {
			continue
		}
		addFreshness(&u.Freshness, x.Freshness)
		addVisibility(&u.Visibility, x.Visibility)
		u.Audit = append(u.Audit, x.Audit...)
		if x.AuditError != "" {
			audit = append(audit, fmt.Sprintf("instance %d (%s): %s", in.Result.Experiment.Instance, in.Name, x.AuditError))
		}
	}
	u.Visibility.SetResolution()
	u.AuditError = strings.Join(audit, "; ")
	return u
}

// everywhere adds up the instances' probes visible everywhere (of
// inserts or of updates, as of picks): each instance's probes are its
// own, so their histograms add exactly. Nil without read endpoints.
func everywhere(ins []Input, of func(*results.Result) *results.Visibility) *results.Visibility {
	if of(ins[0].Result) == nil {
		return nil
	}
	v := newVisibility()
	for _, in := range ins {
		x := of(in.Result)
		if x == nil {
			continue
		}
		addVisibility(&v, *x)
	}
	if v.NotMeasured != "" {
		return &results.Visibility{NotMeasured: v.NotMeasured}
	}
	v.SetResolution()
	return &v
}

func newFreshness() results.Freshness {
	return results.Freshness{Lag: stats.NewHistogram(), QueryService: stats.NewHistogram(), CensoredLag: stats.NewHistogram(), Errors: map[string]*stats.ErrorCount{}}
}

func newVisibility() results.Visibility { return results.NewVisibility() }

func addFreshness(f *results.Freshness, x results.Freshness) {
	add(f.Lag, x.Lag)
	add(f.QueryService, x.QueryService)
	f.Samples += x.Samples
	f.Empty += x.Empty
	// An input written before the failed polls' bounds were kept apart
	// leaves the merge without them (then every figure may be a bound).
	if x.CensoredLag == nil && x.Censored > 0 {
		f.CensoredLag = nil
	}
	if f.CensoredLag != nil {
		add(f.CensoredLag, x.CensoredLag)
	}
	f.Censored += x.Censored
	f.StepsBack += x.StepsBack
	f.StepBackMaxMs = max(f.StepBackMaxMs, x.StepBackMaxMs)
	addErrors(f.Errors, x.Errors)
	f.NotMeasured = cmp.Or(f.NotMeasured, x.NotMeasured)
}

// addVisibility adds x to v; the caller sets the resolution once all are
// added.
func addVisibility(v *results.Visibility, x results.Visibility) {
	add(v.Latency, x.Latency)
	add(v.QueryService, x.QueryService)
	add(v.Gap, x.Gap)
	// An input written before the midpoints and the unseen ages were kept
	// leaves the merge without them: a partial figure would read as whole.
	if x.Midpoint == nil {
		v.Midpoint = nil
	}
	if x.Unseen == nil && x.Censored > 0 {
		v.Unseen = nil
	}
	if v.Midpoint != nil {
		add(v.Midpoint, x.Midpoint)
	}
	if v.Unseen != nil {
		add(v.Unseen, x.Unseen)
	}
	v.Probes += x.Probes
	v.Seen += x.Seen
	v.NeverSeen += x.NeverSeen
	v.Censored += x.Censored
	v.Dropped += x.Dropped
	v.BeforeTarget += x.BeforeTarget
	v.AfterTarget += x.AfterTarget
	addErrors(v.Errors, x.Errors)
	v.NotMeasured = cmp.Or(v.NotMeasured, x.NotMeasured)
}

// queries adds up the query loads that ran beside the instances' ingests
// on one endpoint, which of returns, kind by kind; nil when none ran.
func queries(ins []Input, of func(*results.Result) *results.Queries) *results.Queries {
	ref := of(ins[0].Result)
	if ref == nil {
		return nil
	}
	q := &results.Queries{
		Mode: ref.Mode, MaxInflight: ref.MaxInflight, Mix: ref.Mix, MissShare: ref.MissShare,
		Limit: ref.Limit, TimeoutS: ref.TimeoutS, SettleS: ref.SettleS, Seed: ref.Seed,
		Total: newKind(ref.Total),
	}
	for _, in := range ins {
		x := of(in.Result)
		if x == nil {
			continue
		}
		q.TargetQPS += x.TargetQPS
		q.Concurrency += x.Concurrency
		q.WaitedS = max(q.WaitedS, x.WaitedS)
		q.MeasuredS = max(q.MeasuredS, x.MeasuredS)
		q.AchievedQPS += x.AchievedQPS
		q.Unsent += x.Unsent
		if x.Seed != q.Seed {
			q.Seed = 0
		}
		addKind(q.Total, x.Total)
		for _, k := range x.Kinds {
			i := slices.IndexFunc(q.Kinds, func(m *results.QueryKind) bool { return m.Kind == k.Kind })
			if i < 0 {
				i = len(q.Kinds)
				q.Kinds = append(q.Kinds, newKind(k))
			}
			addKind(q.Kinds[i], k)
		}
	}
	for _, k := range append(q.Kinds, q.Total) {
		k.Latency, k.ServiceTime = k.LatencyHistogram.Summarize(), k.ServiceTimeHistogram.Summarize()
	}
	return q
}

// newKind is an empty kind named and described as k.
func newKind(k *results.QueryKind) *results.QueryKind {
	m := &results.QueryKind{
		Errors: map[string]*stats.ErrorCount{}, LatencyHistogram: stats.NewHistogram(), ServiceTimeHistogram: stats.NewHistogram(),
	}
	if k != nil {
		m.Kind, m.Weight, m.Text = k.Kind, k.Weight, k.Text
	}
	return m
}

func addKind(m, k *results.QueryKind) {
	if k == nil {
		return
	}
	m.TargetQPS += k.TargetQPS
	m.AchievedQPS += k.AchievedQPS
	m.Add(k)
}

// series lays the instances' series on one time axis starting at the
// earliest start: each point moves by its instance's start minus the
// earliest, into intervals of the widest width among the instances (a
// point goes to the interval its start falls in). Counts add up exactly,
// and so does the mean write latency: it is weighted by the events
// written, and every write carries one batch (the instances' batch size
// agrees). The other latency figures of an interval — write p99 and max,
// query p99, freshness lag — are the largest of the instances' (and of
// the intervals merged into it): an upper bound, not a merged quantile,
// for a series keeps no histogram per interval. The smallest freshness
// lag is the smallest of theirs, exactly. The in-flight figure is the sum
// of the instances' largest, an upper bound of the most in flight at once.
// of picks the series to merge from each instance's result: the run's
// own, or one read endpoint's.
func series(ins []Input, of func(*results.Result) []stats.Point) []stats.Point {
	start := ins[0].Result.StartedAt
	width := 0.0
	for _, in := range ins {
		if in.Result.StartedAt.Before(start) {
			start = in.Result.StartedAt
		}
		for _, p := range of(in.Result) {
			width = max(width, p.WidthS)
		}
	}
	if width <= 0 {
		return nil
	}
	var out []stats.Point
	at := func(pts []stats.Point, i int) []stats.Point {
		for len(pts) <= i {
			pts = append(pts, stats.Point{StartS: float64(len(pts)) * width, WidthS: width})
		}
		return pts
	}
	for _, in := range ins {
		offset := in.Result.StartedAt.Sub(start).Seconds()
		// This instance's points in the common intervals first, so that
		// its in-flight figure is its own largest before it is added to
		// the others'.
		var own []stats.Point
		for _, p := range of(in.Result) {
			// The small margin keeps a start that float arithmetic puts
			// a hair below an interval's boundary in that interval.
			i := int(math.Floor((offset+p.StartS)/width + 1e-9))
			own = at(own, i)
			addPoint(&own[i], p)
			own[i].Inflight = max(own[i].Inflight, p.Inflight)
		}
		out = at(out, len(own)-1)
		for i, p := range own {
			addPoint(&out[i], p)
			out[i].Inflight += p.Inflight
		}
	}
	return out
}

// addPoint adds p's figures to dst, all but the in-flight figure.
func addPoint(dst *stats.Point, p stats.Point) {
	if w, wp := dst.AckedEvents+dst.FailedEvents, p.AckedEvents+p.FailedEvents; w+wp > 0 {
		dst.WriteMeanMs = (dst.WriteMeanMs*float64(w) + p.WriteMeanMs*float64(wp)) / float64(w+wp)
		dst.ServiceMeanMs = (dst.ServiceMeanMs*float64(w) + p.ServiceMeanMs*float64(wp)) / float64(w+wp)
	}
	dst.AddCounts(&p)
	dst.WriteP99Ms = max(dst.WriteP99Ms, p.WriteP99Ms)
	dst.WriteMaxMs = max(dst.WriteMaxMs, p.WriteMaxMs)
	dst.QueryP99Ms = max(dst.QueryP99Ms, p.QueryP99Ms)
}
