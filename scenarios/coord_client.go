package scenarios

import (
	"shardsim/checker/coordcheck"
	"shardsim/model/coord"
	"shardsim/simclock"
	"shardsim/simkv"
)

// coordCaller is one task's handle on the coordinator: an etcd-backed
// coord.Etcd over the task's KV client, wrapped so that every coordination
// request is recorded in the history and every KV request it sends is
// tagged with it (the durable observer then knows who wrote what).
type coordCaller struct {
	env    *coordEnv
	t      *simclock.Task
	etcd   *coord.Etcd
	kv     *tagKV
	actor  string
	worker coord.WorkerID
	// holds reports whether the caller's worker believes one of its tasks
	// holds a lease on the shard (nil: none does), for reachability.
	holds func(coord.ShardKey) bool
	// events are the last operation's events (set by the call).
	events []coord.Event
	// saw is what a read returned (set by the read's function), for the
	// tenant isolation check of answers.
	saw coordcheck.Seen
	// run is the run record the last getRun read: saw points at it
	// rather than at a copy of its own on the heap.
	run coord.RunRecord
	// out is where the request under way puts its answer (one request
	// at a time per caller), rather than a heap copy per request.
	out coordcheck.Answer
}

// newCoordCaller builds the caller of task t of actor, acting as worker.
// Its coordinator gets an instance of its own (see nextInstance).
func newCoordCaller(env *coordEnv, t *simclock.Task, actor string, worker coord.WorkerID) *coordCaller {
	kv := &tagKV{KV: env.server.Connect(t.Context().Self()).In(t), h: env.history}
	cfg := env.ecfg
	cfg.Instance = env.nextInstance()
	return &coordCaller{env: env, t: t, etcd: coord.NewEtcd(kv, cfg), kv: kv, actor: actor, worker: worker}
}

// nextInstance returns a coordinator instance id (coord.EtcdConfig.Instance)
// that no other coordinator of the world has, as a deployment's random
// per-process ids are. It is the world's count of coordinators so far,
// spread over 64 bits by a bijection (splitmix64's finalizer), so ids are
// unique by construction and deterministic. It draws nothing from the
// world's choices: a draw would shift every recorded choice stream, and an
// all-zero stream would hand every coordinator the same id.
func (env *coordEnv) nextInstance() uint64 {
	env.instances++
	z := env.instances
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// now is the caller's logical time: its node clock in logical units. A
// skewed clock gives a skewed now, as it would in production.
func (c *coordCaller) now() coord.LogicalTime {
	l := c.t.Local()
	if l < 0 {
		return 0
	}
	return coord.LogicalTime(int64(l) / int64(c.env.unit))
}

// do records op around call and returns it with its answer filled in.
// call may set c.events to the events the operation returned; they go to
// the tenant's event collector.
func (c *coordCaller) do(op coordcheck.Request, call func(o *coordcheck.Answer) error) *coordcheck.Request {
	events := &c.events
	*events = nil
	c.saw = coordcheck.Seen{}
	op.Actor, op.Worker = c.actor, c.worker
	o := c.env.history.Begin(op, c.t.Now())
	c.kv.cur = o
	c.out = coordcheck.Answer{}
	before := c.etcd.Stats()
	err := call(&c.out)
	out := c.out
	c.kv.cur = nil
	c.env.reachEtcd(before, c.etcd.Stats())
	if err != nil {
		out.Code = coord.CodeOf(err)
		switch out.Code {
		case 0, coord.CodeBackendTransient, coord.CodeBackendCorruption:
			out.Ambiguous = true
		}
	}
	c.env.history.End(o, c.t.Now(), out)
	d := c.t.Context().Rec(op.Kind.RecordKind())
	o.AppendDetail(d)
	d.End()
	c.env.reachAnswer(o, err, o.Kind == coordcheck.ReqAcquire && c.holds != nil && c.holds(o.Key))
	c.judgeAnswer(o, err, *events)
	c.env.replays.Answer(o, c.env.durable.Snapshot())
	c.env.collect(o.Tenant, *events)
	c.env.w.Count(c.env.opStat(op.Kind), 1)
	switch {
	case out.Ambiguous:
		c.env.w.Count("op_ambiguous", 1)
	case out.Code != 0:
		c.env.w.Count("refused_"+statName(out.Code.String()), 1)
	}
	return o
}

func (c *coordCaller) acquire(tenant coord.TenantID, key coord.ShardKey) (*coordcheck.Request, coord.AcquireResult) {
	var res coord.AcquireResult
	now := c.now()
	o := c.do(coordcheck.Request{Kind: coordcheck.ReqAcquire, Tenant: tenant, Key: key, Now: now, LeaseDur: c.env.topo.leaseDur},
		func(out *coordcheck.Answer) (err error) {
			res, c.events, err = c.etcd.AcquireAndRestore(now, tenant, key, c.worker)
			out.Lease = res.Lease
			return err
		})
	return o, res
}

func (c *coordCaller) claim(tenant coord.TenantID) (*coordcheck.Request, coord.AcquireResult) {
	var res coord.AcquireResult
	now := c.now()
	o := c.do(coordcheck.Request{Kind: coordcheck.ReqClaim, Tenant: tenant, Now: now, LeaseDur: c.env.topo.leaseDur},
		func(out *coordcheck.Answer) (err error) {
			res, c.events, err = c.etcd.ClaimNextAvailable(now, tenant, c.worker)
			out.Lease = res.Lease
			return err
		})
	return o, res
}

// gated sends a lease-gated request described by op (kind, lease, payload).
func (c *coordCaller) gated(op coordcheck.Request) *coordcheck.Request {
	now := c.now()
	op.Now, op.LeaseDur = now, c.env.topo.leaseDur
	return c.do(op, func(out *coordcheck.Answer) error {
		e, t, l := c.etcd, op.Tenant, op.Lease
		switch op.Kind {
		case coordcheck.ReqRenew:
			r, evs, err := e.Renew(now, t, l)
			c.events = evs
			out.Lease = l
			out.Lease.Deadline = r.Deadline
			return err
		case coordcheck.ReqCheckpoint:
			o, evs, err := e.Checkpoint(now, t, l, op.Cursor, op.Op)
			c.events = evs
			out.Outcome = o
			return err
		case coordcheck.ReqComplete:
			o, evs, err := e.Complete(now, t, l, op.Cursor, op.Op)
			c.events = evs
			out.Outcome = o
			return err
		case coordcheck.ReqPark:
			o, evs, err := e.ParkShard(now, t, l, op.Reason, op.Op)
			c.events = evs
			out.Outcome = o
			return err
		case coordcheck.ReqSplitReplace:
			r, evs, err := e.SplitReplace(now, t, l, op.Replace, op.Op)
			c.events = evs
			out.Outcome, out.Children = r.Outcome, r.Children
			return err
		case coordcheck.ReqSplitResidual:
			r, evs, err := e.SplitResidual(now, t, l, op.Residual, op.Op)
			c.events = evs
			out.Outcome, out.Residual = r.Outcome, r.Residual
			return err
		}
		panic("scenarios: not a lease-gated request: " + op.Kind.String())
	})
}

func (c *coordCaller) unpark(tenant coord.TenantID, key coord.ShardKey, op coord.OpID) *coordcheck.Request {
	now := c.now()
	return c.do(coordcheck.Request{Kind: coordcheck.ReqUnpark, Tenant: tenant, Key: key, Now: now, Op: op},
		func(out *coordcheck.Answer) (err error) {
			out.Outcome, c.events, err = c.etcd.UnparkShard(now, tenant, key, op)
			return err
		})
}

// runOp sends create_run, register_shards, complete_run, fail_run or
// cancel_run.
func (c *coordCaller) runOp(kind coordcheck.RequestKind, run coordRun, op coord.OpID) *coordcheck.Request {
	return c.runOpWith(kind, run, run.roots, op)
}

// runOpWith is runOp registering the manifest roots (which an admin's
// mistake may have spoiled).
func (c *coordCaller) runOpWith(kind coordcheck.RequestKind, run coordRun, roots []coord.InitialShard, op coord.OpID) *coordcheck.Request {
	now := c.now()
	return c.do(coordcheck.Request{Kind: kind, Tenant: run.tenant, Key: coord.ShardKey{Run: run.id}, Now: now, Op: op},
		func(out *coordcheck.Answer) (err error) {
			e := c.etcd
			switch kind {
			case coordcheck.ReqCreateRun:
				c.events, err = e.CreateRun(now, run.tenant, run.id, coord.RunConfig{LeaseDuration: c.env.topo.leaseDur, MaxShardRetries: c.env.opts.retryLimit})
			case coordcheck.ReqRegister:
				out.Outcome, c.events, err = e.RegisterShards(now, run.tenant, run.id, roots, op)
			case coordcheck.ReqCompleteRun:
				out.Outcome, c.events, err = e.CompleteRun(now, run.tenant, run.id, op)
			case coordcheck.ReqFailRun:
				out.Outcome, c.events, err = e.FailRun(now, run.tenant, run.id, op)
			case coordcheck.ReqCancelRun:
				out.Outcome, c.events, err = e.CancelRun(now, run.tenant, run.id, op)
			}
			return err
		})
}

// read runs a read-only request (listing, progress) and records it.
func (c *coordCaller) read(tenant coord.TenantID, fn func(now coord.LogicalTime) error) *coordcheck.Request {
	now := c.now()
	return c.do(coordcheck.Request{Kind: coordcheck.ReqRead, Tenant: tenant, Now: now},
		func(*coordcheck.Answer) error { return fn(now) })
}

// judgeAnswer checks what the request's caller saw for C.TenantIsolation.
func (c *coordCaller) judgeAnswer(o *coordcheck.Request, err error, events []coord.Event) {
	seen := c.saw
	seen.Tenant, seen.Events = o.Tenant, events
	seen.Named = []coord.RunID{o.Key.Run, o.Lease.Run}
	if err != nil {
		seen.Err = err.Error()
	}
	switch o.Kind {
	case coordcheck.ReqAcquire, coordcheck.ReqClaim, coordcheck.ReqRenew:
		if o.Out.Code == 0 && !o.Out.Ambiguous {
			l := o.Out.Lease
			seen.Lease = &l
		}
	}
	if v := coordcheck.CheckAnswer(c.env.durable.Snapshot(), seen); v != nil {
		c.env.w.Fail(v)
	}
}

// listShards reads a listing of run, recording what it saw.
func (c *coordCaller) listShards(tenant coord.TenantID, run coord.RunID, f coord.ShardFilter) ([]coord.ShardSummary, *coordcheck.Request) {
	var out []coord.ShardSummary
	o := c.read(tenant, func(now coord.LogicalTime) (err error) {
		out, err = c.etcd.ListShards(now, tenant, run, f)
		c.saw.Run, c.saw.Summaries = run, out
		return err
	})
	return out, o
}

// getRun reads a run record, recording what it saw.
func (c *coordCaller) getRun(tenant coord.TenantID, run coord.RunID) (coord.RunRecord, *coordcheck.Request) {
	c.run = coord.RunRecord{}
	o := c.read(tenant, func(coord.LogicalTime) (err error) {
		c.run, err = c.etcd.GetRun(tenant, run)
		if err == nil {
			c.saw.RunRecord = &c.run
		}
		return err
	})
	return c.run, o
}

// tagKV marks the coordination request in flight before each KV request,
// so the durable observer can attribute the writes it sees.
type tagKV struct {
	simkv.KV
	h   *coordcheck.History
	cur *coordcheck.Request
}

func (k *tagKV) tag() { k.h.Tag(k.cur) }

func (k *tagKV) Range(r simkv.RangeRequest) (*simkv.RangeResponse, error) {
	k.tag()
	return k.KV.Range(r)
}

func (k *tagKV) Put(r simkv.PutRequest) (*simkv.PutResponse, error) {
	k.tag()
	return k.KV.Put(r)
}

func (k *tagKV) DeleteRange(r simkv.DeleteRangeRequest) (*simkv.DeleteRangeResponse, error) {
	k.tag()
	return k.KV.DeleteRange(r)
}

func (k *tagKV) Txn(r simkv.TxnRequest) (*simkv.TxnResponse, error) {
	k.tag()
	return k.KV.Txn(r)
}

func (k *tagKV) Compact(r simkv.CompactRequest) (*simkv.CompactResponse, error) {
	k.tag()
	return k.KV.Compact(r)
}

func (k *tagKV) LeaseGrant(r simkv.LeaseGrantRequest) (*simkv.LeaseGrantResponse, error) {
	k.tag()
	return k.KV.LeaseGrant(r)
}

func (k *tagKV) LeaseRevoke(r simkv.LeaseRevokeRequest) (*simkv.LeaseRevokeResponse, error) {
	k.tag()
	return k.KV.LeaseRevoke(r)
}

func (k *tagKV) LeaseKeepAlive(r simkv.LeaseKeepAliveRequest) (*simkv.LeaseKeepAliveResponse, error) {
	k.tag()
	return k.KV.LeaseKeepAlive(r)
}

func (k *tagKV) LeaseTimeToLive(r simkv.LeaseTimeToLiveRequest) (*simkv.LeaseTimeToLiveResponse, error) {
	k.tag()
	return k.KV.LeaseTimeToLive(r)
}
