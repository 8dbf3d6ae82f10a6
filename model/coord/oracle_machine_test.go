package coord

import (
	"bytes"
	"fmt"
	"slices"

	"pgregory.net/rapid"
)

// machine drives a pair with operations drawn by rapid: several tenants,
// runs and workers; zombies presenting old leases; replays of earlier op
// ids and conflicting reuses of them; time advancing past lease expiry;
// and races of two coordinators (clean mode).
type machine struct {
	p      *pair
	leases []Lease  // every lease granted, zombies included
	ops    []issued // every idempotent call made
	nextOp OpID
	// focus, while set, makes shard and lease draws prefer one shard (the
	// racer's, so that its interloper contends with it).
	focus Opt[tenantShardKey]
	// claims holds each worker's last successful claim time (C.Cooldown).
	claims map[claimKey]LogicalTime
	racing bool // the calls being drawn will race
}

// issued remembers an idempotent call: for a replay, and for reusing its
// op id with another payload.
type issued struct {
	c     call
	op    OpID
	lease Opt[Lease]  // shard operations under a lease
	run   Opt[RunID]  // run operations
	other Opt[OpKind] // unpark: nothing to conflict with
	took  bool        // it took effect (answered success)
}

// planned is a drawn call and what the machine learns from its result.
type planned struct {
	c     call
	after func(result)
}

// gen draws a call; ok is false when there is nothing sensible to draw.
type gen func(t *rapid.T) (p planned, ok bool)

var oracleTenants = []TenantID{tenantA, tenantB}

// gens returns the call generators by name; weight repeats the frequent
// ones in rapid's action list.
func (m *machine) gens() (named map[string]gen, weight map[string]int) {
	named = map[string]gen{
		"create_run":     m.genCreateRun,
		"register":       m.genRegister,
		"acquire":        m.genAcquire,
		"claim":          m.genClaim,
		"renew":          m.genRenew,
		"checkpoint":     m.genLeased(m.mkCheckpoint),
		"complete":       m.genLeased(m.mkComplete),
		"park":           m.genLeased(m.mkPark),
		"split_replace":  m.genLeased(m.mkSplitReplace),
		"split_residual": m.genLeased(m.mkSplitResidual),
		"unpark":         m.genUnpark,
		"run_transition": m.genRunTransition,
		"replay":         m.genReplay,
		"conflict":       m.genConflict,
		"get_run":        m.genGetRun,
		"progress":       m.genProgress,
		"list_shards":    m.genListShards,
		"list_active":    func(t *rapid.T) (planned, bool) { return planned{c: callListActiveRuns(m.tenant(t))}, true },
	}
	weight = map[string]int{"create_run": 2, "register": 2, "acquire": 3, "claim": 2, "checkpoint": 4}
	return named, weight
}

// actions returns the machine's actions for rapid's Repeat.
func (m *machine) actions(races bool) map[string]func(*rapid.T) {
	named, weight := m.gens()
	a := map[string]func(*rapid.T){"tick": m.tick}
	for name, g := range named {
		act := func(t *rapid.T) {
			p, ok := g(t)
			if !ok {
				t.Skip("nothing to do")
			}
			m.exec(t, p)
		}
		for i := 0; i < max(1, weight[name]); i++ {
			a[fmt.Sprintf("%s#%d", name, i)] = act
		}
	}
	if races {
		for i := 0; i < 8; i++ {
			a[fmt.Sprintf("race#%d", i)] = m.race
		}
		a["gc"] = func(t *rapid.T) {
			m.exec(t, planned{c: callGC(m.tenant(t), LogicalDuration(rapid.IntRange(0, 20).Draw(t, "max age")))})
		}
	}
	return a
}

// bootstrap gives each tenant an Active run 1 of three roots, so that
// the random operations find shards to work on from the start.
func (m *machine) bootstrap(t *rapid.T) {
	roots := []InitialShard{{1, spec("", "h")}, {2, spec("h", "q")}, {3, spec("q", "")}}
	for _, tn := range oracleTenants {
		m.do(t, callCreateRun(tn, 1, RunConfig{LeaseDuration: 5}))
		m.nextOp++
		m.do(t, callRegister(tn, 1, roots, m.nextOp))
	}
}

func (m *machine) do(t *rapid.T, c call) result {
	got, err := m.p.step(c)
	if err != nil {
		t.Fatalf("step %d at t=%d: %v", m.p.stats.steps, m.p.now, err)
	}
	return got
}

func (m *machine) exec(t *rapid.T, p planned) {
	r := m.do(t, p.c)
	if p.after != nil {
		p.after(r)
	}
}

// race draws two calls and runs them as two coordinators would race (see
// pair.race). Claims are not raced as the first call: a claim's walk is
// not compared, so a shard made available by the other call during the
// walk may be passed over, which no sequential order explains.
func (m *machine) race(t *rapid.T) {
	m.racing = true
	defer func() { m.racing = false }()
	named, _ := m.gens()
	var names []string
	for name := range named {
		names = append(names, name)
	}
	slices.Sort(names)
	xName := rapid.SampledFrom(slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "claim" })).Draw(t, "racer")
	x, ok := named[xName](t)
	if !ok {
		t.Skip("nothing to race")
	}
	if x.c.target.Set && rapid.IntRange(0, 3).Draw(t, "contend") > 0 {
		m.focus = x.c.target
	}
	y, ok := named[rapid.SampledFrom(names).Draw(t, "interloper")](t)
	m.focus = None[tenantShardKey]()
	if !ok {
		t.Skip("nothing to race with")
	}
	xr, yr, err := m.p.race(x.c, y.c)
	if err != nil {
		t.Fatalf("race at step %d, t=%d: %v", m.p.stats.steps, m.p.now, err)
	}
	for _, d := range []struct {
		p planned
		r result
	}{{x, xr}, {y, yr}} {
		if d.p.after != nil {
			d.p.after(d.r)
		}
	}
}

func (m *machine) tenant(t *rapid.T) TenantID {
	if rapid.IntRange(0, 3).Draw(t, "tenant") == 0 {
		return tenantB
	}
	return tenantA
}

func (m *machine) runID(t *rapid.T) RunID { return RunID(rapid.IntRange(1, 3).Draw(t, "run")) }

func (m *machine) worker(t *rapid.T) WorkerID {
	return WorkerID(rapid.IntRange(1, 3).Draw(t, "worker"))
}

// opID is usually fresh, sometimes one used before (which replays or
// conflicts, depending on where it lands).
func (m *machine) opID(t *rapid.T) OpID {
	if len(m.ops) > 0 && rapid.IntRange(0, 9).Draw(t, "reuse op") == 0 {
		return m.ops[rapid.IntRange(0, len(m.ops)-1).Draw(t, "old op")].op
	}
	m.nextOp++
	return m.nextOp
}

// shardKey picks a shard of any tenant (so callers sometimes name another
// tenant's shard), or a missing one.
func (m *machine) shardKey(t *rapid.T) (TenantID, ShardKey) {
	if m.focus.Set {
		return m.focus.Val.Tenant, m.focus.Val.Key
	}
	recs, _ := m.p.ref.Shards()
	if len(recs) == 0 || rapid.IntRange(0, 9).Draw(t, "missing shard") == 0 {
		return m.tenant(t), ShardKey{Run: m.runID(t), Shard: 99}
	}
	r := recs[rapid.IntRange(0, len(recs)-1).Draw(t, "shard")]
	return r.Tenant, r.Key()
}

// lease picks a lease to present and the tenant presenting it: mostly the
// newest lease of some shard by its own tenant, sometimes any lease ever
// granted (a zombie), sometimes presented by the other tenant.
func (m *machine) lease(t *rapid.T) (TenantID, Lease, bool) {
	if len(m.leases) == 0 {
		return TenantID{}, Lease{}, false
	}
	var l Lease
	var focused []Lease
	if m.focus.Set {
		for _, x := range m.leases {
			if (tenantShardKey{x.Tenant, x.Key()}) == m.focus.Val {
				focused = append(focused, x)
			}
		}
	}
	if len(focused) > 0 {
		l = focused[rapid.IntRange(0, len(focused)-1).Draw(t, "focused lease")]
	} else if rapid.IntRange(0, 3).Draw(t, "zombie") == 0 {
		l = m.leases[rapid.IntRange(0, len(m.leases)-1).Draw(t, "any lease")]
	} else {
		var newest []Lease
		for i := len(m.leases) - 1; i >= 0; i-- {
			if !slices.ContainsFunc(newest, func(n Lease) bool { return n.Tenant == m.leases[i].Tenant && n.Key() == m.leases[i].Key() }) {
				newest = append(newest, m.leases[i])
			}
		}
		l = newest[rapid.IntRange(0, len(newest)-1).Draw(t, "newest lease")]
	}
	caller := l.Tenant
	if rapid.IntRange(0, 9).Draw(t, "foreign caller") == 0 {
		caller = oracleTenants[0]
		if caller == l.Tenant {
			caller = oracleTenants[1]
		}
	}
	return caller, l, true
}

// record returns the reference's record of the leased shard.
func (m *machine) record(l Lease) ShardRecord {
	recs, _ := m.p.ref.Shards()
	for _, r := range recs {
		if r.Tenant == l.Tenant && r.Key() == l.Key() {
			return r
		}
	}
	return ShardRecord{}
}

// cursorKey draws a last key: often just past the current cursor or the
// range start (so checkpoints make progress), sometimes anything.
func cursorKey(t *rapid.T, rec ShardRecord) []byte {
	suffix := []byte(rapid.StringMatching(`[a-z]{0,2}`).Draw(t, "suffix"))
	switch rapid.IntRange(0, 3).Draw(t, "key kind") {
	case 0:
		return append(bytes.Clone(rec.Cursor.LastKey), suffix...)
	case 1:
		return append(bytes.Clone(rec.Spec.Start), suffix...)
	}
	return randKey(t, "key")
}

func (m *machine) genCreateRun(t *rapid.T) (planned, bool) {
	tn, run := m.tenant(t), m.runID(t)
	cfg := RunConfig{
		Semantics:       CursorSemantics(rapid.IntRange(0, 2).Draw(t, "semantics")),
		LeaseDuration:   LogicalDuration(rapid.SampledFrom([]int{0, 3, 5, 8}).Draw(t, "lease duration")),
		MaxShardRetries: uint32(rapid.IntRange(0, 3).Draw(t, "retries")),
	}
	return planned{c: callCreateRun(tn, run, cfg)}, true
}

// manifest draws 1..4 roots that mostly partition the keyspace, with
// occasional duplicate ids, derived ids and empty ranges.
func manifest(t *rapid.T) []InitialShard {
	n := rapid.IntRange(1, 4).Draw(t, "roots")
	var cuts [][]byte
	for _, k := range rapid.SliceOfNDistinct(rapid.StringMatching(`[b-y]`), n-1, n-1, func(s string) string { return s }).Draw(t, "root cuts") {
		cuts = append(cuts, []byte(k))
	}
	slices.SortFunc(cuts, bytes.Compare)
	pieces := piecesOf(ShardSpec{}, cuts)
	out := make([]InitialShard, n)
	for i := range out {
		out[i] = InitialShard{Shard: ShardID(rapid.IntRange(1, 6).Draw(t, "root id")), Spec: pieces[i]}
		switch rapid.IntRange(0, 19).Draw(t, "manifest flaw") {
		case 0:
			out[i].Shard |= derivedBit
		case 1:
			out[i].Spec = ShardSpec{Start: []byte("k"), End: []byte("k")}
		}
	}
	return out
}

// idem wraps an idempotent call so that it is remembered.
func (m *machine) idem(c call, is issued) planned {
	is.c = c
	return planned{c: c, after: func(r result) {
		is.took = r.code == codeNone
		m.ops = append(m.ops, is)
	}}
}

func (m *machine) genRegister(t *rapid.T) (planned, bool) {
	tn, run, roots, op := m.tenant(t), m.runID(t), manifest(t), m.opID(t)
	return m.idem(callRegister(tn, run, roots, op), issued{op: op, run: Some(run)}), true
}

func (m *machine) granted(r result) {
	if r.code == codeNone && r.Value != nil {
		m.leases = append(m.leases, r.Value.(AcquireResult).Lease)
	}
}

func (m *machine) genAcquire(t *rapid.T) (planned, bool) {
	tn, key := m.shardKey(t)
	if rapid.IntRange(0, 9).Draw(t, "acquire as other tenant") == 0 {
		tn = m.tenant(t)
	}
	return planned{c: callAcquire(tn, key, m.worker(t)), after: m.granted}, true
}

func (m *machine) genClaim(t *rapid.T) (planned, bool) {
	tn, w := m.tenant(t), m.worker(t)
	// In a race the other call may take the last free shard first, so
	// only a claim that runs alone is held to finding one.
	now, available := m.p.now, !m.racing && m.anyAvailable(tn)
	return planned{c: callClaim(tn, w), after: func(r result) {
		m.granted(r)
		switch {
		case r.code == CodeNoShardAvailable && available:
			// C.EventuallyLeased: a free shard must be claimable.
			t.Fatalf("C.EventuallyLeased: claim by %s found nothing while a shard of an Active run was available", w)
		case r.code == codeNone:
			key := claimKey{tn, w}
			if last, ok := m.claims[key]; ok && now < last.Add(m.p.ref.cfg.ClaimCooldown) {
				t.Fatalf("C.Cooldown: %s claimed at %d after a claim at %d, cooldown %d", w, now, last, m.p.ref.cfg.ClaimCooldown)
			}
			if m.claims == nil {
				m.claims = map[claimKey]LogicalTime{}
			}
			m.claims[key] = now
		}
	}}, true
}

// claimKey names a worker's claims in a tenant.
type claimKey struct {
	tenant TenantID
	worker WorkerID
}

// anyAvailable reports whether the reference holds a shard of an Active
// run of tn that is available now.
func (m *machine) anyAvailable(tn TenantID) bool {
	snap := m.p.ref.Snapshot(m.p.now)
	active := map[RunID]bool{}
	for _, r := range snap.Runs {
		if r.Tenant == tn && r.Status == RunActive {
			active[r.Run] = true
		}
	}
	for i := range snap.Shards {
		if s := &snap.Shards[i]; s.Tenant == tn && active[s.Run] && s.Available(m.p.now) {
			return true
		}
	}
	return false
}

func (m *machine) genRenew(t *rapid.T) (planned, bool) {
	tn, l, ok := m.lease(t)
	if !ok {
		return planned{}, false
	}
	return planned{c: callRenew(tn, l), after: func(r result) {
		// The answer is the deadline stored (the linearization of renew).
		if r.code != codeNone || m.racing {
			return
		}
		if _, rec, ok := m.p.ref.shard(l.Tenant, l.Key()); ok && rec.Lease.Set && r.Value.(RenewResult).Deadline != rec.Lease.Val.Deadline {
			t.Fatalf("C.Linearizable: renew answered deadline %d, the record holds %d", r.Value.(RenewResult).Deadline, rec.Lease.Val.Deadline)
		}
	}}, true
}

// maker builds an idempotent lease-gated call.
type maker func(t *rapid.T, tn TenantID, l Lease, op OpID) (call, bool)

func (m *machine) genLeased(mk maker) gen {
	return func(t *rapid.T) (planned, bool) {
		tn, l, ok := m.lease(t)
		if !ok {
			return planned{}, false
		}
		op := m.opID(t)
		c, ok := mk(t, tn, l, op)
		if !ok {
			return planned{}, false
		}
		return m.idem(c, issued{op: op, lease: Some(l)}), true
	}
}

func (m *machine) mkCheckpoint(t *rapid.T, tn TenantID, l Lease, op OpID) (call, bool) {
	cur := Cursor{LastKey: cursorKey(t, m.record(l)), Token: []byte(rapid.StringMatching(`t?[0-9]?`).Draw(t, "token"))}
	if rapid.IntRange(0, 19).Draw(t, "no key") == 0 {
		cur.LastKey = nil
	}
	return callCheckpoint(tn, l, cur, op), true
}

func (m *machine) mkComplete(t *rapid.T, tn TenantID, l Lease, op OpID) (call, bool) {
	var cur Cursor
	if rapid.Bool().Draw(t, "final key") {
		cur.LastKey = cursorKey(t, m.record(l))
	}
	return callComplete(tn, l, cur, op), true
}

func (m *machine) mkPark(t *rapid.T, tn TenantID, l Lease, op OpID) (call, bool) {
	return callPark(tn, l, ParkReason(rapid.IntRange(0, 5).Draw(t, "reason")), op), true
}

func (m *machine) mkSplitReplace(t *rapid.T, tn TenantID, l Lease, op OpID) (call, bool) {
	sp := m.record(l).Spec
	cuts := randCuts(t, sp)
	if len(cuts) == 0 {
		return call{}, false
	}
	pieces := piecesOf(sp, cuts)
	if len(pieces) > 2 && rapid.IntRange(0, 4).Draw(t, "gap") == 0 {
		pieces = slices.Delete(pieces, 1, 2)
	}
	return callSplitReplace(tn, l, SplitReplacePlan{Children: pieces}, op), true
}

func (m *machine) mkSplitResidual(t *rapid.T, tn TenantID, l Lease, op OpID) (call, bool) {
	sp := m.record(l).Spec
	cuts := randCuts(t, sp)
	if len(cuts) == 0 {
		return call{}, false
	}
	plan := SplitResidualPlan{Parent: ShardSpec{Start: sp.Start, End: cuts[0]}, Residual: ShardSpec{Start: cuts[0], End: sp.End}}
	return callSplitResidual(tn, l, plan, op), true
}

func (m *machine) genUnpark(t *rapid.T) (planned, bool) {
	tn, key := m.shardKey(t)
	op := m.opID(t)
	return m.idem(callUnpark(tn, key, op), issued{op: op, other: Some(OpKindUnpark)}), true
}

func drawTransition(t *rapid.T) OpKind {
	return rapid.SampledFrom([]OpKind{OpKindCompleteRun, OpKindFailRun, OpKindCancelRun}).Draw(t, "transition")
}

func (m *machine) genRunTransition(t *rapid.T) (planned, bool) {
	tn, run, op := m.tenant(t), m.runID(t), m.opID(t)
	return m.idem(callRunTransition(tn, run, drawTransition(t), op), issued{op: op, run: Some(run)}), true
}

// genReplay repeats an earlier idempotent call exactly.
func (m *machine) genReplay(t *rapid.T) (planned, bool) {
	if len(m.ops) == 0 {
		return planned{}, false
	}
	is := m.ops[rapid.IntRange(0, len(m.ops)-1).Draw(t, "replayed")]
	c := is.c
	c.name = "replay_" + c.name
	held := is.took && is.lease.Set && m.holds(is.lease.Val, is.op)
	return planned{c: c, after: func(r result) {
		// C.Idempotency: a retry of an operation that took effect, whose
		// entry the op-log still holds, answers the first result as a
		// replay, even after the lease lapsed, a takeover or the end.
		if held && !r.replay {
			t.Fatalf("C.Idempotency: %s: the retry of %s, which took effect, answered %q instead of a replay", c.name, is.op, r.Err)
		}
	}}, true
}

// holds reports whether the reference's op-log of l's shard holds op.
func (m *machine) holds(l Lease, op OpID) bool {
	_, rec, ok := m.p.ref.shard(l.Tenant, l.Key())
	if !ok {
		return false
	}
	_, found := rec.OpLog.Find(op)
	return found
}

// genConflict reuses an earlier op id, on the same target, with a freshly
// drawn payload or operation.
func (m *machine) genConflict(t *rapid.T) (planned, bool) {
	if len(m.ops) == 0 {
		return planned{}, false
	}
	is := m.ops[rapid.IntRange(0, len(m.ops)-1).Draw(t, "conflicted")]
	var c call
	var ok bool
	switch {
	case is.lease.Set:
		mk := rapid.SampledFrom([]maker{m.mkCheckpoint, m.mkComplete, m.mkPark, m.mkSplitReplace, m.mkSplitResidual}).Draw(t, "conflicting op")
		c, ok = mk(t, is.c.tenant, is.lease.Val, is.op)
	case is.run.Set && rapid.Bool().Draw(t, "register again"):
		c, ok = callRegister(is.c.tenant, is.run.Val, manifest(t), is.op), true
	case is.run.Set:
		c, ok = callRunTransition(is.c.tenant, is.run.Val, drawTransition(t), is.op), true
	}
	if !ok {
		return planned{}, false
	}
	c.name = "conflict_" + c.name
	return planned{c: c}, true
}

func (m *machine) tick(t *rapid.T) {
	m.p.advance(LogicalDuration(rapid.IntRange(1, 12).Draw(t, "dt")))
}

func (m *machine) genGetRun(t *rapid.T) (planned, bool) {
	return planned{c: callGetRun(m.tenant(t), m.runID(t))}, true
}

func (m *machine) genProgress(t *rapid.T) (planned, bool) {
	return planned{c: callProgress(m.tenant(t), m.runID(t))}, true
}

func (m *machine) genListShards(t *rapid.T) (planned, bool) {
	tn, run := m.tenant(t), m.runID(t)
	f := ShardFilter{Select: ShardSelect(rapid.IntRange(0, 3).Draw(t, "select")), RootOnly: rapid.Bool().Draw(t, "root only")}
	return planned{c: callListShards(tn, run, f)}, true
}

// String helps rapid's failure output.
func (m *machine) String() string {
	return fmt.Sprintf("machine{now=%d leases=%d ops=%d}", m.p.now, len(m.leases), len(m.ops))
}
