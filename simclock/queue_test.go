package simclock

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The queue pops events in (at, seq) order whatever the mix of pushes and
// pops: checked against a sorted list on random workloads with many equal
// times, the case where the order among them is up to seq.
func TestEventQueuePopsInTimeThenSeqOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var q eventQueue
		var model []*event
		seq := uint64(0)
		for op := 0; op < 500; op++ {
			if len(model) == 0 || rng.IntN(3) > 0 {
				seq++
				e := &event{at: Time(rng.IntN(20)), seq: seq}
				q.push(e)
				model = append(model, e)
				continue
			}
			slices.SortFunc(model, func(a, b *event) int {
				if before(a, b) {
					return -1
				}
				return 1
			})
			want := model[0]
			model = model[1:]
			if got := q.pop(); got != want {
				t.Fatalf("round %d op %d: popped (%d, %d), want (%d, %d)", round, op, got.at, got.seq, want.at, want.seq)
			}
			if len(q) != len(model) {
				t.Fatalf("round %d: queue holds %d, want %d", round, len(q), len(model))
			}
		}
	}
}
