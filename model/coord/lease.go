package coord

import "shardsim/model/bugs"

// Lease is the capability a worker receives from acquire and presents to
// every lease-gated operation. Only a coordinator creates leases; workers
// carry them unchanged (and update Deadline from Renew's result). The
// fields are exported because a lease is plain data on the wire: safety
// comes from validating it, not from hiding it.
type Lease struct {
	Tenant   TenantID
	Run      RunID
	Shard    ShardID
	Owner    WorkerID
	Fence    FenceEpoch
	Deadline LogicalTime
}

// Key returns the key of the leased shard.
func (l Lease) Key() ShardKey { return ShardKey{Run: l.Run, Shard: l.Shard} }

// checkLeaseScope is the first gate of every lease-gated operation: a
// caller may only present a lease of its own tenant. It runs before the
// record is even looked up (and before the op-log is consulted), so a
// wrong-tenant request learns nothing. With coord.no-tenant-check the
// comparison is skipped and the lease's tenant is trusted.
func checkLeaseScope(caller TenantID, l Lease, b bugs.Set) (CoordError, bool) {
	if caller != l.Tenant && !b.Has(bugs.CoordNoTenantCheck) {
		if b.Has(bugs.CoordErrorNamesTenant) {
			caller = l.Tenant // the bug: the refusal names the lease's tenant
		}
		return CoordError{Code: CodeTenantMismatch, Tenant: caller}, false
	}
	return CoordError{}, true
}

// validateLease checks that l lets caller mutate rec at now. The checks run
// in a fixed priority order so that nothing is revealed to a caller that an
// earlier check would have refused:
//
//  1. tenant isolation: the record belongs to the caller's tenant;
//     then the run: it has not ended (bug coord.ended-run-accepts skips
//     this), refused as CodeRunState;
//  2. terminal status: the shard is Active;
//  3. fence: the lease's epoch is the shard's current epoch;
//  4. expiry: the shard holds a lease whose deadline is after now;
//  5. owner: that lease is held by the lease's worker.
//
// Bugs coord.no-tenant-check and coord.no-fence-check skip steps 1 and 3.
func validateLease(rec *ShardRecord, env StepEnv, l Lease) (CoordError, bool) {
	key, caller, now, b := rec.Key(), env.Tenant, env.Now, env.Bugs
	if !b.Has(bugs.CoordNoTenantCheck) && (rec.Tenant != caller || l.Tenant != caller) {
		return CoordError{Code: CodeTenantMismatch, Tenant: caller}, false
	}
	if env.runEnded() {
		return CoordError{Code: CodeRunState, Shard: key, RunStatus: env.Run.Val}, false
	}
	if rec.Status.Inactive() {
		return CoordError{Code: CodeShardTerminal, Shard: key, ShardStatus: rec.Status}, false
	}
	if l.Fence != rec.Fence && !b.Has(bugs.CoordNoFenceCheck) {
		return CoordError{Code: CodeStaleFence, Shard: key, Presented: l.Fence, Current: rec.Fence}, false
	}
	if !rec.Lease.Set || !rec.Lease.Val.Live(now) {
		at := LogicalTime(0)
		if rec.Lease.Set {
			at = rec.Lease.Val.Deadline
		}
		return CoordError{Code: CodeLeaseExpired, Shard: key, At: at}, false
	}
	if rec.Lease.Val.Owner != l.Owner {
		return CoordError{Code: CodeOwnerMismatch, Shard: key}, false
	}
	return CoordError{}, true
}
