package tlatrace

import (
	"shardsim/checker/coordcheck"
	"shardsim/model/coord"
)

// events renders every recorded step as trace events: a "tick" when true
// time moved, then the step's action with its parameters and the records
// it changed (sh: shards, ru: runs, cl: claim records), all mapped at the
// step's true time. An acquire is its read and its commit.
func (c *Coord) events(n *names) []value {
	var out []value
	var lastNow int64
	for _, st := range c.steps {
		if st.now > lastNow {
			if lastNow > 0 || len(out) > 0 {
				out = append(out, record(field{"act", str("tick")}, field{"n", num(st.now - lastNow)}))
			} else {
				out = append(out, record(field{"act", str("tick")}, field{"n", num(st.now)}))
			}
			lastNow = st.now
		}
		none := []field{{"sh", "<<>>"}, {"ru", "<<>>"}, {"cl", "<<>>"}}
		acts := c.actions(n, st)
		if ch := c.changes(n, st); equalFields(ch, none) {
			// The write changed nothing the specification keeps (an owner
			// binding, or a claim's retry re-writing what it had written).
			acts = [][]field{{{"act", str("stutter")}}}
		}
		for i, params := range acts {
			if i+1 == len(acts) { // only the last event of a step changes records
				none = c.changes(n, st)
			}
			out = append(out, record(append(params, none...)...))
		}
	}
	return out
}

// changes lists the records the step changed, mapped at its true time.
func (c *Coord) changes(n *names, st coordStep) []field {
	sh, ru, cl := map[value]value{}, map[value]value{}, map[value]value{}
	before := map[value]value{}
	for i := range st.prev.Shards {
		r := &st.prev.Shards[i]
		before[n.ids[refOf(r)]] = n.shardValue(r, st.now)
	}
	for i := range st.next.Shards {
		r := &st.next.Shards[i]
		id := n.ids[refOf(r)]
		if v := n.shardValue(r, st.now); before[id] != v {
			sh[id] = v
		}
	}
	runsBefore := map[value]value{}
	for i := range st.prev.Runs {
		runsBefore[str(runName(st.prev.Runs[i].Run))] = n.runValue(&st.prev.Runs[i])
	}
	for i := range st.next.Runs {
		r := &st.next.Runs[i]
		if v := n.runValue(r); v != runsBefore[str(runName(r.Run))] && !(r.Status == coord.RunInitializing && r.OpLog.Len() == 0) {
			ru[str(runName(r.Run))] = v
		}
	}
	claimsOf := func(s *coord.Snapshot) map[value]value {
		m := map[value]value{}
		for _, tc := range s.Claims {
			k := tuple(str(n.tenants[tc.Tenant]), str(n.workers[tc.Claim.Worker]))
			m[k] = n.claimValue(tc.Claim.LastClaimAt, true, st.now, int64(c.cooldown))
		}
		return m
	}
	cb, ca := claimsOf(st.prev), claimsOf(st.next)
	for k, v := range ca {
		if cb[k] != v && !(cb[k] == "" && v == n.claimValue(0, false, 0, 0)) {
			cl[k] = v
		}
	}
	return []field{{"sh", fn(sh)}, {"ru", fn(ru)}, {"cl", fn(cl)}}
}

// granted returns the shard whose lease the step changed, with its new
// record: the shard an acquire or a claim really took (a claim whose
// answer was lost may have taken another than the one its retry reports).
func granted(st coordStep) (*coord.ShardRecord, bool) {
	before := map[shardRef]*coord.ShardRecord{}
	for i := range st.prev.Shards {
		before[refOf(&st.prev.Shards[i])] = &st.prev.Shards[i]
	}
	for i := range st.next.Shards {
		r := &st.next.Shards[i]
		if p, ok := before[refOf(r)]; ok && r.Lease.Set && (p.Fence != r.Fence || p.Lease != r.Lease) {
			return r, true
		}
	}
	return nil, false
}

// delivered reports whether the worker learned the lease the step granted:
// its answer arrived and names that shard and fence.
func delivered(op *coordcheck.Request, st coordStep) bool {
	r, ok := granted(st)
	l := op.Out.Lease
	return ok && op.Out.Done && !op.Out.Ambiguous && op.Out.Code == 0 &&
		l.Run == r.Run && l.Shard == r.Shard && l.Fence == r.Fence
}

// actions returns the parameters of the step's action(s).
func (c *Coord) actions(n *names, st coordStep) [][]field {
	op := st.op
	if op == nil {
		return [][]field{{{"act", str("stutter")}}}
	}
	d := num(int64(op.Now) - st.now)
	w := str(n.workers[op.Worker])
	switch op.Kind {
	case coordcheck.ReqAcquire:
		s := n.ids[shardRef{op.Tenant, op.Key.Run, op.Key.Shard}]
		return [][]field{
			{{"act", str("acquire_read")}, {"w", w}, {"s", s}, {"d", d}},
			{{"act", str("acquire_commit")}, {"w", w}, {"dl", boolean(delivered(op, st))}},
		}
	case coordcheck.ReqClaim:
		return [][]field{{{"act", str("claim")}, {"w", w}, {"s", claimed(n, st)}, {"dl", boolean(delivered(op, st))}, {"d", d}}}
	case coordcheck.ReqUnpark:
		return [][]field{{{"act", str("unpark")}, {"s", n.ids[shardRef{op.Tenant, op.Key.Run, op.Key.Shard}]}, {"op", opName(op.Op)}}}
	case coordcheck.ReqRegister, coordcheck.ReqCompleteRun, coordcheck.ReqFailRun, coordcheck.ReqCancelRun:
		return [][]field{{{"act", str(op.Kind.String())}, {"r", str(runName(op.Key.Run))}, {"op", opName(op.Op)}}}
	case coordcheck.ReqGCRuns:
		// One collection cancels each stale run in its own transaction.
		if r, e, ok := ranRunOp(st); ok {
			return [][]field{{{"act", str("cancel_run")}, {"r", str(runName(r))}, {"op", opName(e.Op)}}}
		}
		return [][]field{{{"act", str("stutter")}}}
	}
	if !op.Kind.Gated() {
		return [][]field{{{"act", str("stutter")}}}
	}
	l := op.Lease
	fs := []field{{"act", str(op.Kind.String())}, {"s", n.ids[shardRef{l.Tenant, l.Run, l.Shard}]},
		{"owner", str(n.workers[l.Owner])}, {"fence", num(int64(l.Fence))},
		{"caller", str(n.tenants[op.Tenant])}, {"d", d}}
	if op.Kind != coordcheck.ReqRenew {
		fs = append(fs, field{"op", opName(op.Op)}, field{"payload", n.payload(op)})
	}
	if refusedLogged(st, l, op.Op) {
		fs[0] = field{"act", str("refuse")}
		fs = append(fs, field{"kind", str(op.Kind.String())})
	}
	return [][]field{fs}
}

// refusedLogged reports whether the step only logged op's refusal for its
// payload (an OpError entry of op appeared in the shard's op-log).
func refusedLogged(st coordStep, l coord.Lease, op coord.OpID) bool {
	for i := range st.next.Shards {
		r := &st.next.Shards[i]
		if r.Tenant != l.Tenant || r.Run != l.Run || r.Shard != l.Shard {
			continue
		}
		for _, e := range r.OpLog.Entries() {
			if e.Op == op && e.Result == coord.OpError {
				return true
			}
		}
	}
	return false
}

// ranRunOp returns the run whose record the step changed and the op-log
// entry the change added.
func ranRunOp(st coordStep) (coord.RunID, coord.OpLogEntry, bool) {
	before := map[coord.RunID]int{}
	for i := range st.prev.Runs {
		before[st.prev.Runs[i].Run] = st.prev.Runs[i].OpLog.Len()
	}
	for i := range st.next.Runs {
		r := &st.next.Runs[i]
		if es := r.OpLog.Entries(); len(es) > 0 && (r.OpLog.Len() != before[r.Run] || r.Status != statusBefore(st.prev, r.Run)) {
			return r.Run, es[len(es)-1], true
		}
	}
	return 0, coord.OpLogEntry{}, false
}

func statusBefore(s *coord.Snapshot, run coord.RunID) coord.RunStatus {
	for i := range s.Runs {
		if s.Runs[i].Run == run {
			return s.Runs[i].Status
		}
	}
	return coord.RunInitializing
}

// claimed is the shard a claim leased: the one whose lease it changed.
func claimed(n *names, st coordStep) value {
	if r, ok := granted(st); ok {
		return n.ids[refOf(r)]
	}
	return tuple()
}

func equalFields(a, b []field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
