package migratecheck

import (
	"shardsim/property"
	"testing"
	"time"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/simclock"
)

func ms(n int) simclock.Time { return simclock.Time(time.Duration(n) * time.Millisecond) }

// staleWorld: k7 lived on group 1 (w1 at 10), moved to group 2 at 100ms;
// the target took w5 at 50, acknowledged at 120ms.
func staleWorld() (*VersionOracle, []AckedWrite, []Move) {
	o := NewVersionOracle()
	o.Add(AppliedWrite{Op: "w1", Group: 1, Key: "k7", Version: ver(10, "w1"), At: ms(5)})
	o.Add(AppliedWrite{Op: "w5", Group: 2, Key: "k7", Version: ver(50, "w5"), At: ms(110)})
	acked := []AckedWrite{{Op: "w1", Key: "k7", TS: 10, Return: ms(6)}, {Op: "w5", Key: "k7", TS: 50, Return: ms(120)}}
	moves := []Move{{Job: 1, Source: 1, Target: 2, Span: keys.Span{Start: "k5"}, At: ms(100)}}
	return o, acked, moves
}

func point(op string, group int, call int, ts hlc.TS, latest bool, chosen hlc.TS) ServedRead {
	return ServedRead{Op: op, Group: group, Call: ms(call), TS: ts, Latest: latest, Key: "k7", Family: keys.FamilyUser,
		Span: keys.Span{Start: "k7", End: keys.KeyAfter("k7")}, Rows: []ServedRow{{Key: "k7", Chosen: chosen != 0, Visible: chosen != 0, TS: chosen}}}
}

// M.NoStaleRead fails on a hand-built history: the source serves the old
// value of a moved key after the target acknowledged a newer write.
func TestNoStaleReadFails(t *testing.T) {
	o, acked, moves := staleWorld()
	good := []ServedRead{
		point("r1", 1, 90, 30, true, 10),   // before the target's write was acknowledged
		point("r2", 1, 130, 40, false, 10), // a snapshot read below it
		point("r3", 2, 130, 60, true, 50),  // served by the target
		point("r4", 1, 130, 60, true, 50),  // the source (somehow) returned it
	}
	if err := CheckNoStaleRead(good, acked, o, moves); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []ServedRead{
		point("r5", 1, 130, 45, true, 10),  // a latest read returns the old value
		point("r6", 1, 130, 60, false, 10), // a read at or above w5's ts
		point("r7", 1, 130, 45, true, 0),   // nothing at all
	} {
		wantProp(t, CheckNoStaleRead([]ServedRead{bad}, acked, o, moves), property.MNoStaleRead)
	}
	// A scan of the moved span that leaves the key out.
	scan := ServedRead{Op: "s1", Group: 1, Call: ms(130), TS: 45, Latest: true, Family: keys.FamilyUser, Span: keys.Span{Start: "k"}}
	wantProp(t, CheckNoStaleRead([]ServedRead{scan}, acked, o, moves), property.MNoStaleRead)
	scan.Limit, scan.Rows = 1, []ServedRow{{Key: "k6", Chosen: true, Visible: true, TS: 3}}
	if err := CheckNoStaleRead([]ServedRead{scan}, acked, o, moves); err != nil {
		t.Fatalf("a scan cut short by its limit: %v", err)
	}
	// A later move brought k7 back to group 1: its reads are not judged
	// against the first move any more.
	back := append(moves, Move{Job: 2, Source: 2, Target: 1, Span: keys.Span{Start: "k5"}, At: ms(125)})
	if err := CheckNoStaleRead([]ServedRead{point("r8", 1, 124, 45, true, 10)}, acked, o, back); err != nil {
		t.Fatalf("a read the later move's target may have served: %v", err)
	}
	// A scan's silence explained by a later delete is not stale.
	o.Add(AppliedWrite{Op: "d6", Group: 2, Key: "k7", Version: mvcc.Version{TS: 55, Tombstone: true}, At: ms(115)})
	scan = ServedRead{Op: "s2", Group: 1, Call: ms(130), TS: 60, Latest: true, Family: keys.FamilyUser, Span: keys.Span{Start: "k"}}
	if err := CheckNoStaleRead([]ServedRead{scan}, acked, o, moves); err != nil {
		t.Fatalf("a scan that saw a later delete: %v", err)
	}
}

func txnObs(id string, call, ret int, out TxnOutcome, readTS hlc.TS, reads []TxnRead, ks ...string) TxnObs {
	return TxnObs{ID: id, Call: ms(call), Return: ms(ret), Outcome: out, ReadTS: readTS, Reads: reads, Keys: ks}
}

// M.TxnSerializable fails on hand-built histories: a committed transaction
// that left nothing, an aborted one that wrote, a partial one, and a
// dependency cycle (a lost update: both read the same version and both
// wrote over it).
func TestTxnSerializableFails(t *testing.T) {
	o := NewVersionOracle()
	add := func(op, key string, ts hlc.TS) {
		o.Add(AppliedWrite{Op: op, Key: key, Version: mvcc.Version{TS: ts, Value: op}})
	}
	add("w0", "a", 5)
	add("w0b", "b", 6)
	add("t1", "a", 10)
	add("t1", "b", 10)
	add("t2", "a", 20)
	good := []TxnObs{
		txnObs("t1", 0, 10, TxnCommitted, 7, []TxnRead{{Key: "a", Chosen: true, TS: 5}, {Key: "b", Chosen: true, TS: 6}}, "a", "b"),
		txnObs("t2", 11, 20, TxnCommitted, 12, []TxnRead{{Key: "a", Chosen: true, TS: 10}}, "a"),
		txnObs("t3", 0, 30, TxnAborted, 7, nil, "b"),
		txnObs("t4", 0, 30, TxnUnknown, 7, nil, "b"),
	}
	if err := CheckTxns(good, o); err != nil {
		t.Fatal(err)
	}
	wantProp(t, CheckTxns([]TxnObs{txnObs("t9", 0, 1, TxnCommitted, 1, nil, "c")}, o), property.MTxnSerializable)
	wantProp(t, CheckTxns([]TxnObs{txnObs("t2", 0, 1, TxnAborted, 1, nil, "a")}, o), property.MTxnSerializable)
	wantProp(t, CheckTxns([]TxnObs{txnObs("t1", 0, 1, TxnCommitted, 1, nil, "a", "b", "c")}, o), property.MTxnSerializable)
	// t2 read a@5 (not t1's a@10) yet wrote after it: t2 -rw-> t1 -ww-> t2.
	lost := append([]TxnObs(nil), good[0], txnObs("t2", 11, 20, TxnCommitted, 7, []TxnRead{{Key: "a", Chosen: true, TS: 5}}, "a"))
	wantProp(t, CheckTxns(lost, o), property.MTxnSerializable)
	// Real time: t1 finished before t2 began, but t2 is ordered before it.
	o2 := NewVersionOracle()
	o2.Add(AppliedWrite{Op: "u1", Key: "x", Version: ver(20, "u1")})
	o2.Add(AppliedWrite{Op: "u2", Key: "x", Version: ver(10, "u2")})
	rt := []TxnObs{txnObs("u1", 0, 5, TxnCommitted, 1, nil, "x"), txnObs("u2", 6, 9, TxnCommitted, 1, nil, "x")}
	wantProp(t, CheckTxns(rt, o2), property.MTxnSerializable)
}
