package group

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"shardsim/model/bugs"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/mvcc"
	"shardsim/simclock"
)

// stubNode applies on every tick and keeps its own belief about whom it
// leads, as a real node does: it learns of a lost leadership only from a
// LostLeader notice.
type stubNode struct {
	c      *Cluster
	n      int
	leads  map[int]uint64 // group -> believed term
	msgs   *[]string
	onTick func(g, n int, applied []Applied)
}

func (s *stubNode) Receive(ctx *simclock.Context, msg any) {
	switch m := msg.(type) {
	case ApplyTick:
		a := s.c.ApplyCommitted(m.Group, s.n, true, nil)
		if s.onTick != nil {
			s.onTick(m.Group, s.n, a)
		}
	case BecameLeader:
		s.leads[m.Group] = m.Term
		*s.msgs = append(*s.msgs, fmt.Sprintf("n%d leader t%d", s.n, m.Term))
	case LostLeader:
		if s.leads[m.Group] == m.Term {
			delete(s.leads, m.Group)
		}
		*s.msgs = append(*s.msgs, fmt.Sprintf("n%d lost t%d", s.n, m.Term))
	}
}

type testWorld struct {
	loop  *simclock.Loop
	c     *Cluster
	nodes []*stubNode
	msgs  *[]string
}

func newWorld(seed uint64, nodes int, voters []int) *testWorld {
	return newWorldWith(seed, nodes, voters, func(int, *fsm.FSM) {})
}

// newWorldWith is newWorld whose voter states prep changes before the
// cluster takes them.
func newWorldWith(seed uint64, nodes int, voters []int, prep func(n int, f *fsm.FSM)) *testWorld {
	loop := simclock.NewLoop(nil, simclock.Budget{})
	states := [][]*fsm.FSM{make([]*fsm.FSM, nodes)}
	for _, v := range voters {
		states[0][v] = fsm.New(0, bugs.None)
		prep(v, states[0][v])
	}
	cfg := Config{Nodes: nodes, Groups: 1, ReplMin: time.Millisecond, ReplMax: 3 * time.Millisecond,
		ApplyMin: time.Millisecond, ApplyMax: 2 * time.Millisecond, SlowApply: 0.3, SlowApplyMax: 50 * time.Millisecond,
		ElectMin: time.Millisecond, ElectMax: 5 * time.Millisecond, LearnMax: 20 * time.Millisecond}
	w := &testWorld{loop: loop, c: New(loop, cfg, simclock.NewSeeded(seed), states), msgs: &[]string{}}
	for n := 0; n < nodes; n++ {
		s := &stubNode{c: w.c, n: n, leads: map[int]uint64{}, msgs: w.msgs}
		w.nodes = append(w.nodes, s)
		w.c.Attach(n, loop.Spawn(fmt.Sprintf("n%d", n), s, nil, nil))
	}
	return w
}

func ceiling(v uint64) fsm.Entry { return fsm.Entry{Kind: fsm.KindCeiling, Ceiling: v} }

// proposeAsLeader proposes e from the true leader.
func (w *testWorld) proposeAsLeader(t *testing.T, e fsm.Entry) uint64 {
	l, term := w.c.Leader(0)
	idx, err := w.c.Propose(0, l, term, e)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// Every voter applies the committed log in order, at its own pace, and
// they all end with the same state.
func TestVotersApplyTheCommittedLog(t *testing.T) {
	w := newWorld(1, 3, []int{0, 1, 2})
	w.c.ElectNow(0, 0)
	for i := 0; i < 20; i++ {
		w.proposeAsLeader(t, ceiling(uint64(i+1)))
	}
	w.loop.Run()
	for n := 0; n < 3; n++ {
		v := w.c.Voter(0, n)
		if v.Applied != 20 || v.Ceiling != 20 {
			t.Fatalf("voter %d applied %d ceiling %d", n, v.Applied, v.Ceiling)
		}
	}
	if w.c.Committed(0) != 20 || w.c.MaxApplied(0) != 20 || w.c.MostApplied(0).Applied != 20 {
		t.Fatal("commit / max applied")
	}
}

// A deposed leader keeps proposing into its own log until it learns; those
// entries never commit, are truncated when the new leader replicates, and
// the deposed node is told it lost the term.
func TestDeposedLeaderKeepsActingUntilItLearns(t *testing.T) {
	w := newWorld(2, 3, []int{0, 1, 2})
	w.c.ElectNow(0, 0)
	w.proposeAsLeader(t, ceiling(1))
	w.loop.Run()
	w.c.Depose(0, 1, time.Millisecond)
	// Node 0 still believes it leads at term 1 and proposes.
	if _, err := w.c.Propose(0, 0, 1, ceiling(99)); err != nil {
		t.Fatalf("a deposed leader that has not learned is refused at once: %v", err)
	}
	w.loop.Run()
	if l, _ := w.c.Leader(0); l != 1 {
		t.Fatalf("leader %d, want the preferred node 1", l)
	}
	if _, ok := w.nodes[0].leads[0]; ok {
		t.Fatal("node 0 never learned it lost the term")
	}
	w.proposeAsLeader(t, ceiling(2))
	w.loop.Run()
	for n := 0; n < 3; n++ {
		v := w.c.Voter(0, n)
		if v.Ceiling == 99 {
			t.Fatalf("voter %d applied the deposed leader's entry", n)
		}
		if v.Applied != w.c.Committed(0) {
			t.Fatalf("voter %d applied %d of %d", n, v.Applied, w.c.Committed(0))
		}
	}
	if w.c.Stats().StaleAppends == 0 || w.c.Stats().Truncations == 0 {
		t.Fatalf("stats %+v: the stale append and its truncation went unnoticed", w.c.Stats())
	}
}

// A voter that cannot take part is skipped; the others elect a leader.
func TestElectionSkipsDownNodes(t *testing.T) {
	w := newWorld(3, 3, []int{0, 1, 2})
	w.c.ElectNow(0, 0)
	w.loop.Run()
	w.c.NodeDown(0, true)
	w.loop.Run()
	if l, _ := w.c.Leader(0); l <= 0 {
		t.Fatalf("leader %d after node 0 went down", l)
	}
	if len(w.c.Leaderless()) != 0 {
		t.Fatal("leaderless")
	}
}

// A candidate whose log lacks a committed entry cannot win: with one voter
// down, the voter missing the entry loses to the one holding it.
func TestElectionNeedsAnUpToDateLog(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		w := newWorld(seed, 3, []int{0, 1, 2})
		w.c.ElectNow(0, 0)
		w.loop.Run()
		w.loop.Pause(w.c.Actor(2)) // node 2 misses the next entry
		w.proposeAsLeader(t, ceiling(7))
		w.loop.Run()
		w.loop.Resume(w.c.Actor(2))
		w.c.NodeDown(0, true) // leader gone before node 2 catches up
		w.c.Depose(0, 2, time.Millisecond)
		w.loop.Run()
		if l, _ := w.c.Leader(0); l != 1 {
			t.Fatalf("seed %d: leader %d, want node 1 (node 2 lacks a committed entry)", seed, l)
		}
	}
}

// Membership: a voter joins from a snapshot and catches up; a voter leaves;
// a leader that removes itself steps down after the change commits.
func TestMembershipChanges(t *testing.T) {
	w := newWorld(4, 4, []int{0, 1, 2})
	w.c.ElectNow(0, 0)
	w.c.MarkReady(0, 1)
	for i := 0; i < 5; i++ {
		w.proposeAsLeader(t, ceiling(uint64(i+1)))
	}
	w.loop.Run()
	if err := w.c.ChangeVoters(0, 3, -1); err != nil {
		t.Fatal(err)
	}
	if err := w.c.ChangeVoters(0, -1, 1); err != ErrChangePending {
		t.Fatalf("a second change while one is pending: %v", err)
	}
	w.loop.Run()
	if got := w.c.Voters(0); fmt.Sprint(got) != "[0 1 2 3]" {
		t.Fatalf("voters %v", got)
	}
	if err := w.c.ChangeVoters(0, -1, 0); err != nil { // the leader removes itself
		t.Fatal(err)
	}
	w.loop.Run()
	l, term := w.c.Leader(0)
	if l <= 0 || fmt.Sprint(w.c.Voters(0)) != "[1 2 3]" {
		t.Fatalf("leader %d voters %v", l, w.c.Voters(0))
	}
	w.c.MarkReady(0, term)
	w.proposeAsLeader(t, ceiling(42))
	w.loop.Run()
	if v := w.c.Voter(0, 3); v.Ceiling != 42 || v.Applied != w.c.Committed(0) {
		t.Fatalf("the new voter is at %d/%d ceiling %d", v.Applied, w.c.Committed(0), v.Ceiling)
	}
}

// The rapid property: whatever the faults (leader changes, crashes, pauses,
// membership changes, proposals by deposed leaders), raft's safety holds —
// no two voters apply different entries at one index, every entry once
// committed stays in every later leader's log, logs that agree on an
// (index, term) agree on everything before it — and after the faults stop
// the group converges: one leader, every voter applies the same log.
func TestRaftSafetyProperties(t *testing.T) {
	var total Stats
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		w := newWorld(seed, 5, []int{0, 1, 2})
		applied := map[uint64]fsm.Entry{}
		for _, s := range w.nodes {
			s.onTick = func(g, n int, as []Applied) {
				for _, a := range as {
					if prev, ok := applied[a.Entry.Index]; ok && (prev.Term != a.Entry.Term || prev.Ceiling != a.Entry.Ceiling) {
						rt.Fatalf("index %d applied as t%d/%d and t%d/%d", a.Entry.Index, prev.Term, prev.Ceiling, a.Entry.Term, a.Entry.Ceiling)
					}
					applied[a.Entry.Index] = *a.Entry
				}
			}
		}
		w.c.ElectNow(0, 0)
		committed := map[uint64]fsm.Entry{}
		f := &faults{w: w, down: -1}
		next := uint64(1)
		steps := rapid.IntRange(10, 60).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0, 1, 2, 3:
				w.proposeFromLeaders(func() fsm.Entry { next++; return ceiling(next - 1) })
			case 4:
				f.depose(rt)
			case 5:
				f.takeDown(rt)
			case 6:
				f.heal()
			case 7:
				f.changeVoters(rt)
			}
			w.loop.RunUntil(w.loop.Now().Add(time.Duration(rapid.IntRange(0, 30).Draw(rt, "wait")) * time.Millisecond))
			w.recordCommitted(rt, committed)
		}
		f.heal()
		w.loop.RunUntil(w.loop.Now().Add(time.Second))
		l, term := w.c.Leader(0)
		if l < 0 {
			rt.Fatal("no leader after the faults stopped")
		}
		if _, err := w.c.Propose(0, l, term, ceiling(next)); err != nil {
			rt.Fatal(err)
		}
		w.loop.RunUntil(w.loop.Now().Add(time.Second))
		w.recordCommitted(rt, committed)
		last := w.c.LastIndex(0, l)
		if w.c.Committed(0) != last {
			rt.Fatalf("after the heal the leader's log ends at %d but %d is committed", last, w.c.Committed(0))
		}
		for _, v := range w.c.Voters(0) {
			if got := w.c.Voter(0, v).Applied; got != last {
				rt.Fatalf("voter %d applied %d of %d", v, got, last)
			}
		}
		w.checkLogMatching(rt)
		st := w.c.Stats()
		total.Elections += st.Elections
		total.ApplyLaggingLeader += st.ApplyLaggingLeader
		total.StaleAppends += st.StaleAppends
		total.Truncations += st.Truncations
		total.Snapshots += st.Snapshots
		total.ConfigChanges += st.ConfigChanges
	})
	t.Logf("over the runs: %+v", total)
	if total.Elections == 0 || total.ApplyLaggingLeader == 0 || total.StaleAppends == 0 ||
		total.Truncations == 0 || total.Snapshots == 0 || total.ConfigChanges == 0 {
		t.Fatalf("the property runs never exercised some situation: %+v", total)
	}
}

// proposeFromLeaders has every node that believes it leads group 0, and
// is up and running, propose the entry next makes.
func (w *testWorld) proposeFromLeaders(next func() fsm.Entry) {
	for n, s := range w.nodes {
		if term, ok := s.leads[0]; ok && w.c.Up(n) && !w.loop.Paused(w.c.Actor(n)) {
			_, _ = w.c.Propose(0, n, term, next())
		}
	}
}

// faults drives the faults of the randomised group tests on a test
// world's group 0: deposes, one node at a time down (crashed or paused)
// and back, and voter changes.
type faults struct {
	w    *testWorld
	down int // the node down, or -1
}

// depose deposes group 0's leader, preferring a drawn node (or none).
func (f *faults) depose(rt *rapid.T) {
	f.w.c.Depose(0, rapid.IntRange(-1, 4).Draw(rt, "prefer"), time.Millisecond)
}

// takeDown crashes or pauses a drawn node, unless one is down already.
func (f *faults) takeDown(rt *rapid.T) {
	if f.down >= 0 {
		return
	}
	w := f.w
	f.down = rapid.IntRange(0, 4).Draw(rt, "down")
	if rapid.Bool().Draw(rt, "crash") {
		w.loop.Crash(w.c.Actor(f.down))
		w.c.NodeDown(f.down, true)
	} else {
		w.loop.Pause(w.c.Actor(f.down))
		w.c.NodeDown(f.down, false)
	}
}

// heal restarts or resumes the node down, if any.
func (f *faults) heal() {
	if f.down < 0 {
		return
	}
	w := f.w
	if !w.c.Up(f.down) {
		w.loop.Restart(w.c.Actor(f.down), w.nodes[f.down])
	} else {
		w.loop.Resume(w.c.Actor(f.down))
	}
	w.c.NodeUp(f.down)
	f.down = -1
}

// changeVoters, when group 0 has a leader, removes a drawn voter (keeping
// at least three) or adds a drawn non-voter.
func (f *faults) changeVoters(rt *rapid.T) {
	w := f.w
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

// recordCommitted checks that every entry once committed is still in the
// current leader's log, and records the newly committed ones.
func (w *testWorld) recordCommitted(rt *rapid.T, committed map[uint64]fsm.Entry) {
	gr := w.c.groups[0]
	if gr.leader >= 0 {
		L := gr.reps[gr.leader]
		for i, e := range committed {
			if i > L.base && (i > L.last() || L.entry(i).Term != e.Term || L.entry(i).Ceiling != e.Ceiling) {
				rt.Fatalf("committed entry %d (t%d) missing from leader n%d's log", i, e.Term, gr.leader)
			}
		}
	}
	for _, r := range gr.reps {
		if r == nil {
			continue
		}
		for i := r.base + 1; i <= r.commit; i++ {
			if e, ok := committed[i]; ok && (e.Term != r.entry(i).Term || e.Ceiling != r.entry(i).Ceiling) {
				rt.Fatalf("replica n%d learned %d committed as t%d, but t%d was", r.node, i, r.entry(i).Term, e.Term)
			}
			committed[i] = *r.entry(i)
		}
	}
}

// checkLogMatching: two logs with the same term at an index agree on every
// entry up to it.
func (w *testWorld) checkLogMatching(rt *rapid.T) {
	gr := w.c.groups[0]
	for _, a := range gr.reps {
		for _, b := range gr.reps {
			if a == nil || b == nil || a == b {
				continue
			}
			m := matchLen(a, b)
			for i := max(a.base, b.base) + 1; i <= m; i++ {
				if a.entry(i).Term != b.entry(i).Term || a.entry(i).Ceiling != b.entry(i).Ceiling {
					rt.Fatalf("n%d and n%d agree at %d but differ at %d", a.node, b.node, m, i)
				}
			}
		}
	}
}

// bootstrapObs records every OnApply call Bootstrap makes.
type bootstrapObs struct{ calls []string }

func (o *bootstrapObs) OnApply(g, node int, e fsm.Entry, r fsm.Result, first bool, f *fsm.FSM) {
	o.calls = append(o.calls, fmt.Sprintf("g%d n%d i%d first=%v puts=%v applied=%d err=%v horizon=%v", g, node, e.Index, first, r.Puts, f.Applied, r.Err, r.Horizon))
}

func (o *bootstrapObs) OnLeader(int, int, uint64, bool) {}

// bootstrapWrites are writes of a few keys, some of one key, with
// tombstones and TTLs, as a world's bootstrap loads.
func bootstrapWrites() []fsm.Entry {
	var out []fsm.Entry
	for i := 0; i < 40; i++ {
		w := &fsm.Write{Key: fmt.Sprintf("k%02d", i%7), Value: fmt.Sprintf("v%d", i), Tombstone: i%5 == 3,
			TS: hlc.TS(uint64(1000+i) << hlc.LogicalBits), Op: fmt.Sprintf("pre-%d", i)}
		if i%4 == 1 {
			w.TTLms = uint64(100 * i)
		}
		out = append(out, fsm.Entry{Kind: fsm.KindWrite, Write: w})
	}
	return out
}

// Bootstrap leaves every voter with the state applying the entries one by
// one gives (it applies them on one voter and copies that state), the
// observers see each voter's apply of each entry in order, and each
// voter's state is its own: a later write to one changes no other.
func TestBootstrapGivesEveryVoterTheAppliedState(t *testing.T) {
	w := newWorld(1, 4, []int{1, 2, 3})
	obs := &bootstrapObs{}
	w.c.Observe(obs)
	w.c.Bootstrap(0, bootstrapWrites())

	want := fsm.New(0, bugs.None)
	var wantCalls []string
	for _, e := range bootstrapWrites() {
		e.Index = want.Applied + 1
		r := want.Apply(e)
		for _, n := range []int{1, 2, 3} {
			wantCalls = append(wantCalls, fmt.Sprintf("g0 n%d i%d first=%v puts=%v applied=%d err=%v horizon=%v", n, e.Index, n == 1, r.Puts, want.Applied, r.Err, r.Horizon))
		}
	}
	if fmt.Sprint(obs.calls) != fmt.Sprint(wantCalls) {
		t.Fatalf("observers saw\n%v\nwant\n%v", obs.calls, wantCalls)
	}
	// The state as dumpState shows it (every key's versions: a key with
	// one version included), with the store's counts and each key's
	// generation.
	dump := func(f *fsm.FSM) string {
		s := fmt.Sprintf("%s keys=%d versions=%d gens:", dumpState(f), f.Store.Keys(), f.Store.Len())
		f.Store.Ascend("", "", func(key string, _ []mvcc.Version) bool {
			s += fmt.Sprintf(" %s=%d", key, f.Store.Gen(key))
			return true
		})
		return s
	}
	for _, n := range []int{1, 2, 3} {
		if got := dump(w.c.Voter(0, n)); got != dump(want) {
			t.Fatalf("voter n%d holds\n%s\nwant\n%s", n, got, dump(want))
		}
		if w.c.CommitIndex(0, n) != want.Applied || w.c.LastIndex(0, n) != want.Applied {
			t.Fatalf("voter n%d: commit %d, last %d, want %d", n, w.c.CommitIndex(0, n), w.c.LastIndex(0, n), want.Applied)
		}
	}
	next := fsm.Entry{Kind: fsm.KindWrite, Index: want.Applied + 1, Write: &fsm.Write{Key: "k00", Value: "late", TS: hlc.TS(5000 << hlc.LogicalBits), Op: "late"}}
	w.c.Voter(0, 2).Apply(next)
	if dump(w.c.Voter(0, 1)) != dump(want) || dump(w.c.Voter(0, 3)) != dump(want) {
		t.Fatal("a write to one voter's state changed another's")
	}
}

// Bootstrap copies the first voter's whole state over the others, so it
// refuses voters built for another group or with other bugs.
func TestBootstrapRefusesVotersBuiltDifferently(t *testing.T) {
	for name, other := range map[string]*fsm.FSM{
		"group": fsm.New(1, bugs.None),
		"bugs":  fsm.New(0, bugs.MustParse(bugs.MigrateNoHLCAdvance)),
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(1, 4, []int{1, 2, 3})
			*w.c.Voter(0, 3) = *other
			defer func() {
				if recover() == nil {
					t.Fatal("Bootstrap accepted a voter built differently")
				}
			}()
			w.c.Bootstrap(0, bootstrapWrites())
		})
	}
}

// A voter follows another's decision only when their states are named
// equal: voters that start pristine and alike share decisions, but one
// that starts holding a version of a key the others lack decides alone, and
// refuses the write below that version that the others admit.
func TestOnlyEqualStatesShareDecisions(t *testing.T) {
	w := newWorld(3, 3, []int{0, 1, 2})
	reps := w.c.groups[0].reps
	if reps[0].stateName != reps[1].stateName || reps[1].stateName != reps[2].stateName {
		t.Fatal("pristine voters built alike start with different state names")
	}
	w = newWorldWith(3, 3, []int{0, 1, 2}, func(n int, f *fsm.FSM) {
		if n == 2 {
			f.Store.Put("k", mvcc.Version{TS: 100, Value: "held"})
		}
	})
	reps = w.c.groups[0].reps
	if reps[0].stateName != reps[1].stateName || reps[2].stateName == reps[0].stateName {
		t.Fatal("a voter holding a version shares its state's name with pristine ones")
	}
	w.c.ElectNow(0, 0)
	w.proposeAsLeader(t, fsm.Entry{Kind: fsm.KindWrite, Write: &fsm.Write{Key: "k", Value: "new", TS: 50, Op: "w"}})
	w.loop.Run()
	for n, want := range []string{"new", "new", "held"} {
		if vs := w.c.Voter(0, n).Store.Versions("k"); len(vs) != 1 || vs[0].Value != want {
			t.Fatalf("voter %d holds %v, want only %q", n, vs, want)
		}
	}
}
