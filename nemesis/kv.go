package nemesis

import (
	"time"

	"shardsim/simclock"
	"shardsim/simkv"
)

// KVChaos is an actor that, until HealAt, cuts clients off from the
// simulated etcd for a while and forces leader changes, each at a rate drawn
// by the swarm. At HealAt it stops all faults: partitions heal and the
// network becomes quiet, so the world can converge.
type KVChaos struct {
	Server        *simkv.Server
	Clients       []simclock.ActorID
	PartitionRate float64       // chance per tick of partitioning a client
	LeaderRate    float64       // chance per tick of a leader change
	Tick          time.Duration // how often the nemesis decides
	MaxWindow     time.Duration // longest partition or election
	HealAt        simclock.Time
	Quiet         simkv.FaultConfig // the network after healing
}

type kvChaosTick struct{}
type kvChaosHeal struct{ client simclock.ActorID }

// Receive implements simclock.Actor.
func (k *KVChaos) Receive(ctx *simclock.Context, msg any) {
	switch m := msg.(type) {
	case simclock.Started:
		ctx.After(k.Tick, kvChaosTick{})
		ctx.Defer(k.HealAt.Sub(ctx.Now()), k.heal)
	case kvChaosTick:
		if ctx.Now() >= k.HealAt {
			return
		}
		c := ctx.Choices()
		if len(k.Clients) > 0 && c.Chance(k.PartitionRate) {
			victim := simclock.Pick(c, k.Clients)
			k.Server.Partition(victim)
			ctx.After(c.Duration(k.Tick, k.MaxWindow), kvChaosHeal{client: victim})
		}
		if c.Chance(k.LeaderRate) {
			k.Server.LeaderChange(c.Duration(time.Millisecond, k.MaxWindow/4))
		}
		ctx.After(k.Tick, kvChaosTick{})
	case kvChaosHeal:
		k.Server.Heal(m.client)
	}
}

func (k *KVChaos) heal(ctx *simclock.Context) {
	ctx.Log("nemesis.heal", "faults off")
	k.Server.SetFaults(k.Quiet)
	k.Server.HealAll()
}
