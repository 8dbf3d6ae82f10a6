package keymove

import (
	"shardsim/model/bugs"
	"shardsim/simkv"
)

// swap reassigns keys to their targets in one etcd transaction (the
// seed's all-or-nothing batch) and reports whether it landed. It retries a
// batch that did not land up to MaxRetries times. The transaction compares
// the swap epoch and every key's entry with its source; before it reports
// "not landed" it bumps the epoch and reads the map, so no attempt still
// in flight can land after the caller releases the fences. An error means
// the outcome could not be learned.
func (e *Executor) swap(c Conn, keys []int) (bool, error) {
	if e.bugs.Has(bugs.KeymoveCompensatingRollback) {
		return e.swapCompensating(c, keys)
	}
	for n := 0; n <= e.opts.MaxRetries; n++ {
		if n > 0 {
			e.m.Retries++
			c.Sleep(e.opts.backoff(n))
		}
		resp, err := c.Meta().Txn(e.swapRequest(keys))
		if err == nil && resp.Succeeded {
			return true, nil
		}
		if err != nil && !simkv.IsTransport(err) {
			return false, err
		}
		// Not landed, or not known: settle it before trying again.
		landed, err := e.swapLanded(c, keys)
		if err != nil || landed {
			return landed, err
		}
	}
	return false, nil
}

// swapRequest is the batch's transaction.
func (e *Executor) swapRequest(keys []int) simkv.TxnRequest {
	req := simkv.TxnRequest{Compare: []simkv.Compare{{
		Target: simkv.CompareMod, Result: simkv.CompareEqual, Key: e.keys.EpochKey(e.plan.ID), ModRevision: e.epochRev,
	}}}
	for _, i := range keys {
		mv := e.plan.Moves[i]
		req.Compare = append(req.Compare, simkv.Compare{Target: simkv.CompareValue, Result: simkv.CompareEqual, Key: e.keys.MapKey(mv.Key), Value: []byte(mv.Source)})
		req.Success = append(req.Success, simkv.RequestOp{Put: &simkv.PutRequest{Key: e.keys.MapKey(mv.Key), Value: []byte(mv.Target)}})
	}
	return req
}

// swapLanded learns whether the batch landed: it bumps the epoch (no
// attempt built under the old one can land after that) and reads the map.
// The batch is all-or-nothing, so its first key tells.
func (e *Executor) swapLanded(c Conn, keys []int) (bool, error) {
	if err := e.bumpEpoch(c); err != nil {
		return false, ErrUnknownOutcome
	}
	m, err := e.readMap(c)
	if err != nil {
		return false, ErrUnknownOutcome
	}
	mv := e.plan.Moves[keys[0]]
	return m[mv.Key].shard == mv.Target, nil
}

// swapCompensating is keymove.compensating-rollback: an ambiguous answer
// or a failed compare counts as "not landed" without a read, and after
// MaxRetries such attempts the old assignments are written back.
func (e *Executor) swapCompensating(c Conn, keys []int) (bool, error) {
	for n := 0; n <= e.opts.MaxRetries; n++ {
		if n > 0 {
			e.m.Retries++
			c.Sleep(e.opts.backoff(n))
		}
		resp, err := c.Meta().Txn(e.swapRequest(keys))
		if err == nil && resp.Succeeded {
			return true, nil
		}
		if err == nil {
			e.bumpEpoch(c) // the compare may have failed on a stale epoch
		}
	}
	back := simkv.TxnRequest{}
	for _, i := range keys {
		mv := e.plan.Moves[i]
		back.Success = append(back.Success, simkv.RequestOp{Put: &simkv.PutRequest{Key: e.keys.MapKey(mv.Key), Value: []byte(mv.Source)}})
	}
	if _, err := c.Meta().Txn(back); err != nil {
		return false, ErrUnknownOutcome
	}
	return false, nil
}
