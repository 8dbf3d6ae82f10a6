package coord

// Builders of oracle calls, one per operation.

func callCreateRun(tn TenantID, run RunID, cfg RunConfig) call {
	return call{name: "create_run", tenant: tn, do: func(c Coordinator, now LogicalTime) result {
		evs, err := c.CreateRun(now, tn, run, cfg)
		return resultOf(nil, evs, err)
	}}
}

func callRegister(tn TenantID, run RunID, roots []InitialShard, op OpID) call {
	return call{name: "register_shards", tenant: tn, idem: true, do: func(c Coordinator, now LogicalTime) result {
		return resultOf(c.RegisterShards(now, tn, run, roots, op))
	}}
}

func callAcquire(tn TenantID, key ShardKey, w WorkerID) call {
	return call{name: "acquire", tenant: tn, target: Some(tenantShardKey{tn, key}), do: func(c Coordinator, now LogicalTime) result {
		return resultOf(c.AcquireAndRestore(now, tn, key, w))
	}}
}

func callClaim(tn TenantID, w WorkerID) call {
	return call{name: "claim", tenant: tn, do: func(c Coordinator, now LogicalTime) result {
		return resultOf(c.ClaimNextAvailable(now, tn, w))
	}}
}

func callRenew(tn TenantID, l Lease) call {
	return call{name: "renew", tenant: tn, gate: Some(l), target: Some(tenantShardKey{l.Tenant, l.Key()}), do: func(c Coordinator, now LogicalTime) result {
		return resultOf(c.Renew(now, tn, l))
	}}
}

func callCheckpoint(tn TenantID, l Lease, cur Cursor, op OpID) call {
	return call{name: "checkpoint", tenant: tn, idem: true, gate: Some(l), target: Some(tenantShardKey{l.Tenant, l.Key()}), do: func(c Coordinator, now LogicalTime) result {
		return resultOf(c.Checkpoint(now, tn, l, cur, op))
	}}
}

func callComplete(tn TenantID, l Lease, cur Cursor, op OpID) call {
	return call{name: "complete", tenant: tn, idem: true, gate: Some(l), target: Some(tenantShardKey{l.Tenant, l.Key()}), do: func(c Coordinator, now LogicalTime) result {
		return resultOf(c.Complete(now, tn, l, cur, op))
	}}
}

func callPark(tn TenantID, l Lease, reason ParkReason, op OpID) call {
	return call{name: "park", tenant: tn, idem: true, gate: Some(l), target: Some(tenantShardKey{l.Tenant, l.Key()}), do: func(c Coordinator, now LogicalTime) result {
		return resultOf(c.ParkShard(now, tn, l, reason, op))
	}}
}

func callSplitReplace(tn TenantID, l Lease, plan SplitReplacePlan, op OpID) call {
	return call{name: "split_replace", tenant: tn, idem: true, gate: Some(l), target: Some(tenantShardKey{l.Tenant, l.Key()}), do: func(c Coordinator, now LogicalTime) result {
		return resultOf(c.SplitReplace(now, tn, l, plan, op))
	}}
}

func callSplitResidual(tn TenantID, l Lease, plan SplitResidualPlan, op OpID) call {
	return call{name: "split_residual", tenant: tn, idem: true, gate: Some(l), target: Some(tenantShardKey{l.Tenant, l.Key()}), do: func(c Coordinator, now LogicalTime) result {
		return resultOf(c.SplitResidual(now, tn, l, plan, op))
	}}
}

func callUnpark(tn TenantID, key ShardKey, op OpID) call {
	return call{name: "unpark", tenant: tn, idem: true, target: Some(tenantShardKey{tn, key}), do: func(c Coordinator, now LogicalTime) result {
		return resultOf(c.UnparkShard(now, tn, key, op))
	}}
}

func callRunTransition(tn TenantID, run RunID, kind OpKind, op OpID) call {
	return call{name: "run_" + kind.String(), tenant: tn, idem: true, do: func(c Coordinator, now LogicalTime) result {
		switch kind {
		case OpKindCompleteRun:
			return resultOf(c.CompleteRun(now, tn, run, op))
		case OpKindFailRun:
			return resultOf(c.FailRun(now, tn, run, op))
		}
		return resultOf(c.CancelRun(now, tn, run, op))
	}}
}

func callGetRun(tn TenantID, run RunID) call {
	return call{name: "get_run", tenant: tn, do: func(c Coordinator, _ LogicalTime) result {
		return readOf(c.GetRun(tn, run))
	}}
}

func callProgress(tn TenantID, run RunID) call {
	return call{name: "progress", tenant: tn, do: func(c Coordinator, now LogicalTime) result {
		return readOf(c.GetRunProgress(now, tn, run))
	}}
}

func callListShards(tn TenantID, run RunID, f ShardFilter) call {
	return call{name: "list_shards", tenant: tn, do: func(c Coordinator, now LogicalTime) result {
		return readOf(c.ListShards(now, tn, run, f))
	}}
}

func callListActiveRuns(tn TenantID) call {
	return call{name: "list_active_runs", tenant: tn, do: func(c Coordinator, _ LogicalTime) result {
		return readOf(c.(runAdmin).ListActiveRuns(tn))
	}}
}

// callGC collects tn's runs that stayed Initializing for maxAge. It may
// cancel several runs, one transaction each, so it runs only where no
// request fault can stop it half-way (clean mode).
func callGC(tn TenantID, maxAge LogicalDuration) call {
	return call{name: "gc_stale_initializing_runs", tenant: tn, do: func(c Coordinator, now LogicalTime) result {
		runs, evs, err := c.(runAdmin).GCStaleInitializingRuns(now, tn, maxAge)
		return resultOf(runs, evs, err)
	}}
}
