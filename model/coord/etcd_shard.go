package coord

import (
	"fmt"

	"shardsim/model/bugs"
)

// shardCall describes one shard operation for shardOp.
type shardCall struct {
	op      Operation
	tenant  TenantID // whose keyspace holds the shard
	key     ShardKey
	gated   bool // lease-gated: an executed change needs the owner binding
	withRun bool // the step needs the run record
	// pinRun makes the commit compare the run record (read withRun): the
	// decision depends on the run's status, so it must not land after the
	// run changed.
	pinRun bool
	step   func(st *shardState) (ShardChange, error)
}

// shardOp runs a shard operation through the compare-and-swap skeleton:
// read the shard, decide with c.step, commit with planShard.
func (e *Etcd) shardOp(c shardCall) (ShardChange, error) {
	label := c.op.String()
	var out ShardChange
	var retries uint32 // the run's MaxShardRetries, when the run was read
	var refusal error  // a logged refusal, answered once its entry landed
	err := e.optimistic(label, func(r *opRun) (*commit, error) {
		refusal = nil
		st, found, err := e.loadShard(label+".read", c.tenant, c.key, c.withRun)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, ShardNotFound(c.op, c.key)
		}
		if st.run.Set {
			retries = st.run.Val.Config.MaxShardRetries
		}
		st.ours = r.sentStamp(st.stamp)
		if st.ours {
			r.keep = true // the landed commit's binding holds the grant
		}
		ch, err := c.step(st)
		out = ch
		if err != nil && ch.Logged {
			refusal = err
		} else if err != nil || ch.Outcome == Replayed {
			return nil, err
		}
		cm, err := e.planShard(r, c.op, c.gated, st, &ch)
		if err == nil && c.pinRun {
			cm.unchanged(e.keys.run(st.tenant, st.rec.Run), st.runKV)
		}
		return cm, err
	})
	if err == nil && refusal != nil {
		return ShardChange{}, refusal
	}
	out.Capacity = capacityOf(&out.Next, retries)
	return out, surface(c.op, err)
}

// planShard builds the commit of an executed shard change: the storage
// lease check for lease-gated operations, admission of created shards, the
// self-check, then the record (compared on its mod revision), the owner
// binding and the created records, all in one transaction.
func (e *Etcd) planShard(r *opRun, op Operation, gated bool, st *shardState, ch *ShardChange) (*commit, error) {
	if gated {
		if err := e.checkStorageLease(op, r.label, st); err != nil {
			return nil, err
		}
	}
	c := e.newCommit()
	if err := e.admit(op, r.label, st.tenant, ch.Created, c, basis{e.keys.shard(st.tenant, st.rec.Key()), st.recKV}); err != nil {
		return nil, err
	}
	e.checkShard(&st.rec, &ch.Next)
	for i := range ch.Created {
		e.checkShard(nil, &ch.Created[i])
	}
	// coord.etcd-blind-write: the record is written without comparing it.
	compare := !e.cfg.Bugs.Has(bugs.CoordEtcdBlindWrite)
	c.putWitness(e.keys.shard(st.tenant, st.rec.Key()), c.shardRecord(&ch.Next), st.recKV, st.rev, compare)
	if err := e.bindOwner(r, op, c, st, &ch.Next, gated); err != nil {
		return nil, err
	}
	if op == OpSplitReplace && len(ch.Created) > 0 && e.cfg.Bugs.Has(bugs.CoordSplitTwoTxns) {
		// The bug: the parent turns Split in this transaction and its
		// children follow in a second one.
		c.then = e.newCommit()
		e.putCreated(c.then, st.tenant, ch.Created, st.rev)
	} else {
		e.putCreated(c, st.tenant, ch.Created, st.rev)
	}
	return c, nil
}

// outcome returns an idempotent operation's answer.
func outcome(ch ShardChange, err error) (Outcome, []Event, error) {
	if err != nil {
		return 0, nil, err
	}
	return ch.Outcome, ch.Events, nil
}

// AcquireAndRestore implements ShardCoordination.
func (e *Etcd) AcquireAndRestore(now LogicalTime, tenant TenantID, key ShardKey, worker WorkerID) (AcquireResult, []Event, error) {
	ch, err := e.shardOp(shardCall{op: OpAcquire, tenant: tenant, key: key, withRun: true, pinRun: true,
		step: func(st *shardState) (ShardChange, error) {
			if st.ours {
				e.stats.OwnLateAcquires++
				return acquiredBefore(now, &st.rec), nil
			}
			return StepAcquire(e.shardEnv(now, tenant, st), &st.rec, worker, st.run.Val.Config.LeaseDuration)
		}})
	if err != nil {
		return AcquireResult{}, nil, err
	}
	return AcquireResult{Lease: ch.Lease, Snapshot: ch.Next.Snapshot(), Capacity: ch.Capacity}, ch.Events, nil
}

// acquiredBefore is the answer of an acquire that meets the record its own
// earlier attempt wrote (the commit landed after its read-back said it had
// not): that attempt's grant, which the caller now learns, with nothing
// more to write. Deciding afresh would refuse the caller's own live lease.
func acquiredBefore(now LogicalTime, rec *ShardRecord) ShardChange {
	h := rec.Lease.Val
	ev := shardEvent(rec, now, EventShardAcquired)
	ev.Worker, ev.Fence, ev.Deadline = h.Owner, rec.Fence, h.Deadline
	return ShardChange{
		Outcome: Replayed, Next: *rec,
		Lease:  Lease{Tenant: rec.Tenant, Run: rec.Run, Shard: rec.Shard, Owner: h.Owner, Fence: rec.Fence, Deadline: h.Deadline},
		Events: []Event{ev},
	}
}

// leased runs a lease-gated operation. The shard is looked up in the
// lease's tenant: after checkLeaseScope that is the caller's, unless bug
// coord.no-tenant-check let a foreign lease through (as in the reference).
// The run is read with the shard and compared in the commit: a shard of a
// run that ended is refused, and an operation decided while the run was
// open cannot land after it ended.
func (e *Etcd) leased(op Operation, tenant TenantID, l Lease, step func(st *shardState) (ShardChange, error)) (ShardChange, error) {
	if err := ScopeLease(op, tenant, l, e.cfg.Bugs); err != nil {
		return ShardChange{}, err
	}
	return e.shardOp(shardCall{op: op, tenant: l.Tenant, key: l.Key(), gated: true, withRun: true, pinRun: true, step: step})
}

// Renew implements ShardCoordination.
func (e *Etcd) Renew(now LogicalTime, tenant TenantID, l Lease) (RenewResult, []Event, error) {
	ch, err := e.leased(OpRenew, tenant, l, func(st *shardState) (ShardChange, error) {
		return StepRenew(e.shardEnv(now, tenant, st), &st.rec, l, st.run.Val.Config.LeaseDuration)
	})
	if err != nil {
		return RenewResult{}, nil, err
	}
	return RenewResult{Deadline: ch.Lease.Deadline, Capacity: ch.Capacity}, ch.Events, nil
}

// Checkpoint implements ShardCoordination.
func (e *Etcd) Checkpoint(now LogicalTime, tenant TenantID, l Lease, cursor Cursor, op OpID) (Outcome, []Event, error) {
	return outcome(e.leased(OpCheckpoint, tenant, l, func(st *shardState) (ShardChange, error) {
		return StepCheckpoint(e.shardEnv(now, tenant, st), &st.rec, l, cursor, op)
	}))
}

// Complete implements ShardCoordination.
func (e *Etcd) Complete(now LogicalTime, tenant TenantID, l Lease, cursor Cursor, op OpID) (Outcome, []Event, error) {
	return outcome(e.leased(OpComplete, tenant, l, func(st *shardState) (ShardChange, error) {
		return StepComplete(e.shardEnv(now, tenant, st), &st.rec, l, cursor, op)
	}))
}

// ParkShard implements ShardCoordination.
func (e *Etcd) ParkShard(now LogicalTime, tenant TenantID, l Lease, reason ParkReason, op OpID) (Outcome, []Event, error) {
	return outcome(e.leased(OpPark, tenant, l, func(st *shardState) (ShardChange, error) {
		return StepPark(e.shardEnv(now, tenant, st), &st.rec, l, reason, op)
	}))
}

// SplitReplace implements ShardCoordination. Beyond the protocol's checks,
// a plan with more than MaxChildrenPerOp children is refused as
// SplitTooManyChildren: the parent and all children are published in one
// transaction, which must fit etcd's --max-txn-ops.
func (e *Etcd) SplitReplace(now LogicalTime, tenant TenantID, l Lease, plan SplitReplacePlan, op OpID) (SplitReplaceResult, []Event, error) {
	ch, err := e.leased(OpSplitReplace, tenant, l, func(st *shardState) (ShardChange, error) {
		ch, err := StepSplitReplace(e.shardEnv(now, tenant, st), &st.rec, l, plan, op)
		if err == nil && ch.Outcome == Executed && len(plan.Children) > e.cfg.MaxChildrenPerOp {
			return ShardChange{}, newError(OpSplitReplace, CoordError{
				Code: CodeSplitInvalid, Shard: st.rec.Key(), Split: SplitTooManyChildren,
				Detail: fmt.Sprintf("the etcd backend publishes at most %d children per split_replace", e.cfg.MaxChildrenPerOp),
			})
		}
		return ch, err
	})
	if err != nil {
		return SplitReplaceResult{}, nil, err
	}
	return SplitReplaceResult{Outcome: ch.Outcome, Children: ch.Children}, ch.Events, nil
}

// SplitResidual implements ShardCoordination.
func (e *Etcd) SplitResidual(now LogicalTime, tenant TenantID, l Lease, plan SplitResidualPlan, op OpID) (SplitResidualResult, []Event, error) {
	ch, err := e.leased(OpSplitResidual, tenant, l, func(st *shardState) (ShardChange, error) {
		// The step's replay probe may need the residual an earlier
		// execution of op spawned; read it first, so a failed read is an
		// infrastructure error and not a missing record.
		lookup, err := e.residualProbe(st, op)
		if err != nil {
			return ShardChange{}, err
		}
		return StepSplitResidual(e.shardEnv(now, tenant, st), &st.rec, l, plan, op, lookup)
	})
	if err != nil {
		return SplitResidualResult{}, nil, err
	}
	return SplitResidualResult{Outcome: ch.Outcome, Residual: ch.Residual}, ch.Events, nil
}

// residualProbe reads the residual that op would have spawned from st's
// shard, if its spawned list holds one, and returns a lookup over it. The
// residual's start never changes, which is all the probe compares, so the
// read needs no compare in the commit.
func (e *Etcd) residualProbe(st *shardState, op OpID) (ShardLookup, error) {
	rec := &st.rec
	at := findDerived(rec.Run, rec.Shard, rec.Spawned, op, DerivedResidual)
	if len(at) == 0 {
		return func(ShardID) (*ShardRecord, bool) { return nil, false }, nil
	}
	key := ShardKey{Run: rec.Run, Shard: rec.Spawned[at[0]]}
	_, kvs, err := e.get("split_residual.probe", e.keys.shard(st.tenant, key))
	if err != nil {
		return nil, err
	}
	var prior *ShardRecord
	if kvs[0] != nil {
		p, err := e.decodeShard("split_residual.probe", st.tenant, key, kvs[0].Value)
		if err != nil {
			return nil, err
		}
		prior = &p
	}
	return func(id ShardID) (*ShardRecord, bool) {
		if prior != nil && prior.Shard == id {
			return prior, true
		}
		return nil, false
	}, nil
}

// UnparkShard implements RunManagement. The run is read with the shard and
// compared in the commit, so an unpark whose answer was lost cannot land
// after its run ended.
func (e *Etcd) UnparkShard(now LogicalTime, tenant TenantID, key ShardKey, op OpID) (Outcome, []Event, error) {
	return outcome(e.shardOp(shardCall{op: OpUnpark, tenant: tenant, key: key, withRun: true, pinRun: true,
		step: func(st *shardState) (ShardChange, error) {
			return StepUnpark(e.env(now, tenant), &st.rec, st.run.Val.Status, op)
		}}))
}
