package keymove

import (
	"bytes"
	"fmt"

	"shardsim/simkv"
)

// The executor's requests to etcd. Every write is a transaction with
// compares; an ambiguous answer is settled by what the next attempt reads.

// load reads the plan's checkpoint, or creates it (with the plan record)
// if there is none.
func (e *Executor) load(c Conn) error {
	ckKey := e.keys.CheckpointKey(e.plan.ID)
	return e.retry(c, "load", func() error {
		init := Checkpoint{PlanID: e.plan.ID, Seq: 1, UpdatedAt: c.Now(), Keys: make([]KeyState, len(e.plan.Moves))}
		resp, err := c.Meta().Txn(simkv.TxnRequest{
			Compare: []simkv.Compare{{Target: simkv.CompareVersion, Result: simkv.CompareEqual, Key: ckKey}},
			Success: []simkv.RequestOp{
				{Put: &simkv.PutRequest{Key: e.keys.PlanKey(e.plan.ID), Value: encodePlan(e.plan)}},
				{Put: &simkv.PutRequest{Key: ckKey, Value: init.Encode()}},
			},
			Failure: []simkv.RequestOp{{Range: &simkv.RangeRequest{Key: ckKey}}},
		})
		if err != nil {
			return err
		}
		if resp.Succeeded {
			e.ck, e.ckRev, e.lastCkpt = init, resp.Header.Revision, c.Now()
			return nil
		}
		kvs := resp.Responses[0].Range.Kvs
		if len(kvs) != 1 {
			return fmt.Errorf("keymove: checkpoint vanished while loading")
		}
		ck, err := DecodeCheckpoint(kvs[0].Value, e.plan.ID, len(e.plan.Moves))
		if err != nil {
			return err
		}
		// An earlier attempt of ours may have created it; either way it is
		// the plan's state now. A checkpoint with progress is a resume.
		e.ck, e.ckRev, e.lastCkpt = ck, kvs[0].ModRevision, c.Now()
		e.resumed = ck.Seq > 1 || ck.Complete
		return nil
	})
}

// writeCheckpoint replaces the checkpoint we last wrote (or read) with
// next, comparing its mod revision, and returns the new mod revision. A
// failed compare that finds next itself is our own earlier attempt.
func (e *Executor) writeCheckpoint(c Conn, next Checkpoint) (int64, error) {
	key := e.keys.CheckpointKey(e.plan.ID)
	val := next.Encode()
	var rev int64
	err := e.retry(c, "checkpoint", func() error {
		resp, err := c.Meta().Txn(simkv.TxnRequest{
			Compare: []simkv.Compare{{Target: simkv.CompareMod, Result: simkv.CompareEqual, Key: key, ModRevision: e.ckRev}},
			Success: []simkv.RequestOp{{Put: &simkv.PutRequest{Key: key, Value: val}}},
			Failure: []simkv.RequestOp{{Range: &simkv.RangeRequest{Key: key}}},
		})
		if err != nil {
			return err
		}
		if resp.Succeeded {
			rev = resp.Header.Revision
			return nil
		}
		kvs := resp.Responses[0].Range.Kvs
		if len(kvs) == 1 && bytes.Equal(kvs[0].Value, val) {
			rev = kvs[0].ModRevision
			return nil
		}
		return ErrSuperseded
	})
	return rev, err
}

// bumpEpoch moves the swap epoch and learns its new mod revision. A swap
// transaction compares the epoch it was built under, so once the bump is
// known to have landed no older swap can land any more: that is what lets
// a read of the map after it tell "not applied" from "not applied yet".
func (e *Executor) bumpEpoch(c Conn) error {
	key := e.keys.EpochKey(e.plan.ID)
	return e.retry(c, "epoch", func() error {
		resp, err := c.Meta().Txn(simkv.TxnRequest{
			Success: []simkv.RequestOp{{Put: &simkv.PutRequest{Key: key, Value: []byte(e.plan.ID)}}},
		})
		if err != nil {
			return err
		}
		e.epochRev = resp.Header.Revision
		return nil
	})
}

// mapEntry is one shard map entry as read.
type mapEntry struct {
	shard  ShardID
	modRev int64
}

// readMap reads the whole shard map at one revision.
func (e *Executor) readMap(c Conn) (map[string]mapEntry, error) {
	start, end := e.keys.MapRange()
	var out map[string]mapEntry
	err := e.retry(c, "read-map", func() error {
		resp, err := c.Meta().Range(simkv.RangeRequest{Key: start, RangeEnd: end})
		if err != nil {
			return err
		}
		out = make(map[string]mapEntry, len(resp.Kvs))
		for _, kv := range resp.Kvs {
			if k, ok := e.keys.MapEntryKey(kv.Key); ok {
				out[k] = mapEntry{shard: ShardID(kv.Value), modRev: kv.ModRevision}
			}
		}
		return nil
	})
	return out, err
}

// reconcile settles every unfinished key against the shard map: one the
// map already assigns to its target was swapped (by an attempt whose
// answer or checkpoint was lost) and is Done; one assigned to a third shard
// is not ours to move.
func (e *Executor) reconcile(c Conn) error {
	m, err := e.readMap(c)
	if err != nil {
		return err
	}
	for i, mv := range e.plan.Moves {
		if e.ck.Keys[i].State.Terminal() {
			continue
		}
		switch m[mv.Key].shard {
		case mv.Target:
			e.move(i, Done)
		case mv.Source:
		default:
			e.fail(i, "owner")
		}
	}
	return nil
}
