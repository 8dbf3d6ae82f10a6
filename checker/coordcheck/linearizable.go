package coordcheck

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/checker"
	"shardsim/model/bugs"
	"shardsim/model/coord"
	"shardsim/property"
	"shardsim/simclock"
)

// The per-shard coordination API as a linearizable object. A shard's lease,
// fence, cursor, status, spec and op-log form one object; every request a
// worker or admin made on it is an operation, and porcupine checks that
// some order of them, consistent with real time, explains every answer
// when each is replayed through the protocol's own pure step functions
// (model/coord's Step*, bugs off) at the logical time it carried.
//
// Requests whose answer was a transient failure, or that never got one,
// may or may not have taken effect: the model lets them do either. A
// lease-gated request the model would accept may still be refused as
// "lease expired" (the etcd backend fails closed when its storage lease is
// gone), but never the other way round. A first call may answer
// "replayed": the backend retried its own ambiguous commit and found it had
// landed. Any shard request may be refused because its run has ended: a
// shard's object does not include its run's status, so the model accepts
// that refusal, and the durable checker (C.RunTerminalIrreversibility)
// catches the opposite mistake, a shard of an ended run changed. A split
// may be refused for the tenant's shard limit, which the model cannot see
// either (the durable checker counts nothing, so a split past the limit
// is not judged). A payload
// refusal the protocol logs (OpError) changes the model's state like an
// execution: its op-log entry is part of the shard.

// coordState is an immutable model state: one shard record and its
// encoding, which decides equality. Its hash is computed once, when
// porcupine first asks (it asks for every state it caches, and again for
// every set of states a state belongs to).
type coordState struct {
	rec    coord.ShardRecord
	enc    string
	hash   uint64
	hashed bool
}

// sum returns the state's hash (FNV-1a of its encoding).
func (s *coordState) sum() uint64 {
	if !s.hashed {
		s.hash, s.hashed = fnv1a(s.enc), true
	}
	return s.hash
}

// fnv1a is the 64-bit FNV-1a hash of s (hash/fnv's New64a, without
// copying s into a []byte for it).
func fnv1a(s string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	return h
}

// equal reports whether s and o are the same state: the same encoding.
func (s *coordState) equal(o *coordState) bool {
	return s == o || s.enc == o.enc
}

// stateTable interns the states of one shard's check by their encoding.
// Porcupine asks for the states an operation leads to again and again as
// it backtracks; a state met before is handed back rather than built (and
// later hashed) once more. Equal encodings are equal states, so porcupine
// sees the same states either way. One table serves one check, which
// porcupine runs on one goroutine.
type stateTable struct {
	states map[string]*coordState
	buf    []byte // the encoding being looked up
}

func newStateTable() *stateTable { return &stateTable{states: map[string]*coordState{}} }

// of returns the state holding r.
func (t *stateTable) of(r *coord.ShardRecord) *coordState {
	t.buf = coord.AppendShardRecord(t.buf[:0], r)
	if s, ok := t.states[string(t.buf)]; ok {
		return s
	}
	s := &coordState{rec: *r, enc: string(t.buf)}
	t.states[s.enc] = s
	return s
}

// coordExpect runs op on rec through the protocol's step function.
func coordExpect(rec *coord.ShardRecord, op *Request) (coord.ShardChange, error) {
	env := coord.StepEnv{Now: op.Now, Tenant: op.Tenant, Bugs: bugs.None}
	if op.Kind.Gated() {
		if err := coord.ScopeLease(coord.OpRenew, op.Tenant, op.Lease, bugs.None); err != nil {
			return coord.ShardChange{}, err
		}
	}
	switch op.Kind {
	case ReqAcquire:
		return coord.StepAcquire(env, rec, op.Worker, op.LeaseDur)
	case ReqClaim:
		if !rec.Available(op.Now) {
			return coord.ShardChange{}, coord.CodeNoShardAvailable
		}
		return coord.StepAcquire(env, rec, op.Worker, op.LeaseDur)
	case ReqRenew:
		return coord.StepRenew(env, rec, op.Lease, op.LeaseDur)
	case ReqCheckpoint:
		return coord.StepCheckpoint(env, rec, op.Lease, op.Cursor, op.Op)
	case ReqComplete:
		return coord.StepComplete(env, rec, op.Lease, op.Cursor, op.Op)
	case ReqPark:
		return coord.StepPark(env, rec, op.Lease, op.Reason, op.Op)
	case ReqSplitReplace:
		return coord.StepSplitReplace(env, rec, op.Lease, op.Replace, op.Op)
	case ReqSplitResidual:
		none := func(coord.ShardID) (*coord.ShardRecord, bool) { return nil, false }
		return coord.StepSplitResidual(env, rec, op.Lease, op.Residual, op.Op, none)
	case ReqUnpark:
		// The shard's object does not hold its run's status: the model
		// takes the run as Active, and coordStep lets a "run state"
		// refusal stand (Durable judges a revival in a run that
		// ended).
		return coord.StepUnpark(env, rec, coord.RunActive, op.Op)
	}
	return coord.ShardChange{}, fmt.Errorf("coordcheck: %s is not a shard operation", op.Kind)
}

// coordStep returns the states op can leave s in, given what its caller saw.
func coordStep(t *stateTable, s *coordState, op *Request) []any {
	ch, err := coordExpect(&s.rec, op)
	after := func() any {
		switch {
		case err != nil && ch.Logged:
			return t.of(&ch.Next)
		case err != nil || ch.Outcome == coord.Replayed:
			return s
		}
		return t.of(&ch.Next)
	}
	out := op.Out
	switch {
	case !out.Done || out.Ambiguous:
		if a := after(); a != s {
			return []any{s, a}
		}
		return []any{s}
	case out.Code != 0:
		if err != nil && ch.Logged && out.Code == coord.CodeOf(err) {
			return []any{t.of(&ch.Next)} // refused, and the refusal logged
		}
		if err != nil {
			// Refused, as the protocol would: which check spoke first is
			// not a safety matter (a bug that skips the fence check may
			// well answer "lease expired" instead of "stale fence").
			return []any{s}
		}
		if out.Code == coord.CodeLeaseExpired && op.Kind.Gated() {
			return []any{s} // the storage lease vanished first: refusing is safe
		}
		if out.Code == coord.CodeRunState {
			return []any{s} // the run had ended, which this per-shard model cannot see
		}
		if out.Code == coord.CodeShardLimit && (op.Kind == ReqSplitReplace || op.Kind == ReqSplitResidual) {
			return []any{s} // the tenant's shard count, which this model cannot see either
		}
		return nil
	case err != nil:
		return nil
	case ch.Outcome == coord.Executed && out.Outcome == coord.Replayed:
		// The backend's own retry of an ambiguous commit found the op
		// already in place: the call took effect once, and answered so.
		return []any{t.of(&ch.Next)}
	case ch.Outcome != out.Outcome:
		return nil
	}
	switch op.Kind {
	case ReqAcquire, ReqClaim:
		// An acquire whose commit was ambiguous, read back as not landed,
		// yet landed late is executed again by the backend's retry (the
		// worker already holds the shard), raising the fence once more.
		want := ch.Lease
		want.Fence = out.Lease.Fence
		if want != out.Lease || out.Lease.Fence < ch.Lease.Fence {
			return nil
		}
		next := ch.Next
		next.Fence = out.Lease.Fence
		return []any{t.of(&next)}
	case ReqRenew:
		if ch.Lease.Deadline != out.Lease.Deadline {
			return nil
		}
	case ReqSplitReplace:
		if !slices.Equal(ch.Children, out.Children) {
			return nil
		}
	case ReqSplitResidual:
		if ch.Residual != out.Residual {
			return nil
		}
	}
	return []any{after()}
}

// coordModel is the porcupine model of one shard that starts as init.
func coordModel(init coord.ShardRecord) porcupine.Model {
	states := newStateTable()
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{states.of(&init)} },
		StepContext: func(ctx context.Context, state, input, _ any) []any {
			if ctx.Err() != nil {
				return nil
			}
			return coordStep(states, state.(*coordState), input.(*Request))
		},
		Equal:             func(a, b any) bool { return a.(*coordState).equal(b.(*coordState)) },
		Hash:              func(a any) uint64 { return a.(*coordState).sum() },
		DescribeOperation: func(input, _ any) string { return input.(*Request).String() },
	}
	return nm.ToModel()
}

// Linearizable checks the per-shard histories of a run.
type Linearizable struct {
	initial map[ShardRef]coord.ShardRecord
	order   []ShardRef
}

// NewLinearizable returns a checker that learns each shard's initial
// record from the durable states (register its ObserveDurable).
func NewLinearizable() *Linearizable {
	return &Linearizable{initial: map[ShardRef]coord.ShardRecord{}}
}

// ObserveDurable records every shard's first durable state: the state it
// was created in. Register it with Durable.OnChange.
func (c *Linearizable) ObserveDurable(_, next *coord.Snapshot, _ simclock.Time, _ uint64) {
	for i := range next.Shards {
		c.observeShard(&next.Shards[i])
	}
}

// ObserveShards is ObserveDurable on the shard records a change touched;
// register it with Durable.OnShardsChange instead. A record is touched by
// the change that brings it into the durable state, so its first state is
// among them.
func (c *Linearizable) ObserveShards(changed []ShardChange, _ uint64) {
	for _, ch := range changed {
		if ch.Next != nil {
			c.observeShard(ch.Next)
		}
	}
}

func (c *Linearizable) observeShard(r *coord.ShardRecord) {
	k := ShardRef{r.Tenant, r.Key()}
	if _, ok := c.initial[k]; !ok {
		c.initial[k] = r.Clone()
		c.order = append(c.order, k)
	}
}

// AddShard declares a shard's initial record (tests that build histories
// by hand).
func (c *Linearizable) AddShard(r coord.ShardRecord) {
	c.ObserveDurable(nil, &coord.Snapshot{Shards: []coord.ShardRecord{r}}, 0, 0)
}

// partition splits the history by shard. A request joins the partition
// of the shard it names, and, as a maybe-operation, that of every other
// shard its own writes changed: a claim's first commit can land late, after
// the backend read it back as lost, and its retry then takes another shard
// or none. (Which shards a request wrote comes from the durable observer,
// so no request is placed by guesswork.)
func (c *Linearizable) partition(ops []*Request) map[ShardRef][]*Request {
	parts := map[ShardRef][]*Request{}
	for _, op := range ops {
		t, k, named := op.Target()
		if named {
			parts[ShardRef{t, k}] = append(parts[ShardRef{t, k}], op)
		}
		for _, w := range op.Wrote {
			s := ShardRef{w.Tenant, w.Key}
			if named && s == (ShardRef{t, k}) || op.Kind != ReqClaim {
				continue // splits write their children, which have their own start
			}
			maybe := *op
			maybe.Out.Ambiguous = true
			parts[s] = append(parts[s], &maybe)
		}
	}
	return parts
}

// Check decides whether every shard's history linearizes. On a violation
// it names the property the first inexplicable answer breaks and the
// shard; when porcupine runs out of time the verdict is unknown and the
// violation says so.
func (c *Linearizable) Check(ops []*Request, timeout time.Duration) (property.Verdict, *property.Violation) {
	parts := c.partition(ops)
	deadline := time.Now().Add(timeout)
	undecided := property.Violated(property.CLinearizable, "porcupine ran out of time on the per-shard histories")
	verdict := property.VerdictOK
	for _, s := range c.order {
		part := parts[s]
		if len(part) == 0 {
			continue
		}
		hist := shardHistory(part)
		left := time.Until(deadline)
		if left <= 0 {
			return property.VerdictUnknown, undecided
		}
		switch checker.CheckWithin(coordModel(c.initial[s]), hist, left) {
		case property.VerdictViolation:
			return property.VerdictViolation, diagnose(c.initial[s], part)
		case property.VerdictUnknown:
			verdict = property.VerdictUnknown
		}
	}
	if verdict == property.VerdictUnknown {
		return verdict, undecided
	}
	return verdict, nil
}

// shardHistory is one shard's requests as porcupine operations.
func shardHistory(part []*Request) []porcupine.Operation {
	hist := make([]porcupine.Operation, len(part))
	for i, op := range part {
		ret := int64(op.ReturnSeq)
		if !op.Out.Done || op.Out.Ambiguous {
			ret = 1<<62 + int64(op.CallSeq) // open-ended: it may take effect at any later point
		}
		hist[i] = porcupine.Operation{ClientId: i, Input: op, Output: op.Out, Call: int64(op.CallSeq), Return: ret}
	}
	return hist
}

// EachHistory hands fn every shard's history exactly as Check judges it,
// labelled with the shard, with the shard's model (for visualisation).
func (c *Linearizable) EachHistory(ops []*Request, fn func(label string, model porcupine.Model, hist []porcupine.Operation)) {
	parts := c.partition(ops)
	for _, s := range c.order {
		if part := parts[s]; len(part) > 0 {
			init := c.initial[s]
			fn(fmt.Sprintf("%.6s/%s/%s", init.Tenant, init.Run, init.Shard), coordModel(init), shardHistory(part))
		}
	}
}

// diagnose names the property behind a non-linearizable shard history: it
// replays the answered requests in answer order and reports the first one
// that was accepted where the protocol refuses, by the refusal's meaning.
func diagnose(init coord.ShardRecord, ops []*Request) *property.Violation {
	done := slices.Clone(ops)
	slices.SortStableFunc(done, func(a, b *Request) int { return int(int64(a.ReturnSeq) - int64(b.ReturnSeq)) })
	rec := init
	name := fmt.Sprintf("%.6s/%s/%s", init.Tenant, init.Run, init.Shard)
	for _, op := range done {
		if !op.Out.Done || op.Out.Ambiguous {
			continue
		}
		ch, err := coordExpect(&rec, op)
		if err != nil && op.Out.Code == 0 {
			return &property.Violation{Property: propertyOfRefusal(op, coord.CodeOf(err)), Detail: fmt.Sprintf(
				"%s: the shard's history has no linearization; %s was accepted where the protocol refuses it (%v)", name, op, err)}
		}
		logged := err != nil && ch.Logged && op.Out.Code == coord.CodeOf(err)
		if logged || err == nil && op.Out.Code == 0 && ch.Outcome == coord.Executed {
			rec = ch.Next
		}
	}
	return &property.Violation{Property: property.CLinearizable, Detail: name + ": the history of lease, fence, cursor and status has no linearization, and no single answer names a more specific property"}
}

// propertyOfRefusal maps the refusal a request should have met to the
// property that accepting it breaks.
func propertyOfRefusal(op *Request, c coord.Code) property.Name {
	switch c {
	case coord.CodeStaleFence:
		return property.CZombieRejection
	case coord.CodeShardTerminal:
		if op.Kind == ReqAcquire || op.Kind == ReqClaim {
			return property.CTerminalUnleased
		}
		return property.CTerminalIrreversibility
	case coord.CodeShardNotParked:
		return property.CTerminalIrreversibility
	case coord.CodeCursorRegression, coord.CodeCursorReset:
		return property.CCursorMonotonicity
	case coord.CodeCursorOutOfBounds:
		return property.CCursorBounds
	case coord.CodeOpIDConflict:
		return property.CIdempotency
	case coord.CodeTenantMismatch:
		return property.CTenantIsolation
	case coord.CodeSplitInvalid:
		return property.CSplitCoverage
	case coord.CodeAlreadyLeased, coord.CodeLeaseExpired, coord.CodeOwnerMismatch:
		// Progress or a grant without the one live lease.
		return property.CMutualExclusion
	case coord.CodeRunState:
		return property.CRunTerminalIrreversibility
	}
	return property.CLinearizable
}
