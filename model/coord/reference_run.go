package coord

import (
	"maps"
	"slices"
)

func sortedRunIDs(runs map[RunID]*runState) []RunID {
	return slices.Sorted(maps.Keys(runs))
}

// CreateRun implements RunManagement.
func (r *Reference) CreateRun(now LogicalTime, tenant TenantID, run RunID, cfg RunConfig) ([]Event, error) {
	if _, exists := r.run(tenant, run); exists {
		return nil, RunExists()
	}
	ch, err := NewRun(r.env(now, tenant), run, cfg, r.cfg.DefaultLeaseDuration)
	if err != nil {
		return nil, err
	}
	r.checkRun(nil, &ch.Next)
	r.tenant(tenant).runs[run] = &runState{rec: ch.Next, shards: map[ShardID]*ShardRecord{}}
	return ch.Events, nil
}

// RegisterShards implements RunManagement.
func (r *Reference) RegisterShards(now LogicalTime, tenant TenantID, run RunID, shards []InitialShard, op OpID) (Outcome, []Event, error) {
	rs, ok := r.run(tenant, run)
	if !ok {
		return 0, nil, RunNotFound(OpRegisterShards)
	}
	ch, err := StepRegisterShards(r.env(now, tenant), &rs.rec, shards, r.cfg.manifestLimit(), op)
	if err != nil {
		return 0, nil, err
	}
	if ch.Outcome == Replayed {
		return Replayed, nil, nil
	}
	if err := r.admit(OpRegisterShards, tenant, rs, ch.Created); err != nil {
		return 0, nil, err
	}
	r.checkRun(&rs.rec, &ch.Next)
	for i := range ch.Created {
		r.checkShard(nil, &ch.Created[i])
	}
	rs.rec = ch.Next
	r.insert(tenant, rs, ch.Created)
	return Executed, ch.Events, nil
}

// GetRun implements RunManagement.
func (r *Reference) GetRun(tenant TenantID, run RunID) (RunRecord, error) {
	rs, ok := r.run(tenant, run)
	if !ok {
		return RunRecord{}, RunNotFound(OpGetRun)
	}
	return rs.rec.Clone(), nil
}

// GetRunProgress implements RunManagement.
func (r *Reference) GetRunProgress(now LogicalTime, tenant TenantID, run RunID) (RunProgress, error) {
	rs, ok := r.run(tenant, run)
	if !ok {
		return RunProgress{}, RunNotFound(OpRunProgress)
	}
	p := RunProgress{Status: rs.rec.Status, RootCount: len(rs.rec.RootShards)}
	recs := make([]*ShardRecord, 0, len(rs.order))
	for _, id := range rs.order {
		p.Tally(rs.shards[id], now)
		recs = append(recs, rs.shards[id])
	}
	p.Terminal = evaluateRunTerminal(p)
	p.Watermark = progressWatermark(rs.rec.RootShards, recs)
	return p, nil
}

// ListShards implements RunManagement.
func (r *Reference) ListShards(now LogicalTime, tenant TenantID, run RunID, filter ShardFilter) ([]ShardSummary, error) {
	rs, ok := r.run(tenant, run)
	if !ok {
		return nil, RunNotFound(OpListShards)
	}
	var out []ShardSummary
	for _, id := range rs.order {
		if rec := rs.shards[id]; filter.Matches(rec, now) {
			out = append(out, rec.Summary())
		}
	}
	return out, nil
}

// CompleteRun implements RunManagement.
func (r *Reference) CompleteRun(now LogicalTime, tenant TenantID, run RunID, op OpID) (Outcome, []Event, error) {
	return r.runTransition(now, tenant, run, OpCompleteRun, OpKindCompleteRun, op)
}

// FailRun implements RunManagement.
func (r *Reference) FailRun(now LogicalTime, tenant TenantID, run RunID, op OpID) (Outcome, []Event, error) {
	return r.runTransition(now, tenant, run, OpFailRun, OpKindFailRun, op)
}

// CancelRun implements RunManagement.
func (r *Reference) CancelRun(now LogicalTime, tenant TenantID, run RunID, op OpID) (Outcome, []Event, error) {
	return r.runTransition(now, tenant, run, OpCancelRun, OpKindCancelRun, op)
}

func (r *Reference) runTransition(now LogicalTime, tenant TenantID, run RunID, o Operation, kind OpKind, op OpID) (Outcome, []Event, error) {
	rs, ok := r.run(tenant, run)
	if !ok {
		return 0, nil, RunNotFound(o)
	}
	ch, err := StepRunTransition(r.env(now, tenant), &rs.rec, kind, op)
	if err != nil {
		return 0, nil, err
	}
	if ch.Outcome == Replayed {
		return Replayed, nil, nil
	}
	r.checkRun(&rs.rec, &ch.Next)
	rs.rec = ch.Next
	return Executed, ch.Events, nil
}

// createRunWithShards is the convenience of create_run followed by
// register_shards, over any Coordinator. It is safe to retry with the same
// arguments: an existing run with the same configuration is taken as this
// call's own earlier create, and register_shards replays by op id.
func createRunWithShards(c Coordinator, now LogicalTime, tenant TenantID, run RunID, cfg RunConfig, shards []InitialShard, op OpID) (Outcome, []Event, error) {
	events, err := c.CreateRun(now, tenant, run, cfg)
	if CodeOf(err) == CodeRunExists {
		existing, gerr := c.GetRun(tenant, run)
		if gerr != nil {
			return 0, nil, gerr
		}
		if !sameRequestedConfig(existing.Config, cfg) {
			return 0, nil, err
		}
	} else if err != nil {
		return 0, nil, err
	}
	out, more, err := c.RegisterShards(now, tenant, run, shards, op)
	if err != nil {
		return 0, nil, err
	}
	return out, append(events, more...), nil
}

// sameRequestedConfig compares a stored configuration with a requested
// one; a zero requested lease duration matches whatever default was
// applied.
func sameRequestedConfig(stored, requested RunConfig) bool {
	if requested.LeaseDuration == 0 {
		requested.LeaseDuration = stored.LeaseDuration
	}
	return stored == requested
}
