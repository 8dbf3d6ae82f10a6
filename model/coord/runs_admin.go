package coord

import "slices"

// Seed 004's backend helpers for operators, beside the trait surfaces:
// listing a tenant's active runs, and collecting runs that were created
// but never registered. Both backends have them, so the differential
// oracle holds them together.

// gcOpID is the op id a garbage collection cancels run with: fixed per
// run, so a repeated or retried collection replays rather than conflicts.
func gcOpID(run RunID) OpID { return OpID(0x6c<<56 | uint64(run)&(1<<56-1)) }

// staleInitializing reports whether rec is a run created at least maxAge
// before now that never left Initializing.
func staleInitializing(rec *RunRecord, now LogicalTime, maxAge LogicalDuration) bool {
	return rec.Status == RunInitializing && rec.CreatedAt.Add(maxAge) <= now
}

// ListActiveRuns returns the tenant's Active runs, in run id order.
func (r *Reference) ListActiveRuns(tenant TenantID) ([]RunID, error) {
	ts, ok := r.tenants[tenant]
	if !ok {
		return nil, nil
	}
	var out []RunID
	for _, id := range sortedRunIDs(ts.runs) {
		if ts.runs[id].rec.Status == RunActive {
			out = append(out, id)
		}
	}
	return out, nil
}

// GCStaleInitializingRuns cancels the tenant's runs that were created at
// least maxAge before now and never registered their shards (a driver
// that died between create_run and register_shards), and returns them in
// run id order with the events of their cancellation. Cancelling, rather
// than deleting, keeps the run's history: its id stays taken and its
// status says what happened.
func (r *Reference) GCStaleInitializingRuns(now LogicalTime, tenant TenantID, maxAge LogicalDuration) ([]RunID, []Event, error) {
	ts, ok := r.tenants[tenant]
	if !ok {
		return nil, nil, nil
	}
	var out []RunID
	var events []Event
	for _, id := range sortedRunIDs(ts.runs) {
		if !staleInitializing(&ts.runs[id].rec, now, maxAge) {
			continue
		}
		outcome, evs, err := r.runTransition(now, tenant, id, OpGCStaleRuns, OpKindCancelRun, gcOpID(id))
		if err != nil {
			return out, events, err
		}
		if outcome == Executed {
			out, events = append(out, id), append(events, evs...)
		}
	}
	return out, events, nil
}

// ListActiveRuns returns the tenant's Active runs, in run id order, from
// the active-run index.
func (e *Etcd) ListActiveRuns(tenant TenantID) ([]RunID, error) {
	const label = "list_active_runs"
	_, index, err := e.scan(label, e.keys.tenantActive(tenant), 0)
	if err != nil {
		return nil, surface(OpListActiveRuns, err)
	}
	var out []RunID
	for i := range index {
		run, err := e.activeEntry(label, tenant, &index[i])
		if err != nil {
			return nil, surface(OpListActiveRuns, err)
		}
		out = append(out, run)
	}
	slices.Sort(out)
	return out, nil
}

// GCStaleInitializingRuns is the reference's (see there): it scans the
// tenant's run records and cancels each stale Initializing one through
// the usual compare-and-swap, so a run registered meanwhile is left alone.
func (e *Etcd) GCStaleInitializingRuns(now LogicalTime, tenant TenantID, maxAge LogicalDuration) ([]RunID, []Event, error) {
	const label = "gc_stale_initializing_runs"
	_, kvs, err := e.scan(label, prefixRange(e.keys.tenantPrefix(KeyRun, tenant)), 0)
	if err != nil {
		return nil, nil, surface(OpGCStaleRuns, err)
	}
	var out []RunID
	var events []Event
	for i := range kvs {
		k, err := ParseEtcdKey(e.cfg.Namespace, kvs[i].Key)
		if err != nil || k.Kind != KeyRun {
			return out, events, surface(OpGCStaleRuns, corrupt(label, "unexpected key %q among run records", kvs[i].Key))
		}
		rec, err := e.decodeRun(label, tenant, k.Run, kvs[i].Value)
		if err != nil {
			return out, events, surface(OpGCStaleRuns, err)
		}
		if !staleInitializing(&rec, now, maxAge) {
			continue
		}
		ch, err := e.runOp(runCall{op: OpGCStaleRuns, tenant: tenant, run: k.Run, step: func(cur *RunRecord) (RunChange, error) {
			if cur == nil {
				return RunChange{}, RunNotFound(OpGCStaleRuns)
			}
			if !staleInitializing(cur, now, maxAge) {
				return RunChange{Outcome: Replayed}, nil // registered meanwhile: leave it
			}
			return StepRunTransition(e.env(now, tenant), cur, OpKindCancelRun, gcOpID(k.Run))
		}})
		if err != nil {
			return out, events, err
		}
		if ch.Outcome == Executed {
			out, events = append(out, k.Run), append(events, ch.Events...)
		}
	}
	return out, events, nil
}
