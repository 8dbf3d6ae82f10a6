package coordcheck

import (
	"testing"
	"time"

	"shardsim/model/coord"
	"shardsim/property"
	"shardsim/simkv"
)

// Checker fixes of issue 9, each on a hand-built history that the earlier
// checker let pass.

// A worker re-acquiring its own live lease at a new fence is a second
// grant inside one lease window: C.MutualExclusion. (The earlier rule
// flagged only a replacement by another worker.)
func TestCoordDurableCatchesAReGrantToTheHolder(t *testing.T) {
	r := newDurableRig(0)
	r.seed(tenA)
	held := testShard(tenA, 1)
	held.Fence, held.Lease = 2, coord.Some(coord.LeaseHolder{Owner: 7, Deadline: 20})
	r.putShard(&Request{Kind: ReqAcquire, Tenant: tenA, Now: 10}, held)
	again := held
	again.Fence, again.Lease = 3, coord.Some(coord.LeaseHolder{Owner: 7, Deadline: 25})
	r.putShard(&Request{Kind: ReqAcquire, Tenant: tenA, Now: 15}, again)
	wantViolation(t, r.d.Err(), property.CMutualExclusion)

	// A renewal (same holder, same fence) is no re-grant.
	r = newDurableRig(0)
	r.seed(tenA)
	r.putShard(&Request{Kind: ReqAcquire, Tenant: tenA, Now: 10}, held)
	renewed := held
	renewed.Lease = coord.Some(coord.LeaseHolder{Owner: 7, Deadline: 25})
	r.putShard(&Request{Kind: ReqRenew, Tenant: tenA, Lease: coord.Lease{Tenant: tenA, Run: 1, Shard: 1, Owner: 7, Fence: 2, Deadline: 20}, Now: 15}, renewed)
	if v := r.d.Err(); v != nil {
		t.Fatalf("renewal flagged: %v", v)
	}
}

// endRun ends tenant A's run 1 with status st: its record and its
// active-run index entry, in one transaction, as the backend does.
func (r *durableRig) endRun(st coord.RunStatus) {
	run := testRun(tenA, 1)
	run.Status, run.CompletedAt = st, coord.Some(coord.LogicalTime(5))
	req := simkv.Request{Txn: &simkv.TxnRequest{Success: []simkv.RequestOp{
		{Put: &simkv.PutRequest{Key: []byte(runKey(tenA, 1)), Value: stored(coord.EncodeRunRecord(&run))}},
		{DeleteRange: &simkv.DeleteRangeRequest{Key: []byte(activeKey(tenA, 1))}},
	}}}
	r.call++
	r.d.OnInvoke(r.call, "test", 0, req)
	before := r.store.Revision()
	resp, err := r.store.Apply(0, req)
	r.d.OnApply(r.call, 0, req, resp, err, before, r.store.Revision())
}

// A shard of a run that ended is judged against the whole previous state,
// not only the records the step wrote: the earlier observer passed only
// the changed shard to the step rules, so the run's status was never seen
// and a parked shard of a failed run could return to Active unnoticed.
func TestCoordDurableSeesTheRunOfAChangedShard(t *testing.T) {
	for _, tc := range []struct {
		name string
		from func(s *coord.ShardRecord)
		to   func(s *coord.ShardRecord)
	}{
		{"unparked", func(s *coord.ShardRecord) {
			s.Status, s.ParkReason = coord.ShardParked, coord.Some(coord.ParkOther)
		}, func(s *coord.ShardRecord) {
			s.Status, s.ParkReason, s.Fence = coord.ShardActive, coord.None[coord.ParkReason](), 3
		}},
		{"leased", func(*coord.ShardRecord) {}, func(s *coord.ShardRecord) {
			s.Fence, s.Lease = 2, coord.Some(coord.LeaseHolder{Owner: 7, Deadline: 30})
		}},
		{"checkpointed", func(s *coord.ShardRecord) {
			s.Fence, s.Lease = 2, coord.Some(coord.LeaseHolder{Owner: 7, Deadline: 30})
		}, func(s *coord.ShardRecord) { s.Cursor = coord.Cursor{LastKey: []byte("c")} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newDurableRig(0)
			r.seed(tenA)
			s := testShard(tenA, 1)
			tc.from(&s)
			r.putShard(nil, s)
			r.endRun(coord.RunFailed)
			if v := r.d.Err(); v != nil {
				t.Fatalf("setup flagged: %v", v)
			}
			tc.to(&s)
			r.putShard(&Request{Kind: ReqUnpark, Tenant: tenA, Now: 12}, s)
			wantViolation(t, r.d.Err(), property.CRunTerminalIrreversibility)
		})
	}
}

// A Done or Split record never changes at all: a refused unpark that
// still raised the fence of a Done shard keeps its status, which is all
// the earlier rule compared.
func TestCoordDurableComparesWholeTerminalRecords(t *testing.T) {
	r := newDurableRig(0)
	r.seed(tenA)
	done := testShard(tenA, 1)
	done.Status, done.Cursor = coord.ShardDone, coord.Cursor{LastKey: []byte("l")}
	r.putShard(nil, done)
	bumped := done
	bumped.Fence = 2
	r.putShard(&Request{Kind: ReqUnpark, Tenant: tenA, Now: 12}, bumped)
	wantViolation(t, r.d.Err(), property.CTerminalIrreversibility)
}

// A checkpoint refused for its payload is logged (OpError): the model
// moves to the state with the entry, so the retry that answers the same
// refusal from the op-log, and later operations, still linearize.
func TestCoordModelFollowsLoggedRefusals(t *testing.T) {
	var l opLog
	l.add(Request{Kind: ReqAcquire, Key: shard1, Worker: 7, Now: 1, LeaseDur: 10}, 1, 2, acquired(lease(7, 2, 11)))
	bad := Request{Kind: ReqCheckpoint, Lease: lease(7, 2, 11), Now: 2, Op: 1, Cursor: coord.Cursor{LastKey: []byte("z")}}
	l.add(bad, 3, 4, Answer{Code: coord.CodeCursorOutOfBounds})
	l.add(bad, 5, 6, Answer{Code: coord.CodeCursorOutOfBounds})
	l.add(Request{Kind: ReqCheckpoint, Lease: lease(7, 2, 11), Now: 3, Op: 2, Cursor: coord.Cursor{LastKey: []byte("c")}}, 7, 8, Answer{})
	if v, viol := checkShard1(t, &l); v != property.VerdictOK {
		t.Fatalf("history with a logged refusal judged %s: %v", v, viol)
	}
	// Executing the logged op id afterwards is a second effect.
	var m opLog
	m.ops = append(m.ops, l.ops[:2]...)
	m.add(Request{Kind: ReqCheckpoint, Lease: lease(7, 2, 11), Now: 2, Op: 1, Cursor: coord.Cursor{LastKey: []byte("c")}}, 5, 6, Answer{})
	v, viol := checkShard1(t, &m)
	if v != property.VerdictViolation {
		t.Fatalf("op id reused after its logged refusal judged %s", v)
	}
	wantViolation(t, viol, property.CIdempotency)
}

// A history no linearization explains, whose first inexplicable answer
// names no refusal, is C.Linearizable, not C.MutualExclusion; and a check
// that runs out of time is unknown, naming C.Linearizable too.
func TestCoordModelLabelsWhatItCannotAttribute(t *testing.T) {
	var l opLog
	// Renew answers a deadline the protocol would not give.
	l.add(Request{Kind: ReqAcquire, Key: shard1, Worker: 7, Now: 1, LeaseDur: 10}, 1, 2, acquired(lease(7, 2, 11)))
	l.add(Request{Kind: ReqRenew, Lease: lease(7, 2, 11), Now: 3, LeaseDur: 10}, 3, 4, Answer{Lease: lease(7, 2, 99)})
	v, viol := checkShard1(t, &l)
	if v != property.VerdictViolation {
		t.Fatalf("wrong renewal judged %s", v)
	}
	wantViolation(t, viol, property.CLinearizable)

	c := NewLinearizable()
	c.AddShard(testShard(tenA, 1))
	v, viol = c.Check(l.ops, -time.Second)
	if v != property.VerdictUnknown || viol == nil || viol.Property != property.CLinearizable {
		t.Fatalf("timed-out check: %s %v", v, viol)
	}
}

// C.Idempotency's first half: a retry of an operation that took effect
// (its answer lost) is refused after the lease lapsed instead of replayed.
// The per-shard model accepts the refusal (any refusal of a lease-gated
// request may be the storage lease failing closed), and no effect was
// duplicated, so the earlier checkers passed it; Replays compares the
// retry with the durable op-log and flags it.
func TestCoordReplaysCatchARefusedRetryOfALandedOp(t *testing.T) {
	var l opLog
	l.add(Request{Kind: ReqAcquire, Key: shard1, Worker: 7, Now: 1, LeaseDur: 10}, 1, 2, acquired(lease(7, 2, 11)))
	cp := Request{Kind: ReqCheckpoint, Lease: lease(7, 2, 11), Now: 2, Op: 5, Cursor: coord.Cursor{LastKey: []byte("c")}}
	first := l.add(cp, 3, 5, Answer{Ambiguous: true}) // landed at seq 4, answer lost
	retry := cp
	retry.Now = 12
	second := l.add(retry, 6, 7, Answer{Code: coord.CodeLeaseExpired})
	if v, viol := checkShard1(t, &l); v != property.VerdictOK {
		t.Fatalf("the model now rejects it (%s %v): this test no longer shows the gap it was written for", v, viol)
	}

	landed := testShard(tenA, 1)
	landed.Fence, landed.Lease = 2, coord.Some(coord.LeaseHolder{Owner: 7, Deadline: 11})
	landed.Cursor = coord.Cursor{LastKey: []byte("c")}
	landed.OpLog.Push(coord.OpLogEntry{Op: 5, Kind: coord.OpKindCheckpoint, PayloadHash: 1, ExecutedAt: 2})
	after := &coord.Snapshot{Shards: []coord.ShardRecord{landed}}
	r := NewReplays()
	r.Answer(first, after)
	r.ObserveDurable(nil, after, 0, 4)
	r.Answer(second, after)
	wantViolation(t, r.Err(), property.CIdempotency)

	// Replayed, it passes.
	ok := NewReplays()
	ok.Answer(first, after)
	ok.ObserveDurable(nil, after, 0, 4)
	replayed := *second
	replayed.Out = Answer{Done: true, Outcome: coord.Replayed}
	ok.Answer(&replayed, after)
	if v := ok.Err(); v != nil {
		t.Fatalf("a replay flagged: %v", v)
	}
}
