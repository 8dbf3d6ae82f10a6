package coord

import (
	"fmt"

	"shardsim/simkv"
)

// commit is one transaction the backend wants to apply: the compares that
// must still hold (what the decision depends on), the writes, and the
// witness that tells, after an ambiguous answer, whether it landed.
type commit struct {
	cmps    []simkv.Compare
	ops     []simkv.RequestOp
	witness witness
	// revoke lists etcd leases to revoke once the transaction landed (the
	// leases of owner bindings it replaced or deleted).
	revoke []int64
	// usesGrant is set when a put references the lease the operation
	// granted, which must then outlive the operation.
	usesGrant bool
	// then is a second transaction to apply after this one; only the
	// coord.split-two-txns bug uses it.
	then *commit
	// stamp ends every record value the commit writes (record).
	stamp WriteStamp

	// Room for the compares and ops of a typical commit, allocated with
	// it rather than grown one append at a time.
	cmpRoom [4]simkv.Compare
	opRoom  [4]simkv.RequestOp
}

// newCommit starts the commit of one attempt, with a fresh write stamp.
func (e *Etcd) newCommit() *commit {
	c := &commit{stamp: e.nextStamp()}
	c.cmps, c.ops = c.cmpRoom[:0], c.opRoom[:0]
	return c
}

// record returns the stored value of a record: its encoding followed by
// the commit's write stamp, which makes the value unique to this attempt
// (etcd_readback.go).
func (c *commit) record(encoding []byte) []byte { return AppendWriteStamp(encoding, c.stamp) }

// shardRecord returns the stored value of a shard record (record), made in
// one allocation.
func (c *commit) shardRecord(r *ShardRecord) []byte {
	return c.record(AppendShardRecord(make([]byte, 0, shardRecordSize(r)+writeStampLen), r))
}

// runRecord returns the stored value of a run record, like shardRecord.
func (c *commit) runRecord(r *RunRecord) []byte {
	return c.record(appendRunRecord(make([]byte, 0, runRecordSize(r)+writeStampLen), r))
}

// witness is a key every successful application of a commit writes: its
// state as read (mod revision and version, zero when absent), the revision
// of that read, and the value the commit puts (a record, stamped, so no
// other attempt puts the same value).
type witness struct {
	key          []byte
	readRev      int64
	modRev, vers int64
	value        []byte
	set          bool
}

// unchanged requires key to be exactly as read: same mod revision, or
// still absent when kv is nil.
func (c *commit) unchanged(key []byte, kv *simkv.KeyValue) {
	if kv == nil {
		c.cmps = append(c.cmps, simkv.Compare{Target: simkv.CompareCreate, Result: simkv.CompareEqual, Key: key, CreateRevision: 0})
		return
	}
	c.cmps = append(c.cmps, simkv.Compare{Target: simkv.CompareMod, Result: simkv.CompareEqual, Key: key, ModRevision: kv.ModRevision})
}

// noneCreatedSince requires that no key of r was created after revision
// rev, which is when the backend counted r: the count still holds.
func (c *commit) noneCreatedSince(r keyRange, rev int64) {
	c.cmps = append(c.cmps, simkv.Compare{Target: simkv.CompareCreate, Result: simkv.CompareLess, Key: r.Start, RangeEnd: r.End, CreateRevision: rev + 1})
}

// put writes key; lease 0 attaches none.
func (c *commit) put(key, value []byte, lease int64) {
	c.ops = append(c.ops, simkv.RequestOp{Put: &simkv.PutRequest{Key: key, Value: value, Lease: lease}})
}

// del deletes key (a no-op in etcd when it is absent).
func (c *commit) del(key []byte) {
	c.ops = append(c.ops, simkv.RequestOp{DeleteRange: &simkv.DeleteRangeRequest{Key: key}})
}

// putWitness writes key, requires it unchanged since the read at readRev
// that found kv, and makes it the commit's witness.
func (c *commit) putWitness(key, value []byte, kv *simkv.KeyValue, readRev int64, compare bool) {
	if compare {
		c.unchanged(key, kv)
	}
	c.put(key, value, 0)
	c.witness = witness{key: key, readRev: readRev, value: value, set: true}
	if kv != nil {
		c.witness.modRev, c.witness.vers = kv.ModRevision, kv.Version
	}
}

// request builds the transaction. Exceeding maxOps in either list is a
// programming error: configuration validation sized every transaction.
func (c *commit) request(maxOps int) simkv.TxnRequest {
	if !c.witness.set {
		panic("coord: etcd commit without a witness")
	}
	if len(c.cmps) > maxOps || len(c.ops) > maxOps {
		panic(fmt.Sprintf("coord: etcd transaction of %d compares and %d ops exceeds max txn ops %d", len(c.cmps), len(c.ops), maxOps))
	}
	return simkv.TxnRequest{Compare: c.cmps, Success: c.ops}
}
