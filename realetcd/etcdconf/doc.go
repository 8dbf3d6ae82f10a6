// Package etcdconf checks simkv against a real etcd server. It holds only
// tests: a differential conformance test that runs seeded random operation
// sequences on both and compares every response field, a lease expiry test
// on wall-clock time, and a benchmark of the same operation mix on both.
//
// The tests need the etcd binary on PATH (etcd 3.4, as Debian's
// etcd-server package installs it). Without it they skip, unless
// SHARDSIM_REQUIRE_ETCD=1 is set, in which case they fail.
package etcdconf
