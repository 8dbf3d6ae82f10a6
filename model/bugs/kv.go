package bugs

import "shardsim/property"

// Names of the simkv server mutants: deliberately wrong etcd models that the
// kv scenario's checkers must catch.
const (
	KVStaleTxnCompare = "kv.stale-txn-compare"
	KVPhantomAck      = "kv.phantom-ack"
	KVLateLeaseExpiry = "kv.late-lease-expiry"
	KVResumeSkips     = "kv.watch-resume-skips"
	KVStaleHeader     = "kv.stale-header"
	KVWatchDuplicate  = "kv.watch-duplicate"
	KVWatchDrop       = "kv.watch-drop"
	KVWatchSplitTxn   = "kv.watch-split-txn"
	KVWatchReorder    = "kv.watch-reorder"
)

func init() {
	register(Bug{KVStaleTxnCompare, "kv", "txn compares are evaluated against the store one revision ago", []property.Name{property.KVLinearizable}, "kv", 200})
	register(Bug{KVLateLeaseExpiry, "kv", "leases expire two seconds after their deadline", []property.Name{property.KVLeaseExpiry}, "kv", 20})
	register(Bug{KVResumeSkips, "kv", "a watch resumed from a revision starts one revision later, missing that revision's events", []property.Name{property.KVWatchResumable}, "kv", 20})
	register(Bug{KVStaleHeader, "kv", "a put is answered with the revision before it applied", []property.Name{property.KVRevisionMonotone}, "kv", 20})
	register(Bug{KVWatchDuplicate, "kv", "a watch response is delivered twice", []property.Name{property.KVWatchUnique}, "kv", 20})
	register(Bug{KVWatchDrop, "kv", "a watch response is dropped", []property.Name{property.KVWatchReliable, property.KVWatchResumable}, "kv", 20})
	register(Bug{KVWatchSplitTxn, "kv", "the events of one transaction are delivered in two watch responses", []property.Name{property.KVWatchAtomic}, "kv", 20})
	register(Bug{KVWatchReorder, "kv", "two watch responses are delivered out of order", []property.Name{property.KVWatchOrdered}, "kv", 20})
	register(Bug{KVPhantomAck, "kv", "a request lost before apply is answered as if it had been applied", []property.Name{property.KVLinearizable, property.KVRevisionMonotone}, "kv", 200})
}
