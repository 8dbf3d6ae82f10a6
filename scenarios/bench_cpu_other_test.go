//go:build !unix

package scenarios

import "time"

// processCPU is not measured here; the benchmark then reports no CPU time.
func processCPU() time.Duration { return 0 }
