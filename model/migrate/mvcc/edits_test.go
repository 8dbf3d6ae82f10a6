package mvcc

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"shardsim/model/migrate/hlc"
)

// refStore is the straightforward model of a store's edits: every key's
// versions newest first, rebuilt as a fresh slice on every edit.
type refStore map[string][]Version

func (r refStore) put(k string, v Version) {
	vs := slices.DeleteFunc(slices.Clone(r[k]), func(o Version) bool { return o.TS == v.TS })
	vs = append(vs, v)
	slices.SortFunc(vs, func(a, b Version) int { return int(b.TS) - int(a.TS) })
	r[k] = vs
}

func (r refStore) keep(k string, keep func(Version) bool) {
	var vs []Version
	for _, v := range r[k] {
		if keep(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		delete(r, k)
		return
	}
	r[k] = vs
}

// TestEditsReuseSlotsSafely checks that Delete and the truncations, which
// shorten a key's versions in place (a later Put reuses the freed slots),
// leave every key holding exactly what the straightforward model holds,
// and that a version slice read before an edit of another key is untouched.
func TestEditsReuseSlotsSafely(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, ref := New(), refStore{}
		for i, n := 0, rapid.IntRange(1, 200).Draw(t, "ops"); i < n; i++ {
			k := fmt.Sprintf("k%d", rapid.IntRange(0, 3).Draw(t, "key"))
			other := fmt.Sprintf("k%d", rapid.IntRange(0, 3).Draw(t, "other"))
			ts := hlc.TS(rapid.IntRange(1, 12).Draw(t, "ts"))
			var held []Version
			if other != k {
				held = slices.Clone(s.Versions(other))
			}
			heldLive := s.Versions(other)
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				v := Version{TS: ts, Value: fmt.Sprintf("v%d", i)}
				s.Put(k, v)
				ref.put(k, v)
			case 1:
				s.Delete(k, ts)
				ref.keep(k, func(v Version) bool { return v.TS != ts })
			case 2:
				s.DeleteBelow(k, ts)
				ref.keep(k, func(v Version) bool { return v.TS >= ts })
			case 3:
				s.DeleteAtOrBelow(k, ts)
				ref.keep(k, func(v Version) bool { return v.TS > ts })
			}
			if other != k && !slices.Equal(held, heldLive) {
				t.Fatalf("editing %s changed the versions of %s: %v, was %v", k, other, heldLive, held)
			}
			total := 0
			for _, key := range []string{"k0", "k1", "k2", "k3"} {
				if got, want := s.Versions(key), ref[key]; !slices.Equal(got, want) {
					t.Fatalf("after op %d, %s holds %v, want %v", i, key, got, want)
				}
				total += len(ref[key])
			}
			if s.Len() != total || s.Keys() != len(ref) {
				t.Fatalf("Len %d Keys %d, want %d and %d", s.Len(), s.Keys(), total, len(ref))
			}
		}
	})
}

// EachWithHistory visits what a full ordered walk keeping the keys with
// more than one version visits, in the same order, on small stores and on
// stores of many blocks.
func TestEachWithHistoryMatchesFilteredWalk(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := randomStore(t)
		if rapid.Bool().Draw(t, "large") {
			for i, n := 0, rapid.IntRange(0, 600).Draw(t, "keys"); i < n; i++ {
				k := fmt.Sprintf("big%04d", rapid.IntRange(0, 400).Draw(t, "key"))
				s.Put(k, Version{TS: hlc.TS(rapid.IntRange(1, 5).Draw(t, "ts"))})
			}
		}
		type visit struct {
			key string
			vs  []Version
		}
		var want, got []visit
		s.Ascend("", "", func(k string, vs []Version) bool {
			if len(vs) > 1 {
				want = append(want, visit{k, vs})
			}
			return true
		})
		s.EachWithHistory(func(k string, vs []Version) { got = append(got, visit{k, vs}) })
		if len(got) != len(want) {
			t.Fatalf("%d keys visited, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i].key != want[i].key || !slices.Equal(got[i].vs, want[i].vs) {
				t.Fatalf("visit %d: %s %v, want %s %v", i, got[i].key, got[i].vs, want[i].key, want[i].vs)
			}
		}
	})
}
