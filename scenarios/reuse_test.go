package scenarios

import (
	"slices"
	"testing"

	"shardsim/model/bugs"
)

// TestReusedKernelBuffersLeakNothing runs violating and passing migrate
// worlds one after another in this process, so that each runs on the trace
// buffers, events and coroutines the worlds before it left (see
// simclock.NewReusedTrace and Loop.Close), and checks that a seed's
// result, its digest and its violation report's trace tail included, is
// the same whichever worlds ran before it.
func TestReusedKernelBuffersLeakNothing(t *testing.T) {
	bug := bugs.MustParse("migrate.cleanup-before-promotion")
	first := map[uint64]Result{}
	tails := 0
	for _, seed := range []uint64{1, 7, 2, 1, 3, 7, 2, 3, 1} {
		res, err := Run("migrate", Config{Seed: seed, Bugs: bug})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tail) > 0 {
			tails++
		}
		was, seen := first[seed]
		if !seen {
			first[seed] = res
			continue
		}
		if res.Digest != was.Digest || res.Verdict != was.Verdict || res.Records != was.Records ||
			res.Events != was.Events || !slices.Equal(res.Tail, was.Tail) {
			t.Fatalf("seed %d after other worlds: digest %s, %d tail records; first run: %s, %d",
				seed, res.Digest, len(res.Tail), was.Digest, len(was.Tail))
		}
	}
	if tails == 0 {
		t.Fatalf("no run reported a violation with a trace tail: the tails are not compared")
	}
}
