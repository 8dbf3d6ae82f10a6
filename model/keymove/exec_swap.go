package keymove

import (
	"shardsim/model/bugs"
	"shardsim/simkv"
)

// swapPhase swaps every verified key, SwapBatchSize keys per etcd
// transaction, batches one after another in plan order.
func (e *Executor) swapPhase(c Conn) {
	var ready []int
	for i := e.ck.LastProcessedIndex; i < len(e.ck.Keys); i++ {
		if s := e.ck.Keys[i].State; s == Verified || s == Swapping {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 && e.abort == nil {
		n := min(e.opts.SwapBatchSize, len(ready))
		e.swapBatch(c, ready[:n])
		ready = ready[n:]
	}
}

// swapBatch runs one batch: record Swapping, fence each source, swap the
// fenced keys' map entries in one transaction, record the outcome.
func (e *Executor) swapBatch(c Conn, batch []int) {
	for _, i := range batch {
		e.move(i, Swapping)
	}
	if e.persist(c) != nil {
		return
	}
	var fenced []int
	for _, i := range batch {
		if e.fenceKey(c, i) {
			fenced = append(fenced, i)
		}
		if e.abort != nil {
			return
		}
	}
	if len(fenced) > 0 {
		if e.bugs.Has(bugs.KeymoveCheckpointBeforeEffect) {
			for _, i := range fenced {
				e.move(i, Done)
			}
			if e.persist(c) != nil {
				return
			}
		}
		e.settleSwap(c, fenced)
	}
	e.persist(c)
}

// fenceKey fences key i at its source and reports whether it is fenced;
// otherwise it has moved the key on (back to Copying, Copied or Failed).
func (e *Executor) fenceKey(c Conn, i int) bool {
	out, err := e.fence(c, i)
	switch {
	case err != nil && !IsTransient(err):
		e.setAbort(err)
	case err != nil:
		e.rollback(c, []int{i})
	case out == fenceMoved:
		e.release(c, i)
		e.raced(i)
	case out == fenceForeign:
		e.fail(i, "owner")
	default:
		return true
	}
	return false
}

// settleSwap swaps the fenced keys and records the outcome: Done, or back
// to Copied when the batch cannot land.
func (e *Executor) settleSwap(c Conn, keys []int) {
	landed, err := e.swap(c, keys)
	if err != nil {
		e.setAbort(err) // keys stay Swapping; a resumed run settles them
		return
	}
	if landed {
		e.m.SwapBatches++
		for _, i := range keys {
			e.move(i, Done)
		}
		return
	}
	e.rollback(c, keys)
}

// rollback returns keys whose swap cannot land to Copied (the seed's
// "rollback batch to Copied"), releasing their fences, or fails them once
// they have rolled back MaxRetries times. A key whose source cannot be
// reached to release stays Swapping for the next round, which fences and
// swaps it again.
func (e *Executor) rollback(c Conn, keys []int) {
	e.m.Rollbacks++
	for _, i := range keys {
		ks := &e.ck.Keys[i]
		ks.Rollbacks++
		released := e.release(c, i) == nil
		switch {
		case ks.Rollbacks > e.opts.MaxRetries:
			e.fail(i, "swap") // the map is known to hold the source; finish retries the release
		case released:
			e.move(i, Copied)
		}
	}
}

// fenceOutcome is what fencing a source found.
type fenceOutcome int

const (
	fenceHeld fenceOutcome = iota
	fenceMoved
	fenceForeign
)

// fence stops the source serving key i: its control word becomes
// CtlMoved(plan), in a transaction that compares the source data's mod
// revision with the one that was copied and verified (the race fix: a
// client write since then fails the compare and the key is re-copied) and
// the control word's mod revision as just read (so an earlier fence
// attempt arriving after a rollback's release cannot land).
func (e *Executor) fence(c Conn, i int) (fenceOutcome, error) {
	mv, ks := e.plan.Moves[i], &e.ck.Keys[i]
	blind := e.bugs.Has(bugs.KeymoveSwapIgnoresSourceRevision)
	var out fenceOutcome
	err := e.retry(c, "fence", func() error {
		data, ctl, err := readSource(c.Shard(mv.Source), mv.Key)
		if err != nil {
			return err
		}
		moved := data == nil || (!blind && data.ModRevision != ks.CopiedRev)
		switch {
		case ctl != nil && string(ctl.Value) == CtlMoved(e.plan.ID):
			out = fenceHeld
			if moved {
				out = fenceMoved
			}
			return nil
		case ctl == nil || string(ctl.Value) != CtlOpen:
			out = fenceForeign
			return nil
		case moved:
			out = fenceMoved
			return nil
		}
		cmp := []simkv.Compare{{Target: simkv.CompareMod, Result: simkv.CompareEqual, Key: CtlKey(mv.Key), ModRevision: ctl.ModRevision}}
		if !blind {
			cmp = append(cmp, simkv.Compare{Target: simkv.CompareMod, Result: simkv.CompareEqual, Key: DataKey(mv.Key), ModRevision: ks.CopiedRev})
		}
		resp, err := c.Shard(mv.Source).Txn(simkv.TxnRequest{Compare: cmp,
			Success: []simkv.RequestOp{{Put: &simkv.PutRequest{Key: CtlKey(mv.Key), Value: []byte(CtlMoved(e.plan.ID))}}}})
		if err == nil || simkv.IsIndeterminate(err) {
			e.mayBeFenced[i] = true
		}
		if err != nil {
			return err
		}
		if !resp.Succeeded {
			return errAgain // something moved: read again
		}
		out = fenceHeld
		return nil
	})
	return out, err
}

// readSource reads a key's data and control word at one revision.
func readSource(kv simkv.KV, key string) (data, ctl *simkv.KeyValue, err error) {
	resp, err := kv.Txn(simkv.TxnRequest{Success: []simkv.RequestOp{
		{Range: &simkv.RangeRequest{Key: DataKey(key)}},
		{Range: &simkv.RangeRequest{Key: CtlKey(key)}},
	}})
	if err != nil {
		return nil, nil, err
	}
	if kvs := resp.Responses[0].Range.Kvs; len(kvs) == 1 {
		data = &kvs[0]
	}
	if kvs := resp.Responses[1].Range.Kvs; len(kvs) == 1 {
		ctl = &kvs[0]
	}
	return data, ctl, nil
}

// release reopens key i's source if this plan fenced it, comparing the
// fence's mod revision so that a late release cannot undo a later fence.
// Only a key whose swap is known not to have landed is released.
func (e *Executor) release(c Conn, i int) error {
	if !e.mayBeFenced[i] {
		return nil
	}
	mv := e.plan.Moves[i]
	return e.retry(c, "release", func() error {
		_, ctl, err := readSource(c.Shard(mv.Source), mv.Key)
		if err != nil {
			return err
		}
		if ctl == nil || string(ctl.Value) != CtlMoved(e.plan.ID) {
			delete(e.mayBeFenced, i)
			return nil
		}
		resp, err := c.Shard(mv.Source).Txn(simkv.TxnRequest{
			Compare: []simkv.Compare{{Target: simkv.CompareMod, Result: simkv.CompareEqual, Key: CtlKey(mv.Key), ModRevision: ctl.ModRevision}},
			Success: []simkv.RequestOp{{Put: &simkv.PutRequest{Key: CtlKey(mv.Key), Value: []byte(CtlOpen)}}},
		})
		if err != nil {
			return err
		}
		if !resp.Succeeded {
			return errAgain
		}
		delete(e.mayBeFenced, i)
		return nil
	})
}
