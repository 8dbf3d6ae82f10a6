package coordcheck

import (
	"fmt"

	"shardsim/model/coord"
	"shardsim/property"
	"shardsim/simclock"
)

// Effect is one unit of work a worker really did: the output it
// published once the coordinator accepted its progress (a checkpoint, a
// completion, a park or a split) under a lease. Fencing is judged on these,
// what workers acted on, and not only on the coordinator's records.
type Effect struct {
	Tenant coord.TenantID
	Key    coord.ShardKey
	Actor  string
	Worker coord.WorkerID
	Fence  coord.FenceEpoch // the fence of the lease the work was done under
	Kind   RequestKind
	Op     coord.OpID
	// From and To are the cursor range the work covered (checkpoint and
	// complete): the output records keyed (shard, key) for keys in (From, To].
	From, To []byte
	// Replayed is set when the worker learned of the acceptance from a
	// replay, its first answer having been lost.
	Replayed bool
	// InvokedSeq is the history position of the first attempt of the op,
	// LearnedSeq that of the answer that told the worker it was accepted.
	InvokedSeq, LearnedSeq uint64
	At                     simclock.Time
}

// String describes the effect for reports.
func (e *Effect) String() string {
	return fmt.Sprintf("%s %s by %s fence=%d %s (%q,%q]", e.Kind, e.Key.Shard, e.Actor, e.Fence, e.Op, e.From, e.To)
}

type effectOp struct {
	shard ShardRef
	op    coord.OpID
}

type fenceAt struct {
	fence coord.FenceEpoch
	seq   uint64
}

// EffectLog is the effect log of a run and its checkers, applied as
// each effect is published:
//
//   - C.Idempotency: no op id of a shard takes effect twice;
//   - C.MutualExclusion: accepted progress never interleaves two fence
//     epochs: once work under epoch e+1 was accepted and learned, no work
//     under an older epoch whose first attempt started later is accepted;
//   - C.ZombieRejection: no work is accepted under a fence the shard had
//     already left (by the durable record) before the work's first attempt.
//
// Every check compares history positions (History.Tick), so none can
// fire on a mere race: the earlier event must have completed before the
// later one began.
type EffectLog struct {
	effects []Effect
	byOp    map[effectOp]int
	byShard map[ShardRef][]int
	fences  map[ShardRef][]fenceAt
	err     *property.Violation

	prevFence map[ShardRef]coord.FenceEpoch // ObserveDurable's scratch, cleared for every change
}

// NewEffectLog returns an empty effect log.
func NewEffectLog() *EffectLog {
	return &EffectLog{byOp: map[effectOp]int{}, byShard: map[ShardRef][]int{}, fences: map[ShardRef][]fenceAt{}}
}

// Err returns the first violation, or nil.
func (l *EffectLog) Err() *property.Violation { return l.err }

// Effects returns the log.
func (l *EffectLog) Effects() []Effect { return l.effects }

func (l *EffectLog) fail(prop property.Name, format string, args ...any) {
	if l.err == nil {
		l.err = &property.Violation{Property: prop, Detail: fmt.Sprintf(format, args...)}
	}
}

// Publish adds an effect and checks it against the log.
func (l *EffectLog) Publish(e Effect) {
	s := ShardRef{e.Tenant, e.Key}
	if i, dup := l.byOp[effectOp{s, e.Op}]; dup {
		l.fail(property.CIdempotency, "%s took effect twice: %s, then %s", e.Op, l.effects[i].String(), e.String())
	}
	for _, i := range l.byShard[s] {
		if p := &l.effects[i]; p.Fence > e.Fence && p.LearnedSeq < e.InvokedSeq {
			l.fail(property.CMutualExclusion, "work under fence %d was accepted after work under fence %d had been: %s after %s", e.Fence, p.Fence, e.String(), p.String())
		}
	}
	for _, f := range l.fences[s] {
		if f.fence > e.Fence && f.seq < e.InvokedSeq {
			l.fail(property.CZombieRejection, "the shard was at fence %d before %s started, yet it was accepted", f.fence, e.String())
			break
		}
	}
	l.byOp[effectOp{s, e.Op}] = len(l.effects)
	l.byShard[s] = append(l.byShard[s], len(l.effects))
	l.effects = append(l.effects, e)
}

// ObserveDurable records when each shard's durable fence rose; register it
// with Durable.OnChange.
func (l *EffectLog) ObserveDurable(prev, next *coord.Snapshot, _ simclock.Time, seq uint64) {
	if l.prevFence == nil {
		l.prevFence = map[ShardRef]coord.FenceEpoch{}
	}
	old := l.prevFence
	clear(old)
	for i := range prev.Shards {
		r := &prev.Shards[i]
		old[ShardRef{r.Tenant, r.Key()}] = r.Fence
	}
	for i := range next.Shards {
		r := &next.Shards[i]
		s := ShardRef{r.Tenant, r.Key()}
		if r.Fence > old[s] {
			l.fences[s] = append(l.fences[s], fenceAt{r.Fence, seq})
		}
	}
}

// ObserveShards is ObserveDurable on the shard records a change touched;
// register it with Durable.OnShardsChange instead. A fence rises only in a
// record that changed, and a touched record's fence is compared with its
// own record before the change (none: fence 0), which is the fence
// ObserveDurable finds for it in the previous state.
func (l *EffectLog) ObserveShards(changed []ShardChange, seq uint64) {
	for _, c := range changed {
		if c.Next == nil {
			continue
		}
		var old coord.FenceEpoch
		if c.Prev != nil {
			old = c.Prev.Fence
		}
		if c.Next.Fence > old {
			s := ShardRef{c.Next.Tenant, c.Next.Key()}
			l.fences[s] = append(l.fences[s], fenceAt{c.Next.Fence, seq})
		}
	}
}
