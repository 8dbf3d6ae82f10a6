// Package simkv is shardsim's in-memory model of etcd's v3 KV API: the
// revisioned key space (Range, Put, DeleteRange, Txn, Compact), leases that
// expire on virtual time, and watches. It also holds the simulated network
// that carries requests to the store with injected faults.
//
// The Store matches etcd 3.4's client-visible semantics field by field, as
// checked against a real etcd server by the conformance test in
// realetcd/etcdconf. Where etcd 3.5 or later differ, the code says so.
//
// The Store is a pure state machine: it never reads the wall clock, starts a
// goroutine or draws randomness. Time enters only as the simclock.Time given
// to Apply and the lease calls, and no map iteration order reaches its
// answers. Byte slices handed out in responses are shared with the store
// and must not be modified; the store copies every slice it is given.
//
// Not modelled: the cluster id, member id and raft term of response headers
// (only the revision is kept), authentication, alarms and quotas, request
// size limits, watch progress notifications and fragmentation, and lease
// checkpoints.
package simkv
