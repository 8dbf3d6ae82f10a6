package simkv

// writer is one write transaction in progress, like etcd's storeTxnWrite:
// every change it makes gets revision begin+1, numbered by sub revision.
type writer struct {
	s       *Store
	begin   int64
	changes []Event // in order; the kvs as written (delete: key and revision)
}

func (s *Store) newWriter() *writer { return &writer{s: s, begin: s.rev} }

// rev is the revision a read inside the txn sees: the txn's own revision
// once it has changed something.
func (w *writer) rev() int64 {
	if len(w.changes) > 0 {
		return w.begin + 1
	}
	return w.begin
}

// put writes key=value with the lease, keeping the create revision and
// bumping the version of a live key, starting a new life otherwise.
func (w *writer) put(key, value []byte, leaseID int64) {
	rev := w.begin + 1
	e := entry{value: value, mod: rev, sub: int64(len(w.changes)), create: rev, version: 1, lease: leaseID}
	oldLease := int64(0)
	h, found := w.s.ks.hist[string(key)]
	if old, ok := h.visible(rev); ok {
		e.create, e.version, oldLease = old.CreateRevision, old.Version+1, old.Lease
	}
	k, keyBytes := w.s.ks.appendTo(h, found, key, e)
	if oldLease != 0 {
		w.s.detach(oldLease, k)
	}
	if leaseID != 0 {
		w.s.attach(leaseID, k)
	}
	w.changes = append(w.changes, Event{Type: EventPut, Kv: KeyValue{Key: keyBytes, Value: value,
		CreateRevision: e.create, ModRevision: rev, Version: e.version, Lease: leaseID}})
}

// delete writes a tombstone for a live key and detaches its lease. The
// event's kv carries only the key and the revision, as in etcd.
func (w *writer) delete(old *KeyValue) {
	rev := w.begin + 1
	k, keyBytes := w.s.ks.append(old.Key, entry{mod: rev, sub: int64(len(w.changes))}) // version 0: a tombstone
	if old.Lease != 0 {
		w.s.detach(old.Lease, k)
	}
	w.changes = append(w.changes, Event{Type: EventDelete, Kv: KeyValue{Key: keyBytes, ModRevision: rev}})
}

// end commits the txn: the revision moves on iff something changed, and the
// changes go to the watch log.
func (w *writer) end() {
	if len(w.changes) == 0 {
		return
	}
	w.s.rev = w.begin + 1
	w.s.commitEvents(w.s.rev, w.changes)
}

// putOp runs a PutRequest inside w and fills in resp, its answer. Lease
// and ignore_* preconditions were checked by the caller; ignore_* here
// reuse the live value and lease.
func (w *writer) putOp(p *PutRequest, resp *PutResponse) *PutResponse {
	value, leaseID := cloneBytes(p.Value), p.Lease
	if p.IgnoreValue || p.IgnoreLease || p.PrevKv {
		if old, ok := w.s.ks.atBytes(p.Key, w.rev()); ok {
			if p.IgnoreValue {
				value = old.Value
			}
			if p.IgnoreLease {
				leaseID = old.Lease
			}
			if p.PrevKv {
				resp.PrevKv = &old
			}
		}
	}
	w.put(p.Key, value, leaseID)
	resp.Header.Revision = w.begin + 1
	return resp
}

// deleteOp runs a DeleteRangeRequest inside w: it deletes every live key
// of the range in key order, reading them once (with PrevKv those reads
// are the answer's previous versions). Its header revision is the txn's
// revision if the txn has changed anything by the end of the delete, the
// old revision otherwise (etcd's storeTxnWrite.DeleteRange).
func (w *writer) deleteOp(d *DeleteRangeRequest) *DeleteRangeResponse {
	resp := &DeleteRangeResponse{}
	sp := spanOf(d.Key, d.RangeEnd)
	if sp.kind == spanSingle && !d.PrevKv {
		// The common delete returns no versions: no slice for them.
		if old, ok := w.s.ks.atBytes(d.Key, w.rev()); ok {
			w.delete(&old)
			resp.Deleted = 1
		}
	} else {
		kvs, _ := w.s.ks.live(sp, w.rev(), 0)
		for i := range kvs {
			w.delete(&kvs[i])
		}
		resp.Deleted = int64(len(kvs))
		if d.PrevKv {
			resp.PrevKvs = kvs
		}
	}
	resp.Header.Revision = w.rev()
	return resp
}

// checkPut is etcd's API-layer validation of a PutRequest.
func checkPut(p *PutRequest) error {
	switch {
	case len(p.Key) == 0:
		return ErrEmptyKey
	case p.IgnoreValue && len(p.Value) != 0:
		return ErrValueProvided
	case p.IgnoreLease && p.Lease != 0:
		return ErrLeaseProvided
	}
	return nil
}

// applyPut answers a top-level Put. As in etcd 3.4's applier, a missing
// lease is reported before a missing key for ignore_*.
func (s *Store) applyPut(p *PutRequest) (*PutResponse, error) {
	if err := checkPut(p); err != nil {
		return nil, err
	}
	if p.Lease != 0 && s.leases[p.Lease] == nil {
		return nil, ErrLeaseNotFound
	}
	if p.IgnoreValue || p.IgnoreLease {
		if _, ok := s.ks.atBytes(p.Key, s.rev); !ok {
			return nil, ErrKeyNotFound
		}
	}
	w := s.newWriter()
	resp := w.putOp(p, &PutResponse{})
	w.end()
	return resp, nil
}

// applyDelete answers a top-level DeleteRange.
func (s *Store) applyDelete(d *DeleteRangeRequest) (*DeleteRangeResponse, error) {
	if len(d.Key) == 0 {
		return nil, ErrEmptyKey
	}
	w := s.newWriter()
	resp := w.deleteOp(d)
	w.end()
	return resp, nil
}
