package scenarios

import (
	"shardsim/checker/coordcheck"
	"shardsim/model/coord"
	"shardsim/simclock"
)

// Client mistakes. Real workers hold wrong beliefs: a connector reports a
// cursor from an older batch, one past the shard's end because it still
// believes the range it had before a split, or none at all; a split plan
// is off by one key, overlaps itself, reaches outside the range, keeps one
// child, or shrinks the shard below its own cursor; an op id is reused for
// a new payload by a retry path that rebuilt the request; a worker serving
// several tenants presents one tenant's lease under another's scope, or a
// lease of another worker, or of a shard that does not exist. A correct
// coordinator refuses all of them (and the world carries on); the injected
// bugs are exactly the missing refusals, and the checkers must notice what
// they let through. Each kind is a menu entry only where it applies, and
// reaching every refusal the seed defines is what the reachability table
// (coord_reach.go) checks.

// mistake draws whether the next action is a mistake.
func (env *coordEnv) mistake(c *simclock.Choices) bool { return c.Chance(env.opts.mistakes) }

// otherTenant returns a tenant other than t (t itself when there is one).
func (env *coordEnv) otherTenant(t coord.TenantID) coord.TenantID {
	for _, o := range env.topo.tenants {
		if o != t {
			return o
		}
	}
	return t
}

// blunderKinds lists the mistakes that apply to op on the slot's shard.
func (s *coordSlot) blunderKinds(op coordcheck.Request) []string {
	var kinds []string
	switch op.Kind {
	case coordcheck.ReqCheckpoint:
		kinds = append(kinds, "out-of-bounds", "missing-key")
		if s.cur.HasKey() && keyNum(s.cur.LastKey) > keyNum(s.spec.Start) {
			kinds = append(kinds, "regression")
		}
	case coordcheck.ReqComplete:
		kinds = append(kinds, "out-of-bounds")
		if s.cur.HasKey() {
			kinds = append(kinds, "reset")
			if keyNum(s.cur.LastKey) > keyNum(s.spec.Start) {
				kinds = append(kinds, "regression")
			}
		}
	case coordcheck.ReqPark:
		kinds = append(kinds, "bad-reason")
	case coordcheck.ReqSplitReplace:
		kinds = append(kinds, "gap", "overlap", "outside", "one-child", "empty-piece")
	case coordcheck.ReqSplitResidual:
		kinds = append(kinds, "gap", "overlap", "outside", "empty-piece", "start-moved")
		if s.cur.HasKey() {
			kinds = append(kinds, "below-cursor")
		}
	}
	if s.lastOp != 0 {
		kinds = append(kinds, "reuse-op")
	}
	if len(s.w.env.topo.tenants) > 1 {
		kinds = append(kinds, "cross-tenant")
	}
	return append(kinds, "foreign-owner", "phantom-shard")
}

// spoil applies mistake kind to op; it reports false when the kind does
// not fit this particular op (then op is sent as it is).
func (s *coordSlot) spoil(kind string, op *coordcheck.Request) bool {
	c := s.choices()
	next, end := nextKey(s.spec, s.cur), keyNum(s.spec.End)
	start := keyNum(s.spec.Start)
	switch kind {
	case "out-of-bounds":
		op.Cursor = coord.Cursor{LastKey: keyOf(end + c.Intn(3))}
	case "regression":
		op.Cursor = coord.Cursor{LastKey: keyOf(max(start, keyNum(s.cur.LastKey)-1-c.Intn(2)))}
	case "missing-key":
		op.Cursor = coord.Cursor{Token: []byte("t")}
	case "reset":
		op.Cursor = coord.Cursor{}
	case "bad-reason":
		op.Reason = coord.ParkReason(5 + c.Intn(3))
	case "reuse-op":
		op.Op = s.lastOp
		if op.Kind == coordcheck.ReqCheckpoint {
			op.Cursor = coord.Cursor{LastKey: keyOf(min(next, end-1))}
		}
	case "cross-tenant":
		op.Tenant = s.w.env.otherTenant(s.lease.Tenant)
	case "foreign-owner":
		op.Lease.Owner += 1000
	case "phantom-shard":
		op.Lease.Shard ^= 0x5a5a
	default:
		return s.spoilSplit(kind, op)
	}
	return true
}

// spoilSplit applies a split plan mistake.
func (s *coordSlot) spoilSplit(kind string, op *coordcheck.Request) bool {
	next, end := nextKey(s.spec, s.cur), keyNum(s.spec.End)
	if op.Kind == coordcheck.ReqSplitReplace {
		ch := op.Replace.Children
		mid := keyNum(ch[1].Start)
		switch kind {
		case "gap":
			if mid+1 >= end {
				return false
			}
			ch[1].Start = keyOf(mid + 1)
		case "overlap":
			ch[1].Start = keyOf(mid - 1)
		case "outside":
			ch[1].End = keyOf(end + 1)
		case "one-child":
			op.Replace.Children = []coord.ShardSpec{{Start: s.spec.Start, End: s.spec.End}}
		case "empty-piece":
			op.Replace.Children = []coord.ShardSpec{ch[0], {Start: ch[1].Start, End: ch[1].Start}, ch[1]}
		}
		return true
	}
	p, r := &op.Residual.Parent, &op.Residual.Residual
	mid := keyNum(r.Start)
	switch kind {
	case "gap":
		if mid+1 >= end || mid <= next {
			return false
		}
		r.Start = keyOf(mid + 1)
	case "overlap":
		if mid-1 <= keyNum(s.spec.Start) {
			return false
		}
		r.Start = keyOf(mid - 1)
	case "outside":
		r.End = keyOf(end + 1)
	case "empty-piece":
		r.End = r.Start
	case "start-moved":
		p.Start = keyOf(keyNum(s.spec.Start) + 1)
	case "below-cursor":
		// Aim below the slot's own cursor: the shrunk parent would no
		// longer hold the progress it recorded.
		at := keyNum(s.cur.LastKey)
		if at <= keyNum(s.spec.Start) {
			return false
		}
		p.End, r.Start = keyOf(at), keyOf(at)
	}
	return true
}

// blunder sends a corrupted version of op once, without retrying, and
// publishes the effect if the coordinator accepts it. A refusal of the
// payload is sometimes retried as it was (the retry must answer the same,
// logged, refusal). The slot's beliefs stay as they were. It reports
// whether the slot is done with the shard.
func (s *coordSlot) blunder(op coordcheck.Request) bool {
	env, c := s.w.env, s.choices()
	orig := op
	// The mistake may be in any kind of request, not only the one the
	// workload was about to send (parks and replacing splits are rare).
	if k := simclock.Pick(c, blunderRequestKinds); k != op.Kind {
		op = coordcheck.Request{Tenant: s.lease.Tenant, Lease: s.lease, Op: op.Op, Kind: k}
		switch k {
		case coordcheck.ReqCheckpoint:
			op.Cursor = coord.Cursor{LastKey: keyOf(min(nextKey(s.spec, s.cur), keyNum(s.spec.End)-1))}
		case coordcheck.ReqComplete:
			op.Cursor = s.cur.Clone()
		case coordcheck.ReqPark:
			op.Reason = coord.ParkOther
		default:
			op.Kind = 0
			if s.planSplitKind(&op, k); op.Kind != k {
				return s.perform(orig)
			}
		}
	}
	kind := simclock.Pick(c, s.blunderKinds(op))
	if !s.spoil(kind, &op) {
		return s.perform(orig)
	}
	env.w.Count("mistake_"+kind, 1)
	o := s.c.gated(op)
	switch {
	case o.Out.Ambiguous:
	case o.Out.Code == 0 && o.Out.Outcome == coord.Replayed:
		env.w.Count("mistakes_replayed", 1) // a "reuse" that repeated the op exactly
	case o.Out.Code == 0:
		env.w.Count("mistakes_accepted", 1)
		s.publish(o, o)
	case loggedRefusal(o.Out.Code) && c.Chance(0.5):
		if again := s.c.gated(op); !again.Out.Ambiguous && again.Out.Code == o.Out.Code {
			env.w.Reach(op.Kind.String() + ".refused_again")
		}
	}
	return false
}

// retryOf is a fresh request with r's operation: same kind, scope, lease,
// op id and payload.
func retryOf(r *coordcheck.Request) coordcheck.Request {
	return coordcheck.Request{Kind: r.Kind, Tenant: r.Tenant, Key: r.Key, Lease: r.Lease, Op: r.Op,
		Cursor: r.Cursor, Reason: r.Reason, Replace: r.Replace, Residual: r.Residual}
}

// planAnySplit fills op with a split of kind at the middle of the shard's
// whole range, progress or not: what a worker that lost track would send.
func (s *coordSlot) planAnySplit(op *coordcheck.Request, kind coordcheck.RequestKind) {
	start, end := keyNum(s.spec.Start), keyNum(s.spec.End)
	if end-start < 2 {
		return
	}
	mid := keyOf(start + (end-start)/2)
	op.Kind = kind
	if kind == coordcheck.ReqSplitReplace {
		op.Replace = coord.SplitReplacePlan{Children: []coord.ShardSpec{{Start: s.spec.Start, End: mid}, {Start: mid, End: s.spec.End}}}
		return
	}
	op.Residual = coord.SplitResidualPlan{Parent: coord.ShardSpec{Start: s.spec.Start, End: mid}, Residual: coord.ShardSpec{Start: mid, End: s.spec.End}}
}

// blunderRequestKinds are the requests a mistake may spoil.
var blunderRequestKinds = []coordcheck.RequestKind{coordcheck.ReqCheckpoint, coordcheck.ReqComplete, coordcheck.ReqPark,
	coordcheck.ReqSplitReplace, coordcheck.ReqSplitResidual}

// loggedRefusal reports whether a refusal is one the op-log remembers.
func loggedRefusal(c coord.Code) bool {
	switch c {
	case coord.CodeCheckpointMissingKey, coord.CodeCursorReset, coord.CodeCursorRegression, coord.CodeCursorOutOfBounds,
		coord.CodeSplitInvalid, coord.CodeInvalidArgument:
		return true
	}
	return false
}

// blunderRenew sends a corrupted renew once (a mistake on the renew path).
func (s *coordSlot) blunderRenew() {
	env, c := s.w.env, s.choices()
	op := coordcheck.Request{Kind: coordcheck.ReqRenew, Tenant: s.lease.Tenant, Lease: s.lease}
	kinds := []string{"foreign-owner", "phantom-shard"}
	if len(env.topo.tenants) > 1 {
		kinds = append(kinds, "cross-tenant")
	}
	kind := simclock.Pick(c, kinds)
	s.spoil(kind, &op)
	env.w.Count("mistake_renew-"+kind, 1)
	s.c.gated(op)
}

// carryOnRate is how often a worker that lost a shard, or just ended it,
// acts once more as if it still held it (carryOn, and the retry of an
// ending operation): more often with a careless workload, sometimes
// without.
func (env *coordEnv) carryOnRate() float64 { return min(1, 0.1+10*env.opts.mistakes) }

// carryOn is the mistake of a worker that did not notice it lost the
// shard: once more it sends work under the old lease, of any kind, or
// retries the last operation the coordinator accepted (which must replay
// even though the lease is gone).
func (s *coordSlot) carryOn() {
	env, c := s.w.env, s.choices()
	if s.landed != nil && c.Chance(0.5) {
		env.w.Count("mistake_retry-after-loss", 1)
		o := s.c.gated(retryOf(s.landed))
		if !o.Out.Ambiguous && o.Out.Code == 0 && o.Out.Outcome == coord.Replayed {
			env.w.Reach(o.Kind.String() + ".replayed.after_loss")
		}
		return
	}
	env.w.Count("mistake_carry-on", 1)
	op := coordcheck.Request{Tenant: s.lease.Tenant, Lease: s.lease, Op: s.w.nextOp()}
	switch c.Intn(6) {
	case 0:
		op.Kind = coordcheck.ReqRenew
	case 1:
		op.Kind, op.Cursor = coordcheck.ReqCheckpoint, coord.Cursor{LastKey: keyOf(nextKey(s.spec, s.cur))}
	case 2:
		op.Kind, op.Cursor = coordcheck.ReqComplete, s.cur.Clone()
	case 3:
		op.Kind, op.Reason = coordcheck.ReqPark, coord.ParkOther
	case 4:
		s.planAnySplit(&op, coordcheck.ReqSplitReplace)
	default:
		s.planAnySplit(&op, coordcheck.ReqSplitResidual)
	}
	if op.Kind != 0 {
		s.c.gated(op)
	}
}
