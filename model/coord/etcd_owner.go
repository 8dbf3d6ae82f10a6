package coord

import "shardsim/simkv"

// Owner bindings. Beside each shard record whose lease is set, the backend
// keeps an owner-binding key (worker, fence, deadline) attached to an etcd
// lease whose TTL covers the logical lease (EtcdConfig.OwnerLeaseTTL). It
// is the storage-level half of the lease: if the holder's etcd lease
// expires, the binding is deleted by etcd itself, and lease-gated progress
// is refused even while the logical deadline says otherwise. The binding is
// always written in the same transaction as the record, so when it exists
// it agrees with the record's lease.

// bindingMatches reports whether b is the binding of rec's current lease.
func bindingMatches(b OwnerBinding, rec *ShardRecord) bool {
	return rec.Lease.Set && b.Worker == rec.Lease.Val.Owner && b.Fence == rec.Fence && b.Deadline == rec.Lease.Val.Deadline
}

// checkStorageLease is the storage half of lease validation, run after
// the logical half (validateLease, inside the Step function) accepted: the
// shard's owner binding must still exist.
func (e *Etcd) checkStorageLease(op Operation, label string, st *shardState) error {
	rec := &st.rec
	if !st.owner.Set {
		e.stats.StorageExpired++
		at := LogicalTime(0)
		if rec.Lease.Set {
			at = rec.Lease.Val.Deadline
		}
		return newError(op, CoordError{Code: CodeLeaseExpired, Shard: rec.Key(), At: at})
	}
	if !bindingMatches(st.owner.Val, rec) {
		return corrupt(label, "owner binding of %s %s disagrees with its record", rec.Run, rec.Shard)
	}
	return nil
}

// bindOwner adds to c what makes the owner binding agree with next:
//
//	next unleased                      -> delete the binding (revoke its etcd lease after)
//	same worker and fence, new deadline -> keep its etcd lease alive, rewrite the deadline
//	new worker or fence                 -> a fresh etcd lease, a new binding
//
// A lease-gated operation (gated) also compares the binding, so an etcd
// lease expiring between the read and the write fails the transaction.
func (e *Etcd) bindOwner(r *opRun, op Operation, c *commit, st *shardState, next *ShardRecord, gated bool) error {
	key := e.keys.owner(st.tenant, next.Key())
	if gated {
		c.unchanged(key, st.ownerKV)
	}
	var old int64 // the etcd lease of the current binding
	if st.ownerKV != nil {
		old = st.ownerKV.Lease
	}
	if !next.Lease.Set {
		if st.ownerKV != nil {
			c.del(key)
			c.revoke = append(c.revoke, old)
		}
		return nil
	}
	want := OwnerBinding{Worker: next.Lease.Val.Owner, Fence: next.Fence, Deadline: next.Lease.Val.Deadline}
	if have := st.owner; have.Set && have.Val.Worker == want.Worker && have.Val.Fence == want.Fence {
		if have.Val == want {
			return nil
		}
		alive, err := e.keepAlive(r.label, old)
		if err != nil {
			return err
		}
		if alive {
			c.put(key, EncodeOwnerBinding(&want), old)
			return nil
		}
		if gated {
			return newError(op, CoordError{Code: CodeLeaseExpired, Shard: next.Key(), At: have.Val.Deadline})
		}
		// Not gated (an acquire that kept the fence, under a bug): the old
		// etcd lease is gone, so bind afresh.
	}
	dur, err := e.leaseDuration(r.label, st)
	if err != nil {
		return err
	}
	id, err := r.lease(e.cfg.OwnerLeaseTTL(dur))
	if err != nil {
		return err
	}
	c.put(key, EncodeOwnerBinding(&want), id)
	c.usesGrant = true
	if old != 0 && old != id {
		c.revoke = append(c.revoke, old)
	}
	return nil
}

// keepAlive restarts the full TTL of an etcd lease and reports whether it
// still existed.
func (e *Etcd) keepAlive(label string, id int64) (bool, error) {
	if id == 0 {
		return false, nil
	}
	var resp *simkv.LeaseKeepAliveResponse
	err := e.retry(label+".keepalive", func() (err error) {
		resp, err = e.kv.LeaseKeepAlive(simkv.LeaseKeepAliveRequest{ID: id})
		return err
	})
	if err != nil {
		return false, infraOf(label+".keepalive", err)
	}
	e.stats.KeepAlives++
	return resp.TTL > 0, nil
}
