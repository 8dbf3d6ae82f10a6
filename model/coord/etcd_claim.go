package coord

import (
	"errors"

	"shardsim/simkv"
)

// ClaimNextAvailable implements RunManagement. It reads the worker's claim
// record (cooldown), walks the tenant's active-run index in run order and
// each run's shards in id order, and acquires the first shard available at
// now. The commit compares the shard, its run (still Active) and the claim
// record, and writes the claim time with the acquire, so two claims of one
// worker cannot both pass the cooldown. The pick is the first available
// shard in the snapshot the walk read; a shard that became available
// during the walk may be passed over, as with any scan.
func (e *Etcd) ClaimNextAvailable(now LogicalTime, tenant TenantID, worker WorkerID) (AcquireResult, []Event, error) {
	const label = "claim_next_available"
	var ch ShardChange
	var retries uint32
	err := e.optimistic(label, func(r *opRun) (*commit, error) {
		claimKey := e.keys.claim(tenant, worker)
		_, kvs, err := e.get(label+".read", claimKey)
		if err != nil {
			return nil, err
		}
		var last Opt[LogicalTime]
		if kvs[0] != nil {
			cr, err := DecodeClaimRecord(kvs[0].Value)
			if err != nil {
				return nil, corrupt(label, "claim record of %s: %v", worker, err)
			}
			if cr.Worker != worker {
				return nil, corrupt(label, "claim record of %s names %s", worker, cr.Worker)
			}
			last = Some(cr.LastClaimAt)
		}
		if ce, ok := checkClaimCooldownUnder(last, now, e.cfg.ClaimCooldown, e.cfg.Bugs); !ok {
			return nil, newError(OpClaim, ce)
		}
		key, found, err := e.findAvailable(label, now, tenant)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, newError(OpClaim, CoordError{Code: CodeNoShardAvailable})
		}
		st, found, err := e.loadShard(label+".read", tenant, key, true)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, corrupt(label, "shard %s %s vanished", key.Run, key.Shard)
		}
		retries = st.run.Val.Config.MaxShardRetries
		if st.run.Val.Status != RunActive || !claimable(&st.rec, now, e.cfg.Bugs) {
			return nil, errRaced // changed since the walk read it
		}
		ch, err = StepAcquire(e.shardEnv(now, tenant, st), &st.rec, worker, st.run.Val.Config.LeaseDuration)
		if err != nil {
			var ae *AcquireError
			if errors.As(err, &ae) {
				return nil, newError(OpClaim, ae.CoordError)
			}
			return nil, err
		}
		c, err := e.planShard(r, OpClaim, false, st, &ch)
		if err != nil {
			return nil, err
		}
		c.unchanged(e.keys.run(tenant, key.Run), st.runKV)
		c.unchanged(claimKey, kvs[0])
		c.put(claimKey, EncodeClaimRecord(&ClaimRecord{Worker: worker, LastClaimAt: now}), 0)
		return c, nil
	})
	if err != nil {
		return AcquireResult{}, nil, surface(OpClaim, err)
	}
	return AcquireResult{Lease: ch.Lease, Snapshot: ch.Next.Snapshot(), Capacity: capacityOf(&ch.Next, retries)}, ch.Events, nil
}

// findAvailable returns the first shard available at now, in run id then
// shard id order, over the tenant's Active runs.
func (e *Etcd) findAvailable(label string, now LogicalTime, tenant TenantID) (ShardKey, bool, error) {
	rev, index, err := e.scan(label+".index", e.keys.tenantActive(tenant), 0)
	if err != nil {
		return ShardKey{}, false, err
	}
	for i := range index {
		run, err := e.activeEntry(label, tenant, &index[i])
		if err != nil {
			return ShardKey{}, false, err
		}
		_, shards, err := e.scan(label+".shards", e.keys.runShards(tenant, run), rev)
		if err != nil {
			return ShardKey{}, false, err
		}
		for j := range shards {
			k, err := ParseEtcdKey(e.cfg.Namespace, shards[j].Key)
			if err != nil || k.Kind != KeyShard {
				return ShardKey{}, false, corrupt(label, "unexpected key %q among shard records", shards[j].Key)
			}
			rec, err := e.decodeShard(label, tenant, ShardKey{Run: k.Run, Shard: k.Shard}, shards[j].Value)
			if err != nil {
				return ShardKey{}, false, err
			}
			if claimable(&rec, now, e.cfg.Bugs) {
				return rec.Key(), true, nil
			}
		}
	}
	return ShardKey{}, false, nil
}

// activeEntry checks an active-run index entry and returns its run.
func (e *Etcd) activeEntry(label string, tenant TenantID, kv *simkv.KeyValue) (RunID, error) {
	k, err := ParseEtcdKey(e.cfg.Namespace, kv.Key)
	if err != nil || k.Kind != KeyActiveRun || k.Tenant != tenant {
		return 0, corrupt(label, "unexpected key %q in the active-run index", kv.Key)
	}
	entry, err := DecodeActiveRunEntry(kv.Value)
	if err != nil || entry.Run != k.Run {
		return 0, corrupt(label, "active-run entry of %s: %v", k.Run, err)
	}
	return k.Run, nil
}
