package scenarios

import (
	"fmt"
	"time"

	"shardsim/checker/kvcheck"
	"shardsim/fate"
	"shardsim/model/bugs"
	"shardsim/nemesis"
	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

func init() {
	Register(Scenario{
		Name:        "kv",
		Description: "concurrent clients run a mixed etcd KV/lease/txn workload through lost, ambiguous and delayed requests, partitions and leader changes",
		Properties: []property.Name{property.KVLinearizable, property.KVRevisionMonotone, property.KVLeaseExpiry,
			property.KVWatchOrdered, property.KVWatchUnique, property.KVWatchAtomic, property.KVWatchReliable, property.KVWatchResumable},
		Run: runKV,
	})
}

// kvMutations maps the kv scenario's injectable server bugs to mutations.
var kvMutations = map[string]simkv.Mutation{
	bugs.KVStaleTxnCompare: simkv.StaleTxnCompare,
	bugs.KVPhantomAck:      simkv.PhantomAck,
	bugs.KVLateLeaseExpiry: simkv.LateLeaseExpiry,
	bugs.KVResumeSkips:     simkv.ResumeSkipsStart,
	bugs.KVStaleHeader:     simkv.StaleHeader,
	bugs.KVWatchDuplicate:  simkv.WatchDuplicate,
	bugs.KVWatchDrop:       simkv.WatchDrop,
	bugs.KVWatchSplitTxn:   simkv.WatchSplitTxn,
	bugs.KVWatchReorder:    simkv.WatchReorder,
}

// kvHealAt is when the kv nemesis stops injecting faults.
const kvHealAt = simclock.Time(20 * time.Second)

// kvOptions is everything a kv run draws: its shape, workload and fault mix.
type kvOptions struct {
	clients, opsPerClient, keys int
	faults                      fate.Config // request faults of the server
	partition, leaderChange     float64     // nemesis rates per tick
	leases, compact             bool        // workload mix
}

// drawKVOptions draws every option of a kv run, in a fixed order, from the
// swarm (which applies -opt overrides and records each value for the
// report's swarm line).
func drawKVOptions(sw *nemesis.Swarm) kvOptions {
	o := kvOptions{
		clients:      sw.Int("clients", 2, 5),
		opsPerClient: sw.Int("ops_per_client", 10, 40),
		keys:         sw.Int("keys", 2, 6),
		faults:       simkv.DefaultFaults(),
	}
	o.faults = nemesis.DrawRequestFaults(sw, "", nemesis.RequestFaultRange{On: 0.5, MinLose: 0.005, MaxLose: 0.1, MinDelay: 0.01, MaxDelay: 0.2}, o.faults)
	o.faults.MaxDelay = 2 * time.Second
	o.partition = sw.Rate("partition", 0.4, 0.02, 0.2)
	o.leaderChange = sw.Rate("leader_change", 0.4, 0.01, 0.1)
	o.leases = sw.Flag("leases", 0.7)
	o.compact = sw.Flag("compact", 0.3)
	return o
}

// kvWorld is one kv run: the server, its checkers and the watch log.
type kvWorld struct {
	w          *World
	store      *simkv.Store
	server     *simkv.Server
	history    *kvcheck.Recorder
	leaseCheck *kvcheck.LeaseExpiry
	watch      *kvcheck.WatchLog
	resume     *kvcheck.ResumeLog
}

func runKV(cfg Config) (Result, error) {
	w := NewWorld("kv", cfg, simclock.Budget{MaxTime: kvHealAt.Add(60 * time.Second), MaxEvents: 2_000_000})
	defer w.Loop.Close()
	opts := drawKVOptions(w.Swarm)
	if err := w.OptionsError(); err != nil {
		return Result{}, err
	}
	kw, err := buildKV(w, opts, cfg.Bugs)
	if err != nil {
		return Result{}, err
	}
	if w.Run() == simclock.Idle {
		kw.leaseCheck.Finish(w.Loop.Now())
		w.Fail(kw.leaseCheck.Err())
	}
	kw.count()
	if cfg.Histories != nil {
		cfg.showHistory("kv", kvcheck.Model, kvcheck.PatchWithWatch(kw.history.History(), kw.watch))
	}
	kw.judge(cfg.checkTimeout())
	return w.Result(), nil
}

// buildKV builds the world: the server with its mutations and checkers,
// the clients, the watcher and the nemesis.
func buildKV(w *World, opts kvOptions, set bugs.Set) (*kvWorld, error) {
	kw := &kvWorld{w: w, store: simkv.NewStore(simkv.StoreConfig{})}
	kw.server = simkv.NewServer(w.Loop, kw.store, opts.faults, w.Choices.Fork("kv.net"))
	for _, name := range set.Names() {
		m, ok := kvMutations[name]
		if !ok {
			return nil, fmt.Errorf("bug %s does not apply to scenario kv", name)
		}
		kw.server.SetMutation(m)
	}
	kw.history = kvcheck.NewRecorder()
	revs := kvcheck.NewRevisionMonotone(kw.store.Revision())
	kw.leaseCheck = kvcheck.NewLeaseExpiry(kw.store)
	kw.leaseCheck.CountElections(func() (int, simclock.Time) { return kw.server.Stats().LeaderChanges, kw.server.ElectionUntil() })
	kw.server.Observe(kw.history)
	kw.server.Observe(revs)
	kw.server.Observe(kw.leaseCheck)
	w.Loop.OnStep(func() {
		w.Fail(revs.Err())
		w.Fail(kw.leaseCheck.Err())
	})

	keySet := make([][]byte, opts.keys)
	for i := range keySet {
		keySet[i] = []byte(fmt.Sprintf("k%d", i))
	}
	var targets []nemesis.Target
	for i := 0; i < opts.clients; i++ {
		name := fmt.Sprintf("client%d", i)
		cl := &kvClient{index: i, server: kw.server, ops: opts.opsPerClient, keys: keySet, leases: opts.leases, compact: opts.compact}
		targets = append(targets, nemesis.Target{ID: w.Loop.Spawn(name, cl, nil, w.Choices.Fork("workload/"+name))})
	}
	kw.watch = &kvcheck.WatchLog{Start: 1}
	w.Loop.Spawn("watcher", &kvWatcher{server: kw.server, log: kw.watch}, nil, nil)
	kw.resume = &kvcheck.ResumeLog{}
	w.Loop.Spawn("resumer", &kvResumer{server: kw.server, log: kw.resume}, nil, w.Choices.Fork("resumer"))
	rates := nemesis.Rates{Partition: opts.partition, LeaderChange: opts.leaderChange}
	w.Loop.Spawn("nemesis", &nemesis.Chaos{
		Targets: targets, Faults: nemesis.Standard(kw.server, rates, 3*time.Second, 0),
		Tick: 500 * time.Millisecond, HealAt: kvHealAt, Servers: []*simkv.Server{kw.server}, Quiet: simkv.DefaultFaults(),
	}, nil, w.Choices.Fork("nemesis"))
	return kw, nil
}

// count publishes what the server did.
func (kw *kvWorld) count() {
	st := kw.server.Stats()
	for _, c := range []struct {
		name string
		v    int
	}{
		{"calls", st.Calls}, {"applied", st.Applied}, {"lost_requests", st.LostRequests},
		{"lost_responses", st.LostResponses}, {"refused", st.Refused}, {"delayed", st.Delayed},
		{"leader_changes", st.LeaderChanges}, {"indeterminate", st.Indeterminate}, {"lease_expiries", st.Expired},
	} {
		kw.w.Count(c.name, int64(c.v))
	}
}

// judge runs the end-of-run checks: the watch log, then the history.
func (kw *kvWorld) judge(timeout time.Duration) {
	w := kw.w
	if !w.Failed() {
		w.Fail(kvcheck.CheckWatch(kw.watch, kw.store.Revision()))
	}
	if !w.Failed() {
		w.Fail(kvcheck.CheckResumable(kw.resume, kw.watch))
	}
	if !w.Failed() {
		ops := kvcheck.PatchWithWatch(kw.history.History(), kw.watch)
		w.Count("history_ops", int64(len(ops)))
		w.Judge(kvcheck.Check(ops, timeout))
	}
}

// kvWatcher watches the whole workload keyspace from the first revision; its
// log is checked for the Watch properties and resolves ambiguous writes.
type kvWatcher struct {
	server *simkv.Server
	log    *kvcheck.WatchLog
}

func (k *kvWatcher) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	k.server.Connect(ctx.Self()).Watch(ctx,
		simkv.WatchRequest{Key: []byte("k"), RangeEnd: []byte("l"), StartRevision: k.log.Start},
		func(ctx *simclock.Context, r simkv.WatchResponse) { k.log.Add(ctx.Now(), r) },
		func(ctx *simclock.Context, err error) { k.log.Broken = err })
}

// kvResumer watches the workload keyspace in pieces: it opens a watch,
// takes a few events, cancels it and resumes from the revision after the
// last event it saw (or from a compaction's revision after a compaction
// error), as a client reconnecting does. Its log is checked for
// KV.WatchResumable against the watcher's.
type kvResumer struct {
	server  *simkv.Server
	log     *kvcheck.ResumeLog
	next    int64 // the revision to resume from
	resumes int
}

// kvMaxResumes bounds how often the resumer reconnects.
const kvMaxResumes = 12

// Receive implements simclock.Actor: the first watch opens on start.
func (k *kvResumer) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); ok {
		k.next = 1
		k.open(ctx)
	}
}

// open starts a watch from k.next and cancels it after a drawn number of
// events.
func (k *kvResumer) open(ctx *simclock.Context) {
	k.log.Open(k.next, k.server.Store().CompactRevision())
	quota := 1 + ctx.Choices().Intn(8)
	var stream *simkv.WatchStream
	done := false // answers still in flight when it was cancelled are not this watch's business
	stream = k.server.Connect(ctx.Self()).Watch(ctx,
		simkv.WatchRequest{Key: []byte("k"), RangeEnd: []byte("l"), StartRevision: k.next},
		func(ctx *simclock.Context, r simkv.WatchResponse) {
			if done {
				return
			}
			k.log.Add(r)
			if r.Canceled && r.CompactRevision > 0 {
				done = true
				k.next = r.CompactRevision
				k.resume(ctx, nil)
				return
			}
			for _, e := range r.Events {
				k.next = e.Kv.ModRevision + 1
				quota--
			}
			if quota <= 0 {
				done = true
				k.resume(ctx, stream)
			}
		},
		func(ctx *simclock.Context, err error) { k.log.Broken = err })
}

// resume cancels stream (if any) and reopens after a short pause.
func (k *kvResumer) resume(ctx *simclock.Context, stream *simkv.WatchStream) {
	if stream != nil {
		stream.Cancel()
	}
	if k.resumes++; k.resumes > kvMaxResumes {
		return
	}
	ctx.Defer(ctx.Choices().Duration(time.Millisecond, 300*time.Millisecond), k.open)
}

// kvClient runs one client's share of the workload as a task.
type kvClient struct {
	index   int
	server  *simkv.Server
	ops     int
	keys    [][]byte
	leases  bool
	compact bool

	granted []int64 // leases this client believes exist
	lastRev int64
	seq     int
}

func (k *kvClient) Receive(ctx *simclock.Context, msg any) {
	if _, ok := msg.(simclock.Started); !ok {
		return
	}
	client := k.server.Connect(ctx.Self())
	ctx.Go("workload", func(t *simclock.Task) {
		c := t.Choices()
		for i := 0; i < k.ops; i++ {
			req := k.next(c)
			resp, err := client.Call(t, req)
			k.learn(req, resp, err)
			t.Sleep(c.Duration(0, 200*time.Millisecond))
		}
		ctx.Rec("client.done").Int("ops", int64(k.ops)).End()
	})
}

// next draws the client's next request.
func (k *kvClient) next(c *simclock.Choices) simkv.Request {
	k.seq++
	key := simclock.Pick(c, k.keys)
	value := []byte(fmt.Sprintf("c%d-%d", k.index, k.seq))
	switch roll := c.Intn(100); {
	case roll < 25:
		return simkv.Request{Range: k.rangeReq(c, key)}
	case roll < 50:
		put := &simkv.PutRequest{Key: key, Value: value, PrevKv: c.Chance(0.5)}
		if k.leases && len(k.granted) > 0 && c.Chance(0.3) {
			put.Lease = simclock.Pick(c, k.granted)
		}
		return simkv.Request{Put: put}
	case roll < 60:
		del := &simkv.DeleteRangeRequest{Key: key, PrevKv: c.Chance(0.5)}
		if c.Chance(0.2) {
			del.Key, del.RangeEnd = []byte("k"), []byte("l")
		}
		return simkv.Request{DeleteRange: del}
	case roll < 85:
		return simkv.Request{Txn: k.txnReq(c, key, value)}
	case roll < 97 && k.leases:
		return k.leaseReq(c)
	case k.compact && k.lastRev > 3:
		return simkv.Request{Compact: &simkv.CompactRequest{Revision: k.lastRev - c.Between(0, 3)}}
	}
	return simkv.Request{Range: &simkv.RangeRequest{Key: key}}
}

func (k *kvClient) rangeReq(c *simclock.Choices, key []byte) *simkv.RangeRequest {
	r := &simkv.RangeRequest{Key: key}
	if c.Chance(0.5) {
		r.Key, r.RangeEnd = []byte("k"), []byte("l")
		r.Limit = c.Between(0, 3)
		r.CountOnly = c.Chance(0.1)
		r.KeysOnly = c.Chance(0.2)
		if c.Chance(0.3) {
			r.SortTarget = simkv.SortByModRevision
			r.SortOrder = simkv.SortDescend
		}
	}
	if k.lastRev > 2 && c.Chance(0.15) {
		r.Revision = k.lastRev - c.Between(0, 2)
	}
	return r
}

func (k *kvClient) txnReq(c *simclock.Choices, key, value []byte) *simkv.TxnRequest {
	cmp := simkv.Compare{Key: key}
	switch c.Intn(3) {
	case 0:
		cmp.Target, cmp.Result, cmp.Version = simkv.CompareVersion, simkv.CompareEqual, c.Between(0, 2)
	case 1:
		cmp.Target, cmp.Result, cmp.ModRevision = simkv.CompareMod, simkv.CompareLess, k.lastRev+1
	default:
		cmp.Target, cmp.Result, cmp.Value = simkv.CompareValue, simkv.CompareNotEqual, value
	}
	other := simclock.Pick(c, k.keys)
	return &simkv.TxnRequest{
		Compare: []simkv.Compare{cmp},
		Success: []simkv.RequestOp{{Put: &simkv.PutRequest{Key: key, Value: value}}, {Range: &simkv.RangeRequest{Key: other}}},
		Failure: []simkv.RequestOp{{Range: &simkv.RangeRequest{Key: key}}},
	}
}

func (k *kvClient) leaseReq(c *simclock.Choices) simkv.Request {
	if len(k.granted) == 0 || c.Chance(0.4) {
		id := int64(k.index+1)<<32 | int64(k.seq)
		return simkv.Request{LeaseGrant: &simkv.LeaseGrantRequest{ID: id, TTL: c.Between(3, 6)}}
	}
	id := simclock.Pick(c, k.granted)
	switch c.Intn(3) {
	case 0:
		return simkv.Request{LeaseKeepAlive: &simkv.LeaseKeepAliveRequest{ID: id}}
	case 1:
		return simkv.Request{LeaseTimeToLive: &simkv.LeaseTimeToLiveRequest{ID: id, Keys: true}}
	}
	return simkv.Request{LeaseRevoke: &simkv.LeaseRevokeRequest{ID: id}}
}

// learn updates the client's beliefs from an answer.
func (k *kvClient) learn(req simkv.Request, resp simkv.Response, err error) {
	if err != nil {
		return
	}
	if h := resp.Header().Revision; h > k.lastRev {
		k.lastRev = h
	}
	switch {
	case req.LeaseGrant != nil && resp.LeaseGrant != nil:
		k.granted = append(k.granted, resp.LeaseGrant.ID)
	case req.LeaseRevoke != nil:
		k.forget(req.LeaseRevoke.ID)
	}
}

func (k *kvClient) forget(id int64) {
	for i, x := range k.granted {
		if x == id {
			k.granted = append(k.granted[:i], k.granted[i+1:]...)
			return
		}
	}
}
