package keymove

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/zeebo/blake3"

	"shardsim/model/bugs"
	"shardsim/simkv"
)

// copyVerifyPhase takes every key that still needs a verified copy through
// copy and verification, CopyConcurrency workers at a time. Interleaved, a
// worker verifies each key right after copying it (holding a verify slot);
// otherwise every copy is made first and VerifyConcurrency workers verify.
func (e *Executor) copyVerifyPhase(rt Runtime) {
	needs := func(s State) bool { return s <= Verifying }
	if e.opts.InterleaveCopyAndVerify {
		e.pool(rt, e.opts.CopyConcurrency, needs, func(c Conn, i int) {
			for e.abort == nil && needs(e.ck.Keys[i].State) {
				if e.ck.Keys[i].State <= Copying {
					e.copyKey(c, i)
				} else {
					e.verifyKey(c, i)
				}
			}
		})
		return
	}
	e.pool(rt, e.opts.CopyConcurrency, func(s State) bool { return s <= Copying }, e.copyKey)
	if e.abort == nil {
		e.pool(rt, e.opts.VerifyConcurrency, func(s State) bool { return s == Copied || s == Verifying }, e.verifyKey)
	}
}

// pool runs work on every key whose state satisfies pick, with at most n
// workers; workers take keys in plan order from a shared cursor.
func (e *Executor) pool(rt Runtime, n int, pick func(State) bool, work func(Conn, int)) {
	var todo []int
	for i := e.ck.LastProcessedIndex; i < len(e.ck.Keys); i++ {
		if pick(e.ck.Keys[i].State) {
			todo = append(todo, i)
		}
	}
	next := 0
	rt.Parallel(min(n, len(todo)), func(_ int, c Conn) {
		for e.abort == nil && next < len(todo) {
			i := todo[next]
			next++
			work(c, i)
		}
	})
}

// copyKey makes one copy of key i (with retries) and records it.
func (e *Executor) copyKey(c Conn, i int) {
	if e.ck.Keys[i].State == Planned {
		e.move(i, Copying)
	}
	if e.periodic(c) != nil {
		return
	}
	if e.bugs.Has(bugs.KeymoveMapBeforeCopy) && !e.mapBeforeCopy(c, i) {
		return
	}
	if e.bugs.Has(bugs.KeymoveCheckpointBeforeEffect) {
		e.move(i, Copied)
		if e.persist(c) != nil {
			return
		}
	}
	e.copySem.Acquire(c)
	e.m.ActiveCopyConcurrency++
	e.m.MaxActiveCopyConcurrency = max(e.m.MaxActiveCopyConcurrency, e.m.ActiveCopyConcurrency)
	rev, err := e.copyData(c, i)
	e.m.ActiveCopyConcurrency--
	e.copySem.Release(c)
	switch {
	case errors.Is(err, ErrNotFound):
		e.fail(i, "not-found")
	case IsTransient(err):
		e.fail(i, "retries")
	case err != nil:
		e.setAbort(err)
		return
	default:
		e.ck.Keys[i].CopiedRev = rev
		e.move(i, Copied)
	}
	e.persist(c)
}

// copyData copies key i's value from its source to its target and returns
// the source mod revision it copied. The target write compares the
// target's mod revision as read just before, so an earlier attempt that
// arrives late cannot overwrite a newer copy.
func (e *Executor) copyData(c Conn, i int) (int64, error) {
	mv := e.plan.Moves[i]
	var rev int64
	err := e.retry(c, "copy", func() error {
		src, err := c.Shard(mv.Source).Range(simkv.RangeRequest{Key: DataKey(mv.Key)})
		if err != nil {
			return err
		}
		if len(src.Kvs) == 0 {
			return ErrNotFound
		}
		dst, err := c.Shard(mv.Target).Range(simkv.RangeRequest{Key: DataKey(mv.Key)})
		if err != nil {
			return err
		}
		var dstRev int64
		if len(dst.Kvs) == 1 {
			dstRev = dst.Kvs[0].ModRevision
		}
		resp, err := c.Shard(mv.Target).Txn(simkv.TxnRequest{
			Compare: []simkv.Compare{{Target: simkv.CompareMod, Result: simkv.CompareEqual, Key: DataKey(mv.Key), ModRevision: dstRev}},
			Success: []simkv.RequestOp{
				{Put: &simkv.PutRequest{Key: DataKey(mv.Key), Value: src.Kvs[0].Value}},
				{Put: &simkv.PutRequest{Key: CtlKey(mv.Key), Value: []byte(CtlOpen)}},
			},
		})
		if err != nil {
			return err
		}
		if !resp.Succeeded {
			return errAgain // raced a late attempt of ours: read again
		}
		rev = src.Kvs[0].ModRevision
		return nil
	})
	return rev, err
}

// verdict is the outcome of one verification.
type verdict int

const (
	verMatch verdict = iota
	verMismatch
	verSourceMoved
	verNotFound
)

// verifyKey verifies key i's copy and moves it on.
func (e *Executor) verifyKey(c Conn, i int) {
	ks := &e.ck.Keys[i]
	if e.bugs.Has(bugs.KeymoveSwapBeforeVerify) {
		e.move(i, Verified) // the copy is taken on trust
		e.persist(c)
		return
	}
	e.move(i, Verifying)
	if e.persist(c) != nil {
		return
	}
	if e.bugs.Has(bugs.KeymoveCheckpointBeforeEffect) {
		e.move(i, Verified)
		if e.persist(c) != nil {
			return
		}
	}
	e.verifySem.Acquire(c)
	e.m.ActiveVerifyConcurrency++
	e.m.MaxActiveVerifyConcurrency = max(e.m.MaxActiveVerifyConcurrency, e.m.ActiveVerifyConcurrency)
	v, err := e.verifyData(c, i)
	e.m.ActiveVerifyConcurrency--
	e.verifySem.Release(c)
	switch {
	case err != nil:
		e.fail(i, "retries")
	case v == verMatch:
		e.move(i, Verified)
	case v == verNotFound:
		e.fail(i, "not-found")
	case v == verSourceMoved:
		e.raced(i)
	default:
		e.m.VerificationFailures++
		ks.VerifyFailures++
		switch {
		case ks.VerifyFailures <= e.opts.MaxRetries:
			e.move(i, Copying)
		case e.opts.ForceSwapOnVerificationFailure:
			ks.Forced = true
			e.m.Forced++
			e.move(i, Verified)
		default:
			e.fail(i, "verify")
		}
	}
	e.persist(c)
}

// raced sends key i back to Copying because a client write moved its
// source under the copy, unless it raced too often.
func (e *Executor) raced(i int) {
	ks := &e.ck.Keys[i]
	e.m.RacingWrites++
	ks.Races++
	if ks.Races > e.opts.RaceBudget {
		e.fail(i, "races")
		return
	}
	e.move(i, Copying)
}

// verifyData compares key i's target with its source as the options say.
func (e *Executor) verifyData(c Conn, i int) (verdict, error) {
	mv := e.plan.Moves[i]
	var v verdict
	err := e.retry(c, "verify", func() error {
		src, err := c.Shard(mv.Source).Range(simkv.RangeRequest{Key: DataKey(mv.Key)})
		if err != nil {
			return err
		}
		if len(src.Kvs) == 0 {
			v = verNotFound
			return nil
		}
		if src.Kvs[0].ModRevision != e.ck.Keys[i].CopiedRev {
			v = verSourceMoved
			return nil
		}
		dst, err := c.Shard(mv.Target).Range(simkv.RangeRequest{Key: DataKey(mv.Key)})
		if err != nil {
			return err
		}
		v = verMismatch
		if len(dst.Kvs) == 1 && e.sameValue(mv.Key, src.Kvs[0].Value, dst.Kvs[0].Value) {
			v = verMatch
		}
		return nil
	})
	return v, err
}

// sameValue is the configured verification strategy.
func (e *Executor) sameValue(key string, a, b []byte) bool {
	switch e.opts.Verification {
	case VerifyHash:
		return blake3.Sum256(a) == blake3.Sum256(b)
	case VerifySampled:
		return sampledEqual(e.plan.ID, key, a, b)
	}
	return bytes.Equal(a, b)
}

// sampleSize is how many byte positions sampled verification reads.
const sampleSize = 8

// sampledEqual compares lengths and sampleSize byte positions chosen by a
// digest of the plan and key, so a re-run samples the same positions.
func sampledEqual(planID, key string, a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	seed := blake3.Sum256([]byte("shardsim/keymove/sample/v1\x00" + planID + "\x00" + key))
	for j := 0; j < sampleSize; j++ {
		pos := binary.BigEndian.Uint32(seed[4*j:]) % uint32(len(a))
		if a[pos] != b[pos] {
			return false
		}
	}
	return true
}
