package nemesis

import (
	"fmt"
	"time"

	"shardsim/simclock"
	"shardsim/simkv"
)

// Target is an actor the nemesis may hurt.
type Target struct {
	ID simclock.ActorID
	// Fresh returns a new actor value for a restart: whatever the old one
	// held in memory is lost. Nil means the target is never crashed.
	Fresh func() simclock.Actor
}

// Rates are the per-tick chances of each fault kind (the swarm draws them).
type Rates struct {
	Crash        float64 // crash a running target; it restarts after a drawn downtime
	Pause        float64 // pause a target; it resumes later as a zombie
	Partition    float64 // cut a target off from the KV for a while
	Skew         float64 // jump a target's clock or change its drift
	LeaderChange float64 // force an etcd leader change
	LeaseStorm   float64 // pause many targets at once for longer than a lease
}

// Any reports whether any fault is switched on.
func (r Rates) Any() bool {
	return r.Crash+r.Pause+r.Partition+r.Skew+r.LeaderChange+r.LeaseStorm > 0
}

// Chaos is the nemesis actor: every Tick, until HealAt, it draws which
// faults to inject, on whom and for how long. At HealAt it stops injecting,
// restarts crashed targets, resumes paused ones, heals partitions, removes
// clock drift and makes the network quiet, so the world can converge.
type Chaos struct {
	Server    *simkv.Server // nil when there is no KV to partition
	Targets   []Target
	Rates     Rates
	Tick      time.Duration // how often the nemesis decides
	MaxWindow time.Duration // longest partition, pause or downtime
	MaxJump   time.Duration // largest clock jump (bounded again by each clock)
	StormFor  time.Duration // how long a lease storm pauses its victims
	HealAt    simclock.Time
	Quiet     simkv.FaultConfig // the network after healing
	OnHeal    func(ctx *simclock.Context)

	crashed []simclock.ActorID // ids, in crash order
	paused  []simclock.ActorID
	healed  bool
}

type chaosTick struct{}

type chaosEnd struct {
	kind string // "restart", "resume", "heal"
	id   simclock.ActorID
}

// Receive implements simclock.Actor.
func (k *Chaos) Receive(ctx *simclock.Context, msg any) {
	switch m := msg.(type) {
	case simclock.Started:
		if k.Rates.Any() {
			ctx.After(k.Tick, chaosTick{})
		}
		ctx.Defer(k.HealAt.Sub(ctx.Now()), k.heal)
	case chaosTick:
		if ctx.Now() >= k.HealAt || k.healed {
			return
		}
		k.inject(ctx)
		ctx.After(k.Tick, chaosTick{})
	case chaosEnd:
		if !k.healed {
			k.end(ctx, m)
		}
	}
}

// inject draws this tick's faults. The draw order is fixed, so a replay
// injects alike.
func (k *Chaos) inject(ctx *simclock.Context) {
	c, loop := ctx.Choices(), ctx.Loop()
	window := func() time.Duration { return c.Duration(k.Tick, k.MaxWindow) }
	if c.Chance(k.Rates.Crash) {
		if t, ok := k.pick(ctx, func(t Target) bool { return t.Fresh != nil && loop.Up(t.ID) }); ok {
			loop.Crash(t.ID)
			k.crashed = append(k.crashed, t.ID)
			ctx.After(window(), chaosEnd{"restart", t.ID})
		}
	}
	if c.Chance(k.Rates.Pause) {
		if t, ok := k.pick(ctx, func(t Target) bool { return loop.Up(t.ID) && !loop.Paused(t.ID) }); ok {
			loop.Pause(t.ID)
			k.paused = append(k.paused, t.ID)
			ctx.After(window(), chaosEnd{"resume", t.ID})
		}
	}
	if k.Server != nil && c.Chance(k.Rates.Partition) {
		if t, ok := k.pick(ctx, func(t Target) bool { return !k.Server.Partitioned(t.ID) }); ok {
			k.Server.Partition(t.ID)
			ctx.After(window(), chaosEnd{"heal", t.ID})
		}
	}
	if c.Chance(k.Rates.Skew) {
		if t, ok := k.pick(ctx, func(t Target) bool { return loop.Clock(t.ID) != nil }); ok {
			clock := loop.Clock(t.ID)
			if c.Chance(0.5) {
				d := c.Duration(-k.MaxJump, k.MaxJump)
				clock.Jump(ctx.Now(), d)
				ctx.Log("nemesis.clock-jump", fmt.Sprintf("%s by %v", loop.Name(t.ID), d))
			} else {
				ppm := c.Between(-200_000, 200_000)
				clock.SetDrift(ctx.Now(), ppm)
				ctx.Log("nemesis.clock-drift", fmt.Sprintf("%s %+dppm", loop.Name(t.ID), ppm))
			}
		}
	}
	if k.Server != nil && c.Chance(k.Rates.LeaderChange) {
		k.Server.LeaderChange(c.Duration(time.Millisecond, k.MaxWindow/4))
	}
	if c.Chance(k.Rates.LeaseStorm) {
		// Everyone stalls past their leases at once: a GC storm or a host
		// freeze. They wake up as zombies within a short spread.
		ctx.Log("nemesis.lease-storm", fmt.Sprintf("for %v", k.StormFor))
		for _, t := range k.Targets {
			if loop.Up(t.ID) && !loop.Paused(t.ID) {
				loop.Pause(t.ID)
				k.paused = append(k.paused, t.ID)
				ctx.After(k.StormFor+c.Duration(0, k.Tick), chaosEnd{"resume", t.ID})
			}
		}
	}
}

// pick draws one target satisfying ok, in target order.
func (k *Chaos) pick(ctx *simclock.Context, ok func(Target) bool) (Target, bool) {
	var cands []Target
	for _, t := range k.Targets {
		if ok(t) {
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		return Target{}, false
	}
	return simclock.Pick(ctx.Choices(), cands), true
}

func (k *Chaos) end(ctx *simclock.Context, m chaosEnd) {
	loop := ctx.Loop()
	switch m.kind {
	case "restart":
		if k.remove(&k.crashed, m.id) && !loop.Up(m.id) {
			loop.Restart(m.id, k.target(m.id).Fresh())
		}
	case "resume":
		if k.remove(&k.paused, m.id) {
			loop.Resume(m.id)
		}
	case "heal":
		k.Server.Heal(m.id)
	}
}

func (k *Chaos) target(id simclock.ActorID) Target {
	for _, t := range k.Targets {
		if t.ID == id {
			return t
		}
	}
	panic("nemesis: unknown target")
}

func (k *Chaos) remove(list *[]simclock.ActorID, id simclock.ActorID) bool {
	for i, x := range *list {
		if x == id {
			*list = append((*list)[:i], (*list)[i+1:]...)
			return true
		}
	}
	return false
}

// heal ends every fault for good.
func (k *Chaos) heal(ctx *simclock.Context) {
	k.healed = true
	loop := ctx.Loop()
	ctx.Log("nemesis.heal", "faults off")
	for _, id := range k.crashed {
		if !loop.Up(id) {
			loop.Restart(id, k.target(id).Fresh())
		}
	}
	for _, id := range k.paused {
		loop.Resume(id)
	}
	k.crashed, k.paused = nil, nil
	for _, t := range k.Targets {
		if clock := loop.Clock(t.ID); clock != nil {
			clock.SetDrift(ctx.Now(), 0)
		}
	}
	if k.Server != nil {
		k.Server.SetFaults(k.Quiet)
		k.Server.HealAll()
	}
	if k.OnHeal != nil {
		k.OnHeal(ctx)
	}
}
