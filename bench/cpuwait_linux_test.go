package bench

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestSchedstatWait(t *testing.T) {
	if d, ok := schedstatWait("995273 20768551 3\n"); !ok || d != 20768551*time.Nanosecond {
		t.Errorf("schedstatWait = %v, %v; want 20.768551ms", d, ok)
	}
	for _, bad := range []string{"", "12", "12 x 3"} {
		if _, ok := schedstatWait(bad); ok {
			t.Errorf("schedstatWait(%q) ok; want refused", bad)
		}
	}
}

// Two threads spinning on one CPU each wait for it about half the time:
// the process's wait grows by about the wall time, well more than with
// one spinning thread alone there, whatever else holds that CPU. (Two,
// not more: GOMAXPROCS may be 2, and a third thread would wait in Go's
// own run queue, which the kernel does not see.)
func TestProcessWaitSeesRunQueueDelay(t *testing.T) {
	if _, ok := processWait(); !ok {
		t.Skip("no /proc/self/task/*/schedstat")
	}
	// The first CPU this process may run on (a container's cpuset may
	// leave CPU 0 out).
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Fatal(err)
	}
	crowded := 0
	for !allowed.IsSet(crowded) {
		crowded++
	}
	spin := func(threads int, d time.Duration) time.Duration {
		before, _ := processWait()
		var wg sync.WaitGroup
		for range threads {
			wg.Go(func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var set unix.CPUSet
				set.Set(crowded)
				if err := unix.SchedSetaffinity(0, &set); err != nil {
					t.Error(err)
					return
				}
				for end := time.Now().Add(d); time.Now().Before(end); {
				}
			})
		}
		wg.Wait()
		after, _ := processWait()
		return after - before
	}
	// The wait is the whole process's: on a busy machine the package's
	// other tests, and whatever else holds the CPU, add their own waits
	// to either measure. Such a try proves nothing either way, so the
	// test tries again, up to five times, before it fails.
	const d = 300 * time.Millisecond
	for try := 1; ; try++ {
		alone, both := spin(1, d), spin(2, d)
		t.Logf("try %d: waited %s with one thread on CPU %d, %s with two, over %s", try, alone, crowded, both, d)
		if both >= alone+d/4 {
			return
		}
		if try == 5 {
			t.Fatalf("two threads on one CPU waited %s in %s (one alone: %s); want at least %s more", both, d, alone, d/4)
		}
	}
}
