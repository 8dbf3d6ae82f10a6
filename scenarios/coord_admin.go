package scenarios

import (
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
// means the attempt landed.
func (a *coordAdmin) setup(c *coordCaller, t *simclock.Task) {
	for _, run := range a.env.topo.runs {
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

// round looks at every run once; it reports whether all runs are terminal.
func (a *coordAdmin) round(c *coordCaller, t *simclock.Task, round int) bool {
	env, ch := a.env, t.Choices()
	all := true
	var listed []parkedShard
	for _, run := range env.topo.runs {
		var rec coord.RunRecord
		if o := c.read(run.tenant, func(coord.LogicalTime) (err error) {
			rec, err = c.etcd.GetRun(run.tenant, run.id)
			return err
		}); o.Out.Code != 0 || o.Out.Ambiguous {
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
		var prog coord.RunProgress
		if o := c.read(run.tenant, func(now coord.LogicalTime) (err error) {
			prog, err = c.etcd.GetRunProgress(now, run.tenant, run.id)
			return err
		}); o.Out.Code != 0 || o.Out.Ambiguous || rec.Status != coord.RunActive {
			continue
		}
		switch prog.Terminal {
		case coord.AllDone:
			a.slip(c, ch, run)
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
	var parked []coord.ShardSummary
	if o := c.read(run.tenant, func(now coord.LogicalTime) (err error) {
		parked, err = c.etcd.ListShards(now, run.tenant, run.id, coord.FilterParked())
		return err
	}); o.Out.Code != 0 || o.Out.Ambiguous {
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
		c.unpark(p.tenant, p.key, a.nextOp())
	}
	return seen
}

// slip unparks, from memory and without looking, the shards of run the
// admin once saw parked: each with the slip chance, once.
func (a *coordAdmin) slip(c *coordCaller, ch *simclock.Choices, run coordRun) {
	kept := a.cache[:0]
	for _, p := range a.cache {
		if p.key.Run == run.id && ch.Chance(a.env.opts.adminSlips) {
			a.env.w.Count("mistake_stale-unpark", 1)
			c.unpark(p.tenant, p.key, a.nextOp())
			continue
		}
		kept = append(kept, p)
	}
	a.cache = kept
}
