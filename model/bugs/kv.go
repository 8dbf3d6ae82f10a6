package bugs

import "shardsim/property"

// Names of the simkv server mutants: deliberately wrong etcd models that the
// kv scenario's checkers must catch.
const (
	KVStaleTxnCompare = "kv.stale-txn-compare"
	KVPhantomAck      = "kv.phantom-ack"
	KVLateLeaseExpiry = "kv.late-lease-expiry"
	KVResumeSkips     = "kv.watch-resume-skips"
)

func init() {
	register(Bug{KVStaleTxnCompare, "kv", "txn compares are evaluated against the store one revision ago", []property.Name{property.KVLinearizable}, "kv", 200})
	register(Bug{KVLateLeaseExpiry, "kv", "leases expire two seconds after their deadline", []property.Name{property.KVLeaseExpiry}, "kv", 200})
	register(Bug{KVResumeSkips, "kv", "a watch resumed from a revision starts one revision later, missing that revision's events", []property.Name{property.KVWatchResumable}, "kv", 200})
	register(Bug{KVPhantomAck, "kv", "a request lost before apply is answered as if it had been applied", []property.Name{property.KVLinearizable, property.KVRevisionMonotone}, "kv", 200})
}
