// Package kvcheck judges the simulated etcd (simkv) by what its clients
// and a watcher saw: KV.Linearizable with porcupine against a sequential
// model that is simkv's own store applied to one request at a time,
// KV.RevisionMonotone and KV.LeaseExpiry as the server applies requests,
// and the KV.Watch* properties on a watch log.
//
// What it cannot see: the linearizability model is simkv.Store itself, so
// a mistake in the store's semantics that every request shares (rather
// than a server fault such as a phantom acknowledgement or a stale
// compare) is invisible here; the etcd conformance tests
// (realetcd/etcdconf) judge the store against a real etcd instead. A watch
// log that broke early proves nothing and is not judged.
package kvcheck
