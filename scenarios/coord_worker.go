package scenarios

import (
	"fmt"
	"time"

	"shardsim/checker/coordcheck"
	"shardsim/model/coord"
	"shardsim/simclock"
)

// coordWorker is one worker process: a WorkerID and several slots (tasks)
// that each lease and process one shard at a time under that one identity.
// The slots acquire and claim independently, so two of them may ask for
// the same shard at the same logical time: identical requests, which the
// etcd backend's read-back of an ambiguous commit must tell apart.
// Everything it knows is volatile and may be wrong: a stale listing of
// available shards, a lease that expired while a slot was stalled or the
// process paused, the range of a shard it split. The coordinator must
// refuse what such beliefs make it ask for; the checkers judge whether it
// did.
type coordWorker struct {
	env   *coordEnv
	index int
	id    coord.WorkerID
	inc   uint64 // incarnation: op ids stay unique across restarts
	seq   uint64
	stale map[coord.TenantID][]coord.ShardKey // last listing per tenant (never refreshed on its own)
	slots []*coordSlot
}

// holds reports whether one of the worker's slots believes it holds a
// lease on key.
func (w *coordWorker) holds(key coord.ShardKey) bool {
	for _, s := range w.slots {
		if s.busy && s.lease.Key() == key {
			return true
		}
	}
	return false
}

// Receive implements simclock.Actor: on start, each slot begins its loop.
func (w *coordWorker) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	for s := 0; s < w.env.opts.slots; s++ {
		name := fmt.Sprintf("%s.%d", ctx.Name(), s)
		ctx.Go(name, func(t *simclock.Task) {
			s := &coordSlot{w: w, c: newCoordCaller(w.env, t, name, w.id), t: t}
			s.c.holds = w.holds
			w.slots = append(w.slots, s)
			s.loop()
		})
	}
}

// nextOp returns a fresh op id: worker, incarnation and a counter.
func (w *coordWorker) nextOp() coord.OpID {
	w.seq++
	return coord.OpID(uint64(w.index+1)<<48 | w.inc<<32 | w.seq)
}

// coordSlot is one task of a worker.
type coordSlot struct {
	w      *coordWorker
	c      *coordCaller
	t      *simclock.Task
	turn   int // round-robin position over tenants
	idle   int // consecutive polls that found nothing
	lease  coord.Lease
	spec   coord.ShardSpec
	cur    coord.Cursor
	lastOp coord.OpID // last op id used on the current shard (for the reuse mistake)
	busy   bool       // the slot believes it holds lease
	// backoff is the capacity hint of the grant: the shard was leased
	// more often than its run allows retries, so the slot parks it.
	backoff bool
	landed  *coordcheck.Request // the last op the coordinator accepted on the current shard
}

func (s *coordSlot) choices() *simclock.Choices { return s.t.Choices() }

// loop leases shards and works on them until every run is terminal.
func (s *coordSlot) loop() {
	env := s.w.env
	for {
		env.live.Available(s.c.actor, true, s.t.Now())
		if s.obtain() {
			s.idle = 0
			env.live.Available(s.c.actor, false, s.t.Now())
			s.work()
			s.busy = false
			continue
		}
		s.idle++
		if s.idle%4 == 0 && env.allRunsTerminal(s.c) {
			return
		}
		s.t.Sleep(s.choices().Duration(100*time.Millisecond, 400*time.Millisecond))
	}
}

// obtain tries to lease a shard of the next tenant: by claim, or by
// listing and acquiring (from a fresh listing, or, as a mistake, from the
// worker's stale one).
func (s *coordSlot) obtain() bool {
	env, c := s.w.env, s.choices()
	tenant := env.topo.tenants[s.turn%len(env.topo.tenants)]
	s.turn++
	var op *coordcheck.Request
	var res coord.AcquireResult
	switch {
	case env.mistake(c) && c.Chance(0.3):
		// A careless acquire: a shard a sibling slot holds, or one of the
		// worker's under another tenant's scope.
		if k, ok := s.siblingShard(); ok {
			env.w.Count("mistake_acquire-held", 1)
			op, res = s.c.acquire(k.tenant, k.key)
		} else if len(s.w.stale[tenant]) > 0 && len(env.topo.tenants) > 1 {
			env.w.Count("mistake_acquire-other-tenant", 1)
			op, res = s.c.acquire(env.otherTenant(tenant), simclock.Pick(c, s.w.stale[tenant]))
		} else {
			return false
		}
	case env.mistake(c) && len(s.w.stale[tenant]) > 0:
		op, res = s.c.acquire(tenant, simclock.Pick(c, s.w.stale[tenant]))
	case c.Chance(env.opts.listAcquire):
		runs := env.topo.runsOf(tenant)
		run := simclock.Pick(c, runs)
		if avail, r := s.c.listShards(tenant, run.id, coord.FilterAvailable()); r.Out.Code != 0 || r.Out.Ambiguous || len(avail) == 0 {
			return false
		} else if !s.listAndAcquire(tenant, run.id, avail) {
			return false
		}
		return true
	default:
		op, res = s.c.claim(tenant)
	}
	if op.Out.Ambiguous || op.Out.Code != 0 {
		return false
	}
	s.hold(res)
	return true
}

// listAndAcquire remembers a fresh listing of run's available shards and
// acquires one of them after some think time (the listing ages).
func (s *coordSlot) listAndAcquire(tenant coord.TenantID, run coord.RunID, avail []coord.ShardSummary) bool {
	c := s.choices()
	keys := make([]coord.ShardKey, len(avail))
	for i, a := range avail {
		keys[i] = coord.ShardKey{Run: run, Shard: a.Shard}
	}
	s.w.stale[tenant] = keys
	s.t.Sleep(c.Duration(0, 100*time.Millisecond))
	op, res := s.c.acquire(tenant, simclock.Pick(c, keys))
	if op.Out.Ambiguous || op.Out.Code != 0 {
		return false
	}
	s.hold(res)
	return true
}

// siblingShard returns the shard another slot of the worker holds.
func (s *coordSlot) siblingShard() (parkedShard, bool) {
	for _, o := range s.w.slots {
		if o != s && o.busy {
			return parkedShard{o.lease.Tenant, o.lease.Key()}, true
		}
	}
	return parkedShard{}, false
}

// hold adopts a freshly granted lease and the shard's restored state.
func (s *coordSlot) hold(res coord.AcquireResult) {
	s.lease, s.spec, s.cur, s.lastOp = res.Lease, res.Snapshot.Spec, res.Snapshot.Cursor, 0
	s.busy, s.landed = true, nil
	s.backoff = res.Capacity.Backoff
}

// work processes the held shard until it is finished or lost.
func (s *coordSlot) work() {
	for {
		if !s.keepLease() {
			return
		}
		if done := s.step(); done {
			return
		}
	}
}

// keepLease renews the lease once half of it is gone by the slot's own
// clock, and reports whether the slot still believes it holds the lease.
func (s *coordSlot) keepLease() bool {
	now, dur := s.c.now(), s.w.env.topo.leaseDur
	if now+coord.LogicalTime(dur/2) < s.lease.Deadline {
		return true
	}
	if now >= s.lease.Deadline {
		return false // it knows the lease is gone
	}
	if s.w.env.mistake(s.choices()) {
		s.blunderRenew()
	}
	op := s.c.gated(coordcheck.Request{Kind: coordcheck.ReqRenew, Tenant: s.lease.Tenant, Lease: s.lease})
	if op.Out.Ambiguous || op.Out.Code != 0 {
		return op.Out.Ambiguous && now+1 < s.lease.Deadline
	}
	s.lease.Deadline = op.Out.Lease.Deadline
	return true
}

// step decides and performs the next action on the held shard; it
// reports whether the slot is done with the shard.
func (s *coordSlot) step() bool {
	env, c := s.w.env, s.choices()
	next, end := nextKey(s.spec, s.cur), keyNum(s.spec.End)
	left := end - next
	op := coordcheck.Request{Tenant: s.lease.Tenant, Lease: s.lease, Op: s.w.nextOp()}
	switch {
	case s.backoff && left > 0:
		// The coordinator's capacity hint: too many retries. Park it for
		// an operator instead of trying once more.
		s.backoff = false
		env.w.Reach("acquire.capacity_backoff")
		op.Kind, op.Reason = coordcheck.ReqPark, coord.ParkTooManyErrors
	case left <= 0:
		op.Kind, op.Cursor = coordcheck.ReqComplete, s.cur.Clone()
	case left >= 4 && c.Chance(env.opts.split):
		s.planSplit(&op, next, end)
	case c.Chance(env.opts.park):
		op.Kind, op.Reason = coordcheck.ReqPark, coord.ParkReason(c.Intn(5))
	default:
		n := min(left, int(c.Between(1, 4)))
		op.Kind, op.Cursor = coordcheck.ReqCheckpoint, coord.Cursor{LastKey: keyOf(next + n - 1)}
		s.t.Sleep(c.Duration(10*time.Millisecond, 80*time.Millisecond)) // the work itself
	}
	if env.mistake(c) {
		return s.blunder(op)
	}
	// A stall between deciding and acting: the slot may wake a zombie.
	if d := env.stalls.Draw(c, s.t.Now()); d > 0 {
		env.w.Count("stalls", 1)
		s.t.Sleep(d)
	}
	return s.perform(op)
}

// planSplitKind fills op with a split of kind (split_replace or
// split_residual) of the unprocessed part of the shard, when it has room.
func (s *coordSlot) planSplitKind(op *coordcheck.Request, kind coordcheck.RequestKind) {
	next, end := nextKey(s.spec, s.cur), keyNum(s.spec.End)
	if end-next < 2 {
		return
	}
	mid := next + 1 + s.choices().Intn(end-next-1)
	op.Kind = kind
	if kind == coordcheck.ReqSplitReplace {
		op.Replace = coord.SplitReplacePlan{Children: []coord.ShardSpec{
			{Start: s.spec.Start, End: keyOf(mid)}, {Start: keyOf(mid), End: s.spec.End},
		}}
		return
	}
	op.Residual = coord.SplitResidualPlan{
		Parent:   coord.ShardSpec{Start: s.spec.Start, End: keyOf(mid)},
		Residual: coord.ShardSpec{Start: keyOf(mid), End: s.spec.End},
	}
}

// planSplit fills op with a split of the unprocessed part of the shard.
func (s *coordSlot) planSplit(op *coordcheck.Request, next, end int) {
	c := s.choices()
	mid := next + 1 + c.Intn(end-next-1)
	if !s.cur.HasKey() && c.Chance(0.5) {
		op.Kind = coordcheck.ReqSplitReplace
		op.Replace = coord.SplitReplacePlan{Children: []coord.ShardSpec{
			{Start: s.spec.Start, End: keyOf(mid)}, {Start: keyOf(mid), End: s.spec.End},
		}}
		return
	}
	op.Kind = coordcheck.ReqSplitResidual
	op.Residual = coord.SplitResidualPlan{
		Parent:   coord.ShardSpec{Start: s.spec.Start, End: keyOf(mid)},
		Residual: coord.ShardSpec{Start: keyOf(mid), End: s.spec.End},
	}
}

// perform sends op, retrying it with the same op id while the answer is
// ambiguous, and acts on the outcome. It reports whether the slot is done
// with the shard.
func (s *coordSlot) perform(op coordcheck.Request) bool {
	c := s.choices()
	var first *coordcheck.Request
	var o *coordcheck.Request
	for attempt := 0; ; attempt++ {
		o = s.c.gated(op)
		if first == nil {
			first = o
		}
		if !o.Out.Ambiguous || attempt == 3 {
			break
		}
		s.t.Sleep(c.Duration(20*time.Millisecond, 150*time.Millisecond))
	}
	s.lastOp = op.Op
	switch {
	case o.Out.Ambiguous:
		return true // unsure whether it took effect: leave the shard to the coordinator
	case o.Out.Code != 0:
		return s.lost(o)
	}
	s.landed = o
	s.publish(first, o)
	switch op.Kind {
	case coordcheck.ReqComplete, coordcheck.ReqPark, coordcheck.ReqSplitReplace:
		if c.Chance(s.w.env.carryOnRate()) && c.Chance(0.5) {
			s.carryOn() // work sent under the lease of a shard that ended
		} else if c.Chance(s.w.env.carryOnRate()) {
			// A retry path that did not hear the answer sends it once
			// more, after the shard ended and its lease was released.
			again := s.c.gated(retryOf(o))
			if again.Out.Code == 0 && !again.Out.Ambiguous && again.Out.Outcome == coord.Replayed {
				s.w.env.w.Reach(op.Kind.String() + ".replayed.after_loss")
				if op.Kind == coordcheck.ReqComplete {
					s.w.env.w.Reach("complete.replayed.after_terminal")
				}
			}
		}
	}
	switch op.Kind {
	case coordcheck.ReqCheckpoint:
		s.cur = op.Cursor
		return false
	case coordcheck.ReqSplitResidual:
		s.spec = op.Residual.Parent
		return false
	}
	return true // complete, park, split_replace: the shard is no longer ours
}

// publish records the effect of accepted work: the output the worker
// releases now that the coordinator took its progress.
func (s *coordSlot) publish(first, o *coordcheck.Request) {
	e := coordcheck.Effect{
		Tenant: o.Lease.Tenant, Key: o.Lease.Key(), Actor: o.Actor, Worker: o.Worker, Fence: o.Lease.Fence,
		Kind: o.Kind, Op: o.Op, Replayed: o.Out.Outcome == coord.Replayed,
		InvokedSeq: first.CallSeq, LearnedSeq: o.ReturnSeq, At: o.Return,
	}
	if o.Kind == coordcheck.ReqCheckpoint || o.Kind == coordcheck.ReqComplete {
		e.From, e.To = s.cur.LastKey, o.Cursor.LastKey
	}
	s.w.env.effects.Publish(e)
	s.w.env.w.Count("effects", 1)
}

// lost handles a refusal: the slot lost the shard (fenced out, lease
// expired, shard finished). Sometimes it tries to take the same shard back
// at once, believing it is still the one to finish it.
func (s *coordSlot) lost(o *coordcheck.Request) bool {
	env, c := s.w.env, s.choices()
	switch o.Out.Code {
	case coord.CodeStaleFence, coord.CodeLeaseExpired, coord.CodeOwnerMismatch, coord.CodeShardTerminal:
		env.w.Count("fenced_out", 1)
	case coord.CodeRunState:
		env.w.Count("run_ended_under_worker", 1)
	default:
		env.w.Count("unexpected_refusals", 1)
	}
	if c.Chance(env.carryOnRate()) {
		s.carryOn()
	}
	if !c.Chance(env.opts.sticky) {
		return true
	}
	a, res := s.c.acquire(s.lease.Tenant, s.lease.Key())
	if a.Out.Ambiguous || a.Out.Code != 0 {
		return true
	}
	s.hold(res)
	return false
}
