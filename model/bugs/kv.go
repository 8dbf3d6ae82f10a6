package bugs

import "shardsim/property"

// Names of the simkv server mutants: deliberately wrong etcd models that the
// kv scenario's checkers must catch.
const (
	KVStaleTxnCompare = "kv.stale-txn-compare"
	KVPhantomAck      = "kv.phantom-ack"
)

func init() {
	register(Bug{KVStaleTxnCompare, "kv", "txn compares are evaluated against the store one revision ago", []property.Name{property.KVLinearizable}, "kv", 200})
	register(Bug{KVPhantomAck, "kv", "a request lost before apply is answered as if it had been applied", []property.Name{property.KVLinearizable, property.KVRevisionMonotone}, "kv", 200})
}
