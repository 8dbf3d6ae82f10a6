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
		down := -1
		next := uint64(10)
		heal := func() {
			if down >= 0 {
				if !w.c.Up(down) {
					w.loop.Restart(w.c.Actor(down), w.nodes[down])
				} else {
					w.loop.Resume(w.c.Actor(down))
				}
				w.c.NodeUp(down)
				down = -1
			}
		}
		steps := rapid.IntRange(10, 60).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0, 1, 2, 3, 4: // every node that believes it leads proposes
				for n, s := range w.nodes {
					if term, ok := s.leads[0]; ok && w.c.Up(n) && !w.loop.Paused(w.c.Actor(n)) {
						_, _ = w.c.Propose(0, n, term, randomDecidedEntry(rt, next))
						next++
					}
				}
			case 5:
				w.c.Depose(0, rapid.IntRange(-1, 4).Draw(rt, "prefer"), time.Millisecond)
			case 6:
				if down < 0 {
					down = rapid.IntRange(0, 4).Draw(rt, "down")
					if rapid.Bool().Draw(rt, "crash") {
						w.loop.Crash(w.c.Actor(down))
						w.c.NodeDown(down, true)
					} else {
						w.loop.Pause(w.c.Actor(down))
						w.c.NodeDown(down, false)
					}
				}
			case 7:
				heal()
			case 8:
				if l, term := w.c.Leader(0); l >= 0 {
					w.c.MarkReady(0, term)
					vs := w.c.Voters(0)
					n := rapid.IntRange(0, 4).Draw(rt, "member")
					if contains(vs, n) && len(vs) > 3 {
						_ = w.c.ChangeVoters(0, -1, n)
					} else if !contains(vs, n) {
						_ = w.c.ChangeVoters(0, n, -1)
					}
				}
			}
			w.loop.RunUntil(w.loop.Now().Add(time.Duration(rapid.IntRange(0, 30).Draw(rt, "wait")) * time.Millisecond))
			w.recordCommitted(rt, committed)
			w.checkStateNames(rt, committed)
		}
		heal()
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
