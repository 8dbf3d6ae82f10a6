//go:build unix

package scenarios

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the process has used so far.
// On a machine others share, wall time measures the load as much as the
// code; CPU time does not.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
