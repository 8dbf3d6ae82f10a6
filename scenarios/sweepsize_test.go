package scenarios

import (
	"os"
	"testing"
)

// longSweeps is set by SHARDSIM_LONG=1 (`make test-long`): the clean
// sweeps then run their long sizes.
var longSweeps = os.Getenv("SHARDSIM_LONG") == "1"

// sweepSeeds is how many seeds a sweep test runs. ci is the size `make
// test` runs: large enough that every assertion of the test holds with a
// margin (each sweep's comment says what its size must reach, and the
// first seed that reaches it). long, with SHARDSIM_LONG=1, is the big clean
// sweep, for more confidence than CI has time for. With -short the test is
// skipped, saying so: a sweep is never cut below what its assertions need.
func sweepSeeds(t *testing.T, ci, long int) int {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: a sweep of %d seeds (SHARDSIM_LONG=1: %d)", ci, long)
	}
	if longSweeps {
		t.Logf("SHARDSIM_LONG=1: %d seeds (make test runs %d)", long, ci)
		return long
	}
	return ci
}
