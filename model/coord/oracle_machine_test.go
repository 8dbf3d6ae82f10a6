package coord

import (
	"bytes"
	"fmt"
	"slices"

	"pgregory.net/rapid"
)

// machine drives a pair with operations drawn by rapid: several tenants,
// runs and workers; zombies presenting old leases; replays of earlier op
// ids and conflicting reuses of them; time advancing past lease expiry.
type machine struct {
	p      *pair
	leases []Lease  // every lease granted, zombies included
	ops    []issued // every idempotent call made
	nextOp OpID
}

// issued remembers an idempotent call: for a replay, and for reusing its
// op id with another payload.
type issued struct {
	c     call
	op    OpID
	lease Opt[Lease]    // shard operations under a lease
	run   Opt[RunID]    // run operations
	shard Opt[ShardKey] // unpark
}

var oracleTenants = []TenantID{tenantA, tenantB}

// actions returns the machine's actions for rapid's Repeat; the more
// frequent operations appear under several names.
func (m *machine) actions() map[string]func(*rapid.T) {
	a := map[string]func(*rapid.T){
		"create_run":     m.createRun,
		"register":       m.register,
		"acquire":        m.acquire,
		"claim":          m.claim,
		"renew":          m.renew,
		"checkpoint":     m.checkpoint,
		"complete":       m.complete,
		"park":           m.park,
		"split_replace":  m.splitReplace,
		"split_residual": m.splitResidual,
		"unpark":         m.unpark,
		"run_transition": m.runTransition,
		"replay":         m.replay,
		"conflict":       m.conflict,
		"tick":           m.tick,
		"get_run":        m.getRun,
		"progress":       m.progress,
		"list_shards":    m.listShards,
	}
	for _, name := range []string{"create_run", "register", "acquire", "checkpoint", "checkpoint", "claim"} {
		a[name+"'"] = a[name]
		a[name+"''"] = a[name]
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

// remember records an idempotent call.
func (m *machine) remember(is issued) { m.ops = append(m.ops, is) }

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
	if rapid.IntRange(0, 3).Draw(t, "zombie") == 0 {
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

func (m *machine) createRun(t *rapid.T) {
	tn, run := m.tenant(t), m.runID(t)
	cfg := RunConfig{
		Semantics:       CursorSemantics(rapid.IntRange(0, 2).Draw(t, "semantics")),
		LeaseDuration:   LogicalDuration(rapid.SampledFrom([]int{0, 3, 5, 8}).Draw(t, "lease duration")),
		MaxShardRetries: uint32(rapid.IntRange(0, 3).Draw(t, "retries")),
	}
	m.do(t, callCreateRun(tn, run, cfg))
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

func (m *machine) register(t *rapid.T) {
	tn, run, roots, op := m.tenant(t), m.runID(t), manifest(t), m.opID(t)
	c := callRegister(tn, run, roots, op)
	m.do(t, c)
	m.remember(issued{c: c, op: op, run: Some(run)})
}

func (m *machine) granted(r result) {
	if r.code == codeNone {
		m.leases = append(m.leases, r.Value.(AcquireResult).Lease)
	}
}

func (m *machine) acquire(t *rapid.T) {
	tn, key := m.shardKey(t)
	if rapid.IntRange(0, 9).Draw(t, "acquire as other tenant") == 0 {
		tn = m.tenant(t)
	}
	w := m.worker(t)
	m.granted(m.do(t, callAcquire(tn, key, w)))
}

func (m *machine) claim(t *rapid.T) {
	tn, w := m.tenant(t), m.worker(t)
	m.granted(m.do(t, callClaim(tn, w)))
}

func (m *machine) renew(t *rapid.T) {
	tn, l, ok := m.lease(t)
	if !ok {
		t.Skip("no lease yet")
	}
	m.do(t, callRenew(tn, l))
}

// leased issues an idempotent lease-gated call built by mk.
func (m *machine) leased(t *rapid.T, mk func(t *rapid.T, tn TenantID, l Lease, op OpID) (call, bool)) {
	tn, l, ok := m.lease(t)
	if !ok {
		t.Skip("no lease yet")
	}
	op := m.opID(t)
	c, ok := mk(t, tn, l, op)
	if !ok {
		t.Skip("no plan")
	}
	m.do(t, c)
	m.remember(issued{c: c, op: op, lease: Some(l)})
}

func (m *machine) checkpoint(t *rapid.T) { m.leased(t, m.mkCheckpoint) }
func (m *machine) complete(t *rapid.T)   { m.leased(t, m.mkComplete) }
func (m *machine) park(t *rapid.T)       { m.leased(t, m.mkPark) }
func (m *machine) splitReplace(t *rapid.T) {
	m.leased(t, m.mkSplitReplace)
}
func (m *machine) splitResidual(t *rapid.T) {
	m.leased(t, m.mkSplitResidual)
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
	reason := ParkReason(rapid.IntRange(0, 5).Draw(t, "reason"))
	return callPark(tn, l, reason, op), true
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

func (m *machine) unpark(t *rapid.T) {
	tn, key := m.shardKey(t)
	op := m.opID(t)
	c := callUnpark(tn, key, op)
	m.do(t, c)
	m.remember(issued{c: c, op: op, shard: Some(key)})
}

func (m *machine) mkRunTransition(t *rapid.T, tn TenantID, run RunID, op OpID) call {
	kind := rapid.SampledFrom([]OpKind{OpKindCompleteRun, OpKindFailRun, OpKindCancelRun}).Draw(t, "transition")
	return callRunTransition(tn, run, kind, op)
}

func (m *machine) runTransition(t *rapid.T) {
	tn, run, op := m.tenant(t), m.runID(t), m.opID(t)
	c := m.mkRunTransition(t, tn, run, op)
	m.do(t, c)
	m.remember(issued{c: c, op: op, run: Some(run)})
}

// replay repeats an earlier idempotent call exactly.
func (m *machine) replay(t *rapid.T) {
	if len(m.ops) == 0 {
		t.Skip("nothing to replay")
	}
	is := m.ops[rapid.IntRange(0, len(m.ops)-1).Draw(t, "replayed")]
	c := is.c
	c.name = "replay_" + c.name
	m.do(t, c)
}

// conflict reuses an earlier op id, on the same target, with a freshly
// drawn payload or operation.
func (m *machine) conflict(t *rapid.T) {
	if len(m.ops) == 0 {
		t.Skip("nothing to conflict with")
	}
	is := m.ops[rapid.IntRange(0, len(m.ops)-1).Draw(t, "conflicted")]
	var c call
	var ok bool
	switch {
	case is.lease.Set:
		mk := rapid.SampledFrom([]func(*rapid.T, TenantID, Lease, OpID) (call, bool){
			m.mkCheckpoint, m.mkComplete, m.mkPark, m.mkSplitReplace, m.mkSplitResidual,
		}).Draw(t, "conflicting op")
		c, ok = mk(t, is.c.tenant, is.lease.Val, is.op)
	case is.run.Set && rapid.Bool().Draw(t, "register again"):
		c, ok = callRegister(is.c.tenant, is.run.Val, manifest(t), is.op), true
	case is.run.Set:
		c, ok = m.mkRunTransition(t, is.c.tenant, is.run.Val, is.op), true
	}
	if !ok {
		t.Skip("no conflicting call")
	}
	c.name = "conflict_" + c.name
	m.do(t, c)
}

func (m *machine) tick(t *rapid.T) {
	m.p.advance(LogicalDuration(rapid.IntRange(1, 12).Draw(t, "dt")))
}

func (m *machine) getRun(t *rapid.T) {
	tn, run := m.tenant(t), m.runID(t)
	m.do(t, callGetRun(tn, run))
}

func (m *machine) progress(t *rapid.T) {
	tn, run := m.tenant(t), m.runID(t)
	m.do(t, callProgress(tn, run))
}

func (m *machine) listShards(t *rapid.T) {
	tn, run := m.tenant(t), m.runID(t)
	f := ShardFilter{Select: ShardSelect(rapid.IntRange(0, 3).Draw(t, "select")), RootOnly: rapid.Bool().Draw(t, "root only")}
	m.do(t, callListShards(tn, run, f))
}

// String helps rapid's failure output.
func (m *machine) String() string {
	return fmt.Sprintf("machine{now=%d leases=%d ops=%d}", m.p.now, len(m.leases), len(m.ops))
}
