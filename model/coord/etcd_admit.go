package coord

import "shardsim/simkv"

// basis is the record a decision was made on (the parent shard of a
// split, the run of a registration) as the attempt read it: kv is nil when
// it was absent.
type basis struct {
	key []byte
	kv  *simkv.KeyValue
}

// admit decides whether created may be inserted into tenant's keyspace and
// adds to c the compares that keep the decision true until the commit.
// Like the reference it checks the shard limits, then id collisions.
//
// The limits are enforced by counting shard-record keys (count-only ranges
// over the tenant's and the global shard prefix), and the commit requires
// that no key in either prefix was created after the count, so two
// concurrent splits cannot both squeeze under a ceiling. Shard records are
// never deleted, so "nothing created since" keeps the count exact.
//
// The count is a later read than the one the decision was made on, so it
// also reads that decision's basis record, on. A created id that already
// exists is a collision only if on is still as the attempt read it:
// otherwise the state moved under the attempt, and it starts over
// (errRaced). This is what happens when the operation's own first commit,
// read back as not landed, lands late, between the two reads: it created
// these very shards, and the re-read finds the operation in the op-log and
// answers it as the replay it is.
func (e *Etcd) admit(op Operation, label string, tenant TenantID, created []ShardRecord, c *commit, on basis) error {
	if len(created) == 0 {
		return nil
	}
	tenantRange, allRange := e.keys.tenantShards(tenant), e.keys.allShards()
	reqs := []simkv.RangeRequest{countReq(tenantRange), countReq(allRange), {Key: on.key}}
	for i := range created {
		reqs = append(reqs, simkv.RangeRequest{Key: e.keys.shard(tenant, created[i].Key()), CountOnly: true})
	}
	rev, resps, err := e.read(label+".count", reqs...)
	if err != nil {
		return err
	}
	if v, ok := checkShardLimits(e.cfg.Limits, int(resps[0].Count), int(resps[1].Count), len(created)); !ok {
		return newError(op, CoordError{Code: CodeShardLimit, Limit: v})
	}
	for i := range created {
		if resps[3+i].Count == 0 {
			continue
		}
		if now := firstKV(resps[2]); (now == nil) != (on.kv == nil) || now != nil && now.ModRevision != on.kv.ModRevision {
			return errRaced
		}
		return newError(op, CoordError{Code: CodeIDCollision, Shard: created[i].Key()})
	}
	c.noneCreatedSince(tenantRange, rev)
	c.noneCreatedSince(allRange, rev)
	return nil
}

// putCreated writes new shard records, each required to be absent. In a
// commit without a witness yet (a second transaction) the first record is
// the witness; it was absent at the read at readRev.
func (e *Etcd) putCreated(c *commit, tenant TenantID, created []ShardRecord, readRev int64) {
	for i := range created {
		key, value := e.keys.shard(tenant, created[i].Key()), c.shardRecord(&created[i])
		if !c.witness.set {
			c.putWitness(key, value, nil, readRev, true)
			continue
		}
		c.unchanged(key, nil)
		c.put(key, value, 0)
	}
}
