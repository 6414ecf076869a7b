package e2e

import (
	"strings"
	"testing"

	"github.com/freshbench/freshbench/stats"
)

// The capped driver's premise: held back by its quota. A driver that used
// 62 % of its quota while it waited for a CPU (a
// crowded machine) is not it, and the test tries a lower quota; before,
// it went on and failed ("the driver used 62% of its quota, want at least
// 90%"). A driver at its quota is the premise, and a target judged the
// limit is not.
func TestQuotaUnmet(t *testing.T) {
	behind := func(used string) stats.Verdict {
		return stats.Verdict{Undecided: true, DriverLimited: true, Open: []string{
			"the driver fell behind: achieved 8.0% of the target rate, 100% of batches late in the second half, while the driver used " + used + "% of its 0.1 core(s) (its cgroup's CPU quota); its threads waited for a CPU as long as 400% of one core's time"}}
	}
	if why := quotaUnmet(behind("62")); !strings.Contains(why, "62% of its quota") {
		t.Errorf("a driver that used 62%% of its quota: %q; want the premise unmet, naming the share", why)
	}
	if why := quotaUnmet(behind("97")); why != "" {
		t.Errorf("a driver that used 97%% of its quota: %q; want the premise met", why)
	}
	target := stats.Verdict{Reasons: []string{"achieved 78.0% of the target rate (< 98%)"}}
	if why := quotaUnmet(target); !strings.Contains(why, "target") {
		t.Errorf("a step judged the target's: %q; want the premise unmet", why)
	}
}
