//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU is the user+system CPU time this process has used so far:
// the driver's own cost, which must stay small beside the database's.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
