package mvcc

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

// checkOrder verifies o's structure (no empty or oversized block, keys
// ascending within and across blocks, records matching) against want.
func checkOrder(t *testing.T, o *keyOrder, want []string, recs map[string]*keyVersions) {
	t.Helper()
	var got []string
	for bi, bl := range o.blocks {
		if len(bl.keys) == 0 || len(bl.keys) > blockMax || len(bl.keys) != len(bl.recs) {
			t.Fatalf("block %d holds %d keys and %d records", bi, len(bl.keys), len(bl.recs))
		}
		for i, k := range bl.keys {
			if bl.recs[i] != recs[k] {
				t.Fatalf("block %d: %q has another key's record", bi, k)
			}
		}
		got = append(got, bl.keys...)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order holds %d keys, want %d; first difference in %v", len(got), len(want), firstDiff(got, want))
	}
	// Walking by position visits the same keys.
	var walked []string
	for p := o.seek(""); o.valid(p); p = o.next(p) {
		walked = append(walked, o.key(p))
	}
	if !slices.Equal(walked, want) {
		t.Fatalf("walk visits %v", firstDiff(walked, want))
	}
}

func firstDiff(a, b []string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf("[%d]: %q vs %q", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}

// The blocked order holds exactly the keys a plain sorted slice would,
// through random insertions and removals that split blocks and empty them,
// and seek finds the first key at or after any probe.
func TestKeyOrderMatchesSortedSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 20; round++ {
		var o keyOrder
		var want []string
		recs := map[string]*keyVersions{}
		space := 50 + r.IntN(900)
		for op := 0; op < 3000; op++ {
			k := fmt.Sprintf("k%04d", r.IntN(space))
			i, held := slices.BinarySearch(want, k)
			switch {
			case !held && r.IntN(3) > 0:
				recs[k] = &keyVersions{}
				o.insert(k, recs[k])
				want = slices.Insert(want, i, k)
			case held && r.IntN(2) == 0:
				o.remove(k)
				want = slices.Delete(want, i, i+1)
				delete(recs, k)
			default:
				o.remove(k + "x") // a key the order does not hold changes nothing
			}
			if op%97 == 0 || op == 2999 {
				checkOrder(t, &o, want, recs)
				probe := fmt.Sprintf("k%04d", r.IntN(space+2))
				if r.IntN(2) == 0 {
					probe += "5"
				}
				j, _ := slices.BinarySearch(want, probe)
				p := o.seek(probe)
				if (j == len(want)) != !o.valid(p) || j < len(want) && o.key(p) != want[j] {
					t.Fatalf("seek(%q) lands at %+v, want key %d of %d", probe, p, j, len(want))
				}
			}
		}
	}
}

// Ascend, KeysIn, Export and Clone over a store large enough to span many
// blocks agree with the plain sorted order of its keys.
func TestLargeStoreWalksInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	s := New()
	var want []string
	for i := 0; i < 5*blockMax; i++ {
		k := fmt.Sprintf("k%05d", r.IntN(100000))
		if s.Put(k, Version{TS: 1, Value: k}) {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	for _, st := range []*Store{s, s.Clone()} {
		if got := st.KeysIn("", ""); !slices.Equal(got, want) || st.Keys() != len(want) {
			t.Fatalf("KeysIn: %s", firstDiff(got, want))
		}
		lo, hi := want[len(want)/5], want[len(want)*4/5]
		i, _ := slices.BinarySearch(want, lo)
		j, _ := slices.BinarySearch(want, hi)
		if got := st.KeysIn(lo, hi); !slices.Equal(got, want[i:j]) {
			t.Fatalf("KeysIn(%q, %q): %s", lo, hi, firstDiff(got, want[i:j]))
		}
		for _, mode := range []ExportMode{ExportVersions, ExportKeyCursor, ExportReadVisible} {
			span := keys.Span{Start: lo, End: hi}
			req := ExportRequest{Bracket: keys.BracketFor(keys.FamilyUser, span), Span: span, High: 5, MaxRows: 7, Budget: 9, Mode: mode}
			var got []string
			for chunks := 0; ; chunks++ {
				res := st.Export(req)
				for _, row := range res.Rows {
					got = append(got, row.Key)
				}
				if res.Done {
					break
				}
				if chunks > len(want) {
					t.Fatalf("mode %v: export never finished", mode)
				}
				req.After = res.Next
			}
			if !slices.Equal(got, want[i:j]) {
				t.Fatalf("export (mode %v) of [%q, %q): %s", mode, lo, hi, firstDiff(got, want[i:j]))
			}
		}
	}
}

// atOrBelow answers the newest-version case without searching: it must
// agree with the search on every timestamp around every version.
func TestAtOrBelowMatchesSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for round := 0; round < 500; round++ {
		var vs []Version
		ts := hlc.TS(1 + r.IntN(5))
		for n := r.IntN(6); n > 0; n-- {
			vs = append([]Version{{TS: ts}}, vs...) // newest first
			ts += hlc.TS(1 + r.IntN(3))
		}
		for probe := hlc.TS(0); probe <= ts+1; probe++ {
			want := sort.Search(len(vs), func(i int) bool { return vs[i].TS <= probe })
			if got := atOrBelow(vs, probe); got != want {
				t.Fatalf("atOrBelow(%v, %d) = %d, want %d", vs, probe, got, want)
			}
		}
	}
}

// lowerBound finds slices.BinarySearch's position on random sorted key
// lists (duplicates, the empty key, keys before, among and after them).
func TestLowerBoundIsBinarySearch(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	word := func(letters string) string {
		b := make([]byte, r.IntN(4))
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		return string(b)
	}
	for range 20000 {
		keys := make([]string, r.IntN(12))
		for i := range keys {
			keys[i] = word("abc")
		}
		slices.Sort(keys)
		key := word("abcd")
		want, _ := slices.BinarySearch(keys, key)
		if got := lowerBound(keys, key); got != want {
			t.Fatalf("lowerBound(%q, %q) = %d, want %d", keys, key, got, want)
		}
	}
}
