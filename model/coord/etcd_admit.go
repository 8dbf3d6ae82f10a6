package coord

import "shardsim/simkv"

// admit decides whether created may be inserted into tenant's keyspace and
// adds to c the compares that keep the decision true until the commit.
// Like the reference it checks the shard limits, then id collisions.
//
// The limits are enforced by counting shard-record keys (count-only ranges
// over the tenant's and the global shard prefix), and the commit requires
// that no key in either prefix was created after the count, so two
// concurrent splits cannot both squeeze under a ceiling. Shard records are
// never deleted, so "nothing created since" keeps the count exact.
func (e *Etcd) admit(op Operation, label string, tenant TenantID, created []ShardRecord, c *commit) error {
	if len(created) == 0 {
		return nil
	}
	tenantRange, allRange := e.keys.tenantShards(tenant), e.keys.allShards()
	reqs := []simkv.RangeRequest{countReq(tenantRange), countReq(allRange)}
	for i := range created {
		reqs = append(reqs, simkv.RangeRequest{Key: e.keys.shard(tenant, created[i].Key()), CountOnly: true})
	}
	rev, resps, err := e.read(label+".count", reqs...)
	if err != nil {
		return err
	}
	if v, ok := CheckShardLimits(e.cfg.Limits, int(resps[0].Count), int(resps[1].Count), len(created)); !ok {
		return newError(op, CoordError{Code: CodeShardLimit, Limit: v})
	}
	for i := range created {
		if resps[2+i].Count != 0 {
			return newError(op, CoordError{Code: CodeIDCollision, Shard: created[i].Key()})
		}
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
		key, value := e.keys.shard(tenant, created[i].Key()), EncodeShardRecord(&created[i])
		if !c.witness.set {
			c.putWitness(key, value, nil, readRev, true)
			continue
		}
		c.unchanged(key, nil)
		c.put(key, value, 0)
	}
}
