package group

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"shardsim/model/bugs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// dumpState is what a voter's state holds, as far as its exported fields
// and its store show it: equal dumps for states that must be equal.
func dumpState(f *fsm.FSM) string {
	s := fmt.Sprintf("applied=%d last=%v ceiling=%d compacted=%v minview=%d horizon=%v:",
		f.Applied, f.LastCommit, f.Ceiling, f.CompactedTS, f.MinView, f.Horizon())
	f.Store.Ascend("", "", func(k string, vs []mvcc.Version) bool {
		s += fmt.Sprintf(" %s%v", k, vs)
		return true
	})
	return s
}

// randomDecidedEntry returns a write (some too old to be admitted), a
// compaction or a cleanup: the kinds whose apply a follower takes from a
// kept decision.
func randomDecidedEntry(rt *rapid.T, next uint64) fsm.Entry {
	ts := hlc.TS((next - uint64(rapid.IntRange(0, 3).Draw(rt, "back"))) << hlc.LogicalBits)
	switch rapid.IntRange(0, 5).Draw(rt, "kind") {
	case 0:
		return fsm.Entry{Kind: fsm.KindCompact, TS: ts}
	case 1:
		return fsm.Entry{Kind: fsm.KindCleanup, Cleanup: &fsm.Cleanup{Job: 1, Moving: keys.Span{Start: "k3", End: "k6"}, FenceTS: ts}}
	}
	key := "k" + strconv.Itoa(rapid.IntRange(0, 7).Draw(rt, "key"))
	return fsm.Entry{Kind: fsm.KindWrite, Write: &fsm.Write{Key: key, Value: "v" + strconv.FormatUint(next, 10), TS: ts, Op: "w"}}
}

// Voters whose states share a name hold equal states, and every voter's
// state is the one applying the committed log alone gives, under leader
// changes, log truncations, crashes, pauses, snapshots and membership
// changes, over logs of entries that voters apply by kept decisions.
// This is what makes following a decision sound: a shared name that
// hides a difference, or a decision followed from the wrong state, shows
// as a voter whose state differs from its name-mate's or from the log's.
func TestStateNamesStayEqualUnderFaults(t *testing.T) {
	var shared, snapshots int
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(rapid.Uint64().Draw(rt, "seed"), 5, []int{0, 1, 2})
		w.c.ElectNow(0, 0)
		committed := map[uint64]fsm.Entry{}
		f := &faults{w: w, down: -1}
		next := uint64(10)
		steps := rapid.IntRange(10, 60).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0, 1, 2, 3, 4:
				w.proposeFromLeaders(func() fsm.Entry { next++; return randomDecidedEntry(rt, next-1) })
			case 5:
				f.depose(rt)
			case 6:
				f.takeDown(rt)
			case 7:
				f.heal()
			case 8:
				f.changeVoters(rt)
			}
			w.loop.RunUntil(w.loop.Now().Add(time.Duration(rapid.IntRange(0, 30).Draw(rt, "wait")) * time.Millisecond))
			w.recordCommitted(rt, committed)
			w.checkStateNames(rt, committed)
		}
		f.heal()
		w.loop.RunUntil(w.loop.Now().Add(time.Second))
		w.recordCommitted(rt, committed)
		w.checkStateNames(rt, committed)
		shared += w.sharedNames()
		snapshots += w.c.Stats().Snapshots
	})
	if shared == 0 || snapshots == 0 {
		t.Fatalf("the runs never ended with a shared state name (%d) or installed a snapshot (%d)", shared, snapshots)
	}
}

// checkStateNames fails if two replicas share a state name but hold
// different states, or if a replica's state is not what applying the
// committed entries alone, from a fresh state, gives.
func (w *testWorld) checkStateNames(rt *rapid.T, committed map[uint64]fsm.Entry) {
	byName := map[uint64]*replica{}
	for _, r := range w.c.groups[0].reps {
		if r == nil {
			continue
		}
		got := dumpState(r.fsm)
		if o, ok := byName[r.stateName]; ok && dumpState(o.fsm) != got {
			rt.Fatalf("n%d and n%d share state name %d but hold\n%s\n%s", o.node, r.node, r.stateName, dumpState(o.fsm), got)
		}
		byName[r.stateName] = r
		alone := fsm.New(0, bugs.None)
		for i := uint64(1); i <= r.fsm.Applied; i++ {
			e := committed[i]
			alone.ApplyEntry(&e)
		}
		if want := dumpState(alone); got != want {
			rt.Fatalf("n%d holds\n%s\nbut applying the log alone gives\n%s", r.node, got, want)
		}
	}
}

// sharedNames counts the state names more than one replica carries: after
// the first apply from a shared start, a name stays shared only through
// followed decisions and snapshots.
func (w *testWorld) sharedNames() int {
	names := map[uint64]int{}
	n := 0
	for _, r := range w.c.groups[0].reps {
		if r != nil {
			names[r.stateName]++
			if names[r.stateName] == 2 {
				n++
			}
		}
	}
	return n
}
