package migratecheck

import (
	"cmp"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/mvcc"
)

// At answers as a map from (key, timestamp) to the last write added there
// would, over random oracles with several writes at one timestamp of a
// key, and Versions stays newest first.
func TestOracleAtAgreesWithMap(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for run := 0; run < 500; run++ {
		o := NewVersionOracle()
		want := map[rowID]AppliedWrite{}
		for i := 0; i < 1+r.Intn(40); i++ {
			w := AppliedWrite{Op: fmt.Sprint("op", r.Intn(20)), Key: fmt.Sprint("k", r.Intn(6)), Group: i,
				Version: mvcc.Version{TS: hlc.TS(r.Intn(12)), Value: fmt.Sprint(i)}}
			o.Add(w)
			want[rowID{w.Key, w.TS}] = w
		}
		for k := 0; k < 6; k++ {
			key := fmt.Sprint("k", k)
			vs := o.Versions(key)
			if !slices.IsSortedFunc(vs, func(a, b mvcc.Version) int { return cmp.Compare(b.TS, a.TS) }) {
				t.Fatalf("versions of %s not newest first: %v", key, vs)
			}
			for ts := hlc.TS(0); ts < 13; ts++ {
				got, ok := o.At(key, ts)
				w, wok := want[rowID{key, ts}]
				if ok != wok || got != w {
					t.Fatalf("At(%s, %v) = %+v %v, want %+v %v", key, ts, got, ok, w, wok)
				}
			}
		}
	}
}

// Every key's versions, and the write that created each, are exactly all
// the writes added to it ordered by timestamp, newest first, and among
// writes at one timestamp the later added first: over random oracles whose
// keys grow their lists at once, several times each (moveVersions).
func TestOracleVersionsAgreeWithSortedWrites(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for run := 0; run < 2000; run++ {
		o := NewVersionOracle()
		added := map[string][]AppliedWrite{}
		for i := 0; i < 1+r.Intn(120); i++ {
			w := AppliedWrite{Op: fmt.Sprint("op", r.Intn(50)), Key: fmt.Sprint("k", r.Intn(8)), Group: i,
				Version: mvcc.Version{TS: hlc.TS(r.Intn(30)), Value: fmt.Sprint(i)}}
			o.Add(w)
			added[w.Key] = append(added[w.Key], w)
		}
		for key, ws := range added {
			want := slices.Clone(ws)
			slices.Reverse(want) // later added first among equal timestamps (stable sort)
			slices.SortStableFunc(want, func(a, b AppliedWrite) int { return cmp.Compare(b.TS, a.TS) })
			k := o.keys[key]
			if len(k.vs) != len(want) || len(k.by) != len(want) {
				t.Fatalf("run %d: key %s has %d versions and %d writers, want %d", run, key, len(k.vs), len(k.by), len(want))
			}
			for i, w := range want {
				if by := k.by[i]; k.vs[i] != w.Version || by.op.ws[by.i] != w {
					t.Fatalf("run %d: key %s version %d is %+v by %+v, want %+v", run, key, i, k.vs[i], by.op.ws[by.i], w)
				}
			}
		}
	}
}
