package scenarios

import (
	"time"

	"shardsim/model/keymove"
	"shardsim/simclock"
	"shardsim/simkv"
)

// kmShardChaos hurts the shard stores: transient outages (one actor cut off
// from one shard for a window), leader changes of a shard, and, when drawn,
// one shard that fails for good at a drawn time and stays down after the
// heal. At the heal every other shard becomes quiet and reachable.
type kmShardChaos struct {
	kw       *kmWorld
	dead     keymove.ShardID
	outages  int64
	elects   int64
	healed   bool
	deadDone bool
}

type kmChaosTick struct{}

type kmChaosEnd struct {
	shard keymove.ShardID
	actor simclock.ActorID
}

// Receive implements simclock.Actor.
func (k *kmShardChaos) Receive(ctx *simclock.Context, msg any) {
	kw := k.kw
	switch m := msg.(type) {
	case simclock.Started:
		if kw.opts.dead {
			k.dead = simclock.Pick(ctx.Choices(), kw.ids)
			ctx.Defer(kw.opts.deadAt, k.kill)
		}
		ctx.After(50*time.Millisecond, kmChaosTick{})
		ctx.Defer(kw.healAt.Sub(ctx.Now()), k.heal)
	case kmChaosTick:
		if k.healed {
			return
		}
		k.inject(ctx)
		ctx.After(50*time.Millisecond, kmChaosTick{})
	case kmChaosEnd:
		if !k.healed && !(k.deadDone && m.shard == k.dead) {
			kw.shards[m.shard].Heal(m.actor)
		}
	}
}

func (k *kmShardChaos) actors() []simclock.ActorID {
	return append([]simclock.ActorID{k.kw.execActor}, k.kw.clientIDs...)
}

func (k *kmShardChaos) inject(ctx *simclock.Context) {
	kw, c := k.kw, ctx.Choices()
	if c.Chance(kw.opts.outage) {
		s := simclock.Pick(c, kw.ids)
		a := simclock.Pick(c, k.actors())
		if !(k.deadDone && s == k.dead) {
			kw.shards[s].Partition(a)
			k.outages++
			ctx.After(c.Duration(50*time.Millisecond, 400*time.Millisecond), kmChaosEnd{shard: s, actor: a})
		}
	}
	if c.Chance(kw.opts.shardLead) {
		s := simclock.Pick(c, kw.ids)
		kw.shards[s].LeaderChange(c.Duration(time.Millisecond, 50*time.Millisecond))
		k.elects++
	}
}

// kill makes the dead shard unreachable for everyone, for good.
func (k *kmShardChaos) kill(ctx *simclock.Context) {
	k.deadDone = true
	ctx.Log("nemesis.shard-dead", string(k.dead))
	for _, a := range k.actors() {
		k.kw.shards[k.dead].Partition(a)
	}
}

// heal ends every shard fault except the dead shard.
func (k *kmShardChaos) heal(ctx *simclock.Context) {
	k.healed = true
	for _, id := range k.kw.ids {
		srv := k.kw.shards[id]
		srv.SetFaults(simkv.DefaultFaults())
		if id == k.dead && k.deadDone {
			continue
		}
		srv.HealAll()
	}
}
