package scenarios

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"shardsim/property"
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

// cleanSweep is the outcome of a clean sweep of one scenario.
type cleanSweep struct {
	mu       sync.Mutex
	runs     int
	events   uint64
	totals   map[string]int64
	runsWith map[string]int
	wall     time.Duration
}

func (s *cleanSweep) add(r Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs++
	s.events += r.Events
	for _, st := range r.Stats {
		s.totals[st.Name] += st.Value
		if st.Value > 0 {
			s.runsWith[st.Name]++
		}
	}
}

func (s *cleanSweep) summary() string {
	names := make([]string, 0, len(s.totals))
	for k := range s.totals {
		names = append(names, k)
	}
	sort.Strings(names)
	out := fmt.Sprintf("%d runs, %.0f seeds/s, %.0f events/s, %d events/run\n", s.runs,
		float64(s.runs)/s.wall.Seconds(), float64(s.events)/s.wall.Seconds(), s.events/uint64(max(s.runs, 1)))
	for _, k := range names {
		out += fmt.Sprintf("  %-22s total %7d  in %4d runs\n", k, s.totals[k], s.runsWith[k])
	}
	return out
}

// sweepClean runs seeds 1..n of scenario with every bug off, in parallel
// chunks (each world is single-threaded and independent, so parallelism
// cannot change a run), as the subtest scenario, and fails the test on any
// verdict but ok, naming the replay.
func sweepClean(t *testing.T, scenario string, n int) *cleanSweep {
	s := &cleanSweep{totals: map[string]int64{}, runsWith: map[string]int{}}
	const chunk = 25
	start := time.Now()
	t.Run(scenario, func(t *testing.T) {
		for lo := 1; lo <= n; lo += chunk {
			lo := lo
			t.Run(fmt.Sprintf("seeds-%d", lo), func(t *testing.T) {
				t.Parallel()
				for seed := lo; seed < lo+chunk && seed <= n; seed++ {
					res, err := Run(scenario, Config{Seed: uint64(seed)})
					if err != nil {
						t.Fatal(err)
					}
					if res.Verdict != property.VerdictOK {
						t.Fatalf("seed %d: %s %s: %s\nreplay: simrun run -scenario %s -seed %d", seed, res.Verdict, res.Property, res.Detail, scenario, seed)
					}
					s.add(res)
				}
			})
		}
	})
	s.wall = time.Since(start)
	return s
}

// requireCounters fails t for each named counter no run of the sweep
// counted: the sweep did not exercise what its test claims it does.
func requireCounters(t *testing.T, scenario string, s *cleanSweep, names ...string) {
	t.Helper()
	for _, k := range names {
		if s.totals[k] == 0 {
			t.Errorf("%s: no run of %d counted %s: the sweep did not exercise it", scenario, s.runs, k)
		}
	}
}
