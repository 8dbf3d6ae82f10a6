package coord

// ShardStatus is a shard's lifecycle state. The discriminants are persisted
// and must never change.
type ShardStatus uint8

const (
	// ShardActive is the only state in which a shard can be leased and make
	// progress.
	ShardActive ShardStatus = 0
	// ShardDone is terminal: the shard's range is fully processed.
	ShardDone ShardStatus = 1
	// ShardSplit is terminal: the shard was replaced by its children.
	ShardSplit ShardStatus = 2
	// ShardParked is terminal for workers: only an unpark (an admin
	// operation that also raises the fence) returns it to Active.
	ShardParked ShardStatus = 3
)

// Valid reports whether s is a known discriminant.
func (s ShardStatus) Valid() bool { return s <= ShardParked }

// Inactive reports whether s is Done, Split or Parked: no worker may lease
// or progress the shard. Done and Split are final; Parked is not, since an
// unpark returns it to Active (the name says "inactive", not "terminal",
// for that reason).
func (s ShardStatus) Inactive() bool { return s != ShardActive }

// String names the status.
func (s ShardStatus) String() string {
	switch s {
	case ShardActive:
		return "active"
	case ShardDone:
		return "done"
	case ShardSplit:
		return "split"
	case ShardParked:
		return "parked"
	}
	return "shard-status(?)"
}

// ParkReason says why a shard was parked. The discriminants are persisted
// and must never change.
type ParkReason uint8

const (
	// ParkPermissionDenied: the connector lacks access.
	ParkPermissionDenied ParkReason = 0
	// ParkNotFound: the scan target no longer exists.
	ParkNotFound ParkReason = 1
	// ParkPoisoned: an internal inconsistency needs investigation.
	ParkPoisoned ParkReason = 2
	// ParkTooManyErrors: transient errors accumulated; suitable for retry.
	ParkTooManyErrors ParkReason = 3
	// ParkOther: any other reason.
	ParkOther ParkReason = 4
)

// Valid reports whether r is a known discriminant.
func (r ParkReason) Valid() bool { return r <= ParkOther }

// String names the reason.
func (r ParkReason) String() string {
	switch r {
	case ParkPermissionDenied:
		return "permission-denied"
	case ParkNotFound:
		return "not-found"
	case ParkPoisoned:
		return "poisoned"
	case ParkTooManyErrors:
		return "too-many-errors"
	case ParkOther:
		return "other"
	}
	return "park-reason(?)"
}

// RunStatus is a run's lifecycle state. The discriminants are persisted and
// must never change.
type RunStatus uint8

const (
	// RunInitializing: created, shards not yet registered.
	RunInitializing RunStatus = 0
	// RunActive: shards registered; work in progress.
	RunActive RunStatus = 1
	// RunDone is terminal: the run completed.
	RunDone RunStatus = 2
	// RunFailed is terminal: the run failed.
	RunFailed RunStatus = 3
	// RunCancelled is terminal: the run was cancelled.
	RunCancelled RunStatus = 4
)

// Valid reports whether s is a known discriminant.
func (s RunStatus) Valid() bool { return s <= RunCancelled }

// Terminal reports whether s is Done, Failed or Cancelled.
func (s RunStatus) Terminal() bool { return s >= RunDone }

// String names the status.
func (s RunStatus) String() string {
	switch s {
	case RunInitializing:
		return "initializing"
	case RunActive:
		return "active"
	case RunDone:
		return "done"
	case RunFailed:
		return "failed"
	case RunCancelled:
		return "cancelled"
	}
	return "run-status(?)"
}
