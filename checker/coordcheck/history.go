package coordcheck

import (
	"fmt"
	"math"

	"shardsim/model/coord"
	"shardsim/simclock"
)

// RequestKind names a coordination request a simulated worker or admin made.
type RequestKind uint8

// The coordination requests the history records.
const (
	ReqAcquire RequestKind = iota
	ReqClaim
	ReqRenew
	ReqCheckpoint
	ReqComplete
	ReqPark
	ReqSplitReplace
	ReqSplitResidual
	ReqUnpark
	ReqCreateRun
	ReqRegister
	ReqCompleteRun
	ReqFailRun
	ReqRead // listings and progress reads: they change nothing
	ReqCancelRun
	ReqGCRuns // gc_stale_initializing_runs: may cancel runs, never touches a shard
	reqKindEnd
)

var requestKindNames = [reqKindEnd]string{"acquire", "claim", "renew", "checkpoint", "complete", "park",
	"split_replace", "split_residual", "unpark", "create_run", "register_shards", "complete_run", "fail_run", "read", "cancel_run", "gc_stale_initializing_runs"}

// String names the kind.
func (k RequestKind) String() string {
	if k < reqKindEnd {
		return requestKindNames[k]
	}
	return "coord-op(?)"
}

// RecordKind is the kind of the trace record a request of kind k leaves:
// "coord." and the kind's name.
func (k RequestKind) RecordKind() string {
	if k < reqKindEnd {
		return recordKinds[k]
	}
	return "coord.?"
}

var recordKinds = func() (out [reqKindEnd]string) {
	for k := range out {
		out[k] = "coord." + requestKindNames[k]
	}
	return out
}()

// Gated reports whether the request presents a lease.
func (k RequestKind) Gated() bool { return k >= ReqRenew && k <= ReqSplitResidual }

// Request is one coordination request: who made it, as which tenant, at
// which logical time, with which lease and payload. The scenario fills it
// in before the call; the checkers read it.
type Request struct {
	ID       uint64 // position in the history, from 1
	Actor    string // the actor (and slot) that issued it
	Worker   coord.WorkerID
	Kind     RequestKind
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
	// history's total order of happenings (see History.Tick).
	CallSeq, ReturnSeq uint64
	Out                Answer
	// Wrote lists the shards whose durable records the request's own KV
	// writes changed (filled in by Durable), whatever its answer said.
	Wrote []ShardRef
}

// Answer is what the caller learned.
type Answer struct {
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
func (o *Request) Target() (coord.TenantID, coord.ShardKey, bool) {
	switch {
	case o.Kind.Gated():
		return o.Lease.Tenant, o.Lease.Key(), true
	case o.Kind == ReqAcquire || o.Kind == ReqUnpark:
		return o.Tenant, o.Key, true
	case o.Kind == ReqClaim && o.Out.Done && !o.Out.Ambiguous && o.Out.Code == 0:
		return o.Tenant, o.Out.Lease.Key(), true
	}
	return coord.TenantID{}, coord.ShardKey{}, false
}

// String describes the request for reports.
func (o *Request) String() string {
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

// AppendDetail adds the request to a trace record as typed fields: its
// id, caller, logical time, target (tenant prefix, run, shard), fence, op
// id and outcome, the same facts String gives a report.
func (o *Request) AppendDetail(d *simclock.Detail) {
	d.Uint("id", o.ID).Str("by", o.Actor).Int("now", int64(o.Now))
	if t, k, ok := o.Target(); ok {
		d.Bytes("tenant", t[:3]).Hex("run", uint64(k.Run)).Hex("shard", uint64(k.Shard))
	}
	if o.Kind.Gated() {
		d.Uint("fence", uint64(o.Lease.Fence))
	}
	if o.Op != 0 {
		d.Hex("op", uint64(o.Op))
	}
	switch {
	case !o.Out.Done:
		d.Str("out", "open")
	case o.Out.Ambiguous:
		d.Str("out", "ambiguous")
	case o.Out.Code != 0:
		d.Str("out", o.Out.Code.String())
	default:
		d.Str("out", o.Out.Outcome.String())
	}
}

// ShardRef names a shard across tenants.
type ShardRef struct {
	Tenant coord.TenantID
	Key    coord.ShardKey
}

// History records every coordination request of a run, in invocation
// order, and hands the one in flight to the durable-state observer so it
// can tell which request each KV write belongs to.
type History struct {
	seq     uint64
	ops     []*Request
	current *Request // set by Tag just before a KV call, taken by the next invoke
}

// NewHistory returns an empty history.
func NewHistory() *History { return &History{} }

// Begin records the invocation of op at virtual time at and returns it.
func (h *History) Begin(op Request, at simclock.Time) *Request {
	o := op
	o.ID = uint64(len(h.ops) + 1)
	o.Call, o.Return = at, math.MaxInt64
	o.CallSeq, o.ReturnSeq = h.Tick(), math.MaxUint64
	h.ops = append(h.ops, &o)
	return &o
}

// End records op's answer at virtual time at.
func (h *History) End(op *Request, at simclock.Time, out Answer) {
	out.Done = true
	op.Out, op.Return, op.ReturnSeq = out, at, h.Tick()
}

// Tick returns the next number of the history's total order. Invocations,
// answers and durable changes all take one, so checkers can tell what
// happened before what even at one virtual instant.
func (h *History) Tick() uint64 {
	h.seq++
	return h.seq
}

// Tag marks op as the issuer of the next KV request; the observer takes
// the mark when that request is invoked. Only one task runs at a time, so
// nothing else can send in between.
func (h *History) Tag(op *Request) { h.current = op }

// take returns and clears the mark.
func (h *History) take() *Request {
	o := h.current
	h.current = nil
	return o
}

// Ops returns the recorded requests, in invocation order.
func (h *History) Ops() []*Request { return h.ops }
