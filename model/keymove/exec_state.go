package keymove

import (
	"errors"
	"fmt"

	"shardsim/model/bugs"
	"shardsim/simkv"
)

// move changes key i's state. An illegal transition is a bug in this
// package; with an injected bug on it is allowed (the bug may need it).
func (e *Executor) move(i int, to State) {
	ks := &e.ck.Keys[i]
	if !CanMove(ks.State, to) && e.bugs.Empty() {
		panic(fmt.Sprintf("keymove: illegal transition %s -> %s", ks.State, to))
	}
	if ks.State == to {
		return
	}
	e.log("transition", fmt.Sprintf("%s %s->%s", e.redacted(i), ks.State, to))
	ks.State = to
	e.dirty++
	switch to {
	case Copied:
		e.m.KeysCopied++
	case Verified:
		e.m.KeysVerified++
	case Done:
		e.m.KeysSwapped++
	case Failed:
		e.m.KeysFailed++
	}
}

// fail marks key i Failed for reason.
func (e *Executor) fail(i int, reason string) {
	e.ck.Keys[i].Reason = reason
	e.move(i, Failed)
}

// setAbort records the first fatal error; workers stop taking keys.
func (e *Executor) setAbort(err error) {
	if e.abort == nil && err != nil {
		e.abort = err
		e.log("abort", err.Error())
	}
}

// snapshot is the checkpoint to write next.
func (e *Executor) snapshot(now int64) Checkpoint {
	c := e.ck.Clone()
	c.Seq++
	c.UpdatedAt = now
	c.LastProcessedIndex = len(c.Keys)
	for i, ks := range c.Keys {
		if !ks.State.Terminal() {
			c.LastProcessedIndex = i
			break
		}
	}
	return c
}

// persist returns once a checkpoint covering every transition so far is
// durable. Writers are serialised; one write covers every transition made
// before it started.
func (e *Executor) persist(c Conn) error {
	want := e.dirty
	e.ckSem.Acquire(c)
	defer e.ckSem.Release(c)
	if e.durable >= want {
		return nil
	}
	upto := e.dirty
	next := e.snapshot(c.Now())
	rev, err := e.writeCheckpoint(c, next)
	if err != nil {
		e.setAbort(err)
		return err
	}
	e.ck.Seq, e.ck.UpdatedAt, e.ck.LastProcessedIndex = next.Seq, next.UpdatedAt, next.LastProcessedIndex
	e.ckRev, e.durable, e.lastCkpt = rev, upto, c.Now()
	e.m.Checkpoints++
	e.emit(c, false)
	return nil
}

// periodic writes a checkpoint when none landed for CheckpointEvery (the
// Planned and Copying transitions are not checkpointed on their own).
func (e *Executor) periodic(c Conn) error {
	if c.Now()-e.lastCkpt < int64(e.opts.CheckpointEvery) {
		return nil
	}
	e.dirty++
	return e.persist(c)
}

// emit sends a progress event when one is due (or final).
func (e *Executor) emit(c Conn, final bool) {
	if e.hooks.Progress == nil || (!final && c.Now()-e.lastProg < int64(e.opts.ProgressEvery)) {
		return
	}
	e.lastProg = c.Now()
	p := Progress{PlanID: e.plan.ID, At: c.Now(), Total: len(e.ck.Keys), Final: final}
	for _, ks := range e.ck.Keys {
		switch {
		case ks.State == Failed:
			p.Failed++
		case ks.State == Done:
			p.Done++
			p.Verified++
			p.Copied++
		case ks.State >= Verified:
			p.Verified++
			p.Copied++
		case ks.State >= Copied:
			p.Copied++
		}
	}
	e.hooks.Progress(p)
}

// retry runs op until it succeeds or fails for good. Transport errors are
// transient: retried after an exponential backoff on the worker's clock, at
// most MaxRetries times (keymove.retry-unbounded: forever).
func (e *Executor) retry(c Conn, what string, op func() error) error {
	again := 0
	for n := 0; ; {
		err := op()
		if err == errAgain && again < maxAgain {
			again++
			continue
		}
		if err == errAgain {
			err = simkv.ErrUnavailable
		}
		if err == nil || !simkv.IsTransport(err) {
			return err
		}
		again = 0
		n++
		if n > e.opts.MaxRetries && !e.bugs.Has(bugs.KeymoveRetryUnbounded) {
			return &TransientError{Op: what, Err: err}
		}
		e.m.Retries++
		c.Sleep(e.opts.backoff(n))
	}
}

// errAgain asks retry to run the operation again at once: a compare failed
// because something moved, and a fresh read decides what to do. maxAgain
// such rounds in a row count as one transient failure.
var errAgain = errors.New("keymove: read again")

const maxAgain = 8
