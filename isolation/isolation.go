// Package isolation measures what one workload does to the other: a
// steady ingest and query load, then an ingest burst, a recovery, a query
// burst, a recovery (Plan); and, over what the run observed, each
// window's figures, each burst's interference (its window over the
// baseline) and the recovery time after it (Recorder, Analyze).
//
// The run itself is an ordinary bench.Run whose two loads carry the
// bursts as load shapes (pace.Shape); this package only plans the windows
// and reads the samples.
package isolation

import (
	"fmt"
	"time"

	"github.com/freshbench/freshbench/invalid"
	"github.com/freshbench/freshbench/pace"
	"github.com/freshbench/freshbench/results"
)

// Config is the experiment's timing. The run's windows follow the
// warm-up back to back: baseline, ingest burst, ingest recovery, query
// burst, query recovery.
type Config struct {
	Warmup   time.Duration
	Baseline time.Duration // both loads steady
	Burst    time.Duration // each burst
	Recovery time.Duration // after each burst, both loads steady again
	// Factor multiplies the bursting load during its burst.
	Factor float64
	// Band: a figure has recovered when it is back within Band × its
	// baseline (1.5: at most half as much again).
	Band float64
	// Resolution is the width of the buckets recovery is judged in; a
	// recovery time is known to within it.
	Resolution time.Duration
}

// Default is sized for one machine: 5 minutes in all.
var Default = Config{
	Warmup: 30 * time.Second, Baseline: 60 * time.Second, Burst: 30 * time.Second, Recovery: 75 * time.Second,
	Factor: 5, Band: 1.5, Resolution: time.Second,
}

// Validate names the first bad setting.
func (c Config) Validate() error {
	switch {
	case c.Warmup < 0:
		return invalid.New(invalid.Warmup, c.Warmup, "0 or more")
	case c.Baseline <= 0:
		return invalid.New(invalid.Baseline, c.Baseline, "a positive duration, e.g. 60s")
	case c.Burst <= 0:
		return invalid.New(invalid.BurstLength, c.Burst, "a positive duration, e.g. 30s")
	case c.Recovery <= 0:
		return invalid.New(invalid.Recovery, c.Recovery, "a positive duration, e.g. 60s")
	case !(c.Factor > 1):
		return invalid.New(invalid.BurstFactor, c.Factor, "a factor above 1, e.g. 5 (the load × 5 during the burst)")
	case !(c.Band >= 1):
		return invalid.New(invalid.RecoveryBand, c.Band, "a factor of the baseline of 1 or more, e.g. 1.5")
	case c.Resolution <= 0 || c.Resolution > c.Recovery:
		return invalid.New(invalid.Resolution, c.Resolution, fmt.Sprintf("a positive duration up to the recovery's %s, e.g. 1s", c.Recovery))
	}
	return nil
}

// Duration is the whole run, warm-up included.
func (c Config) Duration() time.Duration {
	return c.Warmup + c.Baseline + 2*(c.Burst+c.Recovery)
}

// Windows are the measured windows, in order, as offsets from the run's
// start.
func (c Config) Windows() []Window {
	at := c.Warmup
	var ws []Window
	for _, w := range []struct {
		name string
		d    time.Duration
	}{
		{results.WindowBaseline, c.Baseline},
		{results.WindowIngestBurst, c.Burst}, {results.WindowIngestRecovery, c.Recovery},
		{results.WindowQueryBurst, c.Burst}, {results.WindowQueryRecovery, c.Recovery},
	} {
		ws = append(ws, Window{Name: w.name, From: at, To: at + w.d})
		at += w.d
	}
	return ws
}

// Window is one window, as offsets from the run's start.
type Window struct {
	Name     string
	From, To time.Duration
}

// Shapes are the two loads' shapes: each bursts in its own window.
func (c Config) Shapes() (write, query pace.Shape, err error) {
	ws := c.Windows()
	burst := func(w Window) (pace.Shape, error) {
		return pace.ParseShape(fmt.Sprintf("burst %gx at %s for %s", c.Factor, w.From, w.To-w.From))
	}
	if write, err = burst(ws[1]); err != nil {
		return
	}
	query, err = burst(ws[3])
	return
}
