package coord

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"shardsim/simclock"
	"shardsim/simkv"
)

// etcdFix is one store with tenant A's run 1 (roots 1 [a, m) and 2
// [m, ∞), 10-unit leases) at logical time 100, and the means to build
// coordinators over it through wrapped KVs.
type etcdFix struct {
	t      *testing.T
	store  *simkv.Store
	direct *simkv.Direct
	cfg    EtcdConfig
	look   *Etcd // fault-free, unwrapped
	now    LogicalTime
}

func newEtcdFix(t *testing.T, cfg Config, scfg simkv.StoreConfig) *etcdFix {
	t.Helper()
	f := &etcdFix{t: t, store: simkv.NewStore(scfg), cfg: testEtcdConfig(cfg), now: 100}
	f.direct = simkv.NewDirect(f.store, 0)
	f.look = NewEtcd(f.direct, f.cfg)
	roots := []InitialShard{{1, spec("a", "m")}, {2, spec("m", "")}}
	if _, _, err := createRunWithShards(f.look, f.now, tenantA, run1, RunConfig{LeaseDuration: 10}, roots, 1); err != nil {
		t.Fatal(err)
	}
	return f
}

// hooked returns a coordinator whose KV is a fresh hookKV over the store.
func (f *etcdFix) hooked() (*hookKV, *Etcd) {
	h := &hookKV{inner: f.direct}
	return h, NewEtcd(h, f.cfg)
}

func (f *etcdFix) acquire(c *Etcd, shard ShardID, w WorkerID) Lease {
	f.t.Helper()
	res, _, err := c.AcquireAndRestore(f.now, tenantA, ShardKey{run1, shard}, w)
	if err != nil {
		f.t.Fatalf("acquire %s by %s: %v", shard, w, err)
	}
	return res.Lease
}

func (f *etcdFix) snapshot() Snapshot {
	f.t.Helper()
	s, err := f.look.Snapshot(f.now)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func (f *etcdFix) shard(id ShardID) ShardRecord {
	f.t.Helper()
	for _, r := range f.snapshot().Shards {
		if r.Tenant == tenantA && r.Shard == id {
			return r
		}
	}
	f.t.Fatalf("no shard %s", id)
	return ShardRecord{}
}

// pieces returns n specs partitioning [start, end) (end nil: unbounded).
func pieces(n int, start byte, end []byte) []ShardSpec {
	out := make([]ShardSpec, n)
	for i := range out {
		out[i] = ShardSpec{Start: []byte{start, byte('a' + i)}, End: []byte{start, byte('a' + i + 1)}}
	}
	out[0].Start = []byte{start}
	out[n-1].End = end
	return out
}

func TestEtcdSplitReplaceIsOneTxnWithinMaxOps(t *testing.T) {
	// The store allows exactly the 13 compares a split of 8 needs.
	f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{MaxTxnOps: 13})
	h, c := f.hooked()
	l := f.acquire(c, 1, w1)
	h.sent = nil
	res, _, err := c.SplitReplace(f.now, tenantA, l, SplitReplacePlan{pieces(8, 'a', []byte("m"))}, 2)
	wantCode(t, err, codeNone)
	if len(h.sent) != 1 {
		t.Fatalf("split_replace sent %d write transactions", len(h.sent))
	}
	txn := h.sent[0]
	wantCmps, wantOps := splitReplaceTxnSize(8)
	if len(txn.Compare) != wantCmps || len(txn.Success) != wantOps {
		t.Fatalf("txn of %d compares, %d ops; want %d, %d", len(txn.Compare), len(txn.Success), wantCmps, wantOps)
	}
	if len(res.Children) != 8 {
		t.Fatalf("children %v", res.Children)
	}
	if s := f.snapshot(); len(s.Shards) != 10 || judgeState(&s) != nil {
		t.Fatalf("after split: %d shards, %v", len(s.Shards), judgeState(&s))
	}

	// Nine children exceed the per-op cap: refused, nothing written.
	l2 := f.acquire(c, 2, w1)
	before := f.snapshot()
	_, _, err = c.SplitReplace(f.now, tenantA, l2, SplitReplacePlan{pieces(9, 'm', nil)}, 3)
	wantCode(t, err, CodeSplitInvalid)
	if se := err.(*SplitError); se.Split != SplitTooManyChildren || !strings.Contains(se.Error(), "at most 8") {
		t.Fatalf("error %v", err)
	}
	if after := f.snapshot(); stateDiff(&before, &after) != "" {
		t.Fatal("refused split changed the state")
	}
}

func TestEtcdLargestSplitFitsDefaultMaxOps(t *testing.T) {
	// With the cap raised to the most a 128-op transaction allows.
	cfg := DefaultConfig()
	n := simkv.DefaultMaxTxnOps - 5
	ec := testEtcdConfig(cfg)
	ec.MaxChildrenPerOp = n
	if err := ec.Validate(); err != nil {
		t.Fatal(err)
	}
	ec.MaxChildrenPerOp = n + 1
	if err := ec.Validate(); err == nil {
		t.Fatal("a cap beyond max txn ops validated")
	}
	f := newEtcdFix(t, cfg, simkv.StoreConfig{})
	f.cfg.MaxChildrenPerOp = n
	c := NewEtcd(f.direct, f.cfg)
	l := f.acquire(c, 2, w1)
	plan := make([]ShardSpec, n)
	for i := range plan {
		plan[i] = ShardSpec{Start: []byte(fmt.Sprintf("m%03d", i)), End: []byte(fmt.Sprintf("m%03d", i+1))}
	}
	plan[0].Start, plan[n-1].End = []byte("m"), nil
	_, _, err := c.SplitReplace(f.now, tenantA, l, SplitReplacePlan{plan}, 2)
	wantCode(t, err, codeNone)
}

func TestEtcdRegisterCap(t *testing.T) {
	f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
	max := f.cfg.MaxRootsPerRegister()
	roots := func(n int) []InitialShard {
		out := make([]InitialShard, n)
		for i := range out {
			out[i] = InitialShard{Shard: ShardID(i + 1), Spec: spec(fmt.Sprintf("k%04d", i), fmt.Sprintf("k%04d", i+1))}
		}
		return out
	}
	for _, run := range []RunID{2, 3} {
		if _, err := f.look.CreateRun(f.now, tenantA, run, RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	// The manifest limit is both backends'; the etcd backend's default
	// fits one transaction with room to spare.
	limit := DefaultConfig().manifestLimit()
	if limit > max {
		t.Fatalf("manifest limit %d above the %d roots one transaction holds", limit, max)
	}
	for name, c := range map[string]Coordinator{"etcd": f.look, "reference": mustReference(t)} {
		for _, run := range []RunID{2, 3} {
			if _, err := c.CreateRun(f.now, tenantA, run, RunConfig{}); err != nil && CodeOf(err) != CodeRunExists {
				t.Fatal(err)
			}
		}
		_, _, err := c.RegisterShards(f.now, tenantA, 2, roots(limit+1), 1)
		if re, ok := err.(*RunError); !ok || re.Code != CodeManifestInvalid || re.Manifest != ManifestTooLarge {
			t.Fatalf("%s: manifest of %d: %v", name, limit+1, err)
		}
		_, _, err = c.RegisterShards(f.now, tenantA, 3, roots(limit), 1)
		wantCode(t, err, codeNone)
	}
	// A configuration whose manifest limit does not fit a transaction
	// is refused.
	ec := testEtcdConfig(DefaultConfig())
	ec.MaxTxnOps = DefaultMaxManifestShards
	if err := ec.Validate(); err == nil {
		t.Fatal("a manifest limit beyond max txn ops validated")
	}
}

// TestEtcdStorageLeaseExpiryFailsClosed: when the owner binding's etcd
// lease expires while the logical lease still runs (the KV's clock ran
// ahead), progress is refused, but nobody else may take the shard before
// the logical deadline; the holder re-acquires.
func TestEtcdStorageLeaseExpiryFailsClosed(t *testing.T) {
	f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
	l := f.acquire(f.look, 1, w1)
	if s := f.snapshot(); len(s.Bindings) != 1 || s.Bindings[0].Binding != (OwnerBinding{Worker: w1, Fence: l.Fence, Deadline: l.Deadline}) {
		t.Fatalf("bindings %+v", s.Bindings)
	}
	f.direct.Advance(time.Duration(f.cfg.OwnerLeaseTTL(10)) * time.Second) // the etcd lease expires
	f.now++
	if s := f.snapshot(); len(s.Bindings) != 0 {
		t.Fatalf("binding survived its etcd lease: %+v", s.Bindings)
	}
	_, _, err := f.look.Checkpoint(f.now, tenantA, l, cur("b"), 2)
	wantCode(t, err, CodeLeaseExpired)
	_, _, err = f.look.Renew(f.now, tenantA, l)
	wantCode(t, err, CodeLeaseExpired)
	_, _, err = f.look.AcquireAndRestore(f.now, tenantA, ShardKey{run1, 1}, w2)
	wantCode(t, err, CodeAlreadyLeased)
	// The logical lease is still live: its own holder cannot re-acquire
	// it either (seed 004: Active and unleased, or the lease expired).
	_, _, err = f.look.AcquireAndRestore(f.now, tenantA, ShardKey{run1, 1}, w1)
	wantCode(t, err, CodeAlreadyLeased)
	f.now = l.Deadline
	l2 := f.acquire(f.look, 1, w1)
	if l2.Fence != l.Fence+1 {
		t.Fatalf("re-acquired at fence %d", l2.Fence)
	}
	_, _, err = f.look.Checkpoint(f.now, tenantA, l2, cur("b"), 3)
	wantCode(t, err, codeNone)
}

// TestEtcdRenewKeepsTheStorageLeaseAlive: renew restarts the binding's
// etcd lease, so a renewed holder outlives the first TTL; complete
// revokes it.
func TestEtcdRenewKeepsTheStorageLeaseAlive(t *testing.T) {
	f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
	l := f.acquire(f.look, 1, w1)
	ttl := time.Duration(f.cfg.OwnerLeaseTTL(10)) * time.Second
	for i := 0; i < 3; i++ {
		f.direct.Advance(ttl * 3 / 4)
		f.now += 7
		_, _, err := f.look.Renew(f.now, tenantA, l)
		wantCode(t, err, codeNone)
	}
	_, _, err := f.look.Checkpoint(f.now, tenantA, l, cur("b"), 2)
	wantCode(t, err, codeNone)
	if f.look.Stats().KeepAlives != 3 {
		t.Fatalf("stats %+v", f.look.Stats())
	}
	_, _, err = f.look.Complete(f.now, tenantA, l, cur("c"), 3)
	wantCode(t, err, codeNone)
	if n := liveLeases(t, f.store, f.direct.Now()); n != 0 {
		t.Fatalf("%d etcd leases left after complete", n)
	}
}

func liveLeases(t *testing.T, s *simkv.Store, now simclock.Time) int {
	resp, err := s.Apply(now, simkv.Request{LeaseLeases: &simkv.LeaseLeasesRequest{}})
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.LeaseLeases.Leases)
}

// TestEtcdAmbiguousCommits: a transaction whose answer is lost is settled
// by reading back, never guessed: applied-and-lost completes the
// operation once, dropped-and-lost retries it.
func TestEtcdAmbiguousCommits(t *testing.T) {
	t.Run("applied, answer lost", func(t *testing.T) {
		f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
		h, c := f.hooked()
		h.loseAnswer = func(n int) bool { return true }
		res, evs, err := c.AcquireAndRestore(f.now, tenantA, ShardKey{run1, 1}, w1)
		wantCode(t, err, codeNone)
		if res.Lease.Fence != 2 || len(evs) != 1 || f.shard(1).Fence != 2 {
			t.Fatalf("acquire %+v %v; stored fence %d", res.Lease, evs, f.shard(1).Fence)
		}
		out, evs, err := c.Checkpoint(f.now, tenantA, res.Lease, cur("b"), 2)
		if err != nil || out != Executed || len(evs) != 1 {
			t.Fatalf("checkpoint %v %v %v", out, evs, err)
		}
		if s := c.Stats(); s.Ambiguous != 2 || s.Landed != 2 {
			t.Fatalf("stats %+v", s)
		}
	})
	t.Run("dropped, answer lost", func(t *testing.T) {
		f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
		h, c := f.hooked()
		h.dropWrite = func(n int) bool { return n == 1 }
		res, _, err := c.AcquireAndRestore(f.now, tenantA, ShardKey{run1, 1}, w1)
		wantCode(t, err, codeNone)
		if res.Lease.Fence != 2 || f.shard(1).Fence != 2 {
			t.Fatalf("acquire %+v", res.Lease)
		}
		if s := c.Stats(); s.Ambiguous != 1 || s.Landed != 0 {
			t.Fatalf("stats %+v", s)
		}
	})
	t.Run("applied, then overwritten, answer lost", func(t *testing.T) {
		// Two more writes land on the record before the read-back: it
		// finds our version in the key's history.
		f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
		l := f.acquire(f.look, 1, w1)
		h, c := f.hooked()
		h.loseAnswer = func(n int) bool { return n == 1 }
		h.afterWrite = func(n int) {
			if n == 1 {
				f.look.Checkpoint(f.now, tenantA, l, cur("c"), 3)
				f.look.Checkpoint(f.now, tenantA, l, cur("d"), 4)
			}
		}
		out, evs, err := c.Checkpoint(f.now, tenantA, l, cur("b"), 2)
		if err != nil || out != Executed || len(evs) != 1 {
			t.Fatalf("checkpoint %v %v %v", out, evs, err)
		}
		if s := c.Stats(); s.Ambiguous != 1 || s.Landed != 1 {
			t.Fatalf("stats %+v", s)
		}
	})
	t.Run("dropped, others wrote, answer lost", func(t *testing.T) {
		f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
		l := f.acquire(f.look, 1, w1)
		h, c := f.hooked()
		h.dropWrite = func(n int) bool { return n == 1 }
		h.afterWrite = func(n int) {
			if n == 1 {
				f.look.Checkpoint(f.now, tenantA, l, cur("c"), 3)
				f.look.Checkpoint(f.now, tenantA, l, cur("d"), 4)
			}
		}
		// The retry re-decides on the new state: "b" is now a regression.
		_, _, err := c.Checkpoint(f.now, tenantA, l, cur("b"), 2)
		wantCode(t, err, CodeCursorRegression)
		if s := c.Stats(); s.Ambiguous != 1 || s.Landed != 0 {
			t.Fatalf("stats %+v", s)
		}
	})
	t.Run("history compacted: outcome unknown", func(t *testing.T) {
		f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
		l := f.acquire(f.look, 1, w1)
		h, c := f.hooked()
		h.loseAnswer = func(n int) bool { return n == 1 }
		h.afterWrite = func(n int) {
			if n == 1 {
				f.look.Checkpoint(f.now, tenantA, l, cur("c"), 3)
				f.look.Checkpoint(f.now, tenantA, l, cur("d"), 4)
				if _, err := f.direct.Compact(simkv.CompactRequest{Revision: f.store.Revision()}); err != nil {
					t.Fatal(err)
				}
			}
		}
		_, _, err := c.Checkpoint(f.now, tenantA, l, cur("b"), 2)
		wantCode(t, err, CodeBackendTransient)
		if !strings.Contains(err.Error(), "outcome unknown") {
			t.Fatalf("error %v", err)
		}
		// Retrying the same op id settles it: it had landed.
		out, _, err := f.look.Checkpoint(f.now, tenantA, l, cur("b"), 2)
		if err != nil || out != Replayed {
			t.Fatalf("retry %v %v", out, err)
		}
	})
}

func TestEtcdInfraErrors(t *testing.T) {
	t.Run("unreachable: transient", func(t *testing.T) {
		f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
		h, c := f.hooked()
		h.down = true
		_, _, err := c.AcquireAndRestore(f.now, tenantA, ShardKey{run1, 1}, w1)
		wantCode(t, err, CodeBackendTransient)
		var infra *InfraError
		if !errors.As(err, &infra) || !infra.Transient || infra.Operation != "acquire_and_restore.read" {
			t.Fatalf("error %v", err)
		}
		if s := c.Stats(); s.Requests != f.cfg.MaxAttempts {
			t.Fatalf("%d requests for %d attempts", s.Requests, f.cfg.MaxAttempts)
		}
	})
	t.Run("compare-and-swap lost every time: transient", func(t *testing.T) {
		f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
		l := f.acquire(f.look, 1, w1)
		h, c := f.hooked()
		h.beforeWrite = func(int) { f.look.Renew(f.now, tenantA, l) } // moves the record each time
		_, _, err := c.Checkpoint(f.now, tenantA, l, cur("b"), 2)
		wantCode(t, err, CodeBackendTransient)
		if s := c.Stats(); s.Conflicts != f.cfg.MaxAttempts {
			t.Fatalf("stats %+v", s)
		}
	})
	for name, corrupt := range map[string]func(v []byte) []byte{
		"garbage":          func([]byte) []byte { return []byte("not a record") },
		"unknown version":  func(v []byte) []byte { w := append([]byte(nil), v...); w[1] = CodecVersion + 1; return w },
		"trailing bytes":   func(v []byte) []byte { return append(append([]byte(nil), v...), 0) },
		"invariant broken": func(v []byte) []byte { return rewrite(t, v, func(r *ShardRecord) { r.Fence = 0 }) },
		"another shard":    func(v []byte) []byte { return rewrite(t, v, func(r *ShardRecord) { r.Shard = 7 }) },
		"no write stamp":   func(v []byte) []byte { return v[:writeStampLen-1] },
	} {
		t.Run("corrupt record: "+name, func(t *testing.T) {
			f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
			key := f.look.keys.shard(tenantA, ShardKey{run1, 1})
			resp, err := f.direct.Range(simkv.RangeRequest{Key: key})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.direct.Put(simkv.PutRequest{Key: key, Value: corrupt(resp.Kvs[0].Value)}); err != nil {
				t.Fatal(err)
			}
			_, _, err = f.look.AcquireAndRestore(f.now, tenantA, ShardKey{run1, 1}, w1)
			wantCode(t, err, CodeBackendCorruption)
			if _, err := f.look.Snapshot(f.now); err == nil {
				t.Fatal("snapshot decoded a corrupt record")
			}
			// The other shard is unaffected.
			_, _, err = f.look.AcquireAndRestore(f.now, tenantA, ShardKey{run1, 2}, w1)
			wantCode(t, err, codeNone)
		})
	}
	t.Run("active index out of step", func(t *testing.T) {
		f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
		if _, err := f.direct.DeleteRange(simkv.DeleteRangeRequest{Key: f.look.keys.active(tenantA, run1)}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.look.Snapshot(f.now); err == nil {
			t.Fatal("snapshot accepted an Active run missing from the index")
		}
	})
}

// rewrite changes the shard record of a stored value, keeping its stamp.
func rewrite(t *testing.T, v []byte, change func(r *ShardRecord)) []byte {
	t.Helper()
	enc, stamp, err := SplitEtcdRecordValue(v)
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeShardRecord(enc)
	if err != nil {
		t.Fatal(err)
	}
	change(&r)
	return AppendWriteStamp(EncodeShardRecord(&r), stamp)
}

// TestEtcdConcurrentSplitsRespectLimits: two splits race for the last
// room under the tenant's shard ceiling; the count compares make the
// loser re-count and refuse.
func TestEtcdConcurrentSplitsRespectLimits(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Limits = ShardLimits{MaxPerTenant: 4, MaxTotal: 100}
	f := newEtcdFix(t, cfg, simkv.StoreConfig{})
	l1, l2 := f.acquire(f.look, 1, w1), f.acquire(f.look, 2, w2)
	h, c := f.hooked()
	var yErr error
	h.beforeWrite = func(n int) {
		if n == 1 {
			_, _, yErr = f.look.SplitReplace(f.now, tenantA, l2, SplitReplacePlan{[]ShardSpec{spec("m", "t"), spec("t", "")}}, 3)
		}
	}
	_, _, err := c.SplitReplace(f.now, tenantA, l1, SplitReplacePlan{[]ShardSpec{spec("a", "f"), spec("f", "m")}}, 2)
	wantCode(t, yErr, codeNone)
	wantCode(t, err, CodeShardLimit)
	if s := f.snapshot(); len(s.Shards) != 4 {
		t.Fatalf("%d shards under a ceiling of 4", len(s.Shards))
	}
}

// TestEtcdConcurrentClaimsKeepCooldown: a worker's two racing claims
// cannot both pass the cooldown.
func TestEtcdConcurrentClaimsKeepCooldown(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ClaimCooldown = 5
	f := newEtcdFix(t, cfg, simkv.StoreConfig{})
	h, c := f.hooked()
	var yErr error
	h.beforeWrite = func(n int) {
		if n == 1 {
			_, _, yErr = f.look.ClaimNextAvailable(f.now, tenantA, w1)
		}
	}
	_, _, err := c.ClaimNextAvailable(f.now, tenantA, w1)
	wantCode(t, yErr, codeNone)
	wantCode(t, err, CodeClaimCooldown)
}

// TestEtcdNoLeaseLeaks: over a history of acquires, takeovers, renewals
// and completions, the etcd leases left are exactly those of the owner
// bindings left.
func TestEtcdNoLeaseLeaks(t *testing.T) {
	f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
	c := f.look
	l := f.acquire(c, 1, w1)
	f.acquire(c, 2, w1)
	f.now += 20 // both logical leases expired; the etcd leases did not (the KV clock stands)
	l = f.acquire(c, 1, w2)
	f.acquire(c, 2, w2)
	if _, _, err := c.Renew(f.now, tenantA, l); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Complete(f.now, tenantA, l, Cursor{}, 5); err != nil {
		t.Fatal(err)
	}
	if got, want := liveLeases(t, f.store, f.direct.Now()), len(f.snapshot().Bindings); got != want || want != 1 {
		t.Fatalf("%d etcd leases for %d bindings", got, want)
	}
}

// TestEtcdTxnSizes pins every mutation to one transaction of a known size
// (compares, success ops), far inside etcd's default of 128.
func TestEtcdTxnSizes(t *testing.T) {
	f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
	h, c := f.hooked()
	var l Lease
	for _, tc := range []struct {
		name      string
		do        func() error
		cmps, ops int
	}{
		{"create_run", func() error { _, err := c.CreateRun(f.now, tenantA, 2, RunConfig{}); return err }, 1, 1},
		{"register_shards of 3", func() error {
			_, _, err := c.RegisterShards(f.now, tenantA, 2, []InitialShard{{1, spec("", "f")}, {2, spec("f", "p")}, {3, spec("p", "")}}, 1)
			return err
		}, 6, 5},
		{"acquire", func() (err error) {
			var res AcquireResult
			res, _, err = c.AcquireAndRestore(f.now, tenantA, ShardKey{run1, 1}, w1)
			l = res.Lease
			return err
		}, 2, 2},
		{"checkpoint", func() error { _, _, err := c.Checkpoint(f.now, tenantA, l, cur("b"), 2); return err }, 3, 1},
		{"renew", func() error { f.now++; _, _, err := c.Renew(f.now, tenantA, l); return err }, 3, 2},
		{"split_residual", func() error {
			_, _, err := c.SplitResidual(f.now, tenantA, l, SplitResidualPlan{spec("a", "g"), spec("g", "m")}, 3)
			return err
		}, 6, 2},
		{"complete", func() error { _, _, err := c.Complete(f.now, tenantA, l, cur("c"), 4); return err }, 3, 2},
		{"claim", func() error { _, _, err := c.ClaimNextAvailable(f.now, tenantA, w2); return err }, 3, 3},
		{"cancel_run", func() error { _, _, err := c.CancelRun(f.now, tenantA, 2, 5); return err }, 1, 2},
	} {
		h.sent = nil
		if err := tc.do(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(h.sent) != 1 || len(h.sent[0].Compare) != tc.cmps || len(h.sent[0].Success) != tc.ops {
			var sizes [][2]int
			for _, r := range h.sent {
				sizes = append(sizes, [2]int{len(r.Compare), len(r.Success)})
			}
			t.Errorf("%s: sent (compares, ops) %v, want one of (%d, %d)", tc.name, sizes, tc.cmps, tc.ops)
		}
	}
	if c, o := registerTxnSize(3); c != 6 || o != 5 {
		t.Errorf("registerTxnSize(3) = %d, %d", c, o)
	}
}

// TestEtcdUnparkComparesTheRun: the run ends between the unpark's read and
// its commit. The commit compares the run record, so it fails and the
// retry sees the ended run: the shard stays parked.
func TestEtcdUnparkComparesTheRun(t *testing.T) {
	f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
	l := f.acquire(f.look, 1, w1)
	if _, _, err := f.look.ParkShard(f.now, tenantA, l, ParkNotFound, 2); err != nil {
		t.Fatal(err)
	}
	h, c := f.hooked()
	var failErr error
	h.beforeWrite = func(n int) {
		if n == 1 {
			_, _, failErr = f.look.FailRun(f.now, tenantA, run1, 3)
		}
	}
	_, _, err := c.UnparkShard(f.now, tenantA, ShardKey{run1, 1}, 4)
	wantCode(t, failErr, codeNone)
	wantCode(t, err, CodeRunState)
	if r := f.shard(1); r.Status != ShardParked {
		t.Fatalf("shard of the failed run is %s", r.Status)
	}
	if s := c.Stats(); s.Conflicts != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestEtcdLateFirstCommitIsAReplay: an operation that creates shards sends
// its commit, the answer is lost and the commit has not applied yet, so the
// read-back says "not landed"; the retry reads the state, decides again,
// and while it counts the shards it would create, the first commit lands
// late and creates them. The retry must recognise its own operation (the
// op-log now holds it) and answer with the first result, not report an id
// collision on the shards its own first commit made.
func TestEtcdLateFirstCommitIsAReplay(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(f *etcdFix, c *Etcd, l Lease) (Outcome, []ShardKey, error)
	}{
		{"split_replace", func(f *etcdFix, c *Etcd, l Lease) (Outcome, []ShardKey, error) {
			res, _, err := c.SplitReplace(f.now, tenantA, l, SplitReplacePlan{[]ShardSpec{spec("a", "f"), spec("f", "m")}}, 2)
			var keys []ShardKey
			for _, id := range res.Children {
				keys = append(keys, ShardKey{run1, id})
			}
			return res.Outcome, keys, err
		}},
		{"split_residual", func(f *etcdFix, c *Etcd, l Lease) (Outcome, []ShardKey, error) {
			res, _, err := c.SplitResidual(f.now, tenantA, l, SplitResidualPlan{spec("a", "f"), spec("f", "m")}, 2)
			return res.Outcome, []ShardKey{{run1, res.Residual}}, err
		}},
		{"register_shards", func(f *etcdFix, c *Etcd, _ Lease) (Outcome, []ShardKey, error) {
			out, _, err := c.RegisterShards(f.now, tenantA, 2, []InitialShard{{1, spec("", "k")}, {2, spec("k", "")}}, 7)
			return out, []ShardKey{{2, 1}, {2, 2}}, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
			if _, err := f.look.CreateRun(f.now, tenantA, 2, RunConfig{LeaseDuration: 10}); err != nil {
				t.Fatal(err)
			}
			l := f.acquire(f.look, 1, w1)
			h, c := f.hooked()
			h.dropWrite = func(n int) bool { return n == 1 }
			var late *simkv.TxnRequest
			h.afterWrite = func(n int) {
				if n == 1 {
					late = &h.sent[0]
				}
			}
			counting := func(r *simkv.TxnRequest) bool {
				for _, op := range r.Success {
					if op.Range != nil && op.Range.CountOnly {
						return true
					}
				}
				return false
			}
			h.beforeRead = func(r *simkv.TxnRequest) {
				if late != nil && counting(r) {
					resp, err := f.direct.Txn(*late) // the first commit lands, late
					if err != nil || !resp.Succeeded {
						t.Fatalf("the late commit did not apply: %v %+v", err, resp)
					}
					late = nil
				}
			}
			out, created, err := tc.do(f, c, l)
			wantCode(t, err, codeNone)
			if out != Replayed || len(created) == 0 || created[0].Shard == 0 {
				t.Fatalf("outcome %v with %v, want replayed with the first result", out, created)
			}
			if s := c.Stats(); s.Ambiguous != 1 || s.Landed != 0 || len(h.sent) != 1 {
				t.Fatalf("stats %+v, %d write transactions", s, len(h.sent))
			}
			s := f.snapshot()
			if err := judgeState(&s); err != nil {
				t.Fatal(err)
			}
			for _, k := range created {
				found := false
				for _, r := range s.Shards {
					found = found || r.Tenant == tenantA && r.Key() == k
				}
				if !found {
					t.Fatalf("answered with %s %s, which does not exist", k.Run, k.Shard)
				}
			}
		})
	}
}

// TestEtcdReadBackIsNotFooledByATwin: two coordinators act for one worker
// at one logical time and acquire the same shard. The first one's commit
// is dropped with an ambiguous answer; before it reads back, the second's
// identical request lands, writing the record the first would have
// written. The read-back must not take that write for its own (before
// write stamps it did, and both callers held fence 2): the first retries
// and finds the shard leased, live, by the twin, and is refused (acquire
// refuses a live lease whoever holds it).
func TestEtcdReadBackIsNotFooledByATwin(t *testing.T) {
	f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
	cfg1, cfg2 := f.cfg, f.cfg
	cfg1.Instance, cfg2.Instance = 1, 2
	h := &hookKV{inner: f.direct}
	first, twin := NewEtcd(h, cfg1), NewEtcd(f.direct, cfg2)
	key := ShardKey{run1, 1}
	var twinLease Lease
	h.dropWrite = func(n int) bool { return n == 1 }
	h.afterWrite = func(n int) {
		if n == 1 {
			res, _, err := twin.AcquireAndRestore(f.now, tenantA, key, w1)
			if err != nil {
				t.Fatal(err)
			}
			twinLease = res.Lease
		}
	}
	_, _, err := first.AcquireAndRestore(f.now, tenantA, key, w1)
	wantCode(t, err, CodeAlreadyLeased)
	if twinLease.Fence != 2 || f.shard(1).Fence != 2 {
		t.Fatalf("twin holds fence %d, stored fence %d", twinLease.Fence, f.shard(1).Fence)
	}
	if s := first.Stats(); s.Ambiguous != 1 || s.Landed != 0 {
		t.Fatalf("stats %+v", s)
	}
	_, _, err = twin.Checkpoint(f.now, tenantA, twinLease, cur("b"), 2)
	wantCode(t, err, codeNone)
}

// TestEtcdLateOwnAcquireIsItsGrant: an acquire's commit is dropped with an
// ambiguous answer, its read-back finds nothing, and then the commit lands
// late, before the retry reads. The retry meets a live lease written by
// its own earlier attempt (its write stamp says so): that is the grant the
// caller asked for, answered as such, with nothing written again. Deciding
// afresh would refuse the caller's own live lease and leave it holding a
// lease it does not know of.
func TestEtcdLateOwnAcquireIsItsGrant(t *testing.T) {
	f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
	h, c := f.hooked()
	h.dropWrite = func(n int) bool { return n == 1 }
	var late *simkv.TxnRequest
	h.afterWrite = func(n int) {
		if n == 1 {
			late = &h.sent[0]
		}
	}
	reads := 0
	h.beforeRead = func(*simkv.TxnRequest) {
		if late == nil {
			return
		}
		if reads++; reads == 2 { // after the read-back, before the retry's read
			if resp, err := f.direct.Txn(*late); err != nil || !resp.Succeeded {
				t.Fatalf("the late commit did not apply: %v %+v", err, resp)
			}
			late = nil
		}
	}
	res, evs, err := c.AcquireAndRestore(f.now, tenantA, ShardKey{run1, 1}, w1)
	wantCode(t, err, codeNone)
	rec := f.shard(1)
	if res.Lease.Fence != 2 || rec.Fence != 2 || rec.AcquireCount != 1 || len(evs) != 1 || len(h.sent) != 1 {
		t.Fatalf("lease %+v, stored fence %d, acquire count %d, events %v, %d write transactions",
			res.Lease, rec.Fence, rec.AcquireCount, evs, len(h.sent))
	}
	if late != nil {
		t.Fatal("the late commit never ran: the test did not exercise the path")
	}
	_, _, err = c.Checkpoint(f.now, tenantA, res.Lease, cur("b"), 2)
	wantCode(t, err, codeNone)
}

// TestEtcdReadBackIsNotFooledByAnIdempotentTwin: the same, for a
// checkpoint sent twice with one op id (a caller retrying through two
// coordinators): the twin's write executed the operation, so the first
// must answer it as replayed, as the reference does, not claim it.
func TestEtcdReadBackIsNotFooledByAnIdempotentTwin(t *testing.T) {
	f := newEtcdFix(t, DefaultConfig(), simkv.StoreConfig{})
	l := f.acquire(f.look, 1, w1)
	cfg1, cfg2 := f.cfg, f.cfg
	cfg1.Instance, cfg2.Instance = 1, 2
	h := &hookKV{inner: f.direct}
	first, twin := NewEtcd(h, cfg1), NewEtcd(f.direct, cfg2)
	var twinOut Outcome
	h.dropWrite = func(n int) bool { return n == 1 }
	h.afterWrite = func(n int) {
		if n == 1 {
			var err error
			if twinOut, _, err = twin.Checkpoint(f.now, tenantA, l, cur("b"), 2); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, evs, err := first.Checkpoint(f.now, tenantA, l, cur("b"), 2)
	wantCode(t, err, codeNone)
	if twinOut != Executed || out != Replayed || evs != nil {
		t.Fatalf("twin %v, first %v %v: want executed once, replayed once", twinOut, out, evs)
	}
}
