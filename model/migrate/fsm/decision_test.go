package fsm

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"shardsim/model/bugs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// randomEntry returns an entry of a random kind over a few keys, half of
// them in the moving span, with timestamps around ts (some too old to be
// admitted).
func randomEntry(rng *rand.Rand, ts hlc.TS, seq *uint64, prepared *[]*Txn) Entry {
	key := func() string { return "k" + strconv.Itoa(rng.IntN(10)) }
	at := ts - hlc.TS(rng.IntN(3))
	switch rng.IntN(12) {
	case 0:
		return Entry{Kind: KindCompact, TS: ts - hlc.TS(rng.IntN(20))}
	case 1:
		var rows []mvcc.Row
		for i := rng.IntN(4); i >= 0; i-- {
			rows = append(rows, row("k"+strconv.Itoa(5+rng.IntN(5)), ts-hlc.TS(rng.IntN(30))))
		}
		*seq++
		return imp(*seq, rows...)
	case 2:
		return Entry{Kind: KindPromote, Promote: &Promote{Job: 9, Max: 1 + rng.IntN(3)}}
	case 3:
		return Entry{Kind: KindCleanup, Cleanup: &Cleanup{Job: 9, Moving: moving, FenceTS: ts - hlc.TS(rng.IntN(20))}}
	case 4:
		return Entry{Kind: KindPin, Guard: &Guard{Job: 9, Span: moving, TS: ts - hlc.TS(rng.IntN(40))}}
	case 5:
		return Entry{Kind: KindArmTracker, Guard: &Guard{Job: 9, Span: moving}}
	case 6:
		return Entry{Kind: KindFloor, Guard: &Guard{Job: 9, Span: moving, TS: ts - hlc.TS(rng.IntN(10))}}
	case 7:
		return onePhase(txn("t"+strconv.Itoa(int(ts)), at-1, at, at, key(), key()))
	case 8:
		tx := txn("p"+strconv.Itoa(int(ts)), at-1, at, at+2, key(), key())
		*prepared = append(*prepared, tx)
		return Entry{Kind: KindPrepare, Txn: tx}
	case 9:
		if len(*prepared) > 0 {
			return Entry{Kind: KindCommit, Txn: (*prepared)[rng.IntN(len(*prepared))]}
		}
	}
	e := write(key(), at)
	e.Write.Tombstone = rng.IntN(8) == 0
	return e
}

// stateOf is f's state for comparison: its fields but the scratch ones,
// and its store's rows in order.
func stateOf(f *FSM) (FSM, []mvcc.Row) {
	var rows []mvcc.Row
	f.Store.Ascend("", "", func(k string, vs []mvcc.Version) bool {
		for _, v := range vs {
			rows = append(rows, mvcc.Row{Key: k, Version: v})
		}
		return true
	})
	c := *f
	c.Store, c.own = nil, Decision{}
	c.staged.job, c.staged.span = 0, keys.Span{}
	return c, rows
}

// A state that applies each entry by the decision another, equal state
// made (ApplyDecided) ends up as the state that decided, and as one that
// decides everything alone (ApplyEntry), with the same results, over
// random logs of every kind that decides, with and without the bugs
// decisions read.
func TestFollowingADecisionChangesNothing(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		set := bugs.None
		if seed%3 == 0 {
			set = bugs.MustParse(bugs.MigratePromoteSkipsShadowed)
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		decider, follower, alone := New(1, set), New(1, set), New(1, set)
		var seq uint64
		var prepared []*Txn
		ts := hlc.TS(100)
		followed := 0
		for i := 1; i <= 120; i++ {
			ts += hlc.TS(1 + rng.IntN(4))
			e := randomEntry(rng, ts, &seq, &prepared)
			e.Index = uint64(i)
			// Copies of the entry that share its payload, as the voters'
			// logs share one entry.
			ea, eb, ec := e, e, e
			var d Decision
			ra := decider.ApplyDecided(&ea, &d)
			if !d.Made() {
				t.Fatal("an apply did not make its decision")
			}
			rb := follower.ApplyDecided(&eb, &d)
			rc := alone.ApplyEntry(&ec)
			if !reflect.DeepEqual(ra, rb) || !reflect.DeepEqual(ra, rc) {
				t.Fatalf("seed %d entry %s: results differ: decided %+v, followed %+v, alone %+v", seed, e, ra, rb, rc)
			}
			sa, rowsA := stateOf(decider)
			sb, rowsB := stateOf(follower)
			sc, rowsC := stateOf(alone)
			if !reflect.DeepEqual(rowsA, rowsB) || !reflect.DeepEqual(rowsA, rowsC) {
				t.Fatalf("seed %d entry %s: stores differ:\n%v\n%v\n%v", seed, e, rowsA, rowsB, rowsC)
			}
			if !reflect.DeepEqual(sa, sb) || !reflect.DeepEqual(sa, sc) {
				t.Fatalf("seed %d entry %s: states differ:\n%+v\n%+v\n%+v", seed, e, sa, sb, sc)
			}
			if e.Kind != KindWrite && ra.Applied > 0 {
				followed++
			}
		}
		if followed == 0 {
			t.Fatalf("seed %d: no compaction, promotion or cleanup changed anything", seed)
		}
	}
}
