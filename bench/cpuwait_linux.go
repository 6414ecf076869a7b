package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// processWait is the time this process's threads have spent ready to run
// but waiting for a CPU (the second field of each thread's
// /proc/self/task/TID/schedstat: run-queue delay, in nanoseconds): what
// other processes took from a driver that asked for more. Threads that
// have exited take their share with them; the Go runtime rarely ends one.
func processWait() (time.Duration, bool) {
	files, err := filepath.Glob("/proc/self/task/*/schedstat")
	if err != nil || len(files) == 0 {
		return 0, false
	}
	var total time.Duration
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited since the listing
		}
		wait, ok := schedstatWait(string(b))
		if !ok {
			return 0, false
		}
		total += wait
	}
	return total, true
}

// schedstatWait reads the run-queue delay of one schedstat line
// ("cpu_ns wait_ns timeslices").
func schedstatWait(line string) (time.Duration, bool) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0, false
	}
	ns, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(ns), true
}
