package coord

// Outcome distinguishes a first execution of an idempotent operation from a
// replay answered from the op-log. Both mean success with the same result.
type Outcome uint8

const (
	// Executed: the operation ran now.
	Executed Outcome = iota
	// Replayed: the op id had already run with the same payload; nothing
	// changed and the first result is returned.
	Replayed
)

// String names the outcome.
func (o Outcome) String() string {
	if o == Replayed {
		return "replayed"
	}
	return "executed"
}

// AcquireResult is what a worker receives when it acquires a shard.
type AcquireResult struct {
	Lease    Lease
	Snapshot ShardSnapshot
	Capacity CapacityHint
}

// RenewResult is the outcome of a renew.
type RenewResult struct {
	Deadline LogicalTime
	Capacity CapacityHint
}

// SplitReplaceResult is the outcome of a split_replace: the children's ids,
// in plan order.
type SplitReplaceResult struct {
	Outcome  Outcome
	Children []ShardID
}

// SplitResidualResult is the outcome of a split_residual.
type SplitResidualResult struct {
	Outcome  Outcome
	Residual ShardID
}

// ShardCoordination is the worker-facing protocol: acquire a shard, then
// renew, checkpoint, and finish it under its lease. Every operation takes
// the logical time now and the caller's tenant, and returns the events it
// caused (none on error or replay). Lease-gated operations validate the
// lease as validateLease describes; idempotent ones consult the op-log
// first.
type ShardCoordination interface {
	// AcquireAndRestore leases an Active shard that is unleased, or whose
	// lease expired, or that worker already holds; it raises the fence and
	// returns the lease and the shard's last checkpoint. Not idempotent.
	AcquireAndRestore(now LogicalTime, tenant TenantID, key ShardKey, worker WorkerID) (AcquireResult, []Event, error)
	// Renew extends the lease to now plus the run's lease duration. The
	// fence is unchanged.
	Renew(now LogicalTime, tenant TenantID, lease Lease) (RenewResult, []Event, error)
	// Checkpoint records progress: the cursor must carry a last key that
	// does not move backwards and lies in the shard's range.
	Checkpoint(now LogicalTime, tenant TenantID, lease Lease, cursor Cursor, op OpID) (Outcome, []Event, error)
	// Complete records a final cursor, releases the lease and makes the
	// shard Done.
	Complete(now LogicalTime, tenant TenantID, lease Lease, cursor Cursor, op OpID) (Outcome, []Event, error)
	// ParkShard releases the lease and makes the shard Parked.
	ParkShard(now LogicalTime, tenant TenantID, lease Lease, reason ParkReason, op OpID) (Outcome, []Event, error)
	// SplitReplace makes the shard Split and creates children that
	// exactly partition its range, atomically.
	SplitReplace(now LogicalTime, tenant TenantID, lease Lease, plan SplitReplacePlan, op OpID) (SplitReplaceResult, []Event, error)
	// SplitResidual shrinks the shard (which stays Active and leased) and
	// creates a residual shard for the rest of its range, atomically.
	SplitResidual(now LogicalTime, tenant TenantID, lease Lease, plan SplitResidualPlan, op OpID) (SplitResidualResult, []Event, error)
}

// RunManagement is the driver- and admin-facing protocol: runs, manifests,
// progress, listing, claiming and unparking. None of it is lease-gated.
type RunManagement interface {
	// CreateRun creates a run in Initializing with no shards. Not
	// idempotent: an existing run id is refused.
	CreateRun(now LogicalTime, tenant TenantID, run RunID, cfg RunConfig) ([]Event, error)
	// RegisterShards validates the manifest, creates the root shards and
	// makes the run Active.
	RegisterShards(now LogicalTime, tenant TenantID, run RunID, shards []InitialShard, op OpID) (Outcome, []Event, error)
	// GetRun returns a copy of the run record.
	GetRun(tenant TenantID, run RunID) (RunRecord, error)
	// GetRunProgress counts the run's shards by state at now.
	GetRunProgress(now LogicalTime, tenant TenantID, run RunID) (RunProgress, error)
	// ListShards returns summaries of the run's shards that pass filter,
	// in shard id order.
	ListShards(now LogicalTime, tenant TenantID, run RunID, filter ShardFilter) ([]ShardSummary, error)
	// CompleteRun moves an Active run to Done.
	CompleteRun(now LogicalTime, tenant TenantID, run RunID, op OpID) (Outcome, []Event, error)
	// FailRun moves an Active run to Failed.
	FailRun(now LogicalTime, tenant TenantID, run RunID, op OpID) (Outcome, []Event, error)
	// CancelRun moves an Initializing or Active run to Cancelled.
	CancelRun(now LogicalTime, tenant TenantID, run RunID, op OpID) (Outcome, []Event, error)
	// UnparkShard returns a Parked shard to Active, unleased, with a raised
	// fence.
	UnparkShard(now LogicalTime, tenant TenantID, key ShardKey, op OpID) (Outcome, []Event, error)
	// ClaimNextAvailable acquires, for worker, the first available shard
	// (lowest run id, then shard id) of the tenant's Active runs, unless
	// the worker's previous successful claim in this tenant is less than
	// the claim cooldown ago.
	ClaimNextAvailable(now LogicalTime, tenant TenantID, worker WorkerID) (AcquireResult, []Event, error)
}

// Inspector exposes a backend's state to checkers and differential
// oracles. The results are deep copies in a deterministic order.
type Inspector interface {
	// Shards returns every shard record, ordered by tenant, run, shard.
	Shards() ([]ShardRecord, error)
	// Runs returns every run record, ordered by tenant, run.
	Runs() ([]RunRecord, error)
}

// Coordinator is everything a backend implements.
type Coordinator interface {
	ShardCoordination
	RunManagement
	Inspector
}
