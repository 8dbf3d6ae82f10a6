package scenarios

import (
	"bytes"
	"slices"
	"time"

	"shardsim/checker/coordcheck"
	"shardsim/model/coord"
	"shardsim/simclock"
)

// coordAdmin is the operator: it creates and registers the runs, unparks
// parked shards (a bounded number of times each) and ends runs once their
// shards have settled: complete when all are done, fail when a shard stays
// parked. It also remembers every shard it ever saw parked; before closing
// a run it may slip and unpark those from memory, without looking, though
// by then every one of them has been unparked and finished.
type coordAdmin struct {
	marks   map[coord.RunID]coord.Watermark // the last progress watermark seen per run
	env     *coordEnv
	inc     uint64
	seq     uint64
	unparks map[coord.ShardKey]int // unparks sent per shard (all tenants use distinct run ids)
	cache   []parkedShard          // every shard ever seen parked and not yet slipped on
}

type parkedShard struct {
	tenant coord.TenantID
	key    coord.ShardKey
}

// Receive implements simclock.Actor.
func (a *coordAdmin) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	ctx.Go("admin", func(t *simclock.Task) {
		c := newCoordCaller(a.env, t, ctx.Name(), 0)
		a.setup(c, t)
		for round := 0; ; round++ {
			if a.round(c, t, round) {
				return
			}
			t.Sleep(t.Choices().Duration(150*time.Millisecond, 500*time.Millisecond))
		}
	})
}

// nextOp returns a fresh op id of this incarnation.
func (a *coordAdmin) nextOp() coord.OpID {
	a.seq++
	return coord.OpID(0xad<<48 | a.inc<<32 | a.seq)
}

// runOpID is the op id of a run transition: fixed per run, so a restarted
// admin retries rather than repeats.
func runOpID(run coord.RunID, kind coordcheck.RequestKind) coord.OpID {
	return coord.OpID(0xa0<<48 | uint64(kind)<<40 | uint64(run))
}

// setup creates and registers every run, retrying through faults.
// create_run is not idempotent: "run exists" after an ambiguous attempt
// means the attempt landed. It may slip first (setupSlips).
func (a *coordAdmin) setup(c *coordCaller, t *simclock.Task) {
	for i, run := range a.env.topo.runs {
		if a.setupSlips(c, t, i, run) {
			continue // cancelled while initializing
		}
		for {
			o := c.runOp(coordcheck.ReqCreateRun, run, 0)
			if !o.Out.Ambiguous && (o.Out.Code == 0 || o.Out.Code == coord.CodeRunExists) {
				break
			}
			t.Sleep(t.Choices().Duration(50*time.Millisecond, 200*time.Millisecond))
		}
		for {
			o := c.runOp(coordcheck.ReqRegister, run, runOpID(run.id, coordcheck.ReqRegister))
			if !o.Out.Ambiguous {
				break
			}
			t.Sleep(t.Choices().Duration(50*time.Millisecond, 200*time.Millisecond))
		}
	}
}

// setupSlips are the admin's mistakes around a run's registration: a
// manifest that breaks a rule, a registration or a failure of a run that
// does not exist, a second create_run, and (for a run that is not the
// first) a cancel before registering, after which registration is
// refused. It reports whether it cancelled run.
func (a *coordAdmin) setupSlips(c *coordCaller, t *simclock.Task, i int, run coordRun) bool {
	env, ch := a.env, t.Choices()
	if !ch.Chance(env.opts.adminSlips) {
		return false
	}
	ghost := run
	ghost.id = run.id | 0xdead<<32
	switch ch.Intn(5) {
	case 0:
		env.w.Count("mistake_bad-manifest", 1)
		c.runOp(coordcheck.ReqCreateRun, run, 0)
		roots := spoilManifest(ch, run.roots)
		if limit := env.ecfg.Limits.MaxPerTenant; limit < 100 && ch.Chance(0.5) {
			// Valid, but more roots than the tenant's shard limit holds.
			roots = manyRoots(run.roots, limit+1)
		}
		c.runOpWith(coordcheck.ReqRegister, run, roots, a.nextOp())
	case 1:
		env.w.Count("mistake_ghost-run", 1)
		c.runOp(coordcheck.ReqRegister, ghost, a.nextOp())
		c.runOp(coordcheck.ReqFailRun, ghost, a.nextOp())
	case 2:
		env.w.Count("mistake_create-twice", 1)
		c.runOp(coordcheck.ReqCreateRun, run, 0)
		c.runOp(coordcheck.ReqCreateRun, run, 0)
		// A driver that died between create_run and register_shards
		// leaves a run Initializing, for the collection to cancel.
		c.runOp(coordcheck.ReqCreateRun, scratchRun(run), 0)
	default:
		if i == 0 {
			return false
		}
		c.runOp(coordcheck.ReqCreateRun, run, 0)
		if o := c.runOp(coordcheck.ReqCancelRun, run, runOpID(run.id, coordcheck.ReqCancelRun)); o.Out.Code == 0 && !o.Out.Ambiguous {
			env.w.Reach("cancel_run.ok.initializing")
			c.runOp(coordcheck.ReqRegister, run, runOpID(run.id, coordcheck.ReqRegister))
			return true
		}
	}
	return false
}

// scratchRun is the run a setup slip creates beside run and never
// registers (a driver that died between create_run and register_shards).
func scratchRun(run coordRun) coordRun {
	run.id |= 0xbeef << 32
	return run
}

// manyRoots returns n valid roots: roots' ids and ranges, then more ids
// over the last root's range split no further (ranges may overlap).
func manyRoots(roots []coord.InitialShard, n int) []coord.InitialShard {
	out := slices.Clone(roots)
	for id := coord.ShardID(1000); len(out) < n; id++ {
		out = append(out, coord.InitialShard{Shard: id, Spec: roots[len(roots)-1].Spec.Clone()})
	}
	return out
}

// spoilManifest returns roots with one of the manifest rules broken.
func spoilManifest(ch *simclock.Choices, roots []coord.InitialShard) []coord.InitialShard {
	switch ch.Intn(5) {
	case 0:
		return nil
	case 4:
		return manyRoots(roots, coord.DefaultMaxManifestShards+1)
	case 1:
		return append(slices.Clone(roots), roots[0])
	case 2:
		bad := slices.Clone(roots)
		bad[0].Shard |= 1 << 63
		return bad
	}
	bad := slices.Clone(roots)
	bad[0].Spec.End = bad[0].Spec.Start
	if len(bad[0].Spec.Start) == 0 {
		bad[0].Spec.End = []byte{0}
		bad[0].Spec.Start = []byte{0}
	}
	return bad
}

// abortRun ends an open run whose shards are still in flight (cancel,
// fail, or complete it early), then tries what an ended run must refuse:
// unparking and acquiring its shards.
func (a *coordAdmin) abortRun(c *coordCaller, ch *simclock.Choices, run coordRun, prog coord.RunProgress) {
	env := a.env
	kinds := []coordcheck.RequestKind{coordcheck.ReqCancelRun, coordcheck.ReqFailRun, coordcheck.ReqCompleteRun}
	kind := simclock.Pick(ch, kinds)
	o := c.runOp(kind, run, runOpID(run.id, kind))
	for i := 0; i < 3 && (o.Out.Ambiguous || i == 0 && o.Out.Code == 0 && ch.Chance(0.5)); i++ {
		// The same op id again (after an ambiguous answer, or from a retry
		// path that did not hear the first): a replay if it landed.
		o = c.runOp(kind, run, runOpID(run.id, kind))
	}
	if o.Out.Code != 0 || o.Out.Ambiguous {
		return
	}
	if prog.Active > 0 {
		env.w.Reach(kind.String() + ".ok.in_flight")
	}
	if again := simclock.Pick(ch, kinds); again != kind {
		c.runOp(again, run, a.nextOp()) // a second end, from a stale view: refused
	}
	all, r := c.listShards(run.tenant, run.id, coord.FilterAll())
	if r.Out.Code != 0 || r.Out.Ambiguous || len(all) == 0 {
		return
	}
	pick := simclock.Pick(ch, all)
	key := coord.ShardKey{Run: run.id, Shard: pick.Shard}
	c.unpark(run.tenant, key, a.nextOp())
	c.acquire(run.tenant, key)
}

// round looks at every run once; it reports whether all runs are terminal.
func (a *coordAdmin) round(c *coordCaller, t *simclock.Task, round int) bool {
	env, ch := a.env, t.Choices()
	all := true
	var listed []parkedShard
	a.drainEvents()
	a.housekeep(c)
	for _, run := range env.topo.runs {
		// A scratch run may exist (a restarted admin does not remember
		// making it): wait until the collection cancelled it.
		rec, o := c.getRun(run.tenant, scratchRun(run).id)
		if o.Out.Code == coord.CodeRunNotFound {
			continue // its create never landed
		}
		if o.Out.Code != 0 || o.Out.Ambiguous || !rec.Status.Terminal() {
			all = false // wait for the collection
		}
	}
	for _, run := range env.topo.runs {
		rec, o := c.getRun(run.tenant, run.id)
		if o.Out.Code != 0 || o.Out.Ambiguous {
			all = false
			continue
		}
		if rec.Status.Terminal() {
			if rec.Status == coord.RunFailed && ch.Chance(env.opts.adminSlips) {
				// A stale view: it still believes the run is open and done.
				env.w.Count("mistake_end-ended-run", 1)
				c.runOp(coordcheck.ReqCompleteRun, run, a.nextOp())
			}
			continue
		}
		all = false
		if rec.Status == coord.RunInitializing {
			// Registration did not go through: try again; a manifest the
			// tenant's shard limit has no room for any more is given up.
			o := c.runOp(coordcheck.ReqRegister, run, runOpID(run.id, coordcheck.ReqRegister))
			if o.Out.Code == coord.CodeShardLimit {
				c.runOp(coordcheck.ReqCancelRun, run, runOpID(run.id, coordcheck.ReqCancelRun))
			}
			continue
		}
		var prog coord.RunProgress
		if o := c.read(run.tenant, func(now coord.LogicalTime) (err error) {
			prog, err = c.etcd.GetRunProgress(now, run.tenant, run.id)
			return err
		}); o.Out.Code != 0 || o.Out.Ambiguous || rec.Status != coord.RunActive {
			continue
		}
		a.watch(run, prog.Watermark)
		if prog.Active > 0 && ch.Chance(env.opts.abort) {
			a.abortRun(c, ch, run, prog)
			continue
		}
		switch prog.Terminal {
		case coord.AllDone:
			a.slip(c, ch, run)
			if ch.Chance(env.opts.adminSlips / 4) {
				// A mistyped op id: the registration's, for another kind.
				env.w.Count("mistake_run-op-reuse", 1)
				c.runOp(coordcheck.ReqCompleteRun, run, runOpID(run.id, coordcheck.ReqRegister))
			}
			c.runOp(coordcheck.ReqCompleteRun, run, runOpID(run.id, coordcheck.ReqCompleteRun))
		case coord.HasFailures:
			listed = append(listed, a.settle(c, run, true)...)
		case coord.StillActive:
			if prog.Parked > 0 && ch.Chance(0.3) {
				listed = append(listed, a.settle(c, run, false)...)
			}
		}
	}
	for _, p := range listed {
		if !slices.Contains(a.cache, p) {
			a.cache = append(a.cache, p)
		}
	}
	return all
}

// settle unparks the run's parked shards that have retries left; if some
// have none and the run has settled (mayFail), it fails the run. It
// returns the parked shards seen.
func (a *coordAdmin) settle(c *coordCaller, run coordRun, mayFail bool) []parkedShard {
	parked, o := c.listShards(run.tenant, run.id, coord.FilterParked())
	if o.Out.Code != 0 || o.Out.Ambiguous {
		return nil
	}
	var seen []parkedShard
	exhausted := false
	for _, p := range parked {
		key := coord.ShardKey{Run: run.id, Shard: p.Shard}
		seen = append(seen, parkedShard{run.tenant, key})
		exhausted = exhausted || a.unparks[key] >= a.env.opts.unparkBudget
	}
	if exhausted {
		// Unparking the others would revive shards of a run about to fail.
		if mayFail {
			c.runOp(coordcheck.ReqFailRun, run, runOpID(run.id, coordcheck.ReqFailRun))
		}
		return seen
	}
	for _, p := range seen {
		a.unparks[p.key]++
		op := a.nextOp()
		if o := c.unpark(p.tenant, p.key, op); o.Out.Ambiguous || o.Out.Code == 0 && a.env.mistake(c.t.Choices()) {
			c.unpark(p.tenant, p.key, op) // a retry with the same op id
		}
	}
	return seen
}

// watch notes a run's progress watermark: reaching the point when it
// advanced, and (an operator's sanity check) counting when it went back,
// which a faithful coordinator never does.
func (a *coordAdmin) watch(run coordRun, m coord.Watermark) {
	if a.marks == nil {
		a.marks = map[coord.RunID]coord.Watermark{}
	}
	prev, seen := a.marks[run.id]
	a.marks[run.id] = m
	switch {
	case !seen:
	case prev.Complete && !m.Complete, !m.Complete && !prev.Complete && bytes.Compare(m.Key, prev.Key) < 0:
		a.env.w.Count("watermark_went_back", 1)
	case m.Complete != prev.Complete || !bytes.Equal(m.Key, prev.Key):
		a.env.w.Reach("progress.watermark_advanced")
	}
}

// housekeep lists each tenant's active runs and collects the runs that
// stayed Initializing too long (a registration that never went through).
func (a *coordAdmin) housekeep(c *coordCaller) {
	env := a.env
	for _, t := range env.topo.tenants {
		var runs []coord.RunID
		if o := c.read(t, func(coord.LogicalTime) (err error) {
			runs, err = c.etcd.ListActiveRuns(t)
			return err
		}); o.Out.Code == 0 && !o.Out.Ambiguous {
			env.w.Reach("list_active_runs.ok")
			env.w.Count("active_runs_listed", int64(len(runs)))
		}
		now := c.now()
		var gone []coord.RunID
		if o := c.do(coordcheck.Request{Kind: coordcheck.ReqGCRuns, Tenant: t, Now: now}, func(*coordcheck.Answer) (err error) {
			gone, c.events, err = c.etcd.GCStaleInitializingRuns(now, t, 4*env.topo.leaseDur)
			return err
		}); o.Out.Code == 0 && !o.Out.Ambiguous && len(gone) > 0 {
			env.w.ReachN("gc_stale_initializing_runs.cancelled", int64(len(gone)))
		}
	}
}

// drainEvents consumes every tenant's collected events, keeping each
// collector's storage (Drain would allocate a fresh one every round).
func (a *coordAdmin) drainEvents() {
	for _, t := range a.env.topo.tenants {
		a.env.events[t].DrainWith(func(coord.Event) {})
	}
}

// slip unparks, from memory and without looking, the shards of run the
// admin once saw parked: each with the stale_unpark chance (admin_mistakes
// unless overridden), once.
func (a *coordAdmin) slip(c *coordCaller, ch *simclock.Choices, run coordRun) {
	kept := a.cache[:0]
	for _, p := range a.cache {
		if p.key.Run == run.id && ch.Chance(a.env.opts.staleUnpark) {
			a.env.w.Count("mistake_stale-unpark", 1)
			switch ch.Intn(3) {
			case 0: // under another tenant's scope
				c.unpark(a.env.otherTenant(p.tenant), p.key, a.nextOp())
			case 1: // with an op id a worker used on the shard
				c.unpark(p.tenant, p.key, a.env.opUsedOn(p.tenant, p.key))
			default:
				c.unpark(p.tenant, p.key, a.nextOp())
			}
			continue
		}
		kept = append(kept, p)
	}
	a.cache = kept
}

// opUsedOn returns an op id a worker used on the shard (the admin's
// mistyped op id), or a fresh-looking one when none was.
func (env *coordEnv) opUsedOn(t coord.TenantID, key coord.ShardKey) coord.OpID {
	ops := env.history.Ops()
	for i := len(ops) - 1; i >= 0; i-- {
		o := ops[i]
		if o.Kind.Gated() && o.Kind != coordcheck.ReqRenew && o.Lease.Tenant == t && o.Lease.Key() == key && o.Op != 0 {
			return o.Op
		}
	}
	return coord.OpID(0xbad<<40 | uint64(key.Shard&0xffffff))
}
