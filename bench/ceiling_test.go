package bench

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/results"
)

func calibrated(points ...results.CalibrationPoint) Ceilings {
	return Ceilings{Path: "cal.json", Calibration: &results.MachineCalibration{
		Host: "h", Cores: 2, CalibratedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Points: points,
	}}
}

func point(batch int, ceiling float64) results.CalibrationPoint {
	return results.CalibrationPoint{BatchSize: batch, Found: true, CeilingEventsPerSec: ceiling}
}

func TestCeilingAt(t *testing.T) {
	// Out of order, and one batch size that found no ceiling, which is
	// left out.
	points := []results.CalibrationPoint{point(500, 200000), point(50, 100000), {BatchSize: 5000}}
	for _, c := range []struct {
		batch   int
		want    float64
		sizes   []int
		methodH string
	}{
		{50, 100000, []int{50}, "calibrated at this batch size"},
		{500, 200000, []int{500}, "calibrated"},
		// log-linear: 158 is halfway between 50 and 500 in log terms.
		{158, 100000 + 100000*math.Log(158.0/50)/math.Log(10), []int{50, 500}, "interpolated between batch sizes 50 and 500"},
		{10, 100000, []int{50}, "nearest calibrated batch size 50: below"},
		{5000, 200000, []int{500}, "nearest calibrated batch size 500: above"},
	} {
		got, sizes, method := ceilingAt(points, c.batch)
		if math.Abs(got-c.want) > 1e-6 || !slices.Equal(sizes, c.sizes) || !strings.Contains(method, c.methodH) {
			t.Errorf("batch %d: ceiling %.1f from %v (%s), want %.1f from %v (%s…)", c.batch, got, sizes, method, c.want, c.sizes, c.methodH)
		}
	}
}

func ingestResult(batch int, target, achieved float64) *results.Result {
	return &results.Result{Kind: results.KindRun, Config: results.Config{BatchSize: batch},
		Summary: results.Summary{MeasuredS: 10, TargetEventsPerSec: target, AchievedEventsPerSec: achieved}}
}

func TestCeilingsApply(t *testing.T) {
	env := results.Environment{Host: "h", Cores: 2}
	c := calibrated(point(50, 10000), point(500, 40000))

	r := ingestResult(500, 24000, 18000)
	c.Apply(r, env)
	if got := r.Ceiling; got == nil || got.Warning == "" || math.Abs(got.TargetShare-0.6) > 1e-9 || math.Abs(got.AchievedShare-0.45) > 1e-9 || got.File != "cal.json" {
		t.Errorf("60%% of the ceiling: %+v, want a warning, shares 0.6 and 0.45", got)
	}
	r = ingestResult(500, 16000, 16000)
	c.Apply(r, env)
	if got := r.Ceiling; got == nil || got.Warning != "" || got.NotUsed != "" || got.EventsPerSec != 40000 {
		t.Errorf("40%% of the ceiling: %+v, want no warning", got)
	}
	// The achieved rate alone above the half warns too.
	r = ingestResult(50, 4000, 6000)
	c.Apply(r, env)
	if r.Ceiling == nil || r.Ceiling.Warning == "" {
		t.Errorf("achieved 60%%: %+v, want a warning", r.Ceiling)
	}

	for _, o := range []struct {
		name string
		env  results.Environment
		c    Ceilings
		want string
	}{
		{"other host", results.Environment{Host: "other", Cores: 2}, c, `of host "h", this run's is "other"`},
		{"other cores", results.Environment{Host: "h", Cores: 8}, c, "taken with 2 cores, this run had 8"},
		{"missing", env, Ceilings{Path: "cal.json", Missing: true}, "no calibration at cal.json"},
		{"unreadable", env, Ceilings{Path: "cal.json"}, "unreadable"},
	} {
		r := ingestResult(500, 39000, 39000)
		o.c.Apply(r, o.env)
		if r.Ceiling == nil || !strings.Contains(r.Ceiling.NotUsed, o.want) || r.Ceiling.Warning != "" || r.Ceiling.TargetShare != 0 {
			t.Errorf("%s: %+v, want not used: %q", o.name, r.Ceiling, o.want)
		}
	}

	// No ingest, or no calibration looked for: nothing recorded.
	q := &results.Result{Kind: results.KindQuery, Summary: results.Summary{MeasuredS: 10}}
	c.Apply(q, env)
	r = ingestResult(500, 39000, 39000)
	Ceilings{}.Apply(r, env)
	if q.Ceiling != nil || r.Ceiling != nil {
		t.Errorf("query alone: %+v; no calibration looked for: %+v; want nil", q.Ceiling, r.Ceiling)
	}

	// A peak search: each step its own, the search the highest step's.
	peak := &results.Result{Kind: results.KindPeak, Config: results.Config{BatchSize: 500},
		Steps: []*results.Result{ingestResult(500, 8000, 8000), ingestResult(500, 30000, 25000), ingestResult(500, 16000, 16000)}}
	c.Apply(peak, env)
	if peak.Ceiling != peak.Steps[1].Ceiling || peak.Steps[0].Ceiling.Warning != "" || peak.Ceiling.Warning == "" {
		t.Errorf("peak: %+v, want the second step's, which warns", peak.Ceiling)
	}
}

func TestSaveAndLoadCeilings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "calibration.json")
	res := &results.Result{
		Kind: results.KindCalibration, EndedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Tool: results.Tool{Name: "freshbench", Version: "v1"}, Environment: results.Environment{Host: "h", Cores: 2},
		Calibration: &results.Calibration{Points: []results.CalibrationPoint{point(50, 1000), {BatchSize: 500, Reason: "none"}}},
	}
	if err := SaveCalibration(path, res); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCeilings(path)
	if err != nil {
		t.Fatal(err)
	}
	mc := c.Calibration
	if c.Missing || mc == nil || mc.Host != "h" || mc.Cores != 2 || mc.Tool.Version != "v1" || !mc.CalibratedAt.Equal(res.EndedAt) || len(mc.Points) != 1 {
		t.Errorf("read back %+v (calibration %+v), want host h, 2 cores, v1, %s, the one point found", c, mc, res.EndedAt)
	}

	// A calibration that found nothing leaves the saved one alone.
	res.Calibration.Points = res.Calibration.Points[1:]
	if err := SaveCalibration(path, res); err == nil {
		t.Error("saved a calibration that found no ceiling")
	}
	if c, err := LoadCeilings(path); err != nil || len(c.Calibration.Points) != 1 {
		t.Errorf("after a failed save: %+v, %v; want the earlier calibration", c, err)
	}

	if c, err := LoadCeilings(filepath.Join(dir, "none.json")); err != nil || !c.Missing {
		t.Errorf("no file: %+v, %v; want missing, no error", c, err)
	}
	for name, body := range map[string]string{"corrupt": "{not json", "empty": `{"host":"h","points":[]}`} {
		bad := filepath.Join(dir, name+".json")
		if err := os.WriteFile(bad, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if c, err := LoadCeilings(bad); !errors.Is(err, ErrBadCalibration) || c.Path != bad || c.Calibration != nil {
			t.Errorf("%s file: %+v, %v; want ErrBadCalibration", name, c, err)
		}
	}
}

func TestDefaultCalibrationPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("FRESHBENCH_CACHE", dir)
	if p, err := DefaultCalibrationPath(); err != nil || p != filepath.Join(dir, "calibration.json") {
		t.Errorf("with FRESHBENCH_CACHE: %q, %v", p, err)
	}
}
