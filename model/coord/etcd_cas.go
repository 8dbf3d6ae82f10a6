package coord

import (
	"errors"

	"shardsim/simkv"
)

// The compare-and-swap skeleton every mutation of the etcd backend runs:
//
//	for each attempt (backing off between attempts on the KV's clock):
//	    attempt(): read what the decision depends on, at one revision;
//	               decide with the shared pure Step* function;
//	               return the commit: compares on everything read, writes,
//	               and a witness key (or nil: nothing to write, or an error)
//	    apply the commit as one transaction:
//	        succeeded        -> done
//	        compares failed  -> someone else wrote first: start over
//	        unavailable      -> not applied: start over
//	        ambiguous answer -> read back the witness's history: landed ->
//	                            done, not landed -> start over, unknown ->
//	                            transient failure
//
// Starting over re-reads and re-decides, so a retried idempotent operation
// whose earlier attempt landed unseen is answered from the op-log.

// errRaced is returned by an attempt that saw the state change under it
// before it could build a commit; the skeleton starts over, as after a
// failed compare.
var errRaced = errors.New("coord: etcd: state changed during the attempt")

// opRun is one operation in progress: its label for errors and the etcd
// lease it granted for an owner binding, which later attempts reuse.
type opRun struct {
	e        *Etcd
	label    string
	grant    int64 // 0: none granted (or it expired unused)
	grantTTL int64
	keep     bool         // the grant is (or may be) referenced by a stored binding
	sent     []WriteStamp // the stamps of the commits this operation sent
}

// sentStamp reports whether s is the stamp of a commit this operation sent.
func (r *opRun) sentStamp(s WriteStamp) bool {
	for _, x := range r.sent {
		if x == s {
			return true
		}
	}
	return false
}

// optimistic runs attempt until its commit lands, it returns nil (nothing
// to write) or an error, or MaxAttempts attempts lose their race.
func (e *Etcd) optimistic(label string, attempt func(r *opRun) (*commit, error)) error {
	r := &opRun{e: e, label: label}
	defer r.finish()
	for i := 0; i < e.cfg.MaxAttempts; i++ {
		if i > 0 {
			e.backoff(i)
		}
		c, err := attempt(r)
		if err == errRaced {
			e.stats.Conflicts++
			continue
		}
		if err != nil || c == nil {
			return err
		}
		landed, err := r.apply(c)
		if err != nil {
			return err
		}
		if !landed {
			continue
		}
		r.keep = r.keep || c.usesGrant
		for _, id := range c.revoke {
			e.revoke(id)
		}
		if c.then != nil {
			return r.applyAgain(c.then)
		}
		return nil
	}
	return transient(label+".cas", "lost the compare-and-swap race %d times", e.cfg.MaxAttempts)
}

// apply sends c once and reports whether it took effect.
func (r *opRun) apply(c *commit) (bool, error) {
	e := r.e
	e.stats.Requests++
	r.sent = append(r.sent, c.stamp)
	resp, err := e.kv.Txn(c.request(e.cfg.MaxTxnOps))
	switch {
	case err == nil && resp.Succeeded:
		return true, nil
	case err == nil:
		e.stats.Conflicts++
		return false, nil
	case simkv.IsIndeterminate(err):
		e.stats.Transport++
		e.stats.Ambiguous++
		landed, rerr := e.landed(r.label, c.witness)
		if rerr != nil {
			// Unknown outcome: a binding may now hold the grant.
			r.keep = r.keep || c.usesGrant
			return false, rerr
		}
		if landed {
			e.stats.Landed++
		}
		return landed, nil
	case simkv.IsTransport(err):
		e.stats.Transport++ // refused before it was sent: not applied
		return false, nil
	case errors.Is(err, simkv.ErrLeaseNotFound):
		// An etcd lease a put names expired since the read: not applied.
		// Re-reading shows what changed; a lost grant is replaced.
		if c.usesGrant {
			r.grant = 0
		}
		return false, nil
	}
	return false, corrupt(r.label+".txn", "etcd refused the transaction: %v", err)
}

// applyAgain applies a follow-up commit that depends on nothing the
// operation could re-read (coord.split-two-txns' second transaction).
func (r *opRun) applyAgain(c *commit) error {
	for i := 0; i < r.e.cfg.MaxAttempts; i++ {
		if i > 0 {
			r.e.backoff(i)
		}
		landed, err := r.apply(c)
		if err != nil || landed {
			return err
		}
	}
	return transient(r.label+".second_txn", "second transaction did not land")
}

// lease returns an etcd lease of ttl seconds for a new owner binding,
// granting it on first use and reusing it on later attempts.
func (r *opRun) lease(ttl int64) (int64, error) {
	if r.grant != 0 && r.grantTTL == ttl {
		return r.grant, nil
	}
	if r.grant != 0 && !r.keep {
		r.e.revoke(r.grant)
	}
	e := r.e
	var resp *simkv.LeaseGrantResponse
	// A grant whose answer was lost may have created a lease we never
	// learn about; it holds no key and expires on its own.
	err := e.retry(r.label+".grant", func() (err error) {
		resp, err = e.kv.LeaseGrant(simkv.LeaseGrantRequest{TTL: ttl})
		return err
	})
	if err != nil {
		return 0, infraOf(r.label+".grant", err)
	}
	e.stats.Grants++
	r.grant, r.grantTTL, r.keep = resp.ID, ttl, false
	return resp.ID, nil
}

// finish revokes a grant that no stored binding uses.
func (r *opRun) finish() {
	if r.grant != 0 && !r.keep {
		r.e.revoke(r.grant)
	}
}

// revoke revokes an etcd lease once, best effort: a lease that survives
// holds no key the protocol still needs and expires on its own.
func (e *Etcd) revoke(id int64) {
	if id == 0 {
		return
	}
	e.stats.Requests++
	e.stats.Revokes++
	_, _ = e.kv.LeaseRevoke(simkv.LeaseRevokeRequest{ID: id})
}
