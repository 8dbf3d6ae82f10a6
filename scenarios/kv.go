package scenarios

import (
	"fmt"
	"time"

	"shardsim/checker/kvcheck"
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
			property.KVWatchOrdered, property.KVWatchUnique, property.KVWatchAtomic, property.KVWatchReliable},
		Run: runKV,
	})
}

// kvMutations maps the kv scenario's injectable server bugs to mutations.
var kvMutations = map[string]simkv.Mutation{
	bugs.KVStaleTxnCompare: simkv.StaleTxnCompare,
	bugs.KVPhantomAck:      simkv.PhantomAck,
}

func runKV(cfg Config) (Result, error) {
	healAt := simclock.Time(20 * time.Second)
	w := NewWorld("kv", cfg, simclock.Budget{MaxTime: healAt.Add(60 * time.Second), MaxEvents: 2_000_000})
	sw := w.Swarm
	clients := sw.Int("clients", 2, 5)
	opsPerClient := sw.Int("ops_per_client", 10, 40)
	keys := sw.Int("keys", 2, 6)
	faults := simkv.DefaultFaults()
	faults.LoseRequest = sw.Rate("lose_request", 0.5, 0.005, 0.1)
	faults.LoseResponse = sw.Rate("lose_response", 0.5, 0.005, 0.1)
	faults.Delay = sw.Rate("delay", 0.5, 0.01, 0.2)
	faults.MaxDelay = 2 * time.Second
	partition := sw.Rate("partition", 0.4, 0.02, 0.2)
	leader := sw.Rate("leader_change", 0.4, 0.01, 0.1)
	leases := sw.Flag("leases", 0.7)
	compact := sw.Flag("compact", 0.3)
	if err := w.OptionsError(); err != nil {
		return Result{}, err
	}

	store := simkv.NewStore(simkv.StoreConfig{})
	server := simkv.NewServer(w.Loop, store, faults, w.Choices.Fork("kv.net"))
	for _, name := range cfg.Bugs.Names() {
		m, ok := kvMutations[name]
		if !ok {
			return Result{}, fmt.Errorf("bug %s does not apply to scenario kv", name)
		}
		server.SetMutation(m)
	}
	history := kvcheck.NewRecorder()
	revs := kvcheck.NewRevisionMonotone(store.Revision())
	leaseCheck := kvcheck.NewLeaseExpiry(store)
	server.Observe(history)
	server.Observe(revs)
	server.Observe(leaseCheck)
	w.Loop.OnStep(func() {
		w.Fail(revs.Err())
		w.Fail(leaseCheck.Err())
	})

	keySet := make([][]byte, keys)
	for i := range keySet {
		keySet[i] = []byte(fmt.Sprintf("k%d", i))
	}
	var targets []nemesis.Target
	for i := 0; i < clients; i++ {
		name := fmt.Sprintf("client%d", i)
		cl := &kvClient{index: i, server: server, ops: opsPerClient, keys: keySet, leases: leases, compact: compact}
		targets = append(targets, nemesis.Target{ID: w.Loop.Spawn(name, cl, nil, w.Choices.Fork("workload/"+name))})
	}
	watch := &kvcheck.WatchLog{Start: 1}
	w.Loop.Spawn("watcher", &kvWatcher{server: server, log: watch}, nil, nil)
	quiet := simkv.DefaultFaults()
	w.Loop.Spawn("nemesis", &nemesis.Chaos{
		Server: server, Targets: targets, Rates: nemesis.Rates{Partition: partition, LeaderChange: leader},
		Tick: 500 * time.Millisecond, MaxWindow: 3 * time.Second, HealAt: healAt, Quiet: quiet,
	}, nil, w.Choices.Fork("nemesis"))

	if w.Run() == simclock.Idle {
		leaseCheck.Finish(w.Loop.Now())
		w.Fail(leaseCheck.Err())
	}
	st := server.Stats()
	for _, c := range []struct {
		name string
		v    int
	}{
		{"calls", st.Calls}, {"applied", st.Applied}, {"lost_requests", st.LostRequests},
		{"lost_responses", st.LostResponses}, {"refused", st.Refused}, {"delayed", st.Delayed},
		{"leader_changes", st.LeaderChanges}, {"indeterminate", st.Indeterminate}, {"lease_expiries", st.Expired},
	} {
		w.Count(c.name, int64(c.v))
	}
	if !w.Failed() {
		w.Fail(kvcheck.CheckWatch(watch, store.Revision()))
	}
	if !w.Failed() {
		ops := kvcheck.PatchWithWatch(history.History(), watch)
		w.Count("history_ops", int64(len(ops)))
		w.Judge(kvcheck.Check(ops, cfg.checkTimeout()))
	}
	return w.Result(), nil
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
		ctx.Log("client.done", fmt.Sprintf("ops=%d", k.ops))
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
