package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/freshbench/freshbench/results"
)

// CeilingWarnShare is the share of the driver ceiling above which a run
// is warned: beyond it the driver's own schedule starts to slip on a
// no-op server, so a limit seen against a database may be the driver's.
const CeilingWarnShare = 0.5

// DefaultCalibrationPath is where calibrate saves this machine's
// calibration and where run, peak and query look for it: under
// $FRESHBENCH_CACHE when set (as the scripts' cache), else under the
// user's cache directory.
func DefaultCalibrationPath() (string, error) {
	dir := os.Getenv("FRESHBENCH_CACHE")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("find the cache directory for the calibration: %w", err)
		}
		dir = filepath.Join(cache, "freshbench")
	}
	return filepath.Join(dir, "calibration.json"), nil
}

// SaveCalibration writes the ceilings a calibration found (res, of kind
// calibration, described) as this machine's calibration at path. It
// refuses a calibration that found no ceiling, which would hide an older
// one that did.
func SaveCalibration(path string, res *results.Result) error {
	if res.Calibration == nil {
		return fmt.Errorf("save calibration: the result holds no calibration")
	}
	mc := results.MachineCalibration{
		Host: res.Environment.Host, Cores: res.Environment.Cores, Tool: res.Tool, CalibratedAt: res.EndedAt,
	}
	for _, p := range res.Calibration.Points {
		if p.Found {
			mc.Points = append(mc.Points, p)
		}
	}
	if len(mc.Points) == 0 {
		return fmt.Errorf("save calibration: no batch size found a ceiling, so %s is left as it was", path)
	}
	return results.WriteMachineCalibration(path, &mc)
}

// Ceilings is this machine's calibration as a run reads it: the file,
// and what it holds or why it holds nothing usable.
type Ceilings struct {
	Path        string
	Calibration *results.MachineCalibration // nil when there is none
	Missing     bool                        // no file at Path
}

// ErrBadCalibration is a calibration file that exists but cannot be read
// as one.
var ErrBadCalibration = errors.New("unreadable calibration")

// LoadCeilings reads the calibration at path. A path with no file is no
// calibration (Missing), not an error; a file that cannot be read or
// holds no ceiling is ErrBadCalibration.
func LoadCeilings(path string) (Ceilings, error) {
	c := Ceilings{Path: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.Missing = true
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("%w %s: %v", ErrBadCalibration, path, err)
	}
	var mc results.MachineCalibration
	if err := json.Unmarshal(b, &mc); err != nil {
		return c, fmt.Errorf("%w %s: %v", ErrBadCalibration, path, err)
	}
	if !slices.ContainsFunc(mc.Points, func(p results.CalibrationPoint) bool { return p.Found && p.CeilingEventsPerSec > 0 }) {
		return c, fmt.Errorf("%w %s: it holds no ceiling", ErrBadCalibration, path)
	}
	c.Calibration = &mc
	return c, nil
}

// Apply records in res, taken on the host env describes, the share of
// the ceiling it used; a result without an ingest gets nothing. A peak
// search's steps get theirs, and the search the highest step's; so do
// the trials of a run at levels, and the run the highest trial's.
// Nothing is recorded when c is the zero Ceilings (no calibration was
// looked for).
func (c Ceilings) Apply(res *results.Result, env results.Environment) {
	if c.Path == "" {
		return
	}
	var parts []*results.Result
	parts = append(parts, res.Steps...)
	if res.Levels != nil {
		for _, l := range res.Levels.Levels {
			parts = append(parts, l.Trials...)
		}
	}
	for _, p := range parts {
		c.Apply(p, env)
		if p.Ceiling != nil && (res.Ceiling == nil || p.Ceiling.TargetShare > res.Ceiling.TargetShare) {
			res.Ceiling = p.Ceiling
		}
	}
	if len(parts) > 0 || res.Summary.TargetEventsPerSec <= 0 {
		return
	}
	res.Ceiling = c.ceiling(env, res.Config.BatchSize, res.Summary.TargetEventsPerSec, res.Summary.AchievedEventsPerSec)
}

// EventsPerSec is the driver ceiling at batch size batch on the host env
// describes, 0 when no calibration of it applies.
func (c Ceilings) EventsPerSec(env results.Environment, batch int) float64 {
	if c.Path == "" {
		return 0
	}
	if out := c.ceiling(env, batch, 0, 0); out.NotUsed == "" {
		return out.EventsPerSec
	}
	return 0
}

// ceiling is the share of the ceiling at batch size batch that a target
// and an achieved rate use.
func (c Ceilings) ceiling(env results.Environment, batch int, target, achieved float64) *results.Ceiling {
	out := &results.Ceiling{File: c.Path}
	mc := c.Calibration
	switch {
	case c.Missing:
		out.NotUsed = "no calibration at " + c.Path
		return out
	case mc == nil:
		out.NotUsed = "the calibration at " + c.Path + " is unreadable"
		return out
	case mc.Host != env.Host:
		out.NotUsed = fmt.Sprintf("the calibration is of host %q, this run's is %q", mc.Host, env.Host)
		return out
	case mc.Cores != env.Cores:
		out.NotUsed = fmt.Sprintf("the calibration was taken with %d cores, this run had %d", mc.Cores, env.Cores)
		return out
	}
	out.CalibratedAt = mc.CalibratedAt
	out.EventsPerSec, out.BatchSizes, out.Method = ceilingAt(mc.Points, batch)
	out.TargetShare, out.AchievedShare = target/out.EventsPerSec, achieved/out.EventsPerSec
	if share := max(out.TargetShare, out.AchievedShare); share > CeilingWarnShare {
		out.Warning = fmt.Sprintf("the run used %.0f%% of this machine's driver ceiling at batch size %d (%.0f events/s, %s): the driver, not the database, may be the limit",
			100*share, batch, out.EventsPerSec, out.Method)
	}
	return out
}

// ceilingAt is the driver ceiling at batch size batch from the points
// that found one: a point's own, or interpolated linearly in the
// logarithm of the batch size between the two around it (the cost of a
// request spreads over its events, so the ceiling moves with the batch
// size's order of magnitude), or outside the calibrated range the
// nearest point's. It returns the batch sizes used and how.
func ceilingAt(points []results.CalibrationPoint, batch int) (float64, []int, string) {
	var found []results.CalibrationPoint
	for _, p := range points {
		if p.Found && p.CeilingEventsPerSec > 0 {
			found = append(found, p)
		}
	}
	slices.SortFunc(found, func(a, b results.CalibrationPoint) int { return a.BatchSize - b.BatchSize })
	first, last := found[0], found[len(found)-1]
	switch {
	case batch < first.BatchSize:
		return first.CeilingEventsPerSec, []int{first.BatchSize}, fmt.Sprintf("nearest calibrated batch size %d: below the calibrated range", first.BatchSize)
	case batch > last.BatchSize:
		return last.CeilingEventsPerSec, []int{last.BatchSize}, fmt.Sprintf("nearest calibrated batch size %d: above the calibrated range", last.BatchSize)
	}
	i, exact := slices.BinarySearchFunc(found, batch, func(p results.CalibrationPoint, b int) int { return p.BatchSize - b })
	if exact {
		return found[i].CeilingEventsPerSec, []int{batch}, "calibrated at this batch size"
	}
	lo, hi := found[i-1], found[i]
	t := math.Log(float64(batch)/float64(lo.BatchSize)) / math.Log(float64(hi.BatchSize)/float64(lo.BatchSize))
	v := lo.CeilingEventsPerSec + t*(hi.CeilingEventsPerSec-lo.CeilingEventsPerSec)
	return v, []int{lo.BatchSize, hi.BatchSize}, fmt.Sprintf("interpolated between batch sizes %d and %d", lo.BatchSize, hi.BatchSize)
}
