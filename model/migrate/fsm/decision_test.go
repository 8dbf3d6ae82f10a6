package fsm

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"unsafe"

	"shardsim/model/bugs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// randomEntry returns an entry of a random kind over a few keys, half of
// them in the moving span, with timestamps around ts (some too old to be
// admitted): the kinds that decide, and the kinds that change what they
// read (staged and expiring writes, range deletes, rollbacks, releases,
// an abandon that refuses later imports).
func randomEntry(rng *rand.Rand, ts hlc.TS, seq *uint64, prepared *[]*Txn) Entry {
	key := func() string { return "k" + strconv.Itoa(rng.IntN(10)) }
	at := ts - hlc.TS(rng.IntN(3))
	switch rng.IntN(18) {
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
	case 10:
		if len(*prepared) > 0 {
			tx := *(*prepared)[rng.IntN(len(*prepared))]
			tx.AbortTS = at + 1
			return Entry{Kind: KindRollback, Txn: &tx}
		}
	case 11:
		return Entry{Kind: KindDeleteRange, DelRange: &DeleteRange{Span: keys.Span{Start: key(), End: key()}, TS: at}}
	case 12:
		return Entry{Kind: KindRelease, Job: 9}
	case 13:
		if rng.IntN(10) == 0 { // rare: it ends the job's imports
			return Entry{Kind: KindAbandonStaged, Job: 9}
		}
	case 14:
		return Entry{Kind: KindCeiling, Ceiling: uint64(ts.Phys()) + uint64(rng.IntN(3))}
	case 15:
		e := write(key(), at)
		e.Write.Staging = 9 // admitted above the key's staged versions too
		return e
	case 16:
		e := write(key(), at)
		e.Write.TTLms = uint64(1 + rng.IntN(3))
		return e
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

// applyBugs are the registered bugs that change how the state machine
// applies an entry (the others change reads, exports or the layers above;
// floor-primaries-only and live-only-txn-probe change applies too but are
// not registered, so no run can switch them on).
var applyBugs = []string{
	bugs.MigratePromoteSkipsShadowed, bugs.MigrateNoHLCAdvance, bugs.MigrateNoRetentionPin,
	bugs.MigrateRollbackProvesCommit, bugs.MigrateImportAfterAbandon,
}

// randomApplyBugs returns no bug for a quarter of the seeds, else each of
// applyBugs with probability one half.
func randomApplyBugs(rng *rand.Rand) bugs.Set {
	var on []string
	if rng.IntN(4) > 0 {
		for _, b := range applyBugs {
			if rng.IntN(2) == 0 {
				on = append(on, b)
			}
		}
	}
	return bugs.MustParse(on...)
}

// A state that applies each entry by the decision another, equal state
// made (ApplyDecided) ends up as the state that decided, and as one that
// decides everything alone (ApplyEntry), with the same results, over
// random logs of every kind that decides and of the kinds that change
// what they read, with and without every bug that changes an apply. The
// decision is reset and reused for each entry, as a group's kept
// decisions are.
func TestFollowingADecisionChangesNothing(t *testing.T) {
	var d Decision
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		set := randomApplyBugs(rng)
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
			d.Reset()
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
			if decidesChanges(e.Kind) && ra.Applied > 0 {
				followed++
			}
		}
		if followed == 0 {
			t.Fatalf("seed %d: no compaction, promotion or cleanup changed anything", seed)
		}
	}
}

// decidesChanges reports whether an entry of kind k decides what it
// changes (a write decides only its admission, and an import, a range
// delete or an abandon decides nothing).
func decidesChanges(k Kind) bool {
	return k == KindCompact || k == KindPromote || k == KindCleanup
}

// Pristine sees every field of the state but the build's (Group, bugs:
// BuiltAlike's) and the scratch ones (own, staged): the group names
// pristine voters' states alike and lets them share decisions, so a field
// added to FSM that Pristine does not test would let voters that differ
// in it share decisions. It fails for a field Pristine misses.
func TestPristineSeesEveryField(t *testing.T) {
	notState := map[string]bool{"Group": true, "bugs": true, "own": true, "staged": true}
	if !New(1, bugs.None).Pristine() {
		t.Fatal("a new state is not pristine")
	}
	stored := New(1, bugs.None)
	stored.Store.Put("k", mvcc.Version{TS: 1})
	if stored.Pristine() {
		t.Fatal("a state holding a version is pristine")
	}
	typ := reflect.TypeOf(FSM{})
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		if notState[name] || name == "Store" {
			continue
		}
		f := New(1, bugs.None)
		field := reflect.ValueOf(f).Elem().Field(i)
		setNonZero(t, reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem(), name)
		if f.Pristine() {
			t.Errorf("a state whose %s is set is pristine", name)
		}
	}
}

// setNonZero sets v (a field of FSM) to a value that is not its zero:
// one for a number, one zero element for a map or slice.
func setNonZero(t *testing.T, v reflect.Value, name string) {
	switch v.Kind() {
	case reflect.Uint64, reflect.Uint32, reflect.Uint:
		v.SetUint(1)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.Zero(v.Type().Key()), reflect.Zero(v.Type().Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	default:
		t.Fatalf("field %s of kind %s: teach setNonZero to set it", name, v.Kind())
	}
}
