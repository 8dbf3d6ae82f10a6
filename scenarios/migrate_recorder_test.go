package scenarios

import (
	"reflect"
	"slices"
	"testing"

	"shardsim/checker/migratecheck"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// history is the recorded operations followed by the derived ones (a
// latest scan's reads, a transaction's and a range delete's writes); it
// leaves r.ops as it was, whatever room r.ops has. derivedHistory gives
// the derived ones, in r.ops's spare room when they fit there, and a
// second call rebuilds the same in the same room.
func TestRecorderHistoryReusesRoom(t *testing.T) {
	oracle := migratecheck.NewVersionOracle()
	for i, k := range []string{"k1", "k2", "k3"} {
		oracle.Add(migratecheck.AppliedWrite{Op: "w" + k, Key: k, Version: mvcc.Version{TS: hlc.TS(10 + i), Value: "v"}})
	}
	oracle.Add(migratecheck.AppliedWrite{Op: "del", Key: "k2", Version: mvcc.Version{TS: 20, Tombstone: true}})
	for _, room := range []int{0, 64} {
		r := newMigrateRecorder()
		r.ops = make([]migratecheck.KeyOp, 0, room)
		r.write(0, "k1", "wk1", false, 1, 2, 10, nil)
		r.ops = append(r.ops, migratecheck.KeyOp{Client: 1, Key: "k2", Call: 3, Return: 4, ReadTS: 12, Found: true, Value: "v"})
		r.scans = []migratecheck.ScanObs{{Op: "s", Span: keys.Span{Start: "k"}, TS: 15, Rows: []mvcc.ScanRow{{Key: "k1"}, {Key: "k3"}}}}
		r.latest, r.spans = []bool{true}, []scanTimes{{client: 2, call: 5, ret: 6}}
		r.txn(3, migratecheck.TxnObs{ID: "t", Call: 7, Return: 8, Outcome: migratecheck.TxnCommitted}, fsm.Txn{ID: "t", Keys: []string{"k1", "k3"}, Deletes: []bool{false, true}}, 30)
		r.ranges = []rangeRecord{{client: 4, op: "del", call: 9, ret: 10}}
		recorded := slices.Clone(r.ops)

		want := slices.Clone(recorded)
		want = append(want, // the scan's reads, written out: k1 and k3 as read, k2 (in the span, not returned) absent
			migratecheck.KeyOp{Client: 2, Key: "k1", Call: 5, Return: 6, ReadTS: 15, Found: true},
			migratecheck.KeyOp{Client: 2, Key: "k2", Call: 5, Return: 6, ReadTS: 15},
			migratecheck.KeyOp{Client: 2, Key: "k3", Call: 5, Return: 6, ReadTS: 15, Found: true})
		want = append(want,
			migratecheck.KeyOp{Client: 3, Key: "k1", Call: 7, Return: 8, Write: true, Op: "t"},
			migratecheck.KeyOp{Client: 3, Key: "k3", Call: 7, Return: 8, Write: true, Delete: true, Op: "t"},
			migratecheck.KeyOp{Client: 4, Key: "k2", Call: 9, Return: 10, Write: true, Delete: true, Op: "del"})
		first := r.history(oracle)
		again := r.history(oracle)
		if !reflect.DeepEqual(first, want) || !reflect.DeepEqual(again, want) {
			t.Fatalf("room %d: history %+v, then %+v, want %+v", room, first, again, want)
		}
		if !reflect.DeepEqual(r.ops, recorded) {
			t.Fatalf("room %d: history changed the recorded operations to %+v", room, r.ops)
		}
		derived := r.derivedHistory(oracle)
		if !reflect.DeepEqual(derived, want[len(recorded):]) {
			t.Fatalf("room %d: derived %+v, want %+v", room, derived, want[len(recorded):])
		}
		if again := r.derivedHistory(oracle); &again[0] != &derived[0] || !reflect.DeepEqual(again, want[len(recorded):]) {
			t.Fatalf("room %d: derivedHistory did not rebuild %+v in its room", room, again)
		}
		if inOps := cap(r.ops) > len(r.ops) && &derived[0] == &r.ops[:len(r.ops)+1][len(r.ops)]; inOps != (room > 0) {
			t.Fatalf("room %d: derived in r.ops's spare room: %v", room, inOps)
		}
	}
}
