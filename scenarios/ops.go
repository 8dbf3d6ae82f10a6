package scenarios

import "shardsim/simclock"

// OpTrace writes the trace records of client operations that no simulated
// network traces for them (simkv's clients get kv.send and kv.return from
// the server): an "op.invoke" record when a client starts an operation and
// an "op.return" record when it learns the outcome, both carrying the same
// op=N (unique within the world) and the operation's kind, so a reader
// pairs them and every client operation shows its invocation and its
// completion. A world owns one (World.Ops); worlds whose clients call
// through other layers (the migration data plane) hand it to their
// clients.
type OpTrace struct {
	next uint64
}

// ClientOp is one traced operation between its invocation and completion.
type ClientOp struct {
	ctx  *simclock.Context
	id   uint64
	kind string
}

// Invoke writes the op.invoke record of a kind operation by the actor
// behind ctx and returns the operation and the record's detail, which the
// caller fills with the request (key, value, timestamp...) and ends.
func (o *OpTrace) Invoke(ctx *simclock.Context, kind string) (ClientOp, *simclock.Detail) {
	o.next++
	op := ClientOp{ctx: ctx, id: o.next, kind: kind}
	return op, ctx.Rec("op.invoke").Uint("op", op.id).Str("kind", kind)
}

// Complete writes the op.return record with the error, if any, and
// returns its detail for the caller to add the answer and end.
func (op ClientOp) Complete(err error) *simclock.Detail {
	return op.ctx.Rec("op.return").Uint("op", op.id).Str("kind", op.kind).Err("err", err)
}
