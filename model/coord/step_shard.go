package coord

import (
	"bytes"

	"shardsim/model/bugs"
)

// Pure shard transitions. Each takes the current record (never modified)
// and the request, applies the protocol's checks in order, and returns the
// change to commit. A backend looks the record up, calls the step, checks
// what only it can (shard limits, id collisions, compare-and-swap), and
// commits Next and Created together, or nothing. On a replay it commits
// nothing. The injectable bugs act here, so every backend gets them.

// StepEnv is the context of one request.
type StepEnv struct {
	Now    LogicalTime
	Tenant TenantID // the caller's tenant
	Bugs   bugs.Set
	// Run is the status of the shard's run, read with the shard (unset:
	// not read, taken as open). A run that ended (Done, Failed,
	// Cancelled) no longer hands out its shards: acquire and every
	// lease-gated operation refuse them as CodeRunState, as unpark does.
	// Replays still replay.
	Run Opt[RunStatus]
}

// runEnded reports whether the shard's run has ended, unless bug
// coord.ended-run-accepts hides it.
func (e StepEnv) runEnded() bool {
	return e.Run.Set && e.Run.Val.Terminal() && !e.Bugs.Has(bugs.CoordEndedRunAccepts)
}

// runStateError builds op's refusal of a shard whose run has ended.
func (e StepEnv) runStateError(op Operation, key ShardKey) error {
	return newError(op, CoordError{Code: CodeRunState, Shard: key, RunStatus: e.Run.Val})
}

// ShardChange is the result of a shard transition.
type ShardChange struct {
	Outcome Outcome
	// Next is the shard's new state (zero on a replay).
	Next ShardRecord
	// Created are new shards to insert with Next (splits only).
	Created []ShardRecord
	// Lease is the granted or renewed lease (acquire, renew).
	Lease Lease
	// Children are split_replace's children, in plan order, also on replay.
	Children []ShardID
	// Residual is split_residual's residual, also on replay.
	Residual ShardID
	Events   []Event
	// Capacity is the hint returned with a granted or renewed lease (set
	// by the backend, which knows the run's configuration).
	Capacity CapacityHint
	// Logged is set on a payload refusal that the op-log remembers
	// (OpError): the step returns the refusal as its error and Next holds
	// the record with the logged entry, which the backend commits before
	// answering the refusal.
	Logged bool
}

// refuseLogged builds the answer to a payload refusal err of the lease
// holder's request (id, kind, hash): the record with the refusal logged, so
// a retry answers the same refusal.
func refuseLogged(env StepEnv, rec *ShardRecord, id OpID, kind OpKind, hash uint64, err error) (ShardChange, error) {
	next := *rec
	recordShardRefusal(&next, id, kind, hash, env.Now, CodeOf(err))
	return ShardChange{Next: next, Logged: true}, err
}

// replayed answers a replay of the logged entry e of op: the stored
// refusal for an OpError entry, else the change ok describes.
func replayed(op Operation, key ShardKey, e OpLogEntry, ok ShardChange) (ShardChange, error) {
	if e.Result == OpError {
		return ShardChange{}, newError(op, CoordError{Code: e.Refusal, Shard: key})
	}
	ok.Outcome = Replayed
	return ok, nil
}

// ScopeLease runs checkLeaseScope for op and returns op's error type.
func ScopeLease(op Operation, caller TenantID, l Lease, b bugs.Set) error {
	if ce, ok := checkLeaseScope(caller, l, b); !ok {
		return newError(op, ce)
	}
	return nil
}

// ShardNotFound builds op's "no such shard" error for key.
func ShardNotFound(op Operation, key ShardKey) error {
	return newError(op, CoordError{Code: CodeShardNotFound, Shard: key})
}

// classify runs the idempotency tiers for request (id, kind, hash) on rec
// and returns the logged entry a replay answers from. It comes before any
// lease check, so a retry replays even after the lease expired, the fence
// moved on or the shard became terminal.
func classify(env StepEnv, op Operation, rec *ShardRecord, id OpID, kind OpKind, hash uint64) (Tier, OpLogEntry, error) {
	found := findShardOp(rec, id)
	t := classifyOp(found, kind, hash, env.Bugs)
	if t == TierConflict {
		return t, found.Val, newError(op, CoordError{Code: CodeOpIDConflict, Shard: rec.Key()})
	}
	return t, found.Val, nil
}

// lease runs validateLease for op and returns op's error type.
func lease(env StepEnv, op Operation, rec *ShardRecord, l Lease) error {
	if ce, ok := validateLease(rec, env, l); !ok {
		return newError(op, ce)
	}
	return nil
}

// gate is classify followed, for a new request, by the lease checks. Bug
// coord.lease-before-replay checks the lease first, so a retry that comes
// after the lease is gone is refused instead of replayed.
func gate(env StepEnv, op Operation, rec *ShardRecord, l Lease, id OpID, kind OpKind, hash uint64) (Tier, OpLogEntry, error) {
	if env.Bugs.Has(bugs.CoordLeaseBeforeReplay) {
		if err := lease(env, op, rec, l); err != nil {
			return TierNew, OpLogEntry{}, err
		}
	}
	t, e, err := classify(env, op, rec, id, kind, hash)
	if err != nil || t == TierReplay {
		return t, e, err
	}
	return t, e, lease(env, op, rec, l)
}

// raiseFence returns the next fence epoch, refusing to wrap around.
func raiseFence(op Operation, rec *ShardRecord) (FenceEpoch, error) {
	if rec.Fence == ^FenceEpoch(0) {
		return 0, newError(op, CoordError{Code: CodeFenceExhausted, Shard: rec.Key()})
	}
	return rec.Fence + 1, nil
}

// StepAcquire leases rec to worker for dur. Seed 004: the shard must be
// "Active and unleased (or lease expired)": a live lease refuses the
// acquire whoever holds it, the caller included, since a second grant to
// the same worker inside one lease window would raise the fence under the
// first grant and break at-most-once for that window. The checks, in
// order: the caller's tenant; the run has not ended (bug
// coord.ended-run-accepts skips this); the shard is Active (bug
// coord.acquire-terminal skips this); no live lease (bug
// coord.acquire-live-lease skips this for another worker's lease, bug
// coord.acquire-own-live-lease for the caller's own). The fence is raised
// (bug coord.no-fence-bump-on-acquire skips this) and the acquire count
// grows by one.
func StepAcquire(env StepEnv, rec *ShardRecord, worker WorkerID, dur LogicalDuration) (ShardChange, error) {
	key := rec.Key()
	if rec.Tenant != env.Tenant {
		return ShardChange{}, ShardNotFound(OpAcquire, key)
	}
	if env.runEnded() {
		return ShardChange{}, env.runStateError(OpAcquire, key)
	}
	if rec.Status != ShardActive && !env.Bugs.Has(bugs.CoordAcquireTerminal) {
		return ShardChange{}, newError(OpAcquire, CoordError{Code: CodeShardTerminal, Shard: key, ShardStatus: rec.Status})
	}
	if h := rec.Lease; h.Set && h.Val.Live(env.Now) && !liveLeaseIgnored(env.Bugs, h.Val.Owner == worker) {
		return ShardChange{}, newError(OpAcquire, CoordError{Code: CodeAlreadyLeased, Shard: key, At: h.Val.Deadline})
	}
	next := *rec
	if !env.Bugs.Has(bugs.CoordNoFenceBumpOnAcquire) {
		f, err := raiseFence(OpAcquire, rec)
		if err != nil {
			return ShardChange{}, err
		}
		next.Fence = f
	}
	holder := LeaseHolder{Owner: worker, Deadline: env.Now.Add(dur)}
	next.Lease = Some(holder)
	next.AcquireCount = rec.AcquireCount + 1
	ev := shardEvent(rec, env.Now, EventShardAcquired)
	ev.Worker, ev.Fence, ev.Deadline = worker, next.Fence, holder.Deadline
	return ShardChange{
		Next:   next,
		Lease:  Lease{Tenant: rec.Tenant, Run: rec.Run, Shard: rec.Shard, Owner: worker, Fence: next.Fence, Deadline: holder.Deadline},
		Events: []Event{ev},
	}, nil
}

// liveLeaseIgnored reports whether a bug lets acquire pass over a live
// lease: coord.acquire-live-lease for another worker's, and
// coord.acquire-own-live-lease for the caller's own (the exception an
// earlier version of this backend made).
func liveLeaseIgnored(b bugs.Set, own bool) bool {
	if own {
		return b.Has(bugs.CoordAcquireOwnLiveLease)
	}
	return b.Has(bugs.CoordAcquireLiveLease)
}

// StepRenew extends the lease to now+dur. The fence does not change.
func StepRenew(env StepEnv, rec *ShardRecord, l Lease, dur LogicalDuration) (ShardChange, error) {
	if err := lease(env, OpRenew, rec, l); err != nil {
		return ShardChange{}, err
	}
	next := *rec
	deadline := env.Now.Add(dur)
	next.Lease = Some(LeaseHolder{Owner: l.Owner, Deadline: deadline})
	l.Deadline = deadline
	if env.Bugs.Has(bugs.CoordRenewMisreports) {
		l.Deadline++ // the bug: the answer is not what was stored
	}
	ev := shardEvent(rec, env.Now, EventShardLeaseRenewed)
	ev.Deadline = deadline
	return ShardChange{Next: next, Lease: l, Events: []Event{ev}}, nil
}

// cursorRules returns the cursor checks for a request under b.
func cursorRules(b bugs.Set, requireKey bool) CursorRules {
	return CursorRules{
		RequireKey:     requireKey,
		SkipRegression: b.Has(bugs.CoordCursorRegression),
		SkipBounds:     b.Has(bugs.CoordCursorOutOfBounds),
	}
}

func cursorError(op Operation, key ShardKey, v CursorViolation) error {
	var code Code
	switch v {
	case CursorMissingKey:
		code = CodeCheckpointMissingKey
	case CursorReset:
		code = CodeCursorReset
	case CursorRegression:
		code = CodeCursorRegression
	case CursorOutOfBounds:
		code = CodeCursorOutOfBounds
	}
	return newError(op, CoordError{Code: code, Shard: key})
}

// StepCheckpoint records cursor as the shard's progress.
func StepCheckpoint(env StepEnv, rec *ShardRecord, l Lease, cursor Cursor, id OpID) (ShardChange, error) {
	hash := hashCheckpoint(cursor)
	switch tier, e, err := gate(env, OpCheckpoint, rec, l, id, OpKindCheckpoint, hash); {
	case err != nil:
		return ShardChange{}, err
	case tier == TierReplay:
		return replayed(OpCheckpoint, rec.Key(), e, ShardChange{})
	}
	if v := checkCursorUpdate(rec.Spec, rec.Cursor, cursor, cursorRules(env.Bugs, true)); v != CursorOK {
		return refuseLogged(env, rec, id, OpKindCheckpoint, hash, cursorError(OpCheckpoint, rec.Key(), v))
	}
	next := *rec
	next.Cursor = cursor.Clone()
	recordShardOp(&next, id, OpKindCheckpoint, hash, env.Now)
	ev := shardEvent(rec, env.Now, EventShardCheckpointed)
	ev.LastKey = newRedactedKey(cursor.LastKey)
	return ShardChange{Next: next, Events: []Event{ev}}, nil
}

// StepComplete records the final cursor, releases the lease (bug
// coord.complete-keeps-lease keeps it) and makes the shard Done.
func StepComplete(env StepEnv, rec *ShardRecord, l Lease, cursor Cursor, id OpID) (ShardChange, error) {
	hash := hashComplete(cursor)
	switch tier, e, err := gate(env, OpComplete, rec, l, id, OpKindComplete, hash); {
	case err != nil:
		return ShardChange{}, err
	case tier == TierReplay:
		return replayed(OpComplete, rec.Key(), e, ShardChange{})
	}
	if v := checkCursorUpdate(rec.Spec, rec.Cursor, cursor, cursorRules(env.Bugs, false)); v != CursorOK {
		return refuseLogged(env, rec, id, OpKindComplete, hash, cursorError(OpComplete, rec.Key(), v))
	}
	next := *rec
	next.Cursor = cursor.Clone()
	next.Status = ShardDone
	if !env.Bugs.Has(bugs.CoordCompleteKeepsLease) {
		next.Lease = None[LeaseHolder]()
	}
	supersedeCheckpoints(&next)
	recordShardOp(&next, id, OpKindComplete, hash, env.Now)
	return ShardChange{Next: next, Events: []Event{shardEvent(rec, env.Now, EventShardCompleted)}}, nil
}

// StepPark releases the lease and parks the shard for reason.
func StepPark(env StepEnv, rec *ShardRecord, l Lease, reason ParkReason, id OpID) (ShardChange, error) {
	hash := hashPark(reason)
	switch tier, e, err := gate(env, OpPark, rec, l, id, OpKindPark, hash); {
	case err != nil:
		return ShardChange{}, err
	case tier == TierReplay:
		return replayed(OpPark, rec.Key(), e, ShardChange{})
	}
	if !reason.Valid() {
		return refuseLogged(env, rec, id, OpKindPark, hash,
			newError(OpPark, CoordError{Code: CodeInvalidArgument, Shard: rec.Key(), Detail: "unknown park reason"}))
	}
	next := *rec
	next.Status = ShardParked
	next.ParkReason = Some(reason)
	if env.Bugs.Has(bugs.CoordParkDropsReason) {
		next.ParkReason = None[ParkReason]()
	}
	next.Lease = None[LeaseHolder]()
	supersedeCheckpoints(&next)
	recordShardOp(&next, id, OpKindPark, hash, env.Now)
	ev := shardEvent(rec, env.Now, EventShardParked)
	ev.Reason = reason
	return ShardChange{Next: next, Events: []Event{ev}}, nil
}

// derivedRecord builds a new Active, unleased shard spawned by parent.
func derivedRecord(parent *ShardRecord, id ShardID, spec ShardSpec) ShardRecord {
	return ShardRecord{
		Tenant: parent.Tenant, Run: parent.Run, Shard: id,
		Spec:   spec.Clone(),
		Status: ShardActive, Fence: InitialFence,
		Semantics: parent.Semantics,
		Parent:    Some(parent.Shard),
	}
}

// withSpawned returns spawned+ids in a fresh array, so the old record's
// list is never written through a shared backing array.
func withSpawned(spawned []ShardID, ids ...ShardID) []ShardID {
	out := make([]ShardID, 0, len(spawned)+len(ids))
	return append(append(out, spawned...), ids...)
}

// spawnedAt returns the spawned ids at the given positions.
func spawnedAt(spawned []ShardID, at []int) []ShardID {
	out := make([]ShardID, len(at))
	for i, j := range at {
		out[i] = spawned[j]
	}
	return out
}

// StepSplitReplace retires the shard as Split and creates the plan's
// children with ids derived from (run, shard, op, child, index), indices
// continuing the spawned list. A replay returns the same children.
func StepSplitReplace(env StepEnv, rec *ShardRecord, l Lease, plan SplitReplacePlan, id OpID) (ShardChange, error) {
	hash := hashSplitReplace(plan)
	key := rec.Key()
	tier, e, err := gate(env, OpSplitReplace, rec, l, id, OpKindSplitReplace, hash)
	if err != nil {
		return ShardChange{}, err
	}
	if tier == TierReplay {
		at := findDerived(rec.Run, rec.Shard, rec.Spawned, id, DerivedChild)
		return replayed(OpSplitReplace, key, e, ShardChange{Children: spawnedAt(rec.Spawned, at)})
	}
	if v := validateSplitReplace(rec.Spec, plan, env.Bugs); v != SplitOK {
		return refuseLogged(env, rec, id, OpKindSplitReplace, hash,
			newError(OpSplitReplace, CoordError{Code: CodeSplitInvalid, Shard: key, Split: v}))
	}
	if !spawnFits(len(rec.Spawned), len(plan.Children)) {
		return refuseLogged(env, rec, id, OpKindSplitReplace, hash, newError(OpSplitReplace, CoordError{Code: CodeSpawnCapExceeded, Shard: key}))
	}
	ids := make([]ShardID, len(plan.Children))
	created := make([]ShardRecord, len(plan.Children))
	seen := make(map[ShardID]struct{}, len(ids))
	for i, spec := range plan.Children {
		ids[i] = deriveShardID(rec.Run, rec.Shard, id, DerivedChild, uint32(len(rec.Spawned)+i))
		if _, dup := seen[ids[i]]; dup {
			return ShardChange{}, newError(OpSplitReplace, CoordError{Code: CodeIDCollision, Shard: key})
		}
		seen[ids[i]] = struct{}{}
		created[i] = derivedRecord(rec, ids[i], spec)
	}
	next := *rec
	next.Status = ShardSplit
	next.Lease = None[LeaseHolder]()
	next.Spawned = withSpawned(rec.Spawned, ids...)
	supersedeCheckpoints(&next)
	recordShardOp(&next, id, OpKindSplitReplace, hash, env.Now)
	ev := shardEvent(rec, env.Now, EventShardSplit)
	ev.Children = append([]ShardID(nil), ids...)
	return ShardChange{Next: next, Created: created, Children: ids, Events: []Event{ev}}, nil
}

// ShardLookup finds a shard of the same tenant and run by id, for
// split_residual's replay probe.
type ShardLookup func(ShardID) (*ShardRecord, bool)

// StepSplitResidual shrinks the shard to plan.Parent and creates the
// residual shard for plan.Residual; the shard keeps its lease.
//
// Replay is found in two tiers: the op-log, and, because the shard stays
// Active and later operations can evict that entry, a probe of the spawned
// list for a residual derived from this op id. The probe cannot see the
// evicted payload hash; it accepts the retry as a replay when the residual
// it finds starts where the retried plan's residual starts (a residual's
// start never changes), and reports a conflict otherwise.
func StepSplitResidual(env StepEnv, rec *ShardRecord, l Lease, plan SplitResidualPlan, id OpID, lookup ShardLookup) (ShardChange, error) {
	hash := hashSplitResidual(plan)
	key := rec.Key()
	tier, e, err := classify(env, OpSplitResidual, rec, id, OpKindSplitResidual, hash)
	if err != nil {
		return ShardChange{}, err
	}
	at := findDerived(rec.Run, rec.Shard, rec.Spawned, id, DerivedResidual)
	switch {
	case tier == TierReplay && e.Result == OpError:
		return replayed(OpSplitResidual, key, e, ShardChange{})
	case tier == TierReplay && len(at) == 0:
		return ShardChange{}, BackendError(OpSplitResidual, &InfraError{Operation: "split_residual.replay", Message: "logged residual split has no spawned residual"})
	case tier == TierReplay:
		return ShardChange{Outcome: Replayed, Residual: rec.Spawned[at[0]]}, nil
	case len(at) > 0:
		// Evicted from the op-log but found by the probe.
		prior, ok := lookup(rec.Spawned[at[0]])
		if !ok {
			return ShardChange{}, BackendError(OpSplitResidual, &InfraError{Operation: "split_residual.probe", Message: "spawned residual record is missing"})
		}
		if bytes.Equal(prior.Spec.Start, plan.Residual.Start) {
			return ShardChange{Outcome: Replayed, Residual: prior.Shard}, nil
		}
		if !env.Bugs.Has(bugs.CoordOpIDConflictIgnored) {
			return ShardChange{}, newError(OpSplitResidual, CoordError{Code: CodeOpIDConflict, Shard: key})
		}
	}
	if err := lease(env, OpSplitResidual, rec, l); err != nil {
		return ShardChange{}, err
	}
	if v := validateSplitResidual(rec.Spec, rec.Cursor, plan, env.Bugs); v != SplitOK {
		return refuseLogged(env, rec, id, OpKindSplitResidual, hash,
			newError(OpSplitResidual, CoordError{Code: CodeSplitInvalid, Shard: key, Split: v}))
	}
	if !spawnFits(len(rec.Spawned), 1) {
		return refuseLogged(env, rec, id, OpKindSplitResidual, hash, newError(OpSplitResidual, CoordError{Code: CodeSpawnCapExceeded, Shard: key}))
	}
	rid := deriveShardID(rec.Run, rec.Shard, id, DerivedResidual, uint32(len(rec.Spawned)))
	next := *rec
	next.Spec = plan.Parent.Clone()
	next.Spawned = withSpawned(rec.Spawned, rid)
	recordShardOp(&next, id, OpKindSplitResidual, hash, env.Now)
	ev := shardEvent(rec, env.Now, EventShardResidualCreated)
	ev.Residual = rid
	return ShardChange{Next: next, Created: []ShardRecord{derivedRecord(rec, rid, plan.Residual)}, Residual: rid, Events: []Event{ev}}, nil
}

// StepUnpark returns a Parked shard to Active with a raised fence and no
// lease, so any lease from before the park is fenced out. run is the
// status of the shard's run, which must be Active: a run that ended (Done,
// Failed, Cancelled) no longer hands out its shards (claims skip it and
// nothing completes it again), so reviving one of its shards would leave
// an Active shard that can never finish; that is refused as CodeRunState.
// A replay still replays after the run ended, like every idempotent
// operation. Bug coord.unpark-done also accepts a Done shard; bug
// coord.unpark-bumps-first refuses a Done or Split shard only after
// raising its fence and logging the op.
func StepUnpark(env StepEnv, rec *ShardRecord, run RunStatus, id OpID) (ShardChange, error) {
	if rec.Tenant != env.Tenant {
		return ShardChange{}, ShardNotFound(OpUnpark, rec.Key())
	}
	hash := hashUnpark()
	switch tier, _, err := classify(env, OpUnpark, rec, id, OpKindUnpark, hash); {
	case err != nil:
		return ShardChange{}, err
	case tier == TierReplay:
		return ShardChange{Outcome: Replayed}, nil
	}
	if run != RunActive {
		return ShardChange{}, newError(OpUnpark, CoordError{Code: CodeRunState, Shard: rec.Key(), RunStatus: run})
	}
	f, err := raiseFence(OpUnpark, rec)
	if rec.Status != ShardParked && !(rec.Status == ShardDone && env.Bugs.Has(bugs.CoordUnparkDone)) {
		refusal := newError(OpUnpark, CoordError{Code: CodeShardNotParked, Shard: rec.Key(), ShardStatus: rec.Status})
		if err == nil && rec.Status != ShardActive && env.Bugs.Has(bugs.CoordUnparkBumpsFirst) {
			// The bug: the fence and the op-log were written first.
			next := *rec
			next.Fence = f
			recordShardOp(&next, id, OpKindUnpark, hash, env.Now)
			return ShardChange{Next: next, Logged: true}, refusal
		}
		return ShardChange{}, refusal
	}
	if err != nil {
		return ShardChange{}, err
	}
	next := *rec
	next.Status = ShardActive
	next.ParkReason = None[ParkReason]()
	next.Lease = None[LeaseHolder]()
	next.Fence = f
	recordShardOp(&next, id, OpKindUnpark, hash, env.Now)
	ev := shardEvent(rec, env.Now, EventShardUnparked)
	ev.Fence = f
	return ShardChange{Next: next, Events: []Event{ev}}, nil
}
