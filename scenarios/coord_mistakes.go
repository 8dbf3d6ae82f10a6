package scenarios

import (
	"shardsim/checker/coordcheck"
	"shardsim/model/coord"
	"shardsim/simclock"
)

// Client mistakes. Real workers hold wrong beliefs: a connector reports a
// cursor from an older batch, or one past the shard's end because it still
// believes the range it had before a split; a split plan is off by one
// key; an op id is reused for a new payload by a retry path that rebuilt
// the request; a worker serving several tenants presents one tenant's
// lease under another's scope. A correct coordinator refuses all of them
// (and the world carries on); the injected bugs are exactly the missing
// refusals, and the checkers must notice what they let through.

// mistake draws whether the next action is a mistake.
func (env *coordEnv) mistake(c *simclock.Choices) bool { return c.Chance(env.opts.mistakes) }

// blunder sends a corrupted version of op once, without retrying, and
// publishes the effect if the coordinator accepts it. The slot's beliefs
// stay as they were. It reports whether the slot is done with the shard.
func (s *coordSlot) blunder(op coordcheck.Request) bool {
	env, c := s.w.env, s.choices()
	next, end := nextKey(s.spec, s.cur), keyNum(s.spec.End)
	var kinds []string
	switch op.Kind {
	case coordcheck.ReqCheckpoint:
		kinds = append(kinds, "out-of-bounds")
		if s.cur.HasKey() && keyNum(s.cur.LastKey) > keyNum(s.spec.Start) {
			kinds = append(kinds, "regression")
		}
	case coordcheck.ReqSplitReplace, coordcheck.ReqSplitResidual:
		kinds = append(kinds, "gap")
	}
	if s.lastOp != 0 && op.Kind == coordcheck.ReqCheckpoint {
		kinds = append(kinds, "reuse-op")
	}
	if len(env.topo.tenants) > 1 {
		kinds = append(kinds, "cross-tenant")
	}
	if len(kinds) == 0 {
		return s.perform(op)
	}
	kind := simclock.Pick(c, kinds)
	switch kind {
	case "out-of-bounds":
		op.Cursor = coord.Cursor{LastKey: keyOf(end + c.Intn(3))}
	case "regression":
		op.Cursor = coord.Cursor{LastKey: keyOf(max(keyNum(s.spec.Start), keyNum(s.cur.LastKey)-1-c.Intn(2)))}
	case "gap":
		if op.Kind == coordcheck.ReqSplitReplace {
			mid := keyNum(op.Replace.Children[1].Start)
			if mid+1 >= end {
				return s.perform(op)
			}
			op.Replace.Children[1].Start = keyOf(mid + 1)
		} else {
			mid := keyNum(op.Residual.Residual.Start)
			if mid+1 >= end || mid <= next {
				return s.perform(op)
			}
			op.Residual.Residual.Start = keyOf(mid + 1)
		}
	case "reuse-op":
		op.Op = s.lastOp
		op.Cursor = coord.Cursor{LastKey: keyOf(min(next, end-1))}
	case "cross-tenant":
		for _, t := range env.topo.tenants {
			if t != s.lease.Tenant {
				op.Tenant = t
				break
			}
		}
	}
	env.w.Count("mistake_"+kind, 1)
	o := s.c.gated(op)
	if !o.Out.Ambiguous && o.Out.Code == 0 {
		env.w.Count("mistakes_accepted", 1)
		s.publish(o, o)
	}
	return false
}
