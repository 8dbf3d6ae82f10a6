package coordcheck

import (
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"shardsim/model/coord"
)

// TestFNV1aMatchesHashFNV checks the inlined hash against hash/fnv.
func TestFNV1aMatchesHashFNV(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 200; n++ {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		h := fnv.New64a()
		h.Write(b)
		if got, want := fnv1a(string(b)), h.Sum64(); got != want {
			t.Fatalf("len %d: fnv1a %x, hash/fnv %x", len(b), got, want)
		}
	}
}

// TestStateTableInterns checks that equal records share one state and
// different records get different states holding them.
func TestStateTableInterns(t *testing.T) {
	tab := newStateTable()
	a := coord.ShardRecord{Run: 1, Shard: 2, Spec: coord.ShardSpec{Start: []byte("a"), End: []byte("m")}}
	b := a
	b.Fence = 3
	sa, sb := tab.of(&a), tab.of(&b)
	if sa == sb || sa.equal(sb) {
		t.Fatal("records that differ share a state")
	}
	again := a.Clone()
	if tab.of(&again) != sa {
		t.Fatal("an equal record got a state of its own")
	}
	if sa.rec.Fence != 0 || sb.rec.Fence != 3 || sa.enc != string(coord.EncodeShardRecord(&a)) {
		t.Fatal("a state does not hold its record and encoding")
	}
}
