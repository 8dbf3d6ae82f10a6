package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"shardsim/checker/migratecheck"
	"shardsim/model/bugs"
	"shardsim/model/migrate"
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/fsm"
	"shardsim/model/migrate/group"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/job"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/route"
	"shardsim/model/migrate/rpc"
	"shardsim/nemesis"
	"shardsim/simclock"
	"shardsim/simkv"
	"shardsim/tla/tlatrace"
)

// migrateKind selects one of the migration scenarios.
type migrateKind int

const (
	splitOnce      migrateKind = iota // migrate: one manual split
	splitAbandoned                    // migrate-abandon: a split abandoned before CUTOVER
	hotspotSplits                     // hotspot: the detector decides
	splitStale                        // migrate-stale: slow watchers, read-heavy clients around the cutover
	listsOnly                         // lists: collection clients and compactors, no split
	listsSplit                        // lists-migrate: the same while the range holding them moves
)

// isLists reports whether the kind is one of the collection worlds.
func (k migrateKind) isLists() bool { return k == listsOnly || k == listsSplit }

// migrateWorld is one run of a migration scenario: the data plane (four nodes
// hosting three groups of three voters each), the metadata store, clients
// with their own coordinators, an operator, the nemesis, and the checkers.
type migrateWorld struct {
	w       *World
	kind    migrateKind
	opts    migrateOptions
	env     *migrate.Env
	cluster *group.Cluster
	meta    *simkv.Server
	net     *rpc.Network
	chaos   *nemesis.Chaos
	clients []*migrateClient
	rec     *migrateRecorder
	chk     *migrateChecks
	healAt  simclock.Time
	opDone  bool                // the operator finished its part
	lists   *listsPart          // the collection clients, compactors and checkers (lists worlds)
	trace   *tlatrace.Migration // the TLA+ trace recorder (-tla-trace), or nil
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
	migrateNodes  = 4
	migrateGroups = 3
)

// migrateVoters returns group g's initial voters: three consecutive nodes.
func migrateVoters(g int) []int {
	return []int{g % migrateNodes, (g + 1) % migrateNodes, (g + 2) % migrateNodes}
}

// migrateUserKeys are the route keys of the workload: b0..b2 on route 1 (group
// 0), k00..k11 on route 2 (group 1). Every world shares the one list: it is
// read only (and clipped, so that an append copies).
func migrateUserKeys() []string { return userKeyList }

var userKeyList = slices.Clip(func() []string {
	out := []string{"b0", "b1", "b2"}
	for i := 0; i < 12; i++ {
		out = append(out, fmt.Sprintf("k%02d", i))
	}
	return out
}())

// initialCatalog: route 1 ["", "k") on group 0, route 2 ["k", +inf) on
// group 1; group 2 starts empty.
func initialCatalog() catalog.Catalog {
	return catalog.Catalog{Version: 1, NextRouteID: 3, Routes: []catalog.Route{
		{ID: 1, Start: "", End: "k", Group: 0},
		{ID: 2, Start: "k", End: "", Group: 1},
	}}
}

// initialCatalogValue is initialCatalog encoded, and catalogKey the key
// it is stored under: the same in every world, so made once for all of
// them (read only: the metadata store copies the values it is given and
// never changes a key).
var initialCatalogValue, catalogKey = sharedBytes(initialCatalog().Encode()), sharedBytes([]byte(job.CatalogKey))

// sharedBytes returns b, made to be shared read only by worlds that run
// at once: its capacity is cut to its length, so that an append by any
// holder copies it rather than writing into spare room (an encoder's
// buffer has plenty) that another world's holder may be appending into.
func sharedBytes(b []byte) []byte { return slices.Clip(b) }

func newMigrateWorld(name string, kind migrateKind, cfg Config) (*migrateWorld, error) {
	healAt := simclock.Time(5 * time.Second)
	maxTime := healAt.Add(40 * time.Second)
	if kind == hotspotSplits {
		healAt = simclock.Time(6 * time.Second)
		maxTime = healAt.Add(60 * time.Second)
	}
	if kind == listsSplit {
		// Promotion is paced per batch of versions (promote_batch,
		// promote_pace), and the collection workload leaves up to a few
		// thousand versions in the moving range (1936 at seed 321): at one
		// version per 80 ms that is minutes of steady progress after the
		// heal, which M.JobTerminates would otherwise judge a stuck job.
		maxTime = healAt.Add(240 * time.Second)
	}
	w := NewWorld(name, cfg, simclock.Budget{MaxTime: maxTime, MaxEvents: 4_000_000})
	m := &migrateWorld{w: w, kind: kind, healAt: healAt, rec: newMigrateRecorder()}
	if kind.isLists() {
		var lo *listsOptions
		m.opts, lo = drawListsOptions(w.Swarm, kind)
		m.lists = newListsPart(m, lo)
	} else {
		m.opts = drawMigrateOptions(w.Swarm, kind)
	}
	if err := w.OptionsError(); err != nil {
		return nil, err
	}
	for _, b := range cfg.Bugs.Names() {
		if !migrateBugApplies(kind, b) {
			return nil, fmt.Errorf("bug %s does not apply to scenario %s", b, name)
		}
	}
	if err := m.build(cfg); err != nil {
		return nil, err
	}
	return m, nil
}

// build makes the world from the drawn options: the metadata store with
// the catalog, the groups and their voters, the nodes with their routing
// engines, the clients, the operator, the nemesis and the checkers.
func (m *migrateWorld) build(cfg Config) error {
	w, o := m.w, m.opts
	cat := initialCatalog()
	store, err := initialMeta(o.priorJobs)
	if err != nil {
		return err
	}
	m.meta = simkv.NewServer(w.Loop, store, o.metaFaults, w.Choices.Fork("meta.net"))

	states := make([][]*fsm.FSM, migrateGroups)
	for g := range states {
		states[g] = make([]*fsm.FSM, migrateNodes)
		for _, n := range migrateVoters(g) {
			states[g][n] = fsm.New(g, cfg.Bugs)
		}
	}
	m.cluster = group.New(w.Loop, o.groups, w.Choices.Fork("groups"), states)
	m.net = rpc.New(w.Loop, o.netFaults, w.Choices.Fork("groups.net"), func(g int) (simclock.ActorID, bool) {
		n, _ := m.cluster.Leader(g)
		if n < 0 {
			return 0, false
		}
		return m.cluster.Actor(n), true
	})
	m.net.AttachNodes(m.cluster.Actor)
	m.net.SetChaos(o.netChaos)
	engines := make([]*route.Engine, migrateNodes)
	for n := range engines {
		engines[n] = route.New(n, cat)
	}
	m.cluster.SetViewOf(func(n int) uint64 { return engines[n].View.Version })
	m.env = &migrate.Env{Loop: w.Loop, Cluster: m.cluster, Net: m.net, Meta: m.meta, Engines: engines,
		WatchLag: o.nodeLag, Bugs: cfg.Bugs, Cfg: o.proto, Counters: &migrate.Counters{}}
	m.chk = newMigrateChecks(m)
	m.cluster.Observe(m.chk)
	m.meta.Observe(metaObserver{m.chk})
	m.attachTLATrace(cfg)
	m.env.Hooks = migrate.Hooks{ReadOpen: m.chk.readOpen, ReadClose: m.chk.readClose, Detected: m.chk.detected, ViewAdopted: m.chk.nodeViewed}

	var metaActors []simclock.ActorID
	for n := 0; n < migrateNodes; n++ {
		id := w.Loop.Spawn(nodeActorNames[n], migrate.NewNode(m.env, n), simclock.NewNodeClock(o.maxSkew), w.Choices.Fork(nodeForkNames[n]))
		m.cluster.Attach(n, id)
		metaActors = append(metaActors, id)
	}
	m.bootstrap(w.Choices.Fork("bootstrap"), o.wl)
	for g := 0; g < migrateGroups; g++ {
		m.cluster.ElectNow(g, g%migrateNodes)
	}
	metaActors = append(metaActors, m.spawnClients(cat)...)
	if m.lists != nil {
		metaActors = append(metaActors, m.lists.spawn(m, cat)...)
	}
	if m.kind != hotspotSplits && m.kind != listsOnly {
		w.Loop.Spawn("operator", &migrateOperator{m: m}, nil, w.Choices.Fork("operator"))
	} else {
		m.opDone = true
	}
	const tick, maxDown = 100 * time.Millisecond, 400 * time.Millisecond
	m.chaos = &nemesis.Chaos{
		Targets: nemesis.NodeTargets(m.cluster, func(n int) simclock.Actor { return migrate.NewNode(m.env, n) }),
		Faults: []nemesis.Fault{
			nemesis.GroupLeaderMoves{Cluster: m.cluster, Rate: o.leaderRate},
			nemesis.NodeOutages{Nodes: migrateNodes, CrashRate: o.crashRate, Pause: o.pauseRate, MaxDown: maxDown},
			nemesis.ClockFaults{Rate: o.skewRate},
			nemesis.Partitions{Server: m.meta, Among: metaActors, Rate: o.partRate, MaxFor: maxDown},
			nemesis.LeaderChanges{Server: m.meta, Rate: o.metaLeader, MaxWindow: tick},
			nemesis.GroupMembership{Cluster: m.cluster, Rate: o.memberRate},
		},
		Tick: tick, HealAt: m.healAt, Servers: []*simkv.Server{m.meta}, Quiet: simkv.DefaultFaults(),
		OnHeal: func(*simclock.Context) {
			m.net.SetFaults(rpc.Quiet())
			m.net.SetChaos(rpc.Chaos{})
		},
	}
	w.Loop.Spawn("nemesis", m.chaos, nil, w.Choices.Fork("nemesis"))
	w.Loop.OnStep(m.chk.step)
	return nil
}

// Names of a world's node actors, choice forks and catalog viewers, and of
// the knobs drawn per node, made once rather than formatted in every world.
var (
	nodeActorNames  = numbered("n", "", migrateNodes)
	nodeViewerNames = numbered("node", "", migrateNodes)
	nodeForkNames   = numbered("node/n", "", migrateNodes)
	nodeLagKnobs    = numbered("node", "_watch_lag", migrateNodes)
	staleLagKnobs   = numbered("stale_node", "_lag", migrateNodes)
)

// numbered returns prefix+n+suffix for every n below count.
func numbered(prefix, suffix string, count int) []string {
	out := make([]string, count)
	for n := range out {
		out[n] = prefix + strconv.Itoa(n) + suffix
	}
	return out
}

// spawnClients starts the clients, each with its own coordinator, and
// returns their actors.
func (m *migrateWorld) spawnClients(cat catalog.Catalog) []simclock.ActorID {
	w, o := m.w, m.opts
	var out []simclock.ActorID
	for i := 0; i < o.clients; i++ {
		name := "client" + strconv.Itoa(i)
		ch := w.Choices.Fork("workload/" + name)
		lag, wl := o.coordLag, o.wl
		if i < o.fresh {
			// A writer that learns of catalog changes at once: the target
			// takes its writes right after the cutover.
			lag = 20 * time.Millisecond
			fw := *o.wl
			fw.readShare = 15
			wl = &fw
		}
		coord := migrate.NewCoordinator(m.env, name, cat, ch.Fork("watch"), lag)
		coord.OnView = m.chk.viewed
		coord.Passive = i >= o.fresh && float64(i-o.fresh) < o.passive*float64(o.clients-o.fresh)
		c := &migrateClient{idx: i, ops: o.opsPer, wl: wl, coord: coord, rec: m.rec, trace: w.Ops}
		m.clients = append(m.clients, c)
		out = append(out, w.Loop.Spawn(name, c, nil, ch))
	}
	return out
}

// migrateBugApplies says which migration bugs a scenario can exercise: abandon
// bugs need an abandon, the rest need a migration that may run to the end.
func migrateBugApplies(kind migrateKind, name string) bool {
	b, ok := bugs.Lookup(name)
	if ok && kind.isLists() {
		return b.Protocol == "listdelta"
	}
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
	var perGroup [migrateGroups][]*fsm.Write // each group's writes, in order
	ts := base
	n := 0
	cat := initialCatalog()
	var writes []fsm.Write // the entries' writes, allocated a chunk at a time
	// add loads a write of raw into group, the group of raw's route (looked
	// up once per user key, for all of its writes and rows).
	add := func(raw string, group int, del bool, ttl uint64) {
		ts += hlc.TS(1 + ch.Intn(3)<<hlc.LogicalBits)
		n++
		op := bootstrapOp(n)
		if len(writes) == cap(writes) {
			writes = make([]fsm.Write, 0, 32)
		}
		writes = append(writes, fsm.Write{Key: raw, Value: op, Tombstone: del, TTLms: ttl, TS: ts, Op: op})
		perGroup[group] = append(perGroup[group], &writes[len(writes)-1])
		// Loaded one after another before any client starts.
		at := simclock.Time(n - 1_000_000)
		m.rec.ops = append(m.rec.ops, migratecheck.KeyOp{Client: 99, Key: raw, Write: true, Delete: del, Op: op, Call: at, Return: at})
		m.rec.acked = append(m.rec.acked, migratecheck.AckedWrite{Op: op, Key: raw, TS: ts, Return: at})
	}
	groupOf := func(uk string) int { // the group of uk's route, which holds uk's rows too
		r, _ := cat.Lookup(keys.RouteKey(uk))
		return r.Group
	}
	m.reserveRecords(wl)
	hotKey := simclock.Pick(ch, wl.userKeys[3:])
	hotGroup := groupOf(hotKey)
	for i, hot := 0, 8+ch.Intn(16); i < hot; i++ {
		add(hotKey, hotGroup, ch.Chance(0.1), 0)
	}
	for _, uk := range wl.userKeys {
		g := groupOf(uk)
		for i, v := 0, 1+ch.Intn(3); i < v; i++ {
			var ttl uint64
			if ch.Chance(0.15) {
				ttl = uint64(ch.Between(1, 30_000))
			}
			add(uk, g, ch.Chance(0.15), ttl)
		}
		if ch.Chance(0.6) {
			f := simclock.Pick(ch, wl.rowFamilies())
			add(keys.Encode(f, uk, "0"), g, ch.Chance(0.2), 0)
		}
	}
	// One array of entries, group after group, sized once: the entries are
	// ~150 bytes each and growing a slice per group copied them repeatedly.
	entries := make([]fsm.Entry, 0, n)
	for g, ws := range perGroup {
		start := len(entries)
		for _, w := range ws {
			entries = append(entries, fsm.Entry{Kind: fsm.KindWrite, Write: w})
		}
		m.cluster.Bootstrap(g, entries[start:])
	}
}

// bootstrapOp names bootstrap's n-th write ("pre-n"). The first names
// are made once for every world (read only).
func bootstrapOp(n int) string {
	if n < len(bootstrapOps) {
		return bootstrapOps[n]
	}
	return "pre-" + strconv.Itoa(n)
}

// bootstrapOps[n] is "pre-n", for as many writes as bootstrap makes (at
// most 23 of the hot key and four per user key).
var bootstrapOps = func() []string {
	out := make([]string, 24+4*len(userKeyList))
	for n := 1; n < len(out); n++ {
		out[n] = "pre-" + strconv.Itoa(n)
	}
	return out
}()

// reserveRecords sizes the recorder's operation and acknowledged-write
// lists once for what bootstrap loads (at most 23 versions of the hot key
// and four rows per user key) and about one record per client operation,
// rather than letting them grow from empty by doubling (~100-byte records).
func (m *migrateWorld) reserveRecords(wl *migrateWorkload) {
	hint := 23 + 4*len(wl.userKeys) + m.opts.clients*m.opts.opsPer
	m.rec.ops = slices.Grow(m.rec.ops, hint)
	m.rec.acked = slices.Grow(m.rec.acked, hint)
}

// initialMeta returns the metadata store a world starts with: the catalog,
// then priorJobs terminal jobs (loadPriorJobs). For the counts a run
// draws, the store is made once, by the first world that needs it, and
// every world gets a fork of it (simkv.Store.Fork: worlds running at once
// may fork it together, and none can change it); larger counts, which
// only -opt asks for, are made afresh.
func initialMeta(priorJobs int) (*simkv.Store, error) {
	if priorJobs < 0 || priorJobs > maxPriorJobs {
		return newInitialMeta(priorJobs)
	}
	t := &metaTemplates[priorJobs]
	t.once.Do(func() { t.store, t.err = newInitialMeta(priorJobs) })
	if t.err != nil {
		return nil, t.err
	}
	return t.store.Fork(), nil
}

// metaTemplates[n] is the initial metadata store with n prior jobs, made
// on first use (initialMeta) and then only forked.
var metaTemplates [maxPriorJobs + 1]struct {
	once  sync.Once
	store *simkv.Store
	err   error
}

// newInitialMeta makes initialMeta's store.
func newInitialMeta(priorJobs int) (*simkv.Store, error) {
	store := simkv.NewStore(simkv.StoreConfig{})
	if _, err := store.Apply(0, simkv.Request{Put: &simkv.PutRequest{Key: catalogKey, Value: initialCatalogValue}}); err != nil {
		return nil, err
	}
	if err := loadPriorJobs(store, priorJobs); err != nil {
		return nil, err
	}
	return store, nil
}

// loadPriorJobs puts n terminal jobs of an earlier life of the cluster into
// the job history (all ended at time zero, before any node started), and
// the job id counter past them.
func loadPriorJobs(store *simkv.Store, n int) error {
	for id := uint64(1); id <= uint64(n); id++ {
		p := priorJobOf(id)
		if _, err := store.Apply(0, simkv.Request{Put: &simkv.PutRequest{Key: p.key, Value: p.value}}); err != nil {
			return err
		}
	}
	_, err := store.Apply(0, simkv.Request{Put: &simkv.PutRequest{Key: nextJobIDKey, Value: priorJobOf(uint64(n)).next}})
	return err
}

// priorJob is prior job id's history row (key and encoded job) and the
// job id counter's value once it is loaded (job.EncodeID(id)).
type priorJob struct{ key, value, next []byte }

// encodePriorJob makes priorJob id (0: no job, only the counter's value).
func encodePriorJob(id uint64) priorJob {
	p := priorJob{next: sharedBytes(job.EncodeID(id))}
	if id == 0 {
		return p
	}
	phase := job.Done
	if id%3 == 0 {
		phase = job.Abandoned
	}
	j := job.SplitJob{ID: id, SourceRouteID: 1, TargetGroup: 1, SplitKey: "k05", Phase: phase, Writes: 1}
	p.key, p.value = sharedBytes([]byte(job.HistKey(0, id))), sharedBytes(j.Encode())
	return p
}

// priorJobOf returns priorJob id, encoded once for every world for the
// ids a run draws (prior_jobs), and afresh for the larger ones -opt may
// ask for.
func priorJobOf(id uint64) priorJob {
	if id < uint64(len(priorJobs)) {
		return priorJobs[id]
	}
	return encodePriorJob(id)
}

// priorJobs[id] is encodePriorJob(id) for every id prior_jobs draws. Every
// world shares them, read only: the metadata store copies the values it
// is given and never changes a key.
var priorJobs = func() []priorJob {
	out := make([]priorJob, maxPriorJobs+1)
	for id := range out {
		out[id] = encodePriorJob(uint64(id))
	}
	return out
}()

// maxPriorJobs is the most terminal jobs a run draws for its history.
const maxPriorJobs = 20

// nextJobIDKey is job.NextJobIDKey as bytes, shared read only.
var nextJobIDKey = sharedBytes([]byte(job.NextJobIDKey))

// clientFamilies are the internal families clients write rows of directly
// (the transaction families belong to the transaction layer; the collection
// families to the lists worlds, whose clients keep their layout). Every
// world shares the one list: it is read only (and clipped, so that an
// append copies).
func clientFamilies() []keys.Family { return clientFamilyList }

var clientFamilyList = slices.Clip(clientFamiliesOf())

// clientFamiliesOf computes clientFamilies.
func clientFamiliesOf() []keys.Family {
	var out []keys.Family
	for _, f := range keys.Families()[1:] {
		if f != keys.FamilyTxnLock && f != keys.FamilyTxnCommit && f != keys.FamilyTxnRollback &&
			f != keys.FamilyHash && f != keys.FamilySet && f != keys.FamilyZSet {
			out = append(out, f)
		}
	}
	return out
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
	if m.lists != nil && !m.lists.done() {
		return false
	}
	if m.kind == hotspotSplits {
		// Let the detector see the load die down.
		return m.w.Loop.Now() >= m.chk.lastJobEnd.Add(2*m.env.Cfg.Detector.Window)
	}
	return true
}
