package coord

import "errors"

// commitLogged commits the op-log entry of a logged refusal (a no-op for
// any other failed step).
func (r *Reference) commitLogged(rec *ShardRecord, ch ShardChange) {
	if ch.Logged {
		r.commitShard(rec, &ch.Next)
	}
}

// commitShard replaces the stored record old by next after checking it.
func (r *Reference) commitShard(old *ShardRecord, next *ShardRecord) {
	r.checkShard(old, next)
	*old = *next
}

// commitChange stores a shard change: the parent's new state plus any
// created shards, all checked before anything is written.
func (r *Reference) commitChange(op Operation, rs *runState, old *ShardRecord, ch *ShardChange) error {
	if err := r.admit(op, old.Tenant, rs, ch.Created); err != nil {
		return err
	}
	r.checkShard(old, &ch.Next)
	for i := range ch.Created {
		r.checkShard(nil, &ch.Created[i])
	}
	*old = ch.Next
	r.insert(old.Tenant, rs, ch.Created)
	return nil
}

// leased resolves the shard a lease names, after the tenant scope check.
// The lookup uses the lease's tenant: it equals the caller's unless bug
// coord.no-tenant-check let a foreign lease through, which is exactly the
// cross-tenant access that bug stands for.
func (r *Reference) leased(op Operation, tenant TenantID, l Lease) (*runState, *ShardRecord, error) {
	if err := ScopeLease(op, tenant, l, r.cfg.Bugs); err != nil {
		return nil, nil, err
	}
	rs, rec, ok := r.shard(l.Tenant, l.Key())
	if !ok {
		return nil, nil, ShardNotFound(op, l.Key())
	}
	return rs, rec, nil
}

// AcquireAndRestore implements ShardCoordination.
func (r *Reference) AcquireAndRestore(now LogicalTime, tenant TenantID, key ShardKey, worker WorkerID) (AcquireResult, []Event, error) {
	rs, rec, ok := r.shard(tenant, key)
	if !ok {
		return AcquireResult{}, nil, ShardNotFound(OpAcquire, key)
	}
	return r.acquire(now, tenant, rs, rec, worker)
}

func (r *Reference) acquire(now LogicalTime, tenant TenantID, rs *runState, rec *ShardRecord, worker WorkerID) (AcquireResult, []Event, error) {
	ch, err := StepAcquire(r.shardEnv(now, tenant, rs), rec, worker, rs.rec.Config.LeaseDuration)
	if err != nil {
		return AcquireResult{}, nil, err
	}
	r.commitShard(rec, &ch.Next)
	return AcquireResult{Lease: ch.Lease, Snapshot: rec.Snapshot(), Capacity: capacityOf(rec, rs.rec.Config.MaxShardRetries)}, ch.Events, nil
}

// Renew implements ShardCoordination.
func (r *Reference) Renew(now LogicalTime, tenant TenantID, l Lease) (RenewResult, []Event, error) {
	rs, rec, err := r.leased(OpRenew, tenant, l)
	if err != nil {
		return RenewResult{}, nil, err
	}
	ch, err := StepRenew(r.shardEnv(now, tenant, rs), rec, l, rs.rec.Config.LeaseDuration)
	if err != nil {
		return RenewResult{}, nil, err
	}
	r.commitShard(rec, &ch.Next)
	return RenewResult{Deadline: ch.Lease.Deadline, Capacity: capacityOf(rec, rs.rec.Config.MaxShardRetries)}, ch.Events, nil
}

// Checkpoint implements ShardCoordination.
func (r *Reference) Checkpoint(now LogicalTime, tenant TenantID, l Lease, cursor Cursor, op OpID) (Outcome, []Event, error) {
	rs, rec, err := r.leased(OpCheckpoint, tenant, l)
	if err != nil {
		return 0, nil, err
	}
	ch, err := StepCheckpoint(r.shardEnv(now, tenant, rs), rec, l, cursor, op)
	return r.finishSimple(rec, ch, err)
}

// Complete implements ShardCoordination.
func (r *Reference) Complete(now LogicalTime, tenant TenantID, l Lease, cursor Cursor, op OpID) (Outcome, []Event, error) {
	rs, rec, err := r.leased(OpComplete, tenant, l)
	if err != nil {
		return 0, nil, err
	}
	ch, err := StepComplete(r.shardEnv(now, tenant, rs), rec, l, cursor, op)
	return r.finishSimple(rec, ch, err)
}

// ParkShard implements ShardCoordination.
func (r *Reference) ParkShard(now LogicalTime, tenant TenantID, l Lease, reason ParkReason, op OpID) (Outcome, []Event, error) {
	rs, rec, err := r.leased(OpPark, tenant, l)
	if err != nil {
		return 0, nil, err
	}
	ch, err := StepPark(r.shardEnv(now, tenant, rs), rec, l, reason, op)
	return r.finishSimple(rec, ch, err)
}

// finishSimple commits a single-record change unless it failed or is a
// replay; a logged refusal commits its op-log entry and answers the refusal.
func (r *Reference) finishSimple(rec *ShardRecord, ch ShardChange, err error) (Outcome, []Event, error) {
	if err != nil {
		r.commitLogged(rec, ch)
		return 0, nil, err
	}
	if ch.Outcome == Replayed {
		return Replayed, nil, nil
	}
	r.commitShard(rec, &ch.Next)
	return Executed, ch.Events, nil
}

// SplitReplace implements ShardCoordination.
func (r *Reference) SplitReplace(now LogicalTime, tenant TenantID, l Lease, plan SplitReplacePlan, op OpID) (SplitReplaceResult, []Event, error) {
	rs, rec, err := r.leased(OpSplitReplace, tenant, l)
	if err != nil {
		return SplitReplaceResult{}, nil, err
	}
	ch, err := StepSplitReplace(r.shardEnv(now, tenant, rs), rec, l, plan, op)
	if err != nil {
		r.commitLogged(rec, ch)
		return SplitReplaceResult{}, nil, err
	}
	if ch.Outcome == Executed {
		if err := r.commitChange(OpSplitReplace, rs, rec, &ch); err != nil {
			return SplitReplaceResult{}, nil, err
		}
	}
	return SplitReplaceResult{Outcome: ch.Outcome, Children: ch.Children}, ch.Events, nil
}

// SplitResidual implements ShardCoordination.
func (r *Reference) SplitResidual(now LogicalTime, tenant TenantID, l Lease, plan SplitResidualPlan, op OpID) (SplitResidualResult, []Event, error) {
	rs, rec, err := r.leased(OpSplitResidual, tenant, l)
	if err != nil {
		return SplitResidualResult{}, nil, err
	}
	lookup := func(id ShardID) (*ShardRecord, bool) {
		s, ok := rs.shards[id]
		return s, ok
	}
	ch, err := StepSplitResidual(r.shardEnv(now, tenant, rs), rec, l, plan, op, lookup)
	if err != nil {
		r.commitLogged(rec, ch)
		return SplitResidualResult{}, nil, err
	}
	if ch.Outcome == Executed {
		if err := r.commitChange(OpSplitResidual, rs, rec, &ch); err != nil {
			return SplitResidualResult{}, nil, err
		}
	}
	return SplitResidualResult{Outcome: ch.Outcome, Residual: ch.Residual}, ch.Events, nil
}

// UnparkShard implements RunManagement.
func (r *Reference) UnparkShard(now LogicalTime, tenant TenantID, key ShardKey, op OpID) (Outcome, []Event, error) {
	rs, rec, ok := r.shard(tenant, key)
	if !ok {
		return 0, nil, ShardNotFound(OpUnpark, key)
	}
	ch, err := StepUnpark(r.env(now, tenant), rec, rs.rec.Status, op)
	return r.finishSimple(rec, ch, err)
}

// ClaimNextAvailable implements RunManagement.
func (r *Reference) ClaimNextAvailable(now LogicalTime, tenant TenantID, worker WorkerID) (AcquireResult, []Event, error) {
	ts, known := r.tenants[tenant]
	var last Opt[LogicalTime]
	if known {
		if at, seen := ts.lastClaim[worker]; seen {
			last = Some(at)
		}
	}
	if ce, ok := checkClaimCooldownUnder(last, now, r.cfg.ClaimCooldown, r.cfg.Bugs); !ok {
		return AcquireResult{}, nil, newError(OpClaim, ce)
	}
	if !known {
		return AcquireResult{}, nil, newError(OpClaim, CoordError{Code: CodeNoShardAvailable})
	}
	for _, run := range sortedRunIDs(ts.runs) {
		rs := ts.runs[run]
		if rs.rec.Status != RunActive {
			continue
		}
		for _, id := range rs.order {
			rec := rs.shards[id]
			if !claimable(rec, now, r.cfg.Bugs) {
				continue
			}
			res, evs, err := r.acquire(now, tenant, rs, rec, worker)
			if err != nil {
				var ae *AcquireError
				if errors.As(err, &ae) {
					return AcquireResult{}, nil, newError(OpClaim, ae.CoordError)
				}
				return AcquireResult{}, nil, err
			}
			ts.lastClaim[worker] = now
			return res, evs, nil
		}
	}
	return AcquireResult{}, nil, newError(OpClaim, CoordError{Code: CodeNoShardAvailable})
}
