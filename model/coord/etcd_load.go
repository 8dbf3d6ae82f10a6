package coord

import "shardsim/simkv"

// shardState is one consistent read (at revision rev) of a shard, its
// owner binding and, when asked for, its run.
type shardState struct {
	rev     int64
	tenant  TenantID // the keyspace read from
	rec     ShardRecord
	recKV   *simkv.KeyValue
	owner   Opt[OwnerBinding]
	ownerKV *simkv.KeyValue // nil when there is no binding
	run     Opt[RunRecord]
	runKV   *simkv.KeyValue
	// ours is set when the record was written by an earlier attempt of
	// the operation reading it: a commit whose read-back said "not
	// landed" and that landed late (etcd_readback.go).
	ours bool
	// stamp is the write stamp of the record as read.
	stamp WriteStamp
}

// loadShard reads a shard of tenant; found is false when it does not exist.
// The state it returns is the Etcd's own (e.shard), valid until the next
// loadShard: callers keep copies of what outlives the attempt.
func (e *Etcd) loadShard(label string, tenant TenantID, key ShardKey, withRun bool) (st *shardState, found bool, err error) {
	var room [3][]byte
	keys := append(room[:0], e.keys.shard(tenant, key), e.keys.owner(tenant, key))
	if withRun {
		keys = append(keys, e.keys.run(tenant, key.Run))
	}
	rev, kvs, err := e.get(label, keys...)
	if err != nil || kvs[0] == nil {
		return nil, false, err
	}
	if e.shard == nil {
		e.shard = new(shardState)
	}
	st = e.shard
	*st = shardState{rev: rev, tenant: tenant, recKV: kvs[0], ownerKV: kvs[1]}
	if _, stamp, serr := SplitEtcdRecordValue(kvs[0].Value); serr == nil {
		st.stamp = stamp
	}
	if st.rec, err = e.decodeShard(label, tenant, key, kvs[0].Value); err != nil {
		return nil, false, err
	}
	if kvs[1] != nil {
		b, derr := DecodeOwnerBinding(kvs[1].Value)
		if derr != nil {
			return nil, false, corrupt(label, "owner binding of %s %s: %v", key.Run, key.Shard, derr)
		}
		st.owner = Some(b)
	}
	if withRun {
		if kvs[2] == nil {
			return nil, false, corrupt(label, "shard %s %s has no run record", key.Run, key.Shard)
		}
		run, err := e.decodeRun(label, tenant, key.Run, kvs[2].Value)
		if err != nil {
			return nil, false, err
		}
		st.run, st.runKV = Some(run), kvs[2]
	}
	return st, true, nil
}

// leaseDuration returns the lease duration of the shard's run, reading
// the run if the state was loaded without it (the configuration never
// changes, so no compare is needed on it).
func (e *Etcd) leaseDuration(label string, st *shardState) (LogicalDuration, error) {
	if !st.run.Set {
		_, kvs, err := e.get(label, e.keys.run(st.tenant, st.rec.Run))
		if err != nil {
			return 0, err
		}
		if kvs[0] == nil {
			return 0, corrupt(label, "shard %s %s has no run record", st.rec.Run, st.rec.Shard)
		}
		run, err := e.decodeRun(label, st.tenant, st.rec.Run, kvs[0].Value)
		if err != nil {
			return 0, err
		}
		st.run = Some(run)
	}
	return st.run.Val.Config.LeaseDuration, nil
}

// decodeShard decodes a shard record read under tenant's key for key. It
// skips the invariant check exactly when the self-check is blinded: under
// such a bug the backend stores records that break invariants on purpose.
func (e *Etcd) decodeShard(label string, tenant TenantID, key ShardKey, v []byte) (ShardRecord, error) {
	v, _, err := SplitEtcdRecordValue(v)
	if err != nil {
		return ShardRecord{}, corrupt(label, "shard record %s %s: %v", key.Run, key.Shard, err)
	}
	var rec ShardRecord
	if e.selfCheck {
		rec, err = decodeShardRecord(v)
	} else {
		rec, err = DecodeShardRecordUnchecked(v)
	}
	if err != nil {
		return ShardRecord{}, corrupt(label, "shard record %s %s: %v", key.Run, key.Shard, err)
	}
	if rec.Tenant != tenant || rec.Key() != key {
		return ShardRecord{}, corrupt(label, "shard record stored under %s %s names %s %s", key.Run, key.Shard, rec.Run, rec.Shard)
	}
	return rec, nil
}

// decodeRun decodes a run record read under tenant's key for run.
func (e *Etcd) decodeRun(label string, tenant TenantID, run RunID, v []byte) (RunRecord, error) {
	v, _, err := SplitEtcdRecordValue(v)
	if err != nil {
		return RunRecord{}, corrupt(label, "run record %s: %v", run, err)
	}
	var rec RunRecord
	if e.selfCheck {
		rec, err = decodeRunRecord(v)
	} else {
		rec, err = DecodeRunRecordUnchecked(v)
	}
	if err != nil {
		return RunRecord{}, corrupt(label, "run record %s: %v", run, err)
	}
	if rec.Tenant != tenant || rec.Run != run {
		return RunRecord{}, corrupt(label, "run record stored under %s names %s", run, rec.Run)
	}
	return rec, nil
}
