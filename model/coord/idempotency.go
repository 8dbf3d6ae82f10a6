package coord

import "shardsim/model/bugs"

// Tier is how an idempotent request relates to what the op-log remembers.
type Tier uint8

const (
	// TierNew: the op id is not in the op-log; execute.
	TierNew Tier = iota
	// TierReplay: same op id and payload; return the first result, change
	// nothing.
	TierReplay
	// TierConflict: same op id, different payload (or kind); a client bug.
	TierConflict
)

// String names the tier.
func (t Tier) String() string {
	switch t {
	case TierNew:
		return "new"
	case TierReplay:
		return "replay"
	case TierConflict:
		return "conflict"
	}
	return "tier(?)"
}

// classifyOp places a request (op, kind, hash) against the op-log entry
// found for op, if any. Backends call it before validating the lease, so a
// retry still replays after the lease expired or the shard became
// terminal. With coord.opid-conflict-ignored a conflict is treated as new,
// so the operation executes a second time.
func classifyOp(found Opt[OpLogEntry], kind OpKind, hash uint64, b bugs.Set) Tier {
	if !found.Set {
		return TierNew
	}
	if found.Val.Kind == kind && found.Val.PayloadHash == hash {
		return TierReplay
	}
	if b.Has(bugs.CoordOpIDConflictIgnored) {
		return TierNew
	}
	return TierConflict
}

// findShardOp looks op up in a shard's op-log. (The shard and run
// variants stay separate, concrete functions: an interface parameter would
// move the record being built onto the heap on the checkpoint hot path.)
func findShardOp(rec *ShardRecord, op OpID) Opt[OpLogEntry] {
	if e, ok := rec.OpLog.Find(op); ok {
		return Some(e)
	}
	return None[OpLogEntry]()
}

// findRunOp looks op up in a run's op-log.
func findRunOp(rec *RunRecord, op OpID) Opt[OpLogEntry] {
	if e, ok := rec.OpLog.Find(op); ok {
		return Some(e)
	}
	return None[OpLogEntry]()
}

// recordShardOp logs a successful execution in a shard's op-log. An entry
// for the same op id can only exist when a conflict was let through (bug
// coord.opid-conflict-ignored); it is replaced so op ids stay unique.
func recordShardOp(rec *ShardRecord, op OpID, kind OpKind, hash uint64, now LogicalTime) {
	rec.OpLog.Remove(op)
	rec.OpLog.Push(OpLogEntry{Op: op, Kind: kind, Result: OpCompleted, PayloadHash: hash, ExecutedAt: now})
}

// recordShardRefusal logs a payload refusal (OpError) with its code.
func recordShardRefusal(rec *ShardRecord, op OpID, kind OpKind, hash uint64, now LogicalTime, code Code) {
	rec.OpLog.Remove(op)
	rec.OpLog.Push(OpLogEntry{Op: op, Kind: kind, Result: OpError, Refusal: code, PayloadHash: hash, ExecutedAt: now})
}

// supersedeCheckpoints marks the shard's logged checkpoints superseded:
// the shard is ending, and the cursor they recorded is no longer its
// progress. Their replays are unaffected.
func supersedeCheckpoints(rec *ShardRecord) {
	entries := rec.OpLog.Entries()
	changed := false
	for i := range entries {
		if entries[i].Kind == OpKindCheckpoint && entries[i].Result == OpCompleted {
			entries[i].Result = OpSuperseded
			changed = true
		}
	}
	if changed {
		rec.OpLog = newShardOpLog(entries...)
	}
}

// recordRunOp logs a successful execution in a run's op-log (see
// recordShardOp).
func recordRunOp(rec *RunRecord, op OpID, kind OpKind, hash uint64, now LogicalTime) {
	rec.OpLog.Remove(op)
	rec.OpLog.Push(OpLogEntry{Op: op, Kind: kind, Result: OpCompleted, PayloadHash: hash, ExecutedAt: now})
}
