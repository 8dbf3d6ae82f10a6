package keymove

import (
	"shardsim/model/bugs"
	"shardsim/simkv"
)

// swapPhase swaps every verified key, SwapBatchSize keys per etcd
// transaction, batches one after another in plan order.
func (e *Executor) swapPhase(rt Runtime) {
	var ready []int
	for i := e.ck.LastProcessedIndex; i < len(e.ck.Keys); i++ {
		if s := e.ck.Keys[i].State; s == Verified || s == Swapping {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 && e.abort == nil {
		n := min(e.opts.SwapBatchSize, len(ready))
		e.swapBatch(rt, ready[:n])
		ready = ready[n:]
	}
}

// swapBatch runs one batch: record Swapping, fence each source (up to
// CopyConcurrency at once), swap the fenced keys' map entries in one
// transaction, record the outcome.
func (e *Executor) swapBatch(rt Runtime, batch []int) {
	for _, i := range batch {
		e.move(i, Swapping)
	}
	if e.persist(rt) != nil {
		return
	}
	held := make([]bool, len(batch))
	next := 0
	rt.Parallel(min(e.opts.CopyConcurrency, len(batch)), func(_ int, c Conn) {
		for e.abort == nil && next < len(batch) {
			j := next
			next++
			held[j] = e.fenceKey(c, batch[j])
		}
	})
	if e.abort != nil {
		return
	}
	var fenced []int
	for j, i := range batch {
		if held[j] {
			fenced = append(fenced, i)
		}
	}
	if len(fenced) > 0 {
		if e.bugs.Has(bugs.KeymoveCheckpointBeforeEffect) {
			for _, i := range fenced {
				e.move(i, Done)
			}
			if e.persist(rt) != nil {
				return
			}
		}
		e.settleSwap(rt, fenced)
	}
	e.persist(rt)
}

// fenceKey fences key i at its source and reports whether it is fenced;
// otherwise it has moved the key on (back to Copied, or Failed). A key
// whose source moved under its copy (a racing write) is re-copied,
// verified and fenced again at once, within its race budget, so that the
// window a writer can race is a few round trips, not a whole round.
func (e *Executor) fenceKey(c Conn, i int) bool {
	for e.abort == nil {
		out, err := e.fence(c, i)
		switch {
		case err != nil && !IsTransient(err):
			e.setAbort(err)
		case err != nil:
			e.rollback(c, []int{i})
		case out == fenceMoved:
			e.release(c, i)
			e.raced(i)
			if e.redo(c, i) {
				continue
			}
		case out == fenceForeign:
			e.fail(i, "owner")
		default:
			return true
		}
		return false
	}
	return false
}

// redo takes a raced key through copy and verification back to Swapping;
// it reports whether the key got there.
func (e *Executor) redo(c Conn, i int) bool {
	for e.abort == nil {
		switch e.ck.Keys[i].State {
		case Planned, Copying:
			e.copyKey(c, i)
		case Copied, Verifying:
			e.verifyKey(c, i)
		case Verified:
			e.move(i, Swapping)
			return e.persist(c) == nil
		default:
			return false
		}
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
