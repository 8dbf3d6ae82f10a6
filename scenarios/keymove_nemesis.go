package scenarios

import (
	"time"

	"shardsim/model/keymove"
	"shardsim/nemesis"
	"shardsim/simclock"
	"shardsim/simkv"
)

// kmMaxWindow is the longest crash, pause, partition or outage.
const kmMaxWindow = 300 * time.Millisecond

// faults is the keymove world's fault mix, in its fixed order: executor
// crashes and pauses (clients pause too), etcd partitions and leader
// changes, then per shard outages (one actor cut off from the shard) and
// leader changes, and the shard that fails for good.
func (kw *kmWorld) faults() []nemesis.Fault {
	o := kw.opts
	actors := kw.actors()
	fs := []nemesis.Fault{
		nemesis.Crashes{Rate: o.rates.Crash, MaxDown: kmMaxWindow},
		nemesis.Pauses{Rate: o.rates.Pause, MaxFor: kmMaxWindow},
		nemesis.Partitions{Server: kw.meta, Among: actors, Rate: o.rates.Partition, MaxFor: kmMaxWindow},
		nemesis.LeaderChanges{Server: kw.meta, Rate: o.rates.LeaderChange, MaxWindow: kmMaxWindow / 4},
	}
	per := 1 / float64(len(kw.ids))
	dead, hasDead := kw.deadShard()
	for _, id := range kw.ids {
		srv := kw.shards[id]
		if !hasDead || id != dead { // an outage ending would revive the dead shard for a moment
			fs = append(fs, nemesis.Partitions{Server: srv, Among: actors, Rate: o.outage * per, MaxFor: kmMaxWindow})
		}
		fs = append(fs, nemesis.LeaderChanges{Server: srv, Rate: o.shardLead * per, MaxWindow: kmMaxWindow / 6})
	}
	if id, ok := dead, hasDead; ok {
		fs = append(fs, kmDeadShard{server: kw.shards[id], name: id, at: simclock.Time(o.deadAt), actors: actors})
	}
	return fs
}

// actors are the executor and the clients: everyone who talks to a store.
func (kw *kmWorld) actors() []simclock.ActorID {
	return append([]simclock.ActorID{kw.execActor}, kw.clientIDs...)
}

// deadShard names the shard that fails for good, if the run has one.
func (kw *kmWorld) deadShard() (keymove.ShardID, bool) {
	if !kw.opts.dead {
		return "", false
	}
	return kw.ids[kw.opts.deadIndex%len(kw.ids)], true
}

// healedServers are the stores the heal makes quiet and reachable: all but
// the dead shard.
func (kw *kmWorld) healedServers() []*simkv.Server {
	out := []*simkv.Server{kw.meta}
	dead, _ := kw.deadShard()
	for _, id := range kw.ids {
		if !kw.opts.dead || id != dead {
			out = append(out, kw.shards[id])
		}
	}
	return out
}

// kmDeadShard is a shard store that fails for good at a drawn time: from
// then on every actor is cut off from it, and the heal does not bring it
// back (it is not among the servers the heal reaches). It draws nothing.
type kmDeadShard struct {
	server *simkv.Server
	name   keymove.ShardID
	at     simclock.Time
	actors []simclock.ActorID
}

// Strike implements nemesis.Fault.
func (f kmDeadShard) Strike(_ *nemesis.Chaos, ctx *simclock.Context) {
	if ctx.Now() < f.at {
		return
	}
	for _, a := range f.actors {
		if !f.server.Partitioned(a) {
			f.server.Partition(a)
			ctx.Rec("nemesis.shard-dead").Str("shard", string(f.name)).End()
		}
	}
}
