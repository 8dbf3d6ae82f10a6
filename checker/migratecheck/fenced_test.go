package migratecheck

import (
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"testing"

	mcat "shardsim/model/migrate/catalog"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/mvcc"
)

// Fenced lets an observer skip SourceWrite (and the catalog lookup that
// works out ownsNow): on random job histories (jobs of random groups
// reaching random phases with and without fence_ts, catalogs fencing,
// unfencing and cutting their routes over), whenever Fenced(g) is false,
// SourceWrite(g, ...) passes every key at every timestamp even with
// ownsNow false. The test also counts the writes SourceWrite rejects, so it
// cannot pass on histories where nothing is ever fenced.
func TestFencedCoversSourceWrite(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	testKeys := []string{"", "a", "k", "k1", "k5", "k55", "k6", "k7", "k9", "z"}
	splits := []string{"k1", "k5", "k6", "k7"}
	rejected, skipped := 0, 0
	for run := 0; run < 3000; run++ {
		c := NewJobChecker()
		version := uint64(1)
		for step := 0; step < 1+rng.Intn(12); step++ {
			j := job.SplitJob{ID: uint64(1 + rng.Intn(3)), SourceGroup: rng.Intn(3), TargetGroup: rng.Intn(3),
				SplitKey: splits[rng.Intn(len(splits))], Phase: job.Phase(1 + rng.Intn(int(job.Abandoned)))}
			if rng.Intn(2) == 0 {
				j.FenceTS = hlc.TS(10 * (1 + rng.Intn(9)))
			}
			var cat *mcat.Catalog
			if rng.Intn(2) == 0 {
				version++
				start := splits[rng.Intn(len(splits))]
				cat = &mcat.Catalog{Version: version, NextRouteID: 4, Routes: []mcat.Route{
					{ID: 1, Start: "", End: start, Group: rng.Intn(3)},
					{ID: 2, Start: start, End: "", Group: rng.Intn(3), State: mcat.State(rng.Intn(2))},
				}}
				j.MovingRouteID = uint64(1 + rng.Intn(3))
			}
			c.Recorded(j, cat)
		}
		for g := 0; g < 3; g++ {
			fenced := c.Fenced(g)
			for _, k := range testKeys {
				ts := hlc.TS(5 * (1 + rng.Intn(20)))
				v := c.SourceWrite(g, k, ts, false)
				if v != nil {
					rejected++
				}
				if !fenced {
					skipped++
					if v != nil {
						t.Fatalf("run %d: Fenced(%d) false, but SourceWrite rejects %q at %s: %v", run, g, k, ts, v)
					}
				}
			}
		}
	}
	if rejected < 1000 || skipped < 1000 {
		t.Fatalf("too few cases: %d writes rejected, %d skipped", rejected, skipped)
	}
}

// sortCopyRows puts rows in exactly the order sort.Slice with CheckCopy's
// former less function did, also among rows with one key and timestamp
// (told apart here by their values), on random row sets of every size up
// to well past the insertion-sort cut-off.
func TestSortCopyRowsAgreesWithSortSlice(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for run := 0; run < 5000; run++ {
		rows := make([]mvcc.Row, rng.Intn(80))
		for i := range rows {
			rows[i] = mvcc.Row{Key: string(rune('a' + rng.Intn(4))), Version: mvcc.Version{TS: hlc.TS(rng.Intn(6)), Value: strconv.Itoa(i)}}
		}
		want := slices.Clone(rows)
		sort.Slice(want, func(a, b int) bool {
			if want[a].Key != want[b].Key {
				return want[a].Key < want[b].Key
			}
			return want[a].TS > want[b].TS
		})
		sortCopyRows(rows)
		if !slices.Equal(rows, want) {
			t.Fatalf("run %d: sortCopyRows %v, sort.Slice %v", run, rows, want)
		}
	}
}
