package probe

import (
	"context"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// pollFor runs everyPoll for span of the bubble's time with polls that
// each take cost, and returns the instants the polls started.
func pollFor(t *testing.T, b Budget, cost, span time.Duration) []time.Time {
	t.Helper()
	var starts []time.Time
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), span)
		defer cancel()
		everyPoll(ctx, b, true, func() {
			starts = append(starts, time.Now())
			time.Sleep(cost)
		})
	})
	return starts
}

// The loops poll as often as the target answers, within the budget: the
// pace follows the polls' own time (the share of one connection), the
// rate cap bounds it for a target that answers at once, a refresh period
// bounds it to a few polls per refresh, and a fixed interval overrides
// all of it (issue 27).
func TestPollPaceFollowsTheBudget(t *testing.T) {
	const span = 20 * time.Second
	for _, c := range []struct {
		name   string
		b      Budget
		cost   time.Duration
		period time.Duration // the mean time from one poll's start to the next's
	}{
		{"share of a 1 ms query", Budget{}, time.Millisecond, time.Duration(float64(time.Millisecond) / DefaultBudget.Share)},
		{"share of a 20 ms query", Budget{Share: 0.5}, 20 * time.Millisecond, 40 * time.Millisecond},
		{"rate cap of an instant answer", Budget{}, 0, time.Duration(float64(time.Second) / DefaultBudget.MaxRate)},
		{"rate cap set", Budget{MaxRate: 50}, 100 * time.Microsecond, 20 * time.Millisecond},
		{"refresh period", Budget{Refresh: time.Second}, time.Millisecond, time.Second / PollsPerRefresh},
		{"fixed interval", Budget{Interval: 200 * time.Millisecond}, 5 * time.Millisecond, 205 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			starts := pollFor(t, c.b, c.cost, span)
			want := float64(span) / float64(c.period)
			if got := float64(len(starts)); math.Abs(got-want) > 0.1*want+2 {
				t.Errorf("%d polls in %s, want %.0f ± 10 %%: one every %s", len(starts), span, want, c.period)
			}
		})
	}
}

// The pause between polls stays jittered, adaptive or not, so that the
// samples cannot lock to the phase of the batch schedule or of a refresh.
func TestPollPaceKeepsItsJitter(t *testing.T) {
	for _, b := range []Budget{{}, {Refresh: time.Second}, {Interval: 100 * time.Millisecond}} {
		starts := pollFor(t, b, time.Millisecond, 20*time.Second)
		lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
		var sum time.Duration
		for i := 2; i < len(starts); i++ {
			d := starts[i].Sub(starts[i-1])
			lo, hi, sum = min(lo, d), max(hi, d), sum+d
		}
		mean := sum / time.Duration(len(starts)-2)
		if hi-lo < mean/2 {
			t.Errorf("budget %+v: polls %s to %s apart, mean %s; want them spread over at least half the mean", b, lo, hi, mean)
		}
	}
}

// A budget names its bad field.
func TestBudgetValidate(t *testing.T) {
	for _, c := range []struct {
		b    Budget
		want string
	}{
		{Budget{Interval: -time.Second}, "poll interval"},
		{Budget{Share: 1.5}, "probe share"},
		{Budget{Share: -0.1}, "probe share"},
		{Budget{MaxRate: -1}, "probe max rate"},
	} {
		err := c.b.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", c.b, err, c.want)
		}
	}
	if err := (Budget{}).Validate(); err != nil {
		t.Errorf("the zero budget (the defaults): %v", err)
	}
}

// A few slow polls (a busy machine, a pause of the collector) do not
// stretch the pace: it follows the recent polls' median time.
func TestPollPaceIgnoresAFewSlowPolls(t *testing.T) {
	const span = 20 * time.Second
	n := 0
	var starts []time.Time
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), span)
		defer cancel()
		everyPoll(ctx, Budget{}, true, func() {
			starts = append(starts, time.Now())
			n++
			if n%10 == 0 {
				time.Sleep(50 * time.Millisecond) // one poll in ten
				return
			}
			time.Sleep(time.Millisecond)
		})
	})
	// Nine polls of 1 ms and one of 50 ms per ten: at the median's pace,
	// ten polls take 10 × 10 ms + 49 ms.
	want := float64(span) / float64(149*time.Millisecond/10)
	if got := float64(len(starts)); math.Abs(got-want) > 0.15*want {
		t.Errorf("%d polls in %s, want %.0f ± 15 %%: the pace of the 1 ms polls, not of the slow ones", len(starts), span, want)
	}
}
