package linearizability

import (
	"fmt"
	"math"

	"shardsim/model/coord"
	"shardsim/simclock"
)

// CoordOpKind names a coordination request a simulated worker or admin made.
type CoordOpKind uint8

// The coordination requests the history records.
const (
	COpAcquire CoordOpKind = iota
	COpClaim
	COpRenew
	COpCheckpoint
	COpComplete
	COpPark
	COpSplitReplace
	COpSplitResidual
	COpUnpark
	COpCreateRun
	COpRegister
	COpCompleteRun
	COpFailRun
	COpRead // listings and progress reads: they change nothing
	cOpEnd
)

var cOpNames = [cOpEnd]string{"acquire", "claim", "renew", "checkpoint", "complete", "park",
	"split_replace", "split_residual", "unpark", "create_run", "register_shards", "complete_run", "fail_run", "read"}

// String names the kind.
func (k CoordOpKind) String() string {
	if k < cOpEnd {
		return cOpNames[k]
	}
	return "coord-op(?)"
}

// Gated reports whether the request presents a lease.
func (k CoordOpKind) Gated() bool { return k >= COpRenew && k <= COpSplitResidual }

// CoordOp is one coordination request: who made it, as which tenant, at
// which logical time, with which lease and payload. The scenario fills it
// in before the call; the checkers read it.
type CoordOp struct {
	ID       uint64 // position in the history, from 1
	Actor    string // the actor (and slot) that issued it
	Worker   coord.WorkerID
	Kind     CoordOpKind
	Tenant   coord.TenantID // the caller's tenant
	Key      coord.ShardKey // target of acquire and unpark; the lease's shard for gated requests
	Lease    coord.Lease
	Now      coord.LogicalTime
	Op       coord.OpID
	Cursor   coord.Cursor
	Reason   coord.ParkReason
	Replace  coord.SplitReplacePlan
	Residual coord.SplitResidualPlan
	LeaseDur coord.LogicalDuration // the run's lease duration (acquire, claim, renew)

	Call, Return simclock.Time // Return is MaxInt64 while the request is open
	// CallSeq and ReturnSeq place the invocation and the answer in the
	// history's total order of happenings (see CoordHistory.Tick).
	CallSeq, ReturnSeq uint64
	Out                CoordOut
	// Wrote lists the shards whose durable records the request's own KV
	// writes changed (filled in by CoordDurable), whatever its answer said.
	Wrote []CoordShard
}

// CoordOut is what the caller learned.
type CoordOut struct {
	Done      bool // an answer arrived (false: still open, or the caller died)
	Ambiguous bool // a transient failure: the request may or may not have taken effect
	Code      coord.Code
	Outcome   coord.Outcome
	Lease     coord.Lease // acquire, claim (the granted lease), renew (new deadline)
	Children  []coord.ShardID
	Residual  coord.ShardID
}

// Target returns the tenant and shard the request concerns, if one: a
// gated request's lease names it (whatever tenant the caller claims).
func (o *CoordOp) Target() (coord.TenantID, coord.ShardKey, bool) {
	switch {
	case o.Kind.Gated():
		return o.Lease.Tenant, o.Lease.Key(), true
	case o.Kind == COpAcquire || o.Kind == COpUnpark:
		return o.Tenant, o.Key, true
	case o.Kind == COpClaim && o.Out.Done && !o.Out.Ambiguous && o.Out.Code == 0:
		return o.Tenant, o.Out.Lease.Key(), true
	}
	return coord.TenantID{}, coord.ShardKey{}, false
}

// String describes the request for reports.
func (o *CoordOp) String() string {
	s := fmt.Sprintf("#%d %s %s now=%d", o.ID, o.Actor, o.Kind, o.Now)
	if t, k, ok := o.Target(); ok {
		s += fmt.Sprintf(" %.6s/%s/%s", t, k.Run, k.Shard)
	}
	if o.Kind.Gated() {
		s += fmt.Sprintf(" fence=%d", o.Lease.Fence)
	}
	if o.Op != 0 {
		s += " " + o.Op.String()
	}
	switch {
	case !o.Out.Done:
		s += " -> open"
	case o.Out.Ambiguous:
		s += " -> ambiguous"
	case o.Out.Code != 0:
		s += " -> " + o.Out.Code.String()
	default:
		s += " -> " + o.Out.Outcome.String()
	}
	return s
}

// CoordShard names a shard across tenants.
type CoordShard struct {
	Tenant coord.TenantID
	Key    coord.ShardKey
}

// CoordHistory records every coordination request of a run, in invocation
// order, and hands the one in flight to the durable-state observer so it
// can tell which request each KV write belongs to.
type CoordHistory struct {
	seq     uint64
	ops     []*CoordOp
	current *CoordOp // set by Tag just before a KV call, taken by the next invoke
}

// NewCoordHistory returns an empty history.
func NewCoordHistory() *CoordHistory { return &CoordHistory{} }

// Begin records the invocation of op at virtual time at and returns it.
func (h *CoordHistory) Begin(op CoordOp, at simclock.Time) *CoordOp {
	o := op
	o.ID = uint64(len(h.ops) + 1)
	o.Call, o.Return = at, math.MaxInt64
	o.CallSeq, o.ReturnSeq = h.Tick(), math.MaxUint64
	h.ops = append(h.ops, &o)
	return &o
}

// End records op's answer at virtual time at.
func (h *CoordHistory) End(op *CoordOp, at simclock.Time, out CoordOut) {
	out.Done = true
	op.Out, op.Return, op.ReturnSeq = out, at, h.Tick()
}

// Tick returns the next number of the history's total order. Invocations,
// answers and durable changes all take one, so checkers can tell what
// happened before what even at one virtual instant.
func (h *CoordHistory) Tick() uint64 {
	h.seq++
	return h.seq
}

// Tag marks op as the issuer of the next KV request; the observer takes
// the mark when that request is invoked. Only one task runs at a time, so
// nothing else can send in between.
func (h *CoordHistory) Tag(op *CoordOp) { h.current = op }

// take returns and clears the mark.
func (h *CoordHistory) take() *CoordOp {
	o := h.current
	h.current = nil
	return o
}

// Ops returns the recorded requests, in invocation order.
func (h *CoordHistory) Ops() []*CoordOp { return h.ops }
