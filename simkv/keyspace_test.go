package simkv

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestSpanReadsOneWay checks that a span's index search (inRange) and its
// membership test (contains) read etcd's range convention the same way,
// and that live's answer is the keys contains admits: single keys, from-key
// ranges, [key, end) ranges and empty ones, over random key sets.
func TestSpanReadsOneWay(t *testing.T) {
	alphabet := []string{"", "a", "b", "ab", "b\x00", "c", "\x00", "\xff"}
	rapid.Check(t, func(t *rapid.T) {
		ks := newKeyspace()
		for _, k := range rapid.SliceOfDistinct(rapid.SampledFrom(alphabet[1:]), rapid.ID[string]).Draw(t, "keys") {
			ks.append([]byte(k), entry{mod: 2, create: 2, version: 1})
		}
		key := []byte(rapid.SampledFrom(alphabet[1:]).Draw(t, "key"))
		end := []byte(rapid.SampledFrom(alphabet).Draw(t, "end"))
		sp := spanOf(key, end)
		var want []string
		for _, k := range ks.keys {
			if sp.contains([]byte(k)) {
				want = append(want, k)
			}
		}
		if got := ks.inRange(sp); !slices.Equal(got, want) {
			t.Fatalf("span %q..%q: inRange %q, contains admits %q", key, end, got, want)
		}
		if sp.empty() && len(want) > 0 {
			t.Fatalf("span %q..%q is empty but admits %q", key, end, want)
		}
		kvs, count := ks.live(sp, 2, 0)
		if count != len(want) || len(kvs) != len(want) {
			t.Fatalf("span %q..%q: live found %d (count %d), want %d", key, end, len(kvs), count, len(want))
		}
		for i := range kvs {
			if string(kvs[i].Key) != want[i] {
				t.Fatalf("span %q..%q: live %q at %d, want %q", key, end, kvs[i].Key, i, want[i])
			}
		}
	})
}
