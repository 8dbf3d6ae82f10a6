package coordcheck

import (
	"testing"
	"time"

	"shardsim/model/coord"
	"shardsim/property"
)

// opLog builds a per-shard history by hand: each request is invoked and
// answered at the given history positions.
type opLog struct{ ops []*Request }

func (l *opLog) add(op Request, call, ret uint64, out Answer) *Request {
	op.ID, op.CallSeq, op.ReturnSeq, op.Out = uint64(len(l.ops)+1), call, ret, out
	if op.Tenant == (coord.TenantID{}) {
		op.Tenant = tenA
	}
	op.Out.Done = true
	l.ops = append(l.ops, &op)
	return &op
}

func lease(owner coord.WorkerID, fence coord.FenceEpoch, deadline coord.LogicalTime) coord.Lease {
	return coord.Lease{Tenant: tenA, Run: 1, Shard: 1, Owner: owner, Fence: fence, Deadline: deadline}
}

func acquired(l coord.Lease) Answer { return Answer{Lease: l} }

func checkShard1(t *testing.T, l *opLog) (property.Verdict, *property.Violation) {
	t.Helper()
	c := NewLinearizable()
	c.AddShard(testShard(tenA, 1))
	return c.Check(l.ops, 10*time.Second)
}

func TestCoordModelAcceptsAValidHistory(t *testing.T) {
	var l opLog
	l.add(Request{Kind: ReqAcquire, Key: shard1, Worker: 7, Now: 1, LeaseDur: 10}, 1, 2, acquired(lease(7, 2, 11)))
	l.add(Request{Kind: ReqCheckpoint, Lease: lease(7, 2, 11), Now: 2, Op: 1, Cursor: coord.Cursor{LastKey: []byte("c")}}, 3, 4, Answer{})
	// Ambiguous, and in fact applied: the retry answers from the op-log.
	l.add(Request{Kind: ReqCheckpoint, Lease: lease(7, 2, 11), Now: 3, Op: 2, Cursor: coord.Cursor{LastKey: []byte("e")}}, 5, 6, Answer{Ambiguous: true})
	l.add(Request{Kind: ReqCheckpoint, Lease: lease(7, 2, 11), Now: 4, Op: 2, Cursor: coord.Cursor{LastKey: []byte("e")}}, 7, 8, Answer{Outcome: coord.Replayed})
	// A zombie of an older lease era is refused.
	l.add(Request{Kind: ReqCheckpoint, Lease: lease(6, 1, 9), Now: 4, Op: 9, Cursor: coord.Cursor{LastKey: []byte("f")}}, 9, 10, Answer{Code: coord.CodeStaleFence})
	l.add(Request{Kind: ReqComplete, Lease: lease(7, 2, 11), Now: 5, Op: 3, Cursor: coord.Cursor{LastKey: []byte("l")}}, 11, 12, Answer{})
	if v, viol := checkShard1(t, &l); v != property.VerdictOK {
		t.Fatalf("valid history judged %s: %v", v, viol)
	}
}

func TestCoordModelCatchesAcceptedZombie(t *testing.T) {
	var l opLog
	l.add(Request{Kind: ReqAcquire, Key: shard1, Worker: 7, Now: 1, LeaseDur: 10}, 1, 2, acquired(lease(7, 2, 11)))
	l.add(Request{Kind: ReqAcquire, Key: shard1, Worker: 7, Now: 12, LeaseDur: 10}, 3, 4, acquired(lease(7, 3, 22)))
	l.add(Request{Kind: ReqCheckpoint, Lease: lease(7, 2, 11), Now: 13, Op: 1, Cursor: coord.Cursor{LastKey: []byte("c")}}, 5, 6, Answer{})
	v, viol := checkShard1(t, &l)
	if v != property.VerdictViolation {
		t.Fatalf("zombie checkpoint judged %s", v)
	}
	wantViolation(t, viol, property.CZombieRejection)
}

func TestCoordModelCatchesTwoLiveLeases(t *testing.T) {
	var l opLog
	l.add(Request{Kind: ReqAcquire, Key: shard1, Worker: 7, Now: 1, LeaseDur: 10}, 1, 2, acquired(lease(7, 2, 11)))
	l.add(Request{Kind: ReqAcquire, Key: shard1, Worker: 8, Now: 3, LeaseDur: 10}, 3, 4, acquired(coord.Lease{Tenant: tenA, Run: 1, Shard: 1, Owner: 8, Fence: 3, Deadline: 13}))
	v, viol := checkShard1(t, &l)
	if v != property.VerdictViolation {
		t.Fatalf("second live lease judged %s", v)
	}
	wantViolation(t, viol, property.CMutualExclusion)
}

func TestCoordModelCatchesDoubleExecution(t *testing.T) {
	var l opLog
	l.add(Request{Kind: ReqAcquire, Key: shard1, Worker: 7, Now: 1, LeaseDur: 10}, 1, 2, acquired(lease(7, 2, 11)))
	l.add(Request{Kind: ReqCheckpoint, Lease: lease(7, 2, 11), Now: 2, Op: 1, Cursor: coord.Cursor{LastKey: []byte("c")}}, 3, 4, Answer{})
	l.add(Request{Kind: ReqCheckpoint, Lease: lease(7, 2, 11), Now: 3, Op: 1, Cursor: coord.Cursor{LastKey: []byte("e")}}, 5, 6, Answer{})
	v, viol := checkShard1(t, &l)
	if v != property.VerdictViolation {
		t.Fatalf("op id executed twice judged %s", v)
	}
	wantViolation(t, viol, property.CIdempotency)
}

// A claim refused outright that its own late commit nevertheless applied
// (the durable observer saw it write the shard) may explain a lease that
// no answered request granted.
func TestCoordModelPlacesClaimsByTheirWrites(t *testing.T) {
	var l opLog
	claim := l.add(Request{Kind: ReqClaim, Worker: 7, Now: 1, LeaseDur: 10}, 1, 4, Answer{Code: coord.CodeNoShardAvailable})
	claim.Wrote = []ShardRef{{Tenant: tenA, Key: shard1}}
	l.add(Request{Kind: ReqCheckpoint, Lease: lease(7, 2, 11), Now: 2, Op: 1, Cursor: coord.Cursor{LastKey: []byte("c")}}, 5, 6, Answer{})
	if v, viol := checkShard1(t, &l); v != property.VerdictOK {
		t.Fatalf("late-landing claim not allowed for: %s %v", v, viol)
	}
	claim.Wrote = nil
	if v, _ := checkShard1(t, &l); v != property.VerdictViolation {
		t.Fatalf("progress under a lease nobody was granted judged %s", v)
	}
}

// An unpark refused because the shard's run had ended is explained by the
// model (which cannot see the run) as a refusal that changed nothing; the
// exemption is that code's alone.
func TestCoordModelAcceptsUnparkRefusedForAnEndedRun(t *testing.T) {
	var l opLog
	l.add(Request{Kind: ReqAcquire, Key: shard1, Worker: 7, Now: 1, LeaseDur: 10}, 1, 2, acquired(lease(7, 2, 11)))
	l.add(Request{Kind: ReqPark, Lease: lease(7, 2, 11), Now: 2, Op: 1, Reason: coord.ParkOther}, 3, 4, Answer{})
	l.add(Request{Kind: ReqUnpark, Key: shard1, Now: 3, Op: 2}, 5, 6, Answer{Code: coord.CodeRunState})
	if v, viol := checkShard1(t, &l); v != property.VerdictOK {
		t.Fatalf("unpark refused for an ended run judged %s: %v", v, viol)
	}
	l.ops[2].Out.Code = coord.CodeShardNotParked
	if v, _ := checkShard1(t, &l); v != property.VerdictViolation {
		t.Fatalf("a parked shard's unpark refused as not parked judged %s", v)
	}
}
