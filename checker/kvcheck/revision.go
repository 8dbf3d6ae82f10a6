package kvcheck

import (
	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

// RevisionMonotone checks KV.RevisionMonotone as the server applies each
// request: the store revision never decreases, rises by at most one per
// request, rises exactly when the request changed something, and every
// answer's header carries the revision the store reached.
type RevisionMonotone struct {
	last  int64
	first property.First
}

// NewRevisionMonotone returns a checker for a store at revision start.
func NewRevisionMonotone(start int64) *RevisionMonotone { return &RevisionMonotone{last: start} }

// Err returns the first violation, or nil.
func (c *RevisionMonotone) Err() *property.Violation { return c.first.Err() }

func (c *RevisionMonotone) fail(format string, args ...any) {
	c.first.Failf(property.KVRevisionMonotone, format, args...)
}

// OnInvoke implements simkv.Observer.
func (c *RevisionMonotone) OnInvoke(uint64, string, simclock.Time, simkv.Request) {}

// OnReturn implements simkv.Observer.
func (c *RevisionMonotone) OnReturn(uint64, simclock.Time, simkv.Response, error) {}

// OnApply implements simkv.Observer.
func (c *RevisionMonotone) OnApply(call uint64, at simclock.Time, req simkv.Request, resp simkv.Response, err error, before, after int64) {
	if before != c.last {
		c.fail("call %d at %v: revision moved from %d to %d between applies", call, at, c.last, before)
	}
	c.last = after
	switch {
	case after < before:
		c.fail("call %d at %v: revision went back from %d to %d", call, at, before, after)
		return
	case after > before+1:
		c.fail("call %d at %v: one request raised the revision by %d", call, at, after-before)
		return
	}
	if err != nil {
		if after != before {
			c.fail("call %d at %v: a failed request (%v) changed the revision", call, at, err)
		}
		return
	}
	if changed, known := writes(req, resp); known && changed != (after == before+1) {
		c.fail("call %d at %v: request %s changed=%v but revision %d -> %d", call, at, req, changed, before, after)
	}
	if isKVRequest(req) && resp.Header().Revision != after {
		c.fail("call %d at %v: answer header revision %d, store at %d", call, at, resp.Header().Revision, after)
	}
}

// writes reports whether a successful request changed the keyspace, judged
// from its answer alone; known is false when the answer cannot tell (a lease
// revoke deletes the lease's keys, which its answer does not list).
func writes(req simkv.Request, resp simkv.Response) (changed, known bool) {
	switch {
	case req.Put != nil:
		return true, true
	case req.DeleteRange != nil:
		return resp.DeleteRange != nil && resp.DeleteRange.Deleted > 0, resp.DeleteRange != nil
	case req.Txn != nil:
		if resp.Txn == nil {
			return false, false
		}
		return txnWrites(*req.Txn, *resp.Txn), true
	case req.LeaseRevoke != nil:
		return false, false
	}
	return false, true
}

func txnWrites(req simkv.TxnRequest, resp simkv.TxnResponse) bool {
	ops := req.Failure
	if resp.Succeeded {
		ops = req.Success
	}
	for i, op := range ops {
		if i >= len(resp.Responses) {
			return false
		}
		r := resp.Responses[i]
		switch {
		case op.Put != nil:
			return true
		case op.DeleteRange != nil && r.DeleteRange != nil && r.DeleteRange.Deleted > 0:
			return true
		case op.Txn != nil && r.Txn != nil && txnWrites(*op.Txn, *r.Txn):
			return true
		}
	}
	return false
}

// isKVRequest reports whether req is a KV request, whose answer carries the
// revision the store reached.
func isKVRequest(r simkv.Request) bool {
	return r.Range != nil || r.Put != nil || r.DeleteRange != nil || r.Txn != nil
}
