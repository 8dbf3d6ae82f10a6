// Package coord is the shard coordination protocol (seed 004): runs, shards,
// leases with fencing epochs, a bounded per-shard op-log for idempotent
// retries, and split operations that derive child shard ids.
//
// The package is organised so that more than one backend can share the
// protocol's rules:
//
//   - pure value types and their invariants (ids.go, spec.go, cursor.go,
//     record.go, run.go, oplog.go);
//   - pure validation and transition functions that every backend calls
//     (lease.go, idempotency.go, split.go, manifest.go, limits.go,
//     step_shard.go, step_run.go), which is also where the injectable
//     coord.* bugs of model/bugs live;
//   - the Coordinator interface (coordinator.go) that every backend
//     implements;
//   - Reference, the in-memory reference implementation and executable
//     specification (reference*.go);
//   - an explicit versioned binary codec for every persisted record
//     (codec*.go);
//   - Etcd, the backend over etcd's KV API (simkv.KV): a deterministic
//     keyspace (etcd_keys.go), one compare-and-swap skeleton for every
//     mutation with read-back of ambiguous answers (etcd_cas.go,
//     etcd_readback.go), owner bindings under etcd leases (etcd_owner.go)
//     and counted shard limits (etcd_admit.go);
//   - Snapshot, the durable state of either backend at one instant, which
//     the checkers in checker/coordcheck judge (this package never imports
//     a checker; its tests reach them through judges_test.go).
//
// Everything is deterministic: time is a LogicalTime argument of every
// operation, nothing reads a clock or spawns a goroutine, and no map
// iteration order reaches a result, an error or an event.
package coord
