package scenarios

import (
	"errors"
	"fmt"
	"time"

	"shardsim/checker/keymovecheck"
	"shardsim/model/keymove"
	"shardsim/simclock"
	"shardsim/simkv"
)

// kmExecutor is the executor process. Its one task runs the plan; when a
// run stops on an error the process starts a new executor after a pause,
// as a supervisor would, and that one resumes from the checkpoint. A crash
// (the nemesis) loses everything in memory; the restarted process resumes
// the same way.
type kmExecutor struct {
	kw    *kmWorld
	first bool
}

// Receive implements simclock.Actor.
func (a *kmExecutor) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	ctx.Go("exec", func(t *simclock.Task) {
		kw := a.kw
		if a.first {
			t.Sleep(kw.opts.startAt)
		}
		for !kw.planDone() {
			cfg := kw.exCfg
			cfg.Hooks = keymove.Hooks{
				Progress: func(keymove.Progress) { kw.progress++ },
				Log:      func(kind, detail string) { t.Context().Log(kind, detail) },
			}
			ex, err := keymove.NewExecutor(kw.plan, cfg)
			if err != nil {
				panic(err) // options were validated when the world was built
			}
			kw.execs = append(kw.execs, ex)
			sum, err := ex.Run(keymove.NewSimRuntime(t, kw.dial(true)))
			if err == nil {
				kw.summary = &sum
				return
			}
			kw.aborts++
			t.Sleep(t.Choices().Duration(50*time.Millisecond, 200*time.Millisecond))
		}
	})
}

// kmClient reads and writes keys (mostly the ones being moved) through a
// Router, which routes by the map it last read. Every operation is
// recorded for the linearizability check.
type kmClient struct {
	kw  *kmWorld
	idx int
	seq int
}

// Receive implements simclock.Actor.
func (c *kmClient) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	ctx.Go(ctx.Name(), func(t *simclock.Task) {
		meta, shard := c.kw.dial(false)(t)
		r := &keymove.Router{Meta: meta, Shard: shard, Keys: c.kw.ks}
		for r.Refresh() != nil {
			t.Sleep(20 * time.Millisecond)
		}
		for !c.stop(t) {
			ch := t.Choices()
			if ch.Chance(c.kw.opts.refresh) {
				_ = r.Refresh()
			}
			c.op(t, r)
			p := c.kw.opts.pace
			t.Sleep(ch.Duration(p/2, p+p/2))
		}
	})
}

// stop: clients go on until the plan has ended after the heal, or the
// run's time is nearly up.
func (c *kmClient) stop(t *simclock.Task) bool {
	now := t.Now()
	return (now >= c.kw.healAt.Add(200*time.Millisecond) && c.kw.planDone()) || now >= c.kw.end.Add(-time.Second)
}

// op performs and records one read or write.
func (c *kmClient) op(t *simclock.Task, r *keymove.Router) {
	kw, ch := c.kw, t.Choices()
	key := c.pickKey(ch)
	op := keymovecheck.Op{Client: c.idx, Key: key, Call: t.Now(), Write: ch.Chance(kw.opts.writes)}
	i := len(kw.ops)
	if op.Write {
		c.seq++
		op.Value = fmt.Sprintf("c%d.%d", c.idx, c.seq)
		op.Ambiguous = true // until it returns
	}
	kw.ops = append(kw.ops, op)
	kw.returns = append(kw.returns, false)
	var out keymove.Outcome
	var err error
	if op.Write {
		out, err = r.Write(key, []byte(op.Value))
	} else {
		out, err = r.Read(key)
	}
	kw.ops[i].Return = t.Now()
	kw.returns[i] = true
	kw.classify(i, out, err)
}

// classify records what the client learned.
func (kw *kmWorld) classify(i int, out keymove.Outcome, err error) {
	op := &kw.ops[i]
	switch {
	case err == nil && op.Write:
		op.Ambiguous = false
		kw.counts["writes_acked"]++
	case err == nil:
		op.Found, op.Value = out.Found, string(out.Value)
		kw.counts["reads"]++
	case op.Write && simkv.IsIndeterminate(err):
		kw.counts["writes_ambiguous"]++
	case op.Write:
		op.Ambiguous = true // not applied: the oracle never sees it, so it is dropped
		kw.counts["writes_failed"]++
		if errors.Is(err, keymove.ErrMoved) {
			kw.counts["writes_moved"]++
		}
	default:
		kw.returns[i] = false // a failed read says nothing
		kw.counts["reads_failed"]++
	}
}

// pickKey draws a key: a hot one (among the moving keys) at the hot share.
func (c *kmClient) pickKey(ch *simclock.Choices) string {
	kw := c.kw
	if len(kw.plan.Moves) > 0 && ch.Chance(kw.opts.hot) {
		return kw.plan.Moves[ch.Intn(min(3, len(kw.plan.Moves)))].Key
	}
	return simclock.Pick(ch, kw.keys)
}

// history returns the client operations for the check: writes still in
// flight are ambiguous, reads that never returned are dropped.
func (kw *kmWorld) history() []keymovecheck.Op {
	var out []keymovecheck.Op
	for i, op := range kw.ops {
		if !kw.returns[i] && !op.Write {
			continue
		}
		out = append(out, op)
	}
	return out
}

// tornKV is a fault of the data path under the executor: a copy written to
// a shard arrives torn (truncated) at the drawn rate, and always for a
// poisoned key (a value the target cannot store whole). Verification must
// catch it; ForceSwapOnVerificationFailure may swap it anyway.
type tornKV struct {
	simkv.KV
	kw    *kmWorld
	shard keymove.ShardID
}

// Txn implements simkv.KV.
func (k *tornKV) Txn(r simkv.TxnRequest) (*simkv.TxnResponse, error) {
	if len(r.Success) == 2 && r.Success[0].Put != nil && r.Success[1].Put != nil && string(r.Success[1].Put.Value) == keymove.CtlOpen {
		key := string(r.Success[0].Put.Key[len(keymove.DataPrefix):])
		if k.kw.poisoned[key] || k.kw.torn.Chance(k.kw.opts.torn) {
			put := *r.Success[0].Put
			put.Value = put.Value[:len(put.Value)/2]
			r.Success = append([]simkv.RequestOp{{Put: &put}}, r.Success[1:]...)
			k.kw.tornN++
		}
	}
	return k.KV.Txn(r)
}
