package migratecheck

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// On random runs (writes applied to two replica stores, some acknowledged,
// then random edits: lost, replaced and compacted versions, staged copies,
// a moving floor, owners and staging switching between passes, spans; and
// the list of acknowledged writes edited other than by appending: entries
// rekeyed, replaced, removed, cut off, swapped, copied), the incremental
// checker returns after every pass exactly what the full re-check returns,
// violations included, to the message.
func TestNoLostWriteCheckerMatchesFull(t *testing.T) {
	var passes, violations int
	if nlwStores <= storeSlots {
		t.Fatalf("%d stores, %d memo slots: no memo is ever forgotten", nlwStores, storeSlots)
	}
	// rapid's default 100 runs rarely build the coincidences (two stores
	// with a key at one generation, a floor raised past a stray version)
	// that an incomplete stamp would get wrong: run 3000.
	for range 30 {
		rapid.Check(t, randomNoLostWriteRun(&passes, &violations))
	}
	t.Logf("%d passes agreed, %d of them violations", passes, violations)
	if violations == 0 || violations == passes {
		t.Fatalf("%d violations in %d passes: the runs judged nothing interesting", violations, passes)
	}
}

// randomNoLostWriteRun is one random run of TestNoLostWriteCheckerMatchesFull.
func randomNoLostWriteRun(passes, violations *int) func(*rapid.T) {
	return func(t *rapid.T) {
		r := &nlwRig{o: NewVersionOracle()}
		for range nlwStores {
			r.stores = append(r.stores, mvcc.New())
		}
		c := NewNoLostWriteChecker(r.o)
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			r.step(t, i, rapid.SampledFrom([]string{"a", "b", "k1", "k2"}).Draw(t, "key"))
			var spans []keys.Span
			if rapid.Bool().Draw(t, "spans") {
				spans = []keys.Span{{Start: "k"}}
			}
			owners := r.owners()
			full := r.o.CheckNoLostWrite(r.acked, ReadFrom(owners), "pass", spans...)
			inc := c.Check(r.acked, owners, "pass", spans...)
			*passes++
			if full != nil {
				*violations++
			}
			if (inc == nil) != (full == nil) || inc != nil && *inc != *full {
				t.Fatalf("step %d: incremental %v, full %v", i, inc, full)
			}
		}
	}
}

// nlwStores is how many replica stores a random run has: more than a key
// memo remembers (storeSlots), so that memos are forgotten and taken again.
const nlwStores = 6

// nlwJobs are the migration jobs whose staged rows a random run merges.
var nlwJobs = []uint64{7, 9}

// nlwRig is the world of one random run: an oracle, nlwStores replica stores,
// the acknowledged writes (and those to be acknowledged later), the floor,
// the owner and its staging.
type nlwRig struct {
	o       *VersionOracle
	stores  []*mvcc.Store
	acked   []AckedWrite
	pending []AckedWrite // applied, acknowledged later
	txns    []string
	deletes []AckedWrite // range deletes acknowledged before they applied
	ts      hlc.TS
	floor   hlc.TS
	staging mvcc.Staging
	owner   int
	routing uint64 // bumped with every change of owner, which moves b
}

// owners is how keys read back in the rig: from the owner's store, except
// b, which no owner answers for while owner 1 owns.
func (r *nlwRig) owners() Owners {
	owner := r.owner
	return Owners{RoutingGen: r.routing,
		Route: func(key string) (int, bool) {
			if key == "b" && owner == 1 {
				return 0, false
			}
			return owner, true
		},
		Owner: func(n int) Owner { return Owner{Store: r.stores[n], Staging: r.staging, Floor: r.floor} },
	}
}

// apply creates version (op, key, at) on one or both replicas, unless the
// key has a version at at.
func (r *nlwRig) apply(t *rapid.T, op, key string, at hlc.TS) bool {
	if _, taken := r.o.At(key, at); taken {
		return false
	}
	v := mvcc.Version{TS: at, Value: op, Tombstone: rapid.IntRange(0, 4).Draw(t, "del") == 0}
	r.o.Add(AppliedWrite{Op: op, Key: key, Version: v})
	ahead := rapid.IntRange(0, len(r.stores)-1).Draw(t, "ahead")
	for n, s := range r.stores {
		if n == ahead || rapid.IntRange(0, 3).Draw(t, "lag") > 0 {
			s.Put(key, v)
		}
	}
	return true
}

// ack acknowledges a write now, later or never.
func (r *nlwRig) ack(t *rapid.T, a AckedWrite) {
	switch rapid.IntRange(0, 2).Draw(t, "ack") {
	case 0:
		r.acked = append(r.acked, a)
	case 1:
		r.pending = append(r.pending, a)
	}
}

// tick advances the rig's clock by a random step and returns it.
func (r *nlwRig) tick(t *rapid.T) hlc.TS {
	r.ts += hlc.TS(rapid.IntRange(1, 5).Draw(t, "dt"))
	return r.ts
}

// step is one random event of the run, number i, on key.
func (r *nlwRig) step(t *rapid.T, i int, key string) {
	switch rapid.IntRange(0, 30).Draw(t, "action") {
	case 0, 1, 2, 3: // a write (maybe at an older, caller-chosen ts), acknowledged now, later or never
		at := r.tick(t)
		if rapid.IntRange(0, 2).Draw(t, "caller") == 0 {
			at = hlc.TS(rapid.IntRange(1, int(r.ts)).Draw(t, "at"))
		}
		if op := fmt.Sprintf("w%d", i); r.apply(t, op, key, at) {
			r.ack(t, AckedWrite{Op: op, Key: key, TS: at})
		}
	case 4: // a late acknowledgement, of a write applied passes ago
		if len(r.pending) > 0 {
			n := rapid.IntRange(0, len(r.pending)-1).Draw(t, "late")
			r.acked = append(r.acked, r.pending[n])
			r.pending = append(r.pending[:n], r.pending[n+1:]...)
		}
	case 5: // a transaction: acknowledged for every key it writes
		if op, at := fmt.Sprintf("t%d", i), r.tick(t); r.apply(t, op, key, at) {
			r.txns = append(r.txns, op)
			r.ack(t, AckedWrite{Op: op, TS: at})
		}
	case 6: // an earlier transaction applied on one more key (its versions grow)
		if len(r.txns) > 0 {
			r.apply(t, rapid.SampledFrom(r.txns).Draw(t, "txn"), key, r.tick(t))
		}
	case 7: // a range delete acknowledged before it applied (nothing to read back until it does)
		d := AckedWrite{Op: fmt.Sprintf("d%d", i), TS: r.tick(t)}
		r.deletes = append(r.deletes, d)
		r.acked = append(r.acked, d)
	case 20: // an acknowledged range delete applies now, on one more key
		if len(r.deletes) > 0 {
			d := rapid.SampledFrom(r.deletes).Draw(t, "delete")
			r.apply(t, d.Op, key, d.TS)
		}
	case 18, 19: // an earlier transaction acknowledged once more, for one key (as the recorder acknowledges each key)
		if len(r.txns) > 0 {
			op := rapid.SampledFrom(r.txns).Draw(t, "txn")
			if ws := r.o.OpWrites(op); len(ws) > 0 {
				r.acked = append(r.acked, AckedWrite{Op: op, Key: key, TS: ws[0].TS})
			}
		}
	case 8, 9, 10, 11:
		r.damage(t, key)
	case 12, 13:
		r.floor = hlc.TS(rapid.IntRange(0, int(r.ts)+1).Draw(t, "floor"))
	case 14, 15:
		r.owner = rapid.IntRange(0, len(r.stores)-1).Draw(t, "owner")
		r.routing++
		r.staging = mvcc.StagingOf(rapid.Bool().Draw(t, "staging"), rapid.SampledFrom(nlwJobs).Draw(t, "job"))
	case 16, 17: // the owner's staging alone changes (its key memo must not be taken for the other staging's)
		r.routing++
		r.staging = mvcc.StagingOf(rapid.Bool().Draw(t, "staging"), rapid.SampledFrom(nlwJobs).Draw(t, "job"))
	case 28: // an entry's key rewritten, its operation kept (its memory must go too)
		if len(r.acked) > 0 {
			r.acked[rapid.IntRange(0, len(r.acked)-1).Draw(t, "rekeyed")].Key = key
		}
	case 29: // an entry of the acknowledgements replaced by another (its memory must go)
		if len(r.acked) > 1 {
			r.acked[rapid.IntRange(0, len(r.acked)-1).Draw(t, "replaced")] = r.acked[rapid.IntRange(0, len(r.acked)-1).Draw(t, "by")]
		}
	case 21: // an entry removed from the middle (those after it move up)
		if len(r.acked) > 0 {
			i := rapid.IntRange(0, len(r.acked)-1).Draw(t, "removed")
			r.acked = slices.Delete(r.acked, i, i+1)
		}
	case 22: // the newest entries cut off (the list shrinks)
		if len(r.acked) > 0 {
			r.acked = r.acked[:rapid.IntRange(0, len(r.acked)-1).Draw(t, "cut")]
		}
	case 23: // two entries swap places
		if len(r.acked) > 1 {
			i, j := rapid.IntRange(0, len(r.acked)-1).Draw(t, "swap"), rapid.IntRange(0, len(r.acked)-1).Draw(t, "with")
			r.acked[i], r.acked[j] = r.acked[j], r.acked[i]
		}
	case 24: // an entry rewritten with the same content, its strings held elsewhere
		if len(r.acked) > 0 {
			a := &r.acked[rapid.IntRange(0, len(r.acked)-1).Draw(t, "copied")]
			a.Op, a.Key = strings.Clone(a.Op), strings.Clone(a.Key)
		}
	case 25: // the newest entry withdrawn, to be acknowledged again as it was (a late acknowledgement)
		if n := len(r.acked); n > 0 {
			r.pending = append(r.pending, r.acked[n-1])
			r.acked = r.acked[:n-1]
		}
	case 30: // an acknowledgement of a write never applied so
		r.acked = append(r.acked, AckedWrite{Op: "ghost", Key: key, TS: r.ts + 1})
	}
}

// damage changes one replica's versions of key: a stray version no write
// created, a lost version, a compaction, or a staged copy (maybe altered).
func (r *nlwRig) damage(t *rapid.T, key string) {
	s := r.stores[rapid.IntRange(0, len(r.stores)-1).Draw(t, "store")]
	switch rapid.IntRange(0, 3).Draw(t, "damage") {
	case 0:
		s.Put(key, mvcc.Version{TS: hlc.TS(rapid.IntRange(1, int(r.ts)+1).Draw(t, "stray")), Value: "stray"})
	case 1:
		if vs := s.Versions(key); len(vs) > 0 {
			s.Delete(key, vs[rapid.IntRange(0, len(vs)-1).Draw(t, "which")].TS)
		}
	case 2:
		s.DeleteBelow(key, hlc.TS(rapid.IntRange(0, int(r.ts)+1).Draw(t, "below")))
	case 3:
		if vs := s.Versions(key); len(vs) > 0 {
			v := vs[0]
			if rapid.Bool().Draw(t, "alter") {
				v.Value += "!"
			}
			s.Put(keys.StageKey(rapid.SampledFrom(nlwJobs).Draw(t, "job"), key), v)
			s.Delete(key, v.TS)
		}
	}
}

// sameEntries compares acknowledged writes as bytes. That is sound only
// while equal bytes mean equal entries: every field a string (immutable:
// the same pointer and length hold the same bytes) or an integer, never a
// pointer, slice, map or interface whose target could change under equal
// words, nor a float. And it is cheap only while equal entries have equal
// bytes: no padding, whose bytes could differ between them (every pass
// would then see a change and judge every entry afresh).
func TestAckedWriteComparesAsBytes(t *testing.T) {
	typ := reflect.TypeFor[AckedWrite]()
	var fields uintptr
	for i := range typ.NumField() {
		f := typ.Field(i)
		fields += f.Type.Size()
		switch f.Type.Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Bool:
		default:
			t.Errorf("AckedWrite.%s is a %s: equal bytes need not mean an equal entry", f.Name, f.Type.Kind())
		}
	}
	if typ.Size() != fields {
		t.Errorf("AckedWrite takes %d bytes, its fields %d: sameEntries would compare padding", typ.Size(), fields)
	}
}

// sameEntries: entries that are copies of each other are the same; any
// field changed, or a string of equal content held elsewhere, is not.
func TestSameEntries(t *testing.T) {
	base := []AckedWrite{{Op: "w1", Key: "a", TS: 3, Return: 7}, {Op: "t2", TS: 4, Return: 9}}
	if !sameEntries(base, slices.Clone(base)) || !sameEntries(nil, base[:0]) {
		t.Fatal("copies differ")
	}
	for name, change := range map[string]func(*AckedWrite){
		"op":            func(a *AckedWrite) { a.Op = "w9" },
		"key":           func(a *AckedWrite) { a.Key = "b" },
		"ts":            func(a *AckedWrite) { a.TS++ },
		"return":        func(a *AckedWrite) { a.Return++ },
		"op held apart": func(a *AckedWrite) { a.Op = string([]byte(a.Op)) },
	} {
		for i := range base {
			other := slices.Clone(base)
			change(&other[i])
			if sameEntries(base, other) {
				t.Errorf("%s of entry %d changed: still the same", name, i)
			}
		}
	}
	if sameEntries(base, base[:1]) {
		t.Error("lists of other lengths are the same")
	}
}

// An acknowledgement rewritten in place with its operation kept (here a
// transaction's entry narrowed to one key, then to another the transaction
// wrote later) is another write: the incremental checker must judge the new
// key's version as the full check does. It once compared only the
// operation and missed the lost version (found by rapid in
// TestNoLostWriteCheckerMatchesFull).
func TestNoLostWriteCheckerSeesRekeyedEntry(t *testing.T) {
	o := NewVersionOracle()
	store := mvcc.New()
	owners := Owners{Route: func(string) (int, bool) { return 0, true }, Owner: func(int) Owner { return Owner{Store: store} }}
	c := NewNoLostWriteChecker(o)
	a := mvcc.Version{TS: 1, Value: "t0"}
	o.Add(AppliedWrite{Op: "t0", Key: "a", Version: a})
	store.Put("a", a)
	acked := []AckedWrite{{Op: "t0", TS: 1}}
	pass := func(step string) {
		t.Helper()
		full := o.CheckNoLostWrite(acked, ReadFrom(owners), "pass")
		inc := c.Check(acked, owners, "pass")
		if (inc == nil) != (full == nil) || inc != nil && *inc != *full {
			t.Fatalf("%s: incremental %v, full %v", step, inc, full)
		}
	}
	pass("transaction on a")
	acked[0].Key = "a"
	pass("entry narrowed to a")
	o.Add(AppliedWrite{Op: "t0", Key: "k1", Version: mvcc.Version{TS: 2, Value: "t0"}}) // never reaches the store
	pass("transaction grew to k1")
	acked[0].Key = "k1"
	pass("entry moved to k1")
	if o.CheckNoLostWrite(acked, ReadFrom(owners), "pass") == nil {
		t.Fatal("the rig lost nothing: the test judges nothing")
	}
}

// addRef gives keys' version indexes room cut from shared slabs: on random
// interleavings of appends to a few keys' indexes (one dropped and begun
// again now and then, as dropIndex does), every index holds exactly what
// plain appends to it hold.
func TestAddRefAgreesWithAppend(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := NewNoLostWriteChecker(NewVersionOracle())
		nkeys := rapid.IntRange(1, 6).Draw(t, "keys")
		want := make([][]writeRef, nkeys)
		for i := range rapid.IntRange(1, 3*refSlabChunk).Draw(t, "appends") {
			id := int32(rapid.IntRange(0, nkeys-1).Draw(t, "key"))
			k := c.keys.at(id)
			if rapid.IntRange(0, 99).Draw(t, "drop") == 0 {
				k.refs, want[id] = nil, nil
				continue
			}
			r := writeRef{ack: int32(i), j: id}
			c.addRef(k, r)
			want[id] = append(want[id], r)
			for other := range nkeys {
				if got := c.keys.at(int32(other)).refs; !slices.Equal(got, want[other]) {
					t.Fatalf("append %d: key %d holds %v, want %v", i, other, got, want[other])
				}
			}
		}
	})
}
