package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/freshbench/freshbench/results"
)

// The driver's CPU line says how long it waited for a CPU that other
// processes held, when that was measured, in the console and the report.
func TestDriverWaitShown(t *testing.T) {
	res := runResult(2000, 1)
	res.DriverCPU = &results.DriverCPU{Seconds: 1.2, WallS: 10, CorePercent: 12, WaitS: 10, WaitPercent: 100}
	var b bytes.Buffer
	Console(&b, res)
	const want = "waited 10.0 s for a CPU that other processes or its CPU quota held back (100% of one core)"
	if !strings.Contains(b.String(), "driver: 1.2 s CPU over 10.0 s (12% of one core of") || !strings.Contains(b.String(), want) {
		t.Errorf("console lacks the driver's CPU and wait %q:\n%s", want, b.String())
	}
	if out := render(t, res); !strings.Contains(out, want) {
		t.Errorf("report lacks %q", want)
	}
	res.DriverCPU.WaitS, res.DriverCPU.WaitPercent = 0, 0
	b.Reset()
	Console(&b, res)
	if strings.Contains(b.String(), "waited") {
		t.Errorf("a driver whose wait was not measured is said to have waited:\n%s", b.String())
	}
}
