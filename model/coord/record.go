package coord

import (
	"errors"
	"fmt"
	"slices"
)

// LeaseHolder is who holds a shard's lease and until when. Bundling owner
// and deadline in one optional value makes "both or neither" structural.
type LeaseHolder struct {
	Owner    WorkerID
	Deadline LogicalTime
}

// Live reports whether the lease is still valid at now (it expires at its
// deadline).
func (h LeaseHolder) Live(now LogicalTime) bool { return now < h.Deadline }

// ShardRecord is the authoritative state of one shard. It is self-contained:
// nothing in it refers back to the run's configuration.
type ShardRecord struct {
	Tenant     TenantID
	Run        RunID
	Shard      ShardID
	Spec       ShardSpec
	Status     ShardStatus
	ParkReason Opt[ParkReason] // set iff Status is Parked
	Lease      Opt[LeaseHolder]
	Fence      FenceEpoch
	// AcquireCount counts the leases granted on the shard (acquire and
	// claim), over its whole life; seed 004's shard summaries report it.
	AcquireCount uint32
	Cursor       Cursor
	Semantics    CursorSemantics
	Parent       Opt[ShardID] // set iff Shard is derived
	Spawned      []ShardID    // children and residuals, in creation order
	OpLog        ShardOpLog
}

// Key returns the shard's key within its tenant.
func (r *ShardRecord) Key() ShardKey { return ShardKey{Run: r.Run, Shard: r.Shard} }

// Clone returns a deep copy.
func (r *ShardRecord) Clone() ShardRecord {
	c := *r
	c.Spec = r.Spec.Clone()
	c.Cursor = r.Cursor.Clone()
	if len(r.Spawned) > 0 {
		c.Spawned = slices.Clone(r.Spawned)
	} else {
		c.Spawned = nil
	}
	return c
}

// Available reports whether the shard can be acquired at now: Active, and
// unleased or with an expired lease.
func (r *ShardRecord) Available(now LogicalTime) bool {
	return r.Status == ShardActive && !(r.Lease.Set && r.Lease.Val.Live(now))
}

// ErrInvariant is wrapped by every invariant violation, so callers can test
// for the class with errors.Is.
var ErrInvariant = errors.New("coord: invariant violated")

func invariantf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvariant}, args...)...)
}

// AssertInvariants checks the record's structural invariants and returns
// the first violation. The reference calls it before committing any new
// state (and panics on failure, so a bad state is never stored); checkers
// and the codec call it too. The checks, in order:
//
//  1. discriminants (status, park reason, semantics, op kinds, results) are known;
//  2. park reason is set iff the status is Parked;
//  3. a terminal shard holds no lease;
//  4. the fence is at least InitialFence;
//  5. the op-log holds at most shardOpLogCap entries, all of shard kinds;
//  6. a Split shard has spawned at least one shard;
//  7. the parent is set iff the shard id is derived;
//  8. every spawned id is derived;
//  9. op ids in the op-log are unique;
//  10. the spawned list holds at most maxSpawnedPerShard ids;
//
// plus that the key range is non-empty.
func (r *ShardRecord) AssertInvariants() error {
	if !r.Status.Valid() {
		return invariantf("unknown shard status %d", r.Status)
	}
	if !r.Semantics.Valid() {
		return invariantf("unknown cursor semantics %d", r.Semantics)
	}
	if r.ParkReason.Set != (r.Status == ShardParked) {
		return invariantf("park reason present=%t with status %s", r.ParkReason.Set, r.Status)
	}
	if r.ParkReason.Set && !r.ParkReason.Val.Valid() {
		return invariantf("unknown park reason %d", r.ParkReason.Val)
	}
	if r.Status.Inactive() && r.Lease.Set {
		return invariantf("%s shard holds a lease", r.Status)
	}
	if r.Fence < InitialFence {
		return invariantf("fence epoch %d below the initial epoch", r.Fence)
	}
	if r.OpLog.Len() > shardOpLogCap {
		return invariantf("op-log holds %d entries", r.OpLog.Len())
	}
	if r.Status == ShardSplit && len(r.Spawned) == 0 {
		return invariantf("split shard has spawned nothing")
	}
	if r.Parent.Set != r.Shard.IsDerived() {
		return invariantf("parent present=%t for a shard whose derived bit is %t", r.Parent.Set, r.Shard.IsDerived())
	}
	for _, id := range r.Spawned {
		if !id.IsDerived() {
			return invariantf("spawned shard %s is not a derived id", id)
		}
	}
	if len(r.Spawned) > maxSpawnedPerShard {
		return invariantf("spawned list holds %d ids", len(r.Spawned))
	}
	if err := r.OpLog.r.check(OpKind.ShardKind); err != nil {
		return err
	}
	if !r.Spec.WellFormed() {
		return invariantf("key range is empty")
	}
	return nil
}

// check checks discriminants, kind membership and op id uniqueness of the
// entries, without allocating (it runs on every committed change).
func (r *opRing) check(kindOK func(OpKind) bool) error {
	for i := 0; i < int(r.n); i++ {
		e := r.at(i)
		if !e.Kind.Valid() || !kindOK(e.Kind) {
			return invariantf("op-log entry of kind %d does not belong in this log", e.Kind)
		}
		if !e.Result.Valid() {
			return invariantf("op-log entry with unknown result %d", e.Result)
		}
		if (e.Refusal != 0) != (e.Result == OpError) {
			return invariantf("op-log entry %s: refusal code %d with result %s", e.Op, e.Refusal, e.Result)
		}
		for j := 0; j < i; j++ {
			if r.at(j).Op == e.Op {
				return invariantf("op-log holds %s twice", e.Op)
			}
		}
	}
	return nil
}

// ShardSnapshot is the view of a shard handed to a worker on acquire: what
// it needs to resume, and nothing about leases, fences or op-logs.
type ShardSnapshot struct {
	Status    ShardStatus
	Spec      ShardSpec
	Cursor    Cursor
	Semantics CursorSemantics
	Parent    Opt[ShardID]
	Spawned   []ShardID
}

// Snapshot returns a deep-copied snapshot of the record.
func (r *ShardRecord) Snapshot() ShardSnapshot {
	c := r.Clone()
	return ShardSnapshot{Status: c.Status, Spec: c.Spec, Cursor: c.Cursor, Semantics: c.Semantics, Parent: c.Parent, Spawned: c.Spawned}
}

// ShardSummary is the lightweight view returned by ListShards.
type ShardSummary struct {
	Shard         ShardID
	Status        ShardStatus
	ParkReason    Opt[ParkReason]
	Start         []byte
	End           []byte
	CursorLastKey []byte
	LeaseDeadline Opt[LogicalTime]
	AcquireCount  uint32
	Parent        Opt[ShardID]
	Spawned       []ShardID
}

// Summary returns a deep-copied summary of the record.
func (r *ShardRecord) Summary() ShardSummary {
	c := r.Clone()
	s := ShardSummary{
		Shard: c.Shard, Status: c.Status, ParkReason: c.ParkReason,
		Start: c.Spec.Start, End: c.Spec.End, CursorLastKey: c.Cursor.LastKey,
		Parent: c.Parent, Spawned: c.Spawned, AcquireCount: c.AcquireCount,
	}
	if c.Lease.Set {
		s.LeaseDeadline = Some(c.Lease.Val.Deadline)
	}
	return s
}
