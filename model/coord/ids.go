package coord

import (
	"encoding/hex"
	"strconv"
)

// TenantID identifies a tenant. Every record belongs to exactly one tenant
// and no request scoped to one tenant may read or change another's records.
type TenantID [32]byte

// String renders the tenant id as lower-case hex.
func (t TenantID) String() string { return hex.EncodeToString(t[:]) }

// RunID identifies a run (one scan invocation) within a tenant.
type RunID uint64

// String renders the run id as "run:<hex>".
func (r RunID) String() string { return "run:" + strconv.FormatUint(uint64(r), 16) }

// ShardID identifies a shard within a run. Root shards (registered through
// a manifest) have bit 63 clear; shards derived by a split have it set.
type ShardID uint64

// String renders the shard id as "shard:<hex>".
func (s ShardID) String() string { return "shard:" + strconv.FormatUint(uint64(s), 16) }

// OpID is a caller-chosen idempotency key; retrying an operation with the
// same OpID and payload returns the first result without a second effect.
type OpID uint64

// String renders the op id as "op:<hex>".
func (o OpID) String() string { return "op:" + strconv.FormatUint(uint64(o), 16) }

// WorkerID identifies a worker that holds leases.
type WorkerID uint64

// String renders the worker id as "worker:<hex>".
func (w WorkerID) String() string { return "worker:" + strconv.FormatUint(uint64(w), 16) }

// FenceEpoch is a shard's fencing token. It starts at InitialFence and is
// raised by every acquire and every unpark; a lease carrying a lower epoch
// belongs to a zombie and is rejected.
type FenceEpoch uint64

// InitialFence is the fence epoch of a newly created shard.
const InitialFence FenceEpoch = 1

// LogicalTime is a point in the coordinator's logical time. It is passed
// explicitly to every operation; the coordinator never reads a clock. The
// simulation maps its virtual clock onto it.
type LogicalTime uint64

// LogicalDuration is a span of logical time.
type LogicalDuration uint64

// Add returns t+d, saturating at the largest LogicalTime so that a long
// lease near the end of time cannot wrap around into the past.
func (t LogicalTime) Add(d LogicalDuration) LogicalTime {
	s := t + LogicalTime(d)
	if s < t {
		return ^LogicalTime(0)
	}
	return s
}

// ShardKey names a shard within a tenant.
type ShardKey struct {
	Run   RunID
	Shard ShardID
}

// Opt is an optional value: Set reports whether Val is meaningful. The zero
// Opt is empty, so records built field by field default to "none".
type Opt[T any] struct {
	Val T
	Set bool
}

// Some returns an Opt holding v.
func Some[T any](v T) Opt[T] { return Opt[T]{Val: v, Set: true} }

// None returns an empty Opt.
func None[T any]() Opt[T] { return Opt[T]{} }
