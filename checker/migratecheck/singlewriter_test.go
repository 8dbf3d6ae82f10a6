package migratecheck

import (
	"math/rand/v2"
	"testing"

	mcat "shardsim/model/migrate/catalog"
	"shardsim/property"
)

// singleWriterNaive is M.SingleWriter asked view by view and route by route
// for every key (what CheckSingleWriter did before it listed the accepting
// routes once per call): the reference the agreement test compares with.
func singleWriterNaive(routeKeys []string, views []GroupView) *property.Violation {
	accepts := func(gv *GroupView, k string) bool {
		for _, r := range gv.View.Routes {
			if r.Group == gv.Group && r.State == mcat.Active && inSpan(k, r.Start, r.End) {
				return true
			}
		}
		return false
	}
	for _, k := range routeKeys {
		owner := -1
		for i := range views {
			gv := &views[i]
			if !gv.Ready || gv.View.Version < gv.MinView || !accepts(gv, k) {
				continue
			}
			if owner >= 0 {
				return property.Violated(property.MSingleWriter, "groups %d and %d would both accept a write to %q (views v%d, v%d)",
					owner, gv.Group, k, viewOf(views, owner).Version, gv.View.Version)
			}
			owner = gv.Group
		}
	}
	return nil
}

// TestSingleWriterAgrees: on random views (overlapping and duplicated
// routes, repeated groups, stale and unready leaders) CheckSingleWriter
// returns exactly the naive check's verdict and message. That includes the
// pre-filter twoViewsShare (fails with routes of one view compared instead of
// two, with the smaller start taken, or with unbounded ends ignored).
func TestSingleWriterAgrees(t *testing.T) {
	bounds := []string{"", "a", "c", "k1", "k3", "k5", "k7", "z"}
	keys := []string{"a", "b", "k0", "k1", "k2", "k5", "k6", "k9", "zz"}
	r := rand.New(rand.NewPCG(7, 11))
	violations := 0
	for run := 0; run < 20000; run++ {
		views := make([]GroupView, r.IntN(5))
		for i := range views {
			gv := &views[i]
			gv.Group, gv.Ready, gv.MinView = r.IntN(4), r.IntN(5) > 0, uint64(r.IntN(3))
			gv.View.Version = uint64(r.IntN(4))
			for n := r.IntN(5); n > 0; n-- {
				start, end := bounds[r.IntN(len(bounds)-1)], bounds[r.IntN(len(bounds))]
				route := mcat.Route{Start: start, End: end, Group: gv.Group, State: mcat.Active}
				if r.IntN(4) == 0 {
					route.Group = r.IntN(4)
				}
				if r.IntN(4) == 0 {
					route.State = mcat.WriteFenced
				}
				gv.View.Routes = append(gv.View.Routes, route)
			}
		}
		got, want := CheckSingleWriter(keys, views), singleWriterNaive(keys, views)
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("run %d: views %+v: got %v, want %v", run, views, got, want)
		}
		if want != nil {
			violations++
		}
	}
	if violations < 2000 || violations > 18000 {
		t.Fatalf("only %d of the runs violate: the test does not exercise both verdicts", violations)
	}
}
