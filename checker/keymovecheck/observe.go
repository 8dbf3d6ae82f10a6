package keymovecheck

import (
	"fmt"
	"shardsim/property"

	"shardsim/model/keymove"
	"shardsim/simclock"
	"shardsim/simkv"
)

// callers maps a server's call ids to the actor that sent them.
type callers map[uint64]string

// MetaObserver returns the observer to attach to the metadata store.
func (d *Durable) MetaObserver() simkv.Observer { return &metaObs{d: d, calls: callers{}} }

// ShardObserver returns the observer to attach to shard s's store.
func (d *Durable) ShardObserver(s keymove.ShardID) simkv.Observer {
	return &shardObs{d: d, shard: s, calls: callers{}}
}

type metaObs struct {
	d     *Durable
	calls callers
}

func (o *metaObs) OnInvoke(call uint64, client string, _ simclock.Time, _ simkv.Request) {
	o.calls[call] = client
}
func (o *metaObs) OnReturn(uint64, simclock.Time, simkv.Response, error) {}

// OnApply re-reads the map entries and the checkpoint a change touched.
func (o *metaObs) OnApply(_ uint64, at simclock.Time, req simkv.Request, _ simkv.Response, err error, before, after int64) {
	if err != nil || before == after {
		return
	}
	d := o.d
	ckKey := string(d.cfg.Keys.CheckpointKey(d.cfg.Plan.ID))
	for _, k := range metaTouched(req) {
		if k == ckKey {
			d.onCheckpoint()
			continue
		}
		if user, ok := d.cfg.Keys.MapEntryKey([]byte(k)); ok {
			d.onMapEntry(user, at)
		}
	}
}

// metaTouched lists the etcd keys a request may have written.
func metaTouched(r simkv.Request) []string {
	var out []string
	var walk func(ops []simkv.RequestOp)
	walk = func(ops []simkv.RequestOp) {
		for _, op := range ops {
			switch {
			case op.Put != nil:
				out = append(out, string(op.Put.Key))
			case op.Txn != nil:
				walk(op.Txn.Success)
				walk(op.Txn.Failure)
			}
		}
	}
	switch {
	case r.Put != nil:
		out = append(out, string(r.Put.Key))
	case r.Txn != nil:
		walk(r.Txn.Success)
		walk(r.Txn.Failure)
	}
	return out
}

type shardObs struct {
	d     *Durable
	shard keymove.ShardID
	calls callers
}

func (o *shardObs) OnInvoke(call uint64, client string, _ simclock.Time, _ simkv.Request) {
	o.calls[call] = client
}
func (o *shardObs) OnReturn(uint64, simclock.Time, simkv.Response, error) {}

// OnApply records client writes in the oracle and re-judges the keys the
// request touched.
func (o *shardObs) OnApply(call uint64, at simclock.Time, req simkv.Request, resp simkv.Response, err error, before, after int64) {
	if err != nil || before == after {
		return
	}
	d := o.d
	if d.cfg.IsClient != nil && d.cfg.IsClient(o.calls[call]) {
		if k, v, ok := clientPut(req, resp); ok {
			d.writes[k] = append(d.writes[k], Applied{Value: v, At: at, Shard: o.shard})
		}
	}
	for _, k := range touched(req) {
		d.report(d.checkServing(k))
	}
}

// onMapEntry handles a change of key's map entry: KM.SingleSwap, then
// KM.NoDualMapping, then KM.VerifiedBeforeSwap.
func (d *Durable) onMapEntry(key string, at simclock.Time) {
	resp, _ := d.cfg.Meta.Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: d.cfg.Keys.MapKey(key)}})
	var now keymove.ShardID
	if len(resp.Range.Kvs) == 1 {
		now = keymove.ShardID(resp.Range.Kvs[0].Value)
	}
	old := d.owner[key]
	if now == old {
		return
	}
	d.MapChanges++
	d.owner[key] = now
	d.changes[key]++
	if !contains(d.mapped[key], now) {
		d.mapped[key] = append(d.mapped[key], now)
	}
	d.report(d.checkSwap(key, old, now, at))
	d.report(d.checkServing(key))
	if i := d.cfg.Plan.Index(key); i >= 0 {
		d.report(d.checkVerified(i, at))
	}
}

// checkSwap is KM.SingleSwap for one change of key's assignment.
func (d *Durable) checkSwap(key string, old, now keymove.ShardID, at simclock.Time) *property.Violation {
	i := d.cfg.Plan.Index(key)
	if i < 0 {
		return violation(property.KMSingleSwap, key, "at %v key %q, not in the plan, was reassigned %s -> %s", at, key, old, now)
	}
	mv := d.cfg.Plan.Moves[i]
	if d.changes[key] > 1 {
		return violation(property.KMSingleSwap, key, "at %v key %q changed assignment a %s time (%s -> %s; plan %s -> %s)", at, key, ordinal(d.changes[key]), old, now, mv.Source, mv.Target)
	}
	if old != mv.Source || now != mv.Target {
		return violation(property.KMSingleSwap, key, "at %v key %q was reassigned %s -> %s; the plan moves it %s -> %s", at, key, old, now, mv.Source, mv.Target)
	}
	return nil
}

// checkServing is KM.NoDualMapping for key, as a reader would find it: a
// reader follows some map entry the key has had, so every shard it was ever
// mapped to other than its owner must refuse it ("both" otherwise), and the
// owner must hold the key's data if the key has any ("neither" otherwise).
func (d *Durable) checkServing(key string) *property.Violation {
	owner, ok := d.owner[key]
	if !ok {
		return nil
	}
	for _, s := range d.mapped[key] {
		if s == owner {
			continue
		}
		if ctl, ok := d.get(s, keymove.CtlKey(key)); ok && string(ctl.Value) == keymove.CtlOpen {
			return violation(property.KMNoDualMapping, key, "key %q is mapped to %s but %s, which it was mapped to before, still serves it: readers by the old and the new map see both", key, owner, s)
		}
	}
	if v, has := d.Latest(key); has {
		if _, found := d.get(owner, keymove.DataKey(key)); !found {
			return violation(property.KMNoDualMapping, key, "key %q (value %q) is mapped to %s, which does not hold it: readers find neither", key, v, owner)
		}
	}
	return nil
}

// onCheckpoint decodes a checkpoint that landed and tracks, per key,
// whether a verification was recorded since its last copy.
func (d *Durable) onCheckpoint() {
	resp, _ := d.cfg.Meta.Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: d.cfg.Keys.CheckpointKey(d.cfg.Plan.ID)}})
	if len(resp.Range.Kvs) != 1 {
		return
	}
	raw := resp.Range.Kvs[0].Value
	ck, err := keymove.DecodeCheckpoint(raw, d.cfg.Plan.ID, len(d.cfg.Plan.Moves))
	if err != nil {
		d.report(violation(property.KMCompletes, "", "the checkpoint does not decode: %v", err))
		return
	}
	d.Checkpoints++
	d.ck = &ck
	d.ckpts = append(d.ckpts, append([]byte(nil), raw...))
	for i, ks := range ck.Keys {
		switch ks.State {
		case keymove.Planned, keymove.Copying, keymove.Copied:
			d.sawVer[i], d.okSwap[i] = false, false
		case keymove.Verifying:
			d.sawVer[i], d.okSwap[i] = true, false
		case keymove.Verified, keymove.Swapping:
			d.okSwap[i] = d.okSwap[i] || d.sawVer[i]
		}
	}
}

// checkVerified is KM.VerifiedBeforeSwap at the swap of plan item i: the
// checkpoint durable before it records a verification of the current copy
// (or a forced one), and the target holds exactly the source's value at the
// revision that copy was taken from. (Whether the source moved on since is
// KM.NoLoss's business.)
func (d *Durable) checkVerified(i int, at simclock.Time) *property.Violation {
	mv := d.cfg.Plan.Moves[i]
	forced := d.cfg.Force && d.ck != nil && d.ck.Keys[i].Forced
	if !d.okSwap[i] && !forced {
		state := "no checkpoint"
		if d.ck != nil {
			state = d.ck.Keys[i].State.String()
		}
		return violation(property.KMVerifiedBeforeSwap, mv.Key, "at %v key %q was swapped to %s with no verification of its copy recorded (durable state %s)", at, mv.Key, mv.Target, state)
	}
	if forced {
		return nil
	}
	rev := d.ck.Keys[i].CopiedRev
	src, sok := d.getAt(mv.Source, keymove.DataKey(mv.Key), rev)
	dst, dok := d.get(mv.Target, keymove.DataKey(mv.Key))
	if !sok || !dok || string(src.Value) != string(dst.Value) {
		return violation(property.KMVerifiedBeforeSwap, mv.Key, "at %v key %q was swapped to %s holding %q (found=%v), but the copy recorded as verified, source %s at revision %d, is %q (found=%v)", at, mv.Key, mv.Target, dst.Value, dok, mv.Source, rev, src.Value, sok)
	}
	return nil
}

func contains(xs []keymove.ShardID, x keymove.ShardID) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func ordinal(n int) string {
	switch n {
	case 2:
		return "second"
	case 3:
		return "third"
	}
	return fmt.Sprintf("%dth", n)
}
