package listdelta

import (
	"errors"
	"slices"
	"testing"

	"shardsim/model/bugs"
	"shardsim/model/migrate/hlc"
)

// Each test interleaves one command inside another (Local.Race) and
// checks the outcome is that of some order of the two, then switches the
// bug that removes the guard on and checks it is not.

type pair struct {
	be   *Local
	a, b *Store
}

func newPair(t *testing.T, names ...string) pair {
	t.Helper()
	set := bugs.MustParse(names...)
	be := NewLocal(set)
	cfg := DefaultConfig()
	cfg.MaxKeysPerCompactionTx = 16
	return pair{be: be, a: NewStore(be, cfg, set, "a"), b: NewStore(be, cfg, set, "b")}
}

func (p pair) contents(t *testing.T, uk string) []string {
	t.Helper()
	got, err := p.a.LRange(uk, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// RPUSH and RPOP of the last item, concurrent: one of them retries.
func TestPushPopAtOneEndConflict(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		var p pair
		if buggy {
			p = newPair(t, bugs.ListdeltaNoBoundaryRead)
		} else {
			p = newPair(t)
		}
		_, err := p.a.RPush("l", "x", "y")
		must(t, err)
		var popped string
		p.be.Race = &Race{At: "commit", N: 1, Fn: func() {
			v, _, err := p.b.RPop("l")
			must(t, err)
			popped = v
		}}
		_, err = p.a.RPush("l", "z")
		must(t, err)
		got := p.contents(t, "l")
		ok := popped == "y" && slices.Equal(got, []string{"x", "z"})
		if ok == buggy {
			t.Errorf("buggy=%v: popped %q, list %q (conflicts %d)", buggy, popped, got, p.a.Stats().Conflicts)
		}
	}
}

// LPUSH and LPOP at the head, concurrent.
func TestPushPopAtTheHeadConflict(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		p := newPair(t)
		if buggy {
			p = newPair(t, bugs.ListdeltaNoBoundaryRead)
		}
		_, err := p.a.RPush("l", "x", "y")
		must(t, err)
		var popped string
		p.be.Race = &Race{At: "commit", N: 1, Fn: func() {
			popped, _, err = p.b.LPop("l")
			must(t, err)
		}}
		_, err = p.a.LPush("l", "w")
		must(t, err)
		got := p.contents(t, "l")
		ok := popped == "x" && slices.Equal(got, []string{"w", "y"})
		if ok == buggy {
			t.Errorf("buggy=%v: popped %q, list %q", buggy, popped, got)
		}
	}
}

// Two concurrent pops contend on the claim row: the second retries and
// takes the next item; without claims both return the first.
func TestConcurrentPopsClaim(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		p := newPair(t)
		if buggy {
			p = newPair(t, bugs.ListdeltaPopNoClaim)
		}
		_, err := p.a.RPush("l", "x", "y", "z")
		must(t, err)
		var first string
		p.be.Race = &Race{At: "commit", N: 1, Fn: func() {
			first, _, err = p.b.LPop("l")
			must(t, err)
		}}
		second, _, err := p.a.LPop("l")
		must(t, err)
		ok := first == "x" && second == "y" && p.a.Stats().ClaimConflicts == 1
		if ok == buggy {
			t.Errorf("buggy=%v: pops returned %q and %q, claim conflicts %d", buggy, first, second, p.a.Stats().ClaimConflicts)
		}
	}
}

// A compaction racing a push: both commit, neither retries, and nothing is
// lost (the point of the design).
func TestCompactionRacesPushWithoutConflict(t *testing.T) {
	p := newPair(t)
	for i := 0; i < 3; i++ {
		_, err := p.a.RPush("l", "v")
		must(t, err)
	}
	p.be.Race = &Race{At: "commit", N: 1, Fn: func() {
		res, err := p.b.Compact(List, "l")
		must(t, err)
		if res.Folded != 3 {
			t.Errorf("folded %d", res.Folded)
		}
	}}
	n, err := p.a.RPush("l", "w")
	must(t, err)
	if n != 4 || p.a.Stats().Conflicts != 0 || p.b.Stats().CompactConflict != 0 {
		t.Fatalf("length %d, push conflicts %d, compaction conflicts %d", n, p.a.Stats().Conflicts, p.b.Stats().CompactConflict)
	}
	if got := p.contents(t, "l"); !slices.Equal(got, []string{"v", "v", "v", "w"}) {
		t.Fatalf("list %q", got)
	}
}

// Compaction collects the rows of popped positions, keeps the tombstone,
// and the list keeps working across it.
func TestCompactionCollectsAndKeepsTheTombstone(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		p := newPair(t)
		if buggy {
			p = newPair(t, bugs.ListdeltaDeleteMetaAtZero)
		}
		_, err := p.a.RPush("l", "a", "b", "c", "d")
		must(t, err)
		for i := 0; i < 4; i++ {
			_, _, err := p.a.LPop("l")
			must(t, err)
		}
		// A push resolved the empty list before the compaction committed.
		p.be.Race = &Race{At: "commit", N: 1, Fn: func() {
			_, err := p.b.Compact(List, "l")
			must(t, err)
		}}
		_, err = p.a.RPush("l", "e")
		must(t, err)
		got := p.contents(t, "l")
		if ok := slices.Equal(got, []string{"e"}); ok == buggy {
			t.Errorf("buggy=%v: list %q after a push raced the compaction of the empty list", buggy, got)
		}
		if !buggy && p.b.Stats().RowsCollected == 0 {
			t.Error("the compaction collected no popped rows")
		}
	}
}

// A MULTI/EXEC racing a standalone push aborts and retries (its read set
// holds the delta range); the stale-snapshot variant deletes the push's
// delta unfolded, the keeps-deltas variant counts deltas twice.
func TestExecGuardsTheDeltaRange(t *testing.T) {
	for _, bug := range []string{"", bugs.ListdeltaExecStaleSnapshot, bugs.ListdeltaExecKeepsDeltas} {
		p := newPair(t)
		if bug != "" {
			p = newPair(t, bug)
		}
		_, err := p.a.RPush("l", "a", "b")
		must(t, err)
		// After the exec resolved the list (its delta scan is the first).
		p.be.Race = &Race{At: "scan", N: 2, Fn: func() {
			_, err := p.b.RPush("l", "c")
			must(t, err)
		}}
		ans, err := p.a.Exec("l", []Cmd{{Op: "LPOP"}, {Op: "LLEN"}})
		must(t, err)
		n, err := p.a.LLen("l")
		must(t, err)
		got := p.contents(t, "l")
		ok := ans[0].Val == "a" && n == 2 && slices.Equal(got, []string{"b", "c"})
		if ok != (bug == "") {
			t.Errorf("%q: popped %q, LLEN %d, list %q", bug, ans[0].Val, n, got)
		}
	}
}

// Resolution refuses a truncated delta scan; the compactor's fold
// unblocks it. Without the check, the truncated sum is taken for the
// length.
func TestTruncatedResolution(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		set := bugs.None
		if buggy {
			set = bugs.MustParse(bugs.ListdeltaNoTruncationCheck)
		}
		be := NewLocal(set)
		cfg := DefaultConfig()
		cfg.MaxDeltaScanLimit = 3
		s := NewStore(be, cfg, set, "s")
		var err error
		for i := 0; i < 3 && err == nil; i++ {
			_, err = s.RPush("l", "v")
		}
		must(t, err)
		n, err := s.LLen("l")
		if buggy != (err == nil) || !buggy && !errors.Is(err, ErrDeltaScanTruncated) {
			t.Fatalf("buggy=%v: LLEN %d %v", buggy, n, err)
		}
		if _, err := s.Compact(List, "l"); err != nil {
			t.Fatal(err)
		}
		if n, err := s.LLen("l"); err != nil || n != 3 || s.Stats().Truncated == 0 {
			t.Fatalf("after compaction: %d %v (truncated %d)", n, err, s.Stats().Truncated)
		}
	}
}

// Delta keys carry the leader's commit timestamp; two writers whose own
// clocks agree write the same key in the wrong variant.
func TestDeltaKeysAreUniquePerCommit(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		p := newPair(t)
		if buggy {
			p = newPair(t, bugs.ListdeltaSharedCommitTS)
		}
		p.be.Clock = hlc.Make(7, 0)
		_, err := p.a.RPush("l", "x")
		must(t, err)
		_, err = p.b.RPush("l", "y")
		must(t, err)
		n, err := p.a.LLen("l")
		must(t, err)
		if (n == 2) == buggy {
			t.Errorf("buggy=%v: LLEN %d after two pushes", buggy, n)
		}
	}
}

// A push reusing a popped position deletes its stale claim.
func TestPushDeletesTheStaleClaim(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		p := newPair(t)
		if buggy {
			p = newPair(t, bugs.ListdeltaPushKeepsStaleClaim)
		}
		_, err := p.a.RPush("l", "a", "b")
		must(t, err)
		_, _, err = p.a.RPop("l")
		must(t, err)
		_, err = p.a.RPush("l", "c")
		must(t, err)
		got := p.contents(t, "l")
		if slices.Equal(got, []string{"a", "c"}) == buggy {
			t.Errorf("buggy=%v: list %q", buggy, got)
		}
	}
}

// A counted collection's members outlive a compaction whose fold reaches
// zero while deltas remain; the wrong variant deletes them.
func TestCompactionKeepsMembers(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		set := bugs.None
		if buggy {
			set = bugs.MustParse(bugs.ListdeltaCompactDeletesMember)
		}
		be := NewLocal(set)
		cfg := DefaultConfig()
		cfg.MaxKeysPerCompactionTx = 2
		s := NewStore(be, cfg, set, "s")
		for _, step := range []func() (bool, error){
			func() (bool, error) { return s.HSet("h", "f", "1") },
			func() (bool, error) { return s.HDel("h", "f") },
			func() (bool, error) { return s.HSet("h", "f", "2") },
		} {
			_, err := step()
			must(t, err)
		}
		_, err := s.Compact(Hash, "h")
		must(t, err)
		n, err := s.HLen("h")
		must(t, err)
		had, err := s.HSet("h", "f", "3")
		must(t, err)
		if ok := n == 1 && !had; ok == buggy {
			t.Errorf("buggy=%v: HLEN %d, field new again %v", buggy, n, had)
		}
	}
}

// A read's rows come from its snapshot: a pop committed between the
// resolution and the item reads does not make LRANGE short.
func TestRangeReadsOneSnapshot(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		p := newPair(t)
		if buggy {
			p = newPair(t, bugs.ListdeltaRangeTornSnapshot)
		}
		_, err := p.a.RPush("l", "a", "b", "c")
		must(t, err)
		// LRANGE: get meta, scan deltas, scan claims, scan items.
		p.be.Race = &Race{At: "scan", N: 2, Fn: func() {
			_, _, err := p.b.LPop("l")
			must(t, err)
		}}
		got, err := p.a.LRange("l", 0, -1)
		must(t, err)
		if slices.Equal(got, []string{"a", "b", "c"}) == buggy {
			t.Errorf("buggy=%v: LRANGE %q", buggy, got)
		}
	}
}
