//go:build !linux

package bench

import "time"

// processWait is not measured where the kernel keeps no schedstat.
func processWait() (time.Duration, bool) { return 0, false }
