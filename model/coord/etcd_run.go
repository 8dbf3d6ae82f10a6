package coord

import (
	"slices"

	"shardsim/simkv"
)

// runCall describes one run mutation for runOp. step receives the stored
// run, or nil when there is none, and decides (including "not found").
type runCall struct {
	op     Operation
	tenant TenantID
	run    RunID
	step   func(cur *RunRecord) (RunChange, error)
}

// runOp runs a run mutation through the compare-and-swap skeleton.
func (e *Etcd) runOp(c runCall) (RunChange, error) {
	label := c.op.String()
	var out RunChange
	err := e.optimistic(label, func(r *opRun) (*commit, error) {
		rev, kvs, err := e.get(label+".read", e.keys.run(c.tenant, c.run))
		if err != nil {
			return nil, err
		}
		var cur *RunRecord
		if kvs[0] != nil {
			rec, err := e.decodeRun(label+".read", c.tenant, c.run, kvs[0].Value)
			if err != nil {
				return nil, err
			}
			cur = &rec
		}
		ch, err := c.step(cur)
		out = ch
		if err != nil || ch.Outcome == Replayed {
			return nil, err
		}
		return e.planRun(r.label, c.op, c.tenant, cur, kvs[0], rev, &ch)
	})
	return out, surface(c.op, err)
}

// planRun builds the commit of an executed run change: the run record
// (compared, or required absent for a new run), the active-run index entry
// that follows the run's status, and any root shards.
func (e *Etcd) planRun(label string, op Operation, tenant TenantID, old *RunRecord, kv *simkv.KeyValue, rev int64, ch *RunChange) (*commit, error) {
	if n := len(ch.Created); n > e.cfg.MaxRootsPerRegister() {
		// Validate keeps the manifest limit inside one transaction.
		return nil, corrupt(label, "a manifest of %d shards passed the limit but does not fit one transaction", n)
	}
	c := e.newCommit()
	if err := e.admit(op, label, tenant, ch.Created, c, basis{e.keys.run(tenant, ch.Next.Run), kv}); err != nil {
		return nil, err
	}
	e.checkRun(old, &ch.Next)
	for i := range ch.Created {
		e.checkShard(nil, &ch.Created[i])
	}
	c.putWitness(e.keys.run(tenant, ch.Next.Run), c.runRecord(&ch.Next), kv, rev, true)
	wasActive, isActive := old != nil && old.Status == RunActive, ch.Next.Status == RunActive
	switch index := e.keys.active(tenant, ch.Next.Run); {
	case isActive && !wasActive:
		c.put(index, EncodeActiveRunEntry(&ActiveRunEntry{Run: ch.Next.Run}), 0)
	case wasActive && !isActive:
		c.del(index)
	}
	e.putCreated(c, tenant, ch.Created, rev)
	return c, nil
}

// CreateRun implements RunManagement.
func (e *Etcd) CreateRun(now LogicalTime, tenant TenantID, run RunID, cfg RunConfig) ([]Event, error) {
	ch, err := e.runOp(runCall{op: OpCreateRun, tenant: tenant, run: run, step: func(cur *RunRecord) (RunChange, error) {
		if cur != nil {
			return RunChange{}, RunExists()
		}
		return NewRun(e.env(now, tenant), run, cfg, e.cfg.DefaultLeaseDuration)
	}})
	return ch.Events, err
}

// RegisterShards implements RunManagement. The manifest limit
// (Config.MaxManifestShards) is the reference's; Validate ensures a
// manifest within it fits one transaction.
func (e *Etcd) RegisterShards(now LogicalTime, tenant TenantID, run RunID, shards []InitialShard, op OpID) (Outcome, []Event, error) {
	ch, err := e.runOp(runCall{op: OpRegisterShards, tenant: tenant, run: run, step: func(cur *RunRecord) (RunChange, error) {
		if cur == nil {
			return RunChange{}, RunNotFound(OpRegisterShards)
		}
		return StepRegisterShards(e.env(now, tenant), cur, shards, e.cfg.manifestLimit(), op)
	}})
	if err != nil {
		return 0, nil, err
	}
	return ch.Outcome, ch.Events, nil
}

// CompleteRun implements RunManagement.
func (e *Etcd) CompleteRun(now LogicalTime, tenant TenantID, run RunID, op OpID) (Outcome, []Event, error) {
	return e.runTransition(now, tenant, run, OpCompleteRun, OpKindCompleteRun, op)
}

// FailRun implements RunManagement.
func (e *Etcd) FailRun(now LogicalTime, tenant TenantID, run RunID, op OpID) (Outcome, []Event, error) {
	return e.runTransition(now, tenant, run, OpFailRun, OpKindFailRun, op)
}

// CancelRun implements RunManagement.
func (e *Etcd) CancelRun(now LogicalTime, tenant TenantID, run RunID, op OpID) (Outcome, []Event, error) {
	return e.runTransition(now, tenant, run, OpCancelRun, OpKindCancelRun, op)
}

func (e *Etcd) runTransition(now LogicalTime, tenant TenantID, run RunID, o Operation, kind OpKind, op OpID) (Outcome, []Event, error) {
	ch, err := e.runOp(runCall{op: o, tenant: tenant, run: run, step: func(cur *RunRecord) (RunChange, error) {
		if cur == nil {
			return RunChange{}, RunNotFound(o)
		}
		return StepRunTransition(e.env(now, tenant), cur, kind, op)
	}})
	if err != nil {
		return 0, nil, err
	}
	return ch.Outcome, ch.Events, nil
}

// GetRun implements RunManagement.
func (e *Etcd) GetRun(tenant TenantID, run RunID) (RunRecord, error) {
	_, rec, err := e.loadRun(OpGetRun, tenant, run)
	return rec, surface(OpGetRun, err)
}

// loadRun reads a run; a missing run is op's RunNotFound.
func (e *Etcd) loadRun(op Operation, tenant TenantID, run RunID) (int64, RunRecord, error) {
	label := op.String() + ".read"
	rev, kvs, err := e.get(label, e.keys.run(tenant, run))
	if err != nil {
		return 0, RunRecord{}, err
	}
	if kvs[0] == nil {
		return 0, RunRecord{}, RunNotFound(op)
	}
	rec, err := e.decodeRun(label, tenant, run, kvs[0].Value)
	return rev, rec, err
}

// runShards reads a run and all its shard records at one revision, in
// shard id order. The records are decoded into the Etcd's own storage
// (e.shards), valid until the next runShards: callers copy what they keep.
func (e *Etcd) runShards(op Operation, tenant TenantID, run RunID) (RunRecord, []ShardRecord, error) {
	rev, rec, err := e.loadRun(op, tenant, run)
	if err != nil {
		return RunRecord{}, nil, err
	}
	label := op.String() + ".scan"
	_, kvs, err := e.scan(label, e.keys.runShards(tenant, run), rev)
	if err != nil {
		return RunRecord{}, nil, err
	}
	shards := slices.Grow(e.shards[:0], len(kvs))[:len(kvs)]
	e.shards = shards
	for i := range kvs {
		k, err := ParseEtcdKey(e.cfg.Namespace, kvs[i].Key)
		if err != nil || k.Kind != KeyShard {
			return RunRecord{}, nil, corrupt(label, "unexpected key %q among shard records", kvs[i].Key)
		}
		if shards[i], err = e.decodeShard(label, tenant, ShardKey{Run: k.Run, Shard: k.Shard}, kvs[i].Value); err != nil {
			return RunRecord{}, nil, err
		}
	}
	return rec, shards, nil
}

// GetRunProgress implements RunManagement.
func (e *Etcd) GetRunProgress(now LogicalTime, tenant TenantID, run RunID) (RunProgress, error) {
	rec, shards, err := e.runShards(OpRunProgress, tenant, run)
	if err != nil {
		return RunProgress{}, surface(OpRunProgress, err)
	}
	p := RunProgress{Status: rec.Status, RootCount: len(rec.RootShards)}
	recs := make([]*ShardRecord, len(shards))
	for i := range shards {
		p.Tally(&shards[i], now)
		recs[i] = &shards[i]
	}
	p.Terminal = evaluateRunTerminal(p)
	p.Watermark = progressWatermark(rec.RootShards, recs)
	return p, nil
}

// ListShards implements RunManagement.
func (e *Etcd) ListShards(now LogicalTime, tenant TenantID, run RunID, filter ShardFilter) ([]ShardSummary, error) {
	_, shards, err := e.runShards(OpListShards, tenant, run)
	if err != nil {
		return nil, surface(OpListShards, err)
	}
	var out []ShardSummary
	for i := range shards {
		if filter.Matches(&shards[i], now) {
			out = append(out, shards[i].Summary())
		}
	}
	return out, nil
}
