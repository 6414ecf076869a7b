package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/freshbench/freshbench/results"
)

// Calibration writes a calibration: the driver's ceiling and CPU per
// 100k events for each batch size.
func Calibration(w io.Writer, r *results.Result) {
	c := r.Calibration
	if c == nil {
		return
	}
	fmt.Fprintf(w, "freshbench calibrate: %s (%s), %d cores\n", targetURL(r), r.Environment.TargetVersion, r.Environment.Cores)
	fmt.Fprintf(w, "steps of %s after %s warm-up; %d generator(s), doc size %d B, max in-flight %d, polls %s, %g probes/s\n",
		seconds(r.Config.DurationS-r.Config.WarmupS), seconds(r.Config.WarmupS), r.Config.Generators, r.Config.DocSize,
		r.Config.MaxInflight, r.Config.Polling(), r.Config.ProbeRate)
	if r.EndedEarly {
		fmt.Fprintf(w, "ended early: %s (the searches measured are kept)\n", r.EndReason)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "batch size\tceiling events/s\ttarget events/s\tCPU s per 100k events\tdriver CPU %%\tsteps\t  stopped\n")
	for i, p := range c.Points {
		steps := 0
		if i < len(r.Steps) {
			steps = len(r.Steps[i].Steps)
		}
		if !p.Found {
			fmt.Fprintf(tw, "%d\tnone\t-\t-\t-\t%d\t  %s\n", p.BatchSize, steps, p.Reason)
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.3f\t%.0f\t%d\t  %s\n", p.BatchSize, rate(p.CeilingEventsPerSec), rate(p.CeilingTargetPerSec), p.CPUPer100kS, p.CorePercent, steps, p.Reason)
	}
	tw.Flush()
	if c.NoopCPUS > 0 {
		fmt.Fprintf(w, "the noop server used %.1f s of CPU over the calibration\n", c.NoopCPUS)
	}
}

// CalibrationStep writes one line about the i-th step (from 0) of the
// search at a batch size, as it ends.
func CalibrationStep(w io.Writer, batch, i int, st *results.Result) {
	s := st.Summary
	late := 0.0
	if s.Batches > 0 {
		late = float64(s.LateBatches) / float64(s.Batches)
	}
	fmt.Fprintf(w, "batch %d step %d: target %s events/s, achieved %s, %.1f%% of batches late, write p99 %s ms, driver CPU %.3f s per 100k events: %s\n",
		batch, i+1, rate(st.Config.RatePerSecond), rate(s.AchievedEventsPerSec), 100*late,
		msOrDash(s.WriteLatency, s.WriteLatency.P99Ms), st.DriverCPUPer100k(), verdictText(st))
}
