package scenarios

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"shardsim/checker/coordcheck"
	"shardsim/model/bugs"
	"shardsim/model/coord"
	"shardsim/nemesis"
	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
	"shardsim/tla/tlatrace"
)

// coordProperties are the properties the coordination scenarios judge.
var coordProperties = []property.Name{
	property.CMutualExclusion, property.CZombieRejection, property.CFenceMonotonicity, property.CTerminalIrreversibility,
	property.CTerminalUnleased, property.CRecordInvariants, property.CCursorMonotonicity, property.CCursorBounds,
	property.CSplitCoverage, property.CSplitAtomicity, property.CIdempotency, property.CTenantIsolation,
	property.CRunTerminalIrreversibility, property.CCooldown, property.CEventuallyLeased, property.CConvergence, property.CLinearizable,
}

// coordShape is what distinguishes the coordination scenarios: when they
// heal, how many task slots a worker runs, and their fault profile.
type coordShape struct {
	name                           string
	description                    string
	healAt                         time.Duration
	minSlots                       int
	maxSlots                       int
	profile                        nemesis.CoordProfile
	convergeWithin                 time.Duration
	coordUnit                      time.Duration // virtual time of one logical unit
	nemesisTick                    time.Duration
	stormExtra                     time.Duration // a lease storm outlasts a lease by this much
	maxWorkers                     int
	maxTenants, maxRuns, maxShards int
	churn                          coordChurn
	// backlogWait is added to the C.EventuallyLeased bound. Claims serve a
	// tenant's runs in run order and workers take tenants in turn, idling
	// between them, so a shard of a later run waits out the backlog of
	// earlier runs of its tenant while workers count as available; a shape
	// whose splits grow that backlog needs the bound to cover it.
	backlogWait time.Duration
}

// coordChurn is how often a shape's workers split and park and how often
// its clients and admin make mistakes: the draws that decide whether the
// split, park and unpark rules are exercised at all in a run.
type coordChurn struct {
	split, park, mistakes, adminSlips rateRange
	maxUnparks                        int // unpark_budget is drawn in [0, maxUnparks]
}

// rateRange is a rate option's draw: on is the chance the rate is not
// zero, and then it is drawn in [lo, hi].
type rateRange struct{ on, lo, hi float64 }

// coordFaults is the fault profile of the coord and coord-churn shapes.
var coordFaults = nemesis.CoordProfile{
	NetOn: 0.6, CrashOn: 0.4, PauseOn: 0.4, PartitionOn: 0.4, SkewOn: 0.4, LeaderOn: 0.3, StormOn: 0.2, StallOn: 0.3,
	MaxCrash: 0.08, MaxPause: 0.08, MaxPartition: 0.08, MaxSkewRate: 0.2, MaxLeader: 0.04, MaxStorm: 0.02, MaxStall: 0.02,
	MaxSkew: 250 * time.Millisecond,
}

// quietChurn is the churn of the coord and coord-zombie shapes.
var quietChurn = coordChurn{
	split:      rateRange{0.8, 0.02, 0.15},
	park:       rateRange{0.5, 0.005, 0.04},
	mistakes:   rateRange{0.5, 0.005, 0.05},
	adminSlips: rateRange{0.5, 0.05, 0.3},
	maxUnparks: 2,
}

var coordShapes = []coordShape{
	{
		name:        "coord",
		description: "workers with task slots lease, checkpoint, split, complete and park shards of several tenants' runs through the etcd-backed coordinator, under network, crash, pause, partition, skew and storm faults, then heal",
		healAt:      8 * time.Second, minSlots: 1, maxSlots: 2,
		profile:        coordFaults,
		convergeWithin: 30 * time.Second, coordUnit: 100 * time.Millisecond, nemesisTick: 250 * time.Millisecond,
		stormExtra: 500 * time.Millisecond, maxWorkers: 4, maxTenants: 3, maxRuns: 2, maxShards: 3,
		churn: quietChurn,
	},
	{
		name:        "coord-zombie",
		description: "the coord world with pauses, task stalls, lease storms and clock skew turned up: zombies that still believe in their leases, including ones that share their worker's identity with the task that took over",
		healAt:      10 * time.Second, minSlots: 2, maxSlots: 2,
		profile: nemesis.CoordProfile{
			NetOn: 0.5, CrashOn: 0.3, PauseOn: 0.9, PartitionOn: 0.4, SkewOn: 0.9, LeaderOn: 0.2, StormOn: 0.6, StallOn: 0.9,
			MaxCrash: 0.05, MaxPause: 0.2, MaxPartition: 0.06, MaxSkewRate: 0.4, MaxLeader: 0.03, MaxStorm: 0.08, MaxStall: 0.08,
			MaxSkew: time.Second,
		},
		convergeWithin: 35 * time.Second, coordUnit: 100 * time.Millisecond, nemesisTick: 250 * time.Millisecond,
		stormExtra: time.Second, maxWorkers: 4, maxTenants: 2, maxRuns: 2, maxShards: 2,
		churn: quietChurn,
	},
	{
		// Splits, parks, unparks and the mistakes around them are rare in
		// coord (a split plan with a gap is met in about 2% of its seeds, an
		// unpark of a finished shard in under 1%), so bugs of those rules
		// would need thousands of coord seeds. This shape makes them common
		// and keeps coord's faults.
		name:        "coord-churn",
		description: "the coord world with splits, parks, unparks and client and admin mistakes always on and frequent: every split plan, park and unpark rule is met in most runs",
		healAt:      8 * time.Second, minSlots: 1, maxSlots: 2,
		profile:        coordFaults,
		convergeWithin: 30 * time.Second, coordUnit: 100 * time.Millisecond, nemesisTick: 250 * time.Millisecond,
		stormExtra: 500 * time.Millisecond, maxWorkers: 4, maxTenants: 3, maxRuns: 2, maxShards: 3,
		churn: coordChurn{
			split:      rateRange{1, 0.1, 0.3},
			park:       rateRange{1, 0.04, 0.15},
			mistakes:   rateRange{1, 0.05, 0.2},
			adminSlips: rateRange{1, 0.2, 0.6},
			maxUnparks: 3,
		},
		backlogWait: 6 * time.Second,
	},
}

func init() {
	for _, sh := range coordShapes {
		sh := sh
		Register(Scenario{Name: sh.name, Description: sh.description, Properties: coordProperties, Reach: "coord",
			Run: func(cfg Config) (Result, error) { return runCoord(sh, cfg) }})
	}
}

// coordWorkload are the workload's swarm options.
type coordWorkload struct {
	slots        int
	split        float64 // chance per step of splitting the held shard
	park         float64 // chance per step of parking it
	mistakes     float64 // chance per action of a client mistake
	adminSlips   float64 // chance per decision of an admin acting on a stale view
	staleUnpark  float64 // chance per remembered parked shard that the admin unparks it from memory when closing its run
	listAcquire  float64 // chance of leasing by listing and acquiring rather than claiming
	sticky       float64 // chance of re-acquiring a shard just lost
	unparkBudget int     // unparks per shard before the admin fails its run
	abort        float64 // chance per admin round of ending an open run with shards in flight
	eventCap     int     // each tenant's event collector holds at most this many events between drains
	retryLimit   uint32  // each run's MaxShardRetries (0: none): past it, acquire's capacity hint says back off
}

// coordEnv is what every actor of a coordination world shares.
type coordEnv struct {
	w       *World
	topo    coordTopo
	opts    coordWorkload
	server  *simkv.Server
	ecfg    coord.EtcdConfig
	unit    time.Duration
	history *coordcheck.History
	effects *coordcheck.EffectLog
	live    *coordcheck.Liveness
	stalls  nemesis.Stalls
	durable *coordcheck.Durable
	replays *coordcheck.Replays
	chaos   *nemesis.Chaos
	events  map[coord.TenantID]*coord.EventCollector // per tenant, drained by the admin
	// instances counts the coordinators built so far (nextInstance).
	instances uint64
	// opStats holds the counter name of each request kind ("op_claim"),
	// made once rather than per request.
	opStats map[coordcheck.RequestKind]string
}

// opStat returns the name of the counter of requests of kind k.
func (env *coordEnv) opStat(k coordcheck.RequestKind) string {
	name, ok := env.opStats[k]
	if !ok {
		if env.opStats == nil {
			env.opStats = map[coordcheck.RequestKind]string{}
		}
		name = "op_" + k.String()
		env.opStats[k] = name
	}
	return name
}

// collect hands a request's events to its tenant's collector (whose
// ceiling may drop some) and counts what it dropped.
func (env *coordEnv) collect(t coord.TenantID, events []coord.Event) {
	c := env.events[t]
	if c == nil || len(events) == 0 {
		return
	}
	for _, e := range events {
		if e.Tenant != t {
			return // a foreign event: CheckAnswer has failed the run
		}
	}
	if kept := c.EmitAll(events); kept < len(events) {
		env.w.ReachN("events.dropped_at_capacity", int64(len(events)-kept))
	}
}

// allRunsTerminal asks the coordinator whether every run has ended.
func (env *coordEnv) allRunsTerminal(c *coordCaller) bool {
	for _, run := range env.topo.runs {
		rec, o := c.getRun(run.tenant, run.id)
		if o.Out.Code != 0 || o.Out.Ambiguous || !rec.Status.Terminal() {
			return false
		}
	}
	return true
}

// coordOptions is everything a coordination run draws: its topology, the
// workload's habits and the fault mix.
type coordOptions struct {
	leaseUnits                  int
	tenants, runs, shards, keys int
	workers                     int
	workload                    coordWorkload
	cooldown                    coord.LogicalDuration // 0: no claim cooldown
	shardLimit                  int                   // 0: the default limits; else the per-tenant shard ceiling
	backoff                     time.Duration         // the etcd backend's first backoff between attempts
	faults                      nemesis.CoordFaults
	leaseFor                    time.Duration // a lease in virtual time
}

// drawCoordOptions draws every option of a coordination run of shape sh,
// in a fixed order, from the swarm (which applies -opt overrides and
// records each value for the report's swarm line).
func drawCoordOptions(sw *nemesis.Swarm, sh coordShape) coordOptions {
	o := coordOptions{leaseUnits: sw.Int("lease_units", 10, 20)}
	o.tenants = sw.Int("tenants", 1, sh.maxTenants)
	o.runs = sw.Int("runs", 1, sh.maxRuns)
	o.shards = sw.Int("shards", 1, sh.maxShards)
	o.keys = sw.Int("keys", 8, 24)
	o.workers = sw.Int("workers", 2, sh.maxWorkers)
	o.workload = coordWorkload{
		slots:        sw.Int("slots", sh.minSlots, sh.maxSlots),
		split:        sw.Rate("split", sh.churn.split.on, sh.churn.split.lo, sh.churn.split.hi),
		park:         sw.Rate("park", sh.churn.park.on, sh.churn.park.lo, sh.churn.park.hi),
		mistakes:     sw.Rate("mistakes", sh.churn.mistakes.on, sh.churn.mistakes.lo, sh.churn.mistakes.hi),
		adminSlips:   sw.Rate("admin_mistakes", sh.churn.adminSlips.on, sh.churn.adminSlips.lo, sh.churn.adminSlips.hi),
		listAcquire:  sw.Rate("list_acquire", 0.7, 0.1, 0.5),
		sticky:       sw.Rate("sticky", 0.5, 0.1, 0.6),
		unparkBudget: sw.Int("unpark_budget", 0, sh.churn.maxUnparks),
	}
	if sw.Flag("cooldown", 0.3) {
		o.cooldown = coord.LogicalDuration(sw.Int("cooldown_units", 1, 5))
	}
	o.leaseFor = time.Duration(o.leaseUnits) * sh.coordUnit
	o.faults = nemesis.DrawCoordFaults(sw, sh.profile, o.leaseFor)
	o.workload.abort = sw.Rate("abort", 0.4, 0.01, 0.08)
	o.workload.eventCap = sw.Int("event_cap", 2, 64)
	if sw.Flag("shard_limit", 0.3) {
		o.shardLimit = o.runs*o.shards + sw.Int("shard_headroom", 1, 6)
	}
	o.backoff = time.Duration(sw.Int("backoff_ms", 1, 40)) * time.Millisecond
	o.workload.retryLimit = uint32(sw.Int("retry_limit", 0, 8))
	// Not drawn (sweeps and choice files run as before): admin_mistakes
	// unless overridden, so a search can make the stale unpark free.
	o.workload.staleUnpark = sw.FollowRate("stale_unpark", "admin_mistakes", o.workload.adminSlips)
	return o
}

// coordCheckers are the judges of a coordination world.
type coordCheckers struct {
	durable *coordcheck.Durable
	live    *coordcheck.Liveness
	lin     *coordcheck.Linearizable
}

func runCoord(sh coordShape, cfg Config) (Result, error) {
	for _, name := range cfg.Bugs.Names() {
		if b, _ := bugs.Lookup(name); b.Protocol != "coord" {
			return Result{}, fmt.Errorf("bug %s does not apply to scenario %s", name, sh.name)
		}
	}
	healAt := simclock.Time(sh.healAt)
	end := healAt.Add(sh.convergeWithin + 2*time.Second)
	w := NewWorld(sh.name, cfg, simclock.Budget{MaxTime: end, MaxEvents: 5_000_000})
	defer w.Loop.Close()
	opts := drawCoordOptions(w.Swarm, sh)
	if err := w.OptionsError(); err != nil {
		return Result{}, err
	}
	env, chk, err := buildCoord(w, sh, opts, cfg.Bugs)
	if err != nil {
		return Result{}, err
	}
	var trace *tlatrace.Coord
	if cfg.TLATrace != nil {
		trace = tlatrace.NewCoord(sh.coordUnit, env.topo.leaseDur, opts.cooldown)
		chk.durable.OnRequestChange(trace.Observe)
	}
	stop := w.Run()
	if !w.Failed() {
		at := w.Loop.Now()
		if stop == simclock.TimeBudget {
			at = end
		}
		chk.live.Finish(at)
		w.Fail(chk.live.Err())
	}
	coordStats(w, env.server, chk.durable, env)
	reachFaults(w, env.chaos.Stats(), env.server.Stats(), statOf(w, "stalls"))
	if cfg.Histories != nil {
		chk.lin.EachHistory(env.history.Ops(), cfg.showHistory)
	}
	if !w.Failed() {
		w.Judge(chk.lin.Check(env.history.Ops(), cfg.checkTimeout()))
	}
	if trace != nil {
		if err := trace.WriteModule(cfg.TLATrace, cfg.traceModule()); err != nil {
			return Result{}, err
		}
	}
	res := w.Result()
	if res.Verdict == property.VerdictViolation {
		res.Tail = relevantTail(env.history, res.Subject, res.Detail, res.Tail)
	}
	return res, nil
}

// buildCoord builds a coordination world: the simulated etcd and its
// checkers, the admin, the workers and the nemesis.
func buildCoord(w *World, sh coordShape, opts coordOptions, set bugs.Set) (*coordEnv, coordCheckers, error) {
	healAt := simclock.Time(sh.healAt)
	topo := newCoordTopo(opts.tenants, opts.runs, opts.shards, opts.keys, coord.LogicalDuration(opts.leaseUnits))
	store := simkv.NewStore(simkv.StoreConfig{})
	server := simkv.NewServer(w.Loop, store, opts.faults.Net, w.Choices.Fork("kv.net"))
	ecfg := coord.EtcdConfig{TimeUnit: sh.coordUnit}
	ecfg.Config = coord.DefaultConfig()
	ecfg.DefaultLeaseDuration, ecfg.ClaimCooldown, ecfg.Bugs = topo.leaseDur, opts.cooldown, set
	if opts.shardLimit > 0 {
		ecfg.Limits.MaxPerTenant = opts.shardLimit
	}
	ecfg.BackoffBase, ecfg.BackoffMax = opts.backoff, 64*opts.backoff
	ecfg = ecfg.WithDefaults()
	if err := ecfg.Validate(); err != nil {
		return nil, coordCheckers{}, err
	}
	env := &coordEnv{w: w, topo: topo, opts: opts.workload, server: server, ecfg: ecfg, unit: sh.coordUnit,
		history: coordcheck.NewHistory(), effects: coordcheck.NewEffectLog(), stalls: opts.faults.Stalls}
	env.stalls.Until = healAt

	chk := coordCheckers{
		durable: coordcheck.NewDurable(store, ecfg.Namespace, sh.coordUnit, opts.cooldown, env.history),
		live:    coordcheck.NewLiveness(healAt, 2*opts.leaseFor+opts.faults.MaxSkew+2*time.Second+sh.backlogWait, sh.convergeWithin, sh.coordUnit),
		lin:     coordcheck.NewLinearizable(),
	}
	env.live, env.durable, env.replays = chk.live, chk.durable, coordcheck.NewReplays()
	chk.durable.OnShardsChange(env.replays.ObserveShards)
	env.events = map[coord.TenantID]*coord.EventCollector{}
	for _, t := range topo.tenants {
		env.events[t] = coord.NewEventCollectorMax(opts.workload.eventCap)
	}
	chk.durable.OnShardsChange(env.effects.ObserveShards)
	chk.durable.OnChange(chk.live.Observe)
	chk.durable.OnShardsChange(chk.lin.ObserveShards)
	server.Observe(chk.durable)
	w.Loop.OnStep(func() {
		w.Fail(chk.durable.Err())
		w.Fail(env.effects.Err())
		w.Fail(env.replays.Err())
	})
	spawnCoordActors(env, sh, opts, healAt)
	return env, chk, nil
}

// spawnCoordActors starts the admin, the workers and the nemesis.
func spawnCoordActors(env *coordEnv, sh coordShape, opts coordOptions, healAt simclock.Time) {
	w := env.w
	var targets []nemesis.Target
	adminInc := uint64(0)
	admin := func() simclock.Actor {
		adminInc++
		return &coordAdmin{env: env, inc: adminInc, unparks: map[coord.ShardKey]int{}}
	}
	targets = append(targets, nemesis.Target{ID: w.Loop.Spawn("admin", admin(), nil, w.Choices.Fork("admin")), Fresh: admin})
	for i := 0; i < opts.workers; i++ {
		i, inc := i, uint64(0)
		fresh := func() simclock.Actor {
			inc++
			return &coordWorker{env: env, index: i, id: coord.WorkerID(i + 1), inc: inc, stale: map[coord.TenantID][]coord.ShardKey{}}
		}
		name := fmt.Sprintf("w%d", i)
		id := w.Loop.Spawn(name, fresh(), simclock.NewNodeClock(opts.faults.MaxSkew), w.Choices.Fork("worker/"+name))
		targets = append(targets, nemesis.Target{ID: id, Fresh: fresh})
	}
	env.chaos = &nemesis.Chaos{
		Targets: targets, Faults: nemesis.Standard(env.server, opts.faults.Rates, 2*opts.leaseFor, opts.leaseFor+sh.stormExtra),
		Tick: sh.nemesisTick, HealAt: healAt, Servers: []*simkv.Server{env.server}, Quiet: simkv.DefaultFaults(),
	}
	w.Loop.Spawn("nemesis", env.chaos, nil, w.Choices.Fork("nemesis"))
}

// shardInDetail finds the "run:R/shard:S" a violation names in its detail,
// for checkers that name a shard only there (the effect log, liveness).
var shardInDetail = regexp.MustCompile(`run:[0-9a-f]+/shard:[0-9a-f]+`)

// relevantTail narrows a violation report to the shard it concerns (its
// subject, or the shard its detail names): the last requests on that
// shard, oldest first, then the violation itself. Without a shard it keeps
// the trace's tail.
func relevantTail(h *coordcheck.History, subject property.Subject, detail string, tail []simclock.Record) []simclock.Record {
	name := shardInDetail.FindString(detail)
	if subject.Kind == property.SubjectShard {
		name = subject.ID
	}
	if name == "" {
		return tail
	}
	var out []simclock.Record
	for _, op := range h.Ops() {
		if _, k, ok := op.Target(); ok && k.Run.String()+"/"+k.Shard.String() == name {
			out = append(out, simclock.Record{At: op.Call, Kind: "coord." + op.Kind.String(), Actor: op.Actor, Detail: op.String()})
		}
	}
	if len(out) > tailSize-1 {
		out = out[len(out)-(tailSize-1):]
	}
	if n := len(tail); n > 0 && tail[n-1].Kind == "violation" {
		out = append(out, tail[n-1])
	}
	return out
}

// coordStats adds the run's counters: what the network and the nemesis did
// and how much the checkers saw.
func coordStats(w *World, server *simkv.Server, d *coordcheck.Durable, env *coordEnv) {
	st := server.Stats()
	for _, c := range []struct {
		name string
		v    int
	}{
		{"calls", st.Calls}, {"lost_requests", st.LostRequests}, {"lost_responses", st.LostResponses},
		{"refused", st.Refused}, {"delayed", st.Delayed}, {"leader_changes", st.LeaderChanges},
		{"indeterminate", st.Indeterminate}, {"lease_expiries", st.Expired},
		{"durable_writes", d.Writes}, {"history_ops", len(env.history.Ops())},
	} {
		w.Count(c.name, int64(c.v))
	}
}

// statOf returns the world's counter name so far.
func statOf(w *World, name string) int64 {
	for _, s := range w.stats {
		if s.Name == name {
			return s.Value
		}
	}
	return 0
}

// statName turns a description into a counter name.
func statName(s string) string { return strings.ReplaceAll(s, " ", "_") }
