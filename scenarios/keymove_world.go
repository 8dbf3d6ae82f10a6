package scenarios

import (
	"fmt"
	"time"

	"shardsim/checker/keymovecheck"
	"shardsim/model/bugs"
	"shardsim/model/keymove"
	"shardsim/nemesis"
	"shardsim/simclock"
	"shardsim/simkv"
)

// kmWorld is one run of a key-migration scenario: etcd holding the shard
// map and the checkpoints, one simulated store per shard, the executor (a
// process the nemesis crashes and restarts), clients reading and writing
// the keys being moved, and the nemesis.
type kmWorld struct {
	w       *World
	sh      kmShape
	opts    kmOptions
	plan    keymove.Plan
	keys    []string
	ks      keymove.Keyspace
	meta    *simkv.Server
	shards  map[keymove.ShardID]*simkv.Server
	ids     []keymove.ShardID // shard ids, sorted
	durable *keymovecheck.Durable
	exCfg   keymove.Config
	healAt  simclock.Time
	end     simclock.Time

	poisoned map[string]bool // keys whose copies always tear
	torn     *simclock.Choices
	tornN    int64

	execActor simclock.ActorID
	clientIDs []simclock.ActorID
	execs     []*keymove.Executor
	summary   *keymove.Summary
	aborts    int64
	restarts  int64
	progress  int64

	ops     []keymovecheck.Op
	returns []bool // ops[i] has returned
	counts  map[string]int64
}

// buildKMWorld builds the world of one run; nothing runs yet.
func buildKMWorld(w *World, sh kmShape, o kmOptions, cfg Config) (*kmWorld, error) {
	old, next := o.topologies()
	kw := &kmWorld{w: w, sh: sh, opts: o, shards: map[keymove.ShardID]*simkv.Server{},
		healAt: simclock.Time(sh.healAt), counts: map[string]int64{}, poisoned: map[string]bool{}}
	kw.end = kw.healAt.Add(sh.convergeWithin)
	for i := 0; i < o.keys; i++ {
		kw.keys = append(kw.keys, fmt.Sprintf("k%03d", i))
	}
	plan, err := keymove.NewPlan(kw.keys, old, next)
	if err != nil {
		return nil, err
	}
	kw.plan = plan
	kw.exCfg = keymove.Config{Options: o.exec, Bugs: cfg.Bugs, Keys: kw.ks}
	if err := o.exec.Validate(); err != nil {
		return nil, err
	}
	stores := kw.bootstrap(old, next, w.Choices.Fork("bootstrap"))
	kw.durable = keymovecheck.NewDurable(keymovecheck.Config{
		Plan: plan, Keys: kw.ks, Meta: kw.meta.Store(), Shards: stores, Force: o.exec.ForceSwapOnVerificationFailure,
		IsClient: func(actor string) bool { return len(actor) > 6 && actor[:6] == "client" },
	})
	kw.meta.Observe(kw.durable.MetaObserver())
	for _, id := range kw.ids {
		kw.shards[id].Observe(kw.durable.ShardObserver(id))
	}
	kw.torn = w.Choices.Fork("torn")
	kw.spawn()
	w.Loop.OnStep(func() { w.Fail(kw.durable.Err()) })
	return kw, nil
}

// bootstrap creates the stores: the shard map of the old topology in etcd,
// each key's control word and (unless drawn missing) data on its owner.
func (kw *kmWorld) bootstrap(old, next keymove.Topology, ch *simclock.Choices) map[keymove.ShardID]*simkv.Store {
	meta := simkv.NewStore(simkv.StoreConfig{})
	stores := map[keymove.ShardID]*simkv.Store{}
	for _, t := range []keymove.Topology{old, next} {
		for _, s := range t.Shards {
			if stores[s] == nil {
				stores[s] = simkv.NewStore(simkv.StoreConfig{})
				kw.ids = append(kw.ids, s)
			}
		}
	}
	sortShardIDs(kw.ids)
	put := func(s *simkv.Store, k, v []byte) {
		_, _ = s.Apply(0, simkv.Request{Put: &simkv.PutRequest{Key: k, Value: v}})
	}
	for _, k := range kw.keys {
		owner := old.Owner(k)
		put(meta, kw.ks.MapKey(k), []byte(owner))
		put(stores[owner], keymove.CtlKey(k), []byte(keymove.CtlOpen))
		if !ch.Chance(kw.opts.missing) {
			put(stores[owner], keymove.DataKey(k), []byte(fmt.Sprintf("init-%s-%s", k, padding(ch))))
		}
	}
	for i := 0; i < kw.opts.poisoned && len(kw.plan.Moves) > 0; i++ {
		kw.poisoned[simclock.Pick(ch, kw.plan.Moves).Key] = true
	}
	kw.meta = simkv.NewServer(kw.w.Loop, meta, kw.opts.metaNet, kw.w.Choices.Fork("meta.net"))
	for _, id := range kw.ids {
		kw.shards[id] = simkv.NewServer(kw.w.Loop, stores[id], kw.opts.shardNet, kw.w.Choices.Fork("shard.net/"+string(id)))
	}
	return stores
}

// padding makes values long enough that sampled verification samples.
func padding(ch *simclock.Choices) string {
	b := make([]byte, 8+ch.Intn(40))
	for i := range b {
		b[i] = 'a' + byte(ch.Intn(26))
	}
	return string(b)
}

// spawn starts the executor, the clients and the nemesis.
func (kw *kmWorld) spawn() {
	loop := kw.w.Loop
	first := true
	fresh := func() simclock.Actor {
		if !first {
			kw.restarts++
		}
		a := &kmExecutor{kw: kw, first: first}
		first = false
		return a
	}
	kw.execActor = loop.Spawn("executor", fresh(), nil, kw.w.Choices.Fork("executor"))
	targets := []nemesis.Target{{ID: kw.execActor, Fresh: fresh}}
	for i := 0; i < kw.opts.clients; i++ {
		name := fmt.Sprintf("client%d", i)
		id := loop.Spawn(name, &kmClient{kw: kw, idx: i}, nil, kw.w.Choices.Fork("workload/"+name))
		kw.clientIDs = append(kw.clientIDs, id)
		targets = append(targets, nemesis.Target{ID: id})
	}
	loop.Spawn("nemesis", &nemesis.Chaos{
		Targets: targets, Faults: kw.faults(), Tick: 50 * time.Millisecond, HealAt: kw.healAt,
		Servers: kw.healedServers(), Quiet: simkv.DefaultFaults(),
	}, nil, kw.w.Choices.Fork("nemesis"))
}

// dial opens a task's handles; the executor's copies go through the torn
// copy fault.
func (kw *kmWorld) dial(executor bool) keymove.Dialer {
	return func(t *simclock.Task) (simkv.KV, func(keymove.ShardID) simkv.KV) {
		self := t.Context().Self()
		meta := kw.meta.Connect(self).In(t)
		conns := map[keymove.ShardID]simkv.KV{}
		return meta, func(id keymove.ShardID) simkv.KV {
			if kv, ok := conns[id]; ok {
				return kv
			}
			srv, ok := kw.shards[id]
			if !ok {
				return keymove.Unreachable()
			}
			var kv simkv.KV = srv.Connect(self).In(t)
			if executor {
				kv = &tornKV{KV: kv, kw: kw, shard: id}
			}
			conns[id] = kv
			return kv
		}
	}
}

// bugApplies: the keymove scenarios run only keymove bugs.
func kmBugApplies(name string) bool {
	b, ok := bugs.Lookup(name)
	return ok && b.Protocol == "keymove"
}

// planDone reports whether the executor has reported the plan's end.
func (kw *kmWorld) planDone() bool { return kw.summary != nil }

func sortShardIDs(ids []keymove.ShardID) {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}
