package scenarios

import (
	"fmt"
	"time"

	"shardsim/checker/migratecheck"
	"shardsim/fate"
	"shardsim/model/bugs"
	"shardsim/model/migrate"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/group"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/rpc"
	"shardsim/nemesis"
	"shardsim/simclock"
	"shardsim/simkv"
)

// migrateKind selects one of the migration scenarios.
type migrateKind int

const (
	splitOnce      migrateKind = iota // migrate: one manual split
	splitAbandoned                    // migrate-abandon: a split abandoned before CUTOVER
	hotspotSplits                     // hotspot: the detector decides
)

// migrateWorld is one run of a migration scenario: the data plane (three nodes
// hosting three groups), the metadata store, clients with their own
// coordinators, an operator, the nemesis, and the checkers.
type migrateWorld struct {
	w       *World
	kind    migrateKind
	env     *migrate.Env
	cluster *group.Cluster
	meta    *simkv.Server
	net     *rpc.Network
	chaos   *nemesis.Chaos
	clients []*migrateClient
	rec     *migrateRecorder
	chk     *migrateChecks
	healAt  simclock.Time
	opDone  bool // the operator finished its part
	split   splitPlan
}

// splitPlan is what the operator of migrate and migrate-abandon does.
type splitPlan struct {
	at        time.Duration
	route     uint64
	key       string
	target    int
	abandonAt job.Phase // 0: never
}

const (
	migrateNodes  = 3
	migrateGroups = 3
)

// migrateUserKeys are the route keys of the workload: b0..b2 on route 1 (group
// 0), k00..k11 on route 2 (group 1).
func migrateUserKeys() []string {
	out := []string{"b0", "b1", "b2"}
	for i := 0; i < 12; i++ {
		out = append(out, fmt.Sprintf("k%02d", i))
	}
	return out
}

// initialCatalog: route 1 ["", "k") on group 0, route 2 ["k", +inf) on
// group 1; group 2 starts empty.
func initialCatalog() catalog.Catalog {
	return catalog.Catalog{Version: 1, NextRouteID: 3, Routes: []catalog.Route{
		{ID: 1, Start: "", End: "k", Group: 0},
		{ID: 2, Start: "k", End: "", Group: 1},
	}}
}

// migrateOptions is everything a migration run draws: the workload, the
// protocol's pacing, both networks' faults, the groups' timing, the
// nemesis rates, and the operator's plan (or the hotspot detector's
// thresholds).
type migrateOptions struct {
	clients, opsPerClient int
	watchLag              time.Duration
	workload              *migrateWorkload
	protocol              migrate.Config
	groupNet              fate.Config // the group network's request faults
	metaNet               fate.Config // the metadata store's request faults
	groups                group.Config
	leader, crash, pause  float64 // nemesis rates per tick
	skew, metaPartition   float64
	metaLeader            float64
	maxSkew               time.Duration
	split                 splitPlan // migrate and migrate-abandon
}

// drawMigrateOptions draws every option of a migration run of kind, in a
// fixed order, from the swarm (which applies -opt overrides and records
// each value for the report's swarm line).
func drawMigrateOptions(sw *nemesis.Swarm, kind migrateKind) migrateOptions {
	o := migrateOptions{clients: sw.Int("clients", 2, 4), opsPerClient: sw.Int("ops_per_client", 25, 50)}
	o.watchLag = sw.Duration("watch_lag", 20*time.Millisecond, time.Second)
	wl := &migrateWorkload{userKeys: migrateUserKeys(), hotShare: 0.3, pace: 100 * time.Millisecond}
	wl.internal = sw.Rate("internal_keys", 0.9, 0.1, 0.5)
	wl.unversioned = sw.Rate("unversioned_writes", 0.8, 0.1, 0.6)
	wl.ttl = sw.Rate("ttl_writes", 0.7, 0.05, 0.3)
	o.workload = wl
	pcfg := migrate.DefaultConfig()
	pcfg.ExportRows = sw.Int("export_rows", 2, 12)
	pcfg.ExportBudget = pcfg.ExportRows + sw.Int("export_budget_extra", 0, 12)
	pcfg.PromoteBatch = sw.Int("promote_batch", 1, 4)
	pcfg.PromotePace = sw.Duration("promote_pace", 5*time.Millisecond, 80*time.Millisecond)
	pcfg.Grace = sw.Duration("grace", 10*time.Millisecond, 200*time.Millisecond)
	pcfg.StepRetries = sw.Int("step_retries", 2, 6)
	o.groupNet, o.metaNet = drawMigrateNets(sw)
	o.groups = group.Config{Nodes: migrateNodes, Groups: migrateGroups,
		ReplMin: 200 * time.Microsecond, ReplMax: 2 * time.Millisecond,
		ApplyMin: 100 * time.Microsecond, ApplyMax: time.Millisecond,
		SlowApplyMax: 80 * time.Millisecond, ElectMin: 5 * time.Millisecond, ElectMax: 60 * time.Millisecond}
	o.groups.SlowApply = sw.Rate("slow_apply", 0.6, 0.02, 0.3)
	o.leader = sw.Rate("leader_change", 0.6, 0.02, 0.2)
	o.crash = sw.Rate("crash", 0.5, 0.01, 0.08)
	o.pause = sw.Rate("pause", 0.4, 0.01, 0.08)
	o.skew = sw.Rate("clock_skew", 0.6, 0.05, 0.3)
	o.maxSkew = sw.Duration("max_skew", 0, 2*time.Second)
	o.metaPartition = sw.Rate("meta_partition", 0.4, 0.01, 0.1)
	o.metaLeader = sw.Rate("meta_leader_change", 0.4, 0.01, 0.1)
	switch kind {
	case splitOnce, splitAbandoned:
		o.split.at = sw.Duration("split_at", 50*time.Millisecond, time.Second)
		o.split.route = 2
		o.split.key = fmt.Sprintf("k%02d", sw.Enum("split_key", 2, 10))
		o.split.target = 2
		if kind == splitAbandoned {
			o.split.abandonAt = job.Phase(sw.Enum("abandon_phase", int(job.Planned), int(job.DeltaCopy)))
		}
	case hotspotSplits:
		o.opsPerClient += hotspotOptions(sw, &pcfg, wl)
	}
	o.protocol = pcfg
	return o
}

// drawMigrateNets draws the request faults of the group network and of
// the metadata store.
func drawMigrateNets(sw *nemesis.Swarm) (fate.Config, fate.Config) {
	nf := nemesis.DrawRequestFaults(sw, "net_", nemesis.RequestFaultRange{On: 0.5, MinLose: 0.005, MaxLose: 0.05, MinDelay: 0.01, MaxDelay: 0.1}, rpc.Quiet())
	nf.MaxDelay = 300 * time.Millisecond
	kf := nemesis.DrawRequestFaults(sw, "meta_", nemesis.RequestFaultRange{On: 0.4, MinLose: 0.005, MaxLose: 0.05, MinDelay: 0.01, MaxDelay: 0.1}, simkv.DefaultFaults())
	kf.MaxDelay = 500 * time.Millisecond
	kf.Timeout = 300 * time.Millisecond
	return nf, kf
}

func newMigrateWorld(name string, kind migrateKind, cfg Config) (*migrateWorld, error) {
	healAt := simclock.Time(5 * time.Second)
	maxTime := healAt.Add(40 * time.Second)
	if kind == hotspotSplits {
		healAt = simclock.Time(6 * time.Second)
		maxTime = healAt.Add(60 * time.Second)
	}
	w := NewWorld(name, cfg, simclock.Budget{MaxTime: maxTime, MaxEvents: 3_000_000})
	m := &migrateWorld{w: w, kind: kind, healAt: healAt, rec: newMigrateRecorder()}
	opts := drawMigrateOptions(w.Swarm, kind)
	if err := w.OptionsError(); err != nil {
		return nil, err
	}
	for _, b := range cfg.Bugs.Names() {
		if !migrateBugApplies(kind, b) {
			return nil, fmt.Errorf("bug %s does not apply to scenario %s", b, name)
		}
	}
	m.split = opts.split
	if err := m.build(opts, cfg.Bugs); err != nil {
		return nil, err
	}
	return m, nil
}

// build builds the world: the metadata store with the first catalog, the
// groups and their network, the checkers, then the actors.
func (m *migrateWorld) build(opts migrateOptions, set bugs.Set) error {
	w := m.w
	cat := initialCatalog()
	store := simkv.NewStore(simkv.StoreConfig{})
	if _, err := store.Apply(0, simkv.Request{Put: &simkv.PutRequest{Key: []byte(job.CatalogKey), Value: cat.Encode()}}); err != nil {
		return err
	}
	m.meta = simkv.NewServer(w.Loop, store, opts.metaNet, w.Choices.Fork("meta.net"))
	states := make([][]*fsm.FSM, migrateGroups)
	for g := range states {
		for n := 0; n < migrateNodes; n++ {
			states[g] = append(states[g], fsm.New(g, cat, set))
		}
	}
	m.cluster = group.New(w.Loop, opts.groups, w.Choices.Fork("groups"), states)
	m.net = rpc.New(w.Loop, opts.groupNet, w.Choices.Fork("groups.net"), func(g int) (simclock.ActorID, bool) {
		n, _ := m.cluster.Leader(g)
		if n < 0 {
			return 0, false
		}
		return m.cluster.Actor(n), true
	})
	m.env = &migrate.Env{Loop: w.Loop, Cluster: m.cluster, Net: m.net, Meta: m.meta, Bugs: set, Cfg: opts.protocol}
	m.chk = newMigrateChecks(m)
	m.cluster.Observe(m.chk)
	m.meta.Observe(metaObserver{m.chk})
	m.env.Hooks = migrate.Hooks{ReadOpen: m.chk.readOpen, ReadClose: m.chk.readClose, Detected: m.chk.detected}
	m.spawn(opts, cat)
	w.Loop.OnStep(m.chk.step)
	return nil
}

// spawn starts the nodes, the clients, the operator and the nemesis.
func (m *migrateWorld) spawn(opts migrateOptions, cat catalog.Catalog) {
	w := m.w
	var metaActors []simclock.ActorID
	for n := 0; n < migrateNodes; n++ {
		id := w.Loop.Spawn(fmt.Sprintf("n%d", n), migrate.NewNode(m.env, n), simclock.NewNodeClock(opts.maxSkew), nil)
		m.cluster.Attach(n, id)
		metaActors = append(metaActors, id)
	}
	m.bootstrap(w.Choices.Fork("bootstrap"), opts.workload)
	for g := 0; g < migrateGroups; g++ {
		m.cluster.ElectNow(g, g%migrateNodes)
	}
	for i := 0; i < opts.clients; i++ {
		name := fmt.Sprintf("client%d", i)
		ch := w.Choices.Fork("workload/" + name)
		coord := migrate.NewCoordinator(m.env, name, cat, ch.Fork("watch"), opts.watchLag)
		coord.OnView = m.chk.viewed
		c := &migrateClient{idx: i, ops: opts.opsPerClient, wl: opts.workload, coord: coord, rec: m.rec, trace: w.Ops}
		m.clients = append(m.clients, c)
		id := w.Loop.Spawn(name, c, nil, ch)
		metaActors = append(metaActors, id)
	}
	if m.kind != hotspotSplits {
		w.Loop.Spawn("operator", &migrateOperator{m: m}, nil, w.Choices.Fork("operator"))
	} else {
		m.opDone = true
	}
	const tick, maxDown = 100 * time.Millisecond, 400 * time.Millisecond
	m.chaos = &nemesis.Chaos{
		Targets: nemesis.NodeTargets(m.cluster, func(n int) simclock.Actor { return migrate.NewNode(m.env, n) }),
		Faults: []nemesis.Fault{
			nemesis.GroupLeaderMoves{Cluster: m.cluster, Rate: opts.leader},
			nemesis.NodeOutages{Nodes: migrateNodes, CrashRate: opts.crash, Pause: opts.pause, MaxDown: maxDown},
			nemesis.ClockFaults{Rate: opts.skew},
			nemesis.Partitions{Server: m.meta, Among: metaActors, Rate: opts.metaPartition, MaxFor: maxDown},
			nemesis.LeaderChanges{Server: m.meta, Rate: opts.metaLeader, MaxWindow: tick},
		},
		Tick: tick, HealAt: m.healAt, Servers: []*simkv.Server{m.meta}, Quiet: simkv.DefaultFaults(),
		OnHeal: func(*simclock.Context) { m.net.SetFaults(rpc.Quiet()) },
	}
	w.Loop.Spawn("nemesis", m.chaos, nil, w.Choices.Fork("nemesis"))
}

// migrateBugApplies says which migration bugs a scenario can exercise: abandon
// bugs need an abandon, the rest need a migration that may run to the end.
func migrateBugApplies(kind migrateKind, name string) bool {
	b, ok := bugs.Lookup(name)
	if !ok || b.Protocol != "migrate" {
		return false
	}
	if name == bugs.MigrateAbandonKeepsFence {
		return kind == splitAbandoned
	}
	return true
}

// bootstrap loads history into the groups before the world starts: a few
// versions of every user key (a hot key with many, to stress chunking
// within one key), rows of internal families, tombstones and TTLs.
func (m *migrateWorld) bootstrap(ch *simclock.Choices, wl *migrateWorkload) {
	base := hlc.Make(migrate.DefaultConfig().EpochMs-20_000, 0)
	entries := make([][]fsm.Entry, migrateGroups)
	ts := base
	n := 0
	add := func(raw string, del bool, ttl uint64) {
		cat := initialCatalog()
		r, _ := cat.Lookup(keys.RouteKey(raw))
		ts += hlc.TS(1 + ch.Intn(3)<<hlc.LogicalBits)
		n++
		op := fmt.Sprintf("pre-%d", n)
		w := &fsm.Write{Key: raw, Value: op, Tombstone: del, TTLms: ttl, TS: ts, HasVersion: true, Observed: 1, Op: op}
		entries[r.Group] = append(entries[r.Group], fsm.Entry{Kind: fsm.KindWrite, Write: w})
		// Loaded one after another before any client starts.
		at := simclock.Time(n - 1_000_000)
		m.rec.ops = append(m.rec.ops, migratecheck.KeyOp{Client: 99, Key: raw, Write: true, Delete: del, Op: op, Call: at, Return: at})
		m.rec.acked = append(m.rec.acked, migratecheck.AckedWrite{Op: op, Key: raw, TS: ts})
	}
	hotKey := simclock.Pick(ch, wl.userKeys[3:])
	for i, hot := 0, 8+ch.Intn(16); i < hot; i++ {
		add(hotKey, ch.Chance(0.1), 0)
	}
	for _, uk := range wl.userKeys {
		for i, v := 0, 1+ch.Intn(3); i < v; i++ {
			var ttl uint64
			if ch.Chance(0.15) {
				ttl = uint64(ch.Between(1, 30_000))
			}
			add(uk, ch.Chance(0.15), ttl)
		}
		if ch.Chance(0.6) {
			f := simclock.Pick(ch, keys.Families()[1:])
			add(keys.Encode(f, uk, "0"), ch.Chance(0.2), 0)
		}
	}
	for g, es := range entries {
		m.cluster.Bootstrap(g, es)
	}
}

// done reports whether the run has converged: past the heal, every client
// finished, the operator finished and no job is live.
func (m *migrateWorld) done() bool {
	if m.w.Loop.Now() < m.healAt || !m.opDone || m.chk.liveJob != 0 {
		return false
	}
	for _, c := range m.clients {
		if !c.done {
			return false
		}
	}
	if m.kind == hotspotSplits {
		// Let the detector see the load die down.
		return m.w.Loop.Now() >= m.chk.lastJobEnd.Add(2*m.env.Cfg.Detector.Window)
	}
	return true
}
