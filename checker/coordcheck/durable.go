package coordcheck

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"shardsim/model/coord"
	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

// Durable checks the coordinator's durable truth at every step. It is
// a simkv.Observer on the server: after every apply that changed the store
// it re-reads the coordination namespace straight from the store (read
// only: it never applies a write or expires a lease), decoding only the
// keys whose mod revision moved, and judges the new state against the one
// before with model/coord's durable checkers:
//
//   - CheckStep: every per-state and per-step C.* property of the records
//     (mutual exclusion of live leases, fences, terminal states, cursors,
//     splits, op-log entries, run states, record invariants);
//   - CheckTenantStep: the request's tenant changed no other tenant's
//     records (C.TenantIsolation), judged on the records that changed;
//   - CheckAcceptedLease: a lease-gated commit carried the fence the shard
//     had (C.ZombieRejection);
//   - C.Cooldown: a worker's claim record only moves forward by at least
//     the cooldown.
//
// Which request a write belongs to comes from the History mark the
// scenario's KV wrapper sets before each call; its logical time is the
// snapshot's observation time, so leases are judged on the clock the
// coordinator was given, skew included. Writes nobody issued (lease expiry)
// are observed at the virtual time mapped to logical units.
type Durable struct {
	store    *simkv.Store
	ns       []byte
	nsText   string   // ns as a string
	written  [][]byte // the keys of the write being read, reused
	unit     time.Duration
	cooldown coord.LogicalDuration
	history  *History

	calls   map[uint64]*Request // in-flight call id -> the request that sent it
	cache   map[string]*cachedKV
	keys    []string    // the cached keys, sorted (the namespace's key order)
	entries []*cachedKV // the cached records, in the order of keys
	// scratchRun and scratchShard are where decode puts a run or shard
	// record, before learn copies it into the cache entry.
	scratchRun   coord.RunRecord
	scratchShard coord.ShardRecord
	prev         *coord.Snapshot
	spare        *coord.Snapshot // the state before prev, whose slices the next state reuses
	err          *property.Violation

	// What snapshot needs to bring spare up to date instead of rebuilding
	// it: layout counts, per kind of record, the keys joining or leaving
	// the cache (which moves that kind's records within the state's
	// slices); spareLayout is the layout spare was built with (spareOK:
	// spare is that state, untouched since);
	// prevChanged and curChanged the cache entries whose records changed
	// in the step that made prev and in the step under way.
	layout, prevLayout, spareLayout [slotKinds]uint64
	spareOK                         bool
	prevChanged, curChanged         []*cachedKV
	active                          []coord.EtcdKey // the active-run index keys
	activeLayout                    uint64          // layout[slotActive] when active was listed
	activeOK                        bool

	// Listeners, called after each checked change (nil: none).
	onChange []func(prev, next *coord.Snapshot, at simclock.Time, seq uint64)
	// onRequest listeners also learn the request that wrote (nil: none).
	onRequest []func(op *Request, prev, next *coord.Snapshot, at simclock.Time)
	// onShards listeners learn only the shard records a change touched.
	onShards []func(changed []ShardChange, seq uint64)
	Writes   int // applies that changed the namespace

	ix            stateIndex      // the index of the state being judged, its maps reused
	before, after coord.Snapshot  // judge's subsets of prev and next, their slices reused
	shardChanges  []ShardChange   // the change being reported, reused
	touched       map[runRef]bool // the runs the change being judged touched, reused
}

// ShardChange is one shard record a change of durable state touched: its
// record before (nil: it was created) and after (nil: it was deleted).
// A record rewritten with its own value counts as touched.
type ShardChange struct {
	Prev, Next *coord.ShardRecord
}

// cachedKV is one decoded key of the namespace. Run and shard records
// (hundreds of bytes each, their op-log rings inline) are held by pointer,
// so the entry of an owner binding or claim record, keys that come and go
// with every lease, stays small.
type cachedKV struct {
	pos   int // the record's index in its kind's slice of a state (see snapshot)
	mod   int64
	key   coord.EtcdKey
	run   *coord.RunRecord   // KeyRun only
	shard *coord.ShardRecord // KeyShard only
	bind  coord.OwnerBinding
	claim coord.ClaimRecord
}

// keep makes e hold what decode put in c, copying a run or shard record
// into e's own storage (made when e first holds one). e's position is
// left as it is.
func (e *cachedKV) keep(c *cachedKV) {
	pos, run, shard := e.pos, e.run, e.shard
	*e = *c
	e.pos = pos
	if c.run != nil {
		if run == nil {
			run = new(coord.RunRecord)
		}
		*run = *c.run
		e.run = run
	}
	if c.shard != nil {
		if shard == nil {
			shard = new(coord.ShardRecord)
		}
		*shard = *c.shard
		e.shard = shard
	}
}

// NewDurable returns an observer of store's namespace ns, where one
// logical unit is unit of virtual time and claims must be cooldown apart.
func NewDurable(store *simkv.Store, ns string, unit time.Duration, cooldown coord.LogicalDuration, h *History) *Durable {
	d := &Durable{store: store, ns: []byte(ns), nsText: ns, unit: unit, cooldown: cooldown, history: h,
		calls: map[uint64]*Request{}, cache: map[string]*cachedKV{}, touched: map[runRef]bool{}}
	d.prev = &coord.Snapshot{}
	return d
}

// OnChange registers fn to see every checked change of durable state.
// The two states stay valid until the change after next (their record
// slices are then reused): a listener that keeps a state longer than that
// must copy it.
func (d *Durable) OnChange(fn func(prev, next *coord.Snapshot, at simclock.Time, seq uint64)) {
	d.onChange = append(d.onChange, fn)
}

// OnRequestChange registers fn to see every checked change of durable
// state with the request whose write made it (nil when no request did,
// as when a lease expires). The states stay valid as long as OnChange's.
func (d *Durable) OnRequestChange(fn func(op *Request, prev, next *coord.Snapshot, at simclock.Time)) {
	d.onRequest = append(d.onRequest, fn)
}

// OnShardsChange registers fn to see, for every checked change, the shard
// records it touched, with the history number OnChange gets. Every record
// of a state is reported touched by the change that brought it into the
// state (the observer learns a record only by reading a key a write
// named, or all of them after a write that names none), so a listener
// whose verdict on a record depends on that record alone sees everything
// a full scan of each state would. The records stay valid as long as
// OnChange's states; the slice only during the call.
func (d *Durable) OnShardsChange(fn func(changed []ShardChange, seq uint64)) {
	d.onShards = append(d.onShards, fn)
}

// Err returns the first violation, or nil.
func (d *Durable) Err() *property.Violation { return d.err }

// Snapshot returns the last observed durable state, valid until the
// second change after this call (see OnChange).
func (d *Durable) Snapshot() *coord.Snapshot { return d.prev }

// Logical maps virtual time to logical units.
func (d *Durable) Logical(at simclock.Time) coord.LogicalTime {
	return coord.LogicalTime(int64(at) / int64(d.unit))
}

func (d *Durable) fail(v *property.Violation) {
	if d.err == nil && v != nil {
		d.err = v
	}
}

// OnInvoke implements simkv.Observer: it remembers which request sent the call.
func (d *Durable) OnInvoke(call uint64, _ string, _ simclock.Time, _ simkv.Request) {
	if op := d.history.take(); op != nil {
		d.calls[call] = op
	}
}

// OnReturn implements simkv.Observer. The call stays known: a request
// whose answer was lost or late can still apply after the client gave up.
func (d *Durable) OnReturn(uint64, simclock.Time, simkv.Response, error) {}

// OnApply implements simkv.Observer.
func (d *Durable) OnApply(call uint64, at simclock.Time, req simkv.Request, resp simkv.Response, err error, before, after int64) {
	op := d.calls[call]
	delete(d.calls, call)
	if after == before || d.err != nil {
		return
	}
	next, changed, v := d.read(req, resp)
	if v != nil {
		d.fail(v)
		return
	}
	if len(changed) == 0 {
		return // the write was outside the namespace, or rewrote nothing we keep
	}
	d.Writes++
	next.At = d.Logical(at)
	if op != nil {
		next.At = op.Now
	}
	keys := d.parseKeys(changed)
	d.judge(op, req, resp, next, keys)
	if op != nil {
		d.attribute(op, keys)
	}
	seq := d.history.Tick()
	for _, fn := range d.onChange {
		fn(d.prev, next, at, seq)
	}
	for _, fn := range d.onRequest {
		fn(op, d.prev, next, at)
	}
	if len(d.onShards) > 0 {
		d.shardChanges = shardChanges(d.shardChanges[:0], d.prev, next, keys)
		for _, fn := range d.onShards {
			fn(d.shardChanges, seq)
		}
	}
	d.prev, d.spare = next, d.prev
	d.spareLayout, d.prevLayout, d.spareOK = d.prevLayout, d.layout, true
	d.prevChanged, d.curChanged = d.curChanged, d.prevChanged[:0]
}

// shardChanges appends to out the records in prev and next of every shard
// key in keys.
func shardChanges(out []ShardChange, prev, next *coord.Snapshot, keys []coord.EtcdKey) []ShardChange {
	for _, key := range keys {
		if key.Kind == coord.KeyShard {
			out = append(out, ShardChange{Prev: findShard(prev, key), Next: findShard(next, key)})
		}
	}
	return out
}

// findShard returns s's record of the shard key names, or nil.
func findShard(s *coord.Snapshot, key coord.EtcdKey) *coord.ShardRecord {
	for i := range s.Shards {
		if r := &s.Shards[i]; r.Tenant == key.Tenant && r.Run == key.Run && r.Shard == key.Shard {
			return r
		}
	}
	return nil
}

// judge runs the durable checkers on the step from d.prev to next.
func (d *Durable) judge(op *Request, req simkv.Request, resp simkv.Response, next *coord.Snapshot, changed []coord.EtcdKey) {
	// Records a step did not touch cannot break a step property, so the
	// step is judged from the changed records of prev; and as every state
	// before passed, next is judged as a state on the runs it touched
	// (see checkRunsState), which finds what judging all of it would.
	before := subset(&d.before, d.prev, changed)
	d.ix.reindex(next)
	if v := checkChangedStep(d.prev, before, next, touchedRuns(d.touched, changed), d.ix); v != nil {
		d.fail(byRequest(v, op))
		return
	}
	if op == nil {
		return
	}
	if v := CheckTenantStep(before, subset(&d.after, next, changed), op.Tenant); v != nil {
		d.fail(byRequest(v, op))
		return
	}
	if op.Kind.Gated() && req.Txn != nil && resp.Txn != nil && resp.Txn.Succeeded {
		if v := CheckAcceptedLease(d.prev, op.Lease); v != nil {
			d.fail(byRequest(v, op))
			return
		}
	}
	d.fail(d.checkCooldown(next, op))
}

// attribute records on op which shard records its write changed.
func (d *Durable) attribute(op *Request, changed []coord.EtcdKey) {
	for _, key := range changed {
		if key.Kind != coord.KeyShard {
			continue
		}
		s := ShardRef{Tenant: key.Tenant, Key: coord.ShardKey{Run: key.Run, Shard: key.Shard}}
		if !slices.Contains(op.Wrote, s) {
			op.Wrote = append(op.Wrote, s)
		}
	}
}

// byRequest names the request that caused a violation in its detail.
func byRequest(v *property.Violation, op *Request) *property.Violation {
	if op == nil {
		return v
	}
	c := *v
	c.Detail += " (by " + op.String() + ")"
	return &c
}

// checkCooldown is C.Cooldown on the claim records: a worker's last claim
// time in a tenant only moves forward, by at least the cooldown.
func (d *Durable) checkCooldown(next *coord.Snapshot, op *Request) *property.Violation {
	if d.cooldown == 0 {
		return nil
	}
	for _, p := range d.prev.Claims {
		for _, n := range next.Claims {
			if n.Tenant != p.Tenant || n.Claim.Worker != p.Claim.Worker || n.Claim.LastClaimAt == p.Claim.LastClaimAt {
				continue
			}
			if n.Claim.LastClaimAt < p.Claim.LastClaimAt.Add(d.cooldown) {
				return byRequest(property.Violated(property.CCooldown, "%s claimed at %d after a claim at %d, cooldown %d",
					n.Claim.Worker, n.Claim.LastClaimAt, p.Claim.LastClaimAt, d.cooldown), op)
			}
		}
	}
	return nil
}

// read brings the decoded namespace up to date after a write and lists
// the keys that changed (written, created or deleted). A write that names
// its keys (puts and single-key deletes, in a transaction or alone) costs
// one point read per key; anything else (a lease revoke deleting the keys
// it held, a range delete) re-reads the whole namespace, decoding only
// keys whose mod revision moved.
func (d *Durable) read(req simkv.Request, resp simkv.Response) (*coord.Snapshot, [][]byte, *property.Violation) {
	var changed [][]byte
	var v *property.Violation
	if keys, ok := writtenKeys(d.written[:0], req, resp); ok {
		d.written = keys
		changed, v = d.refreshKeys(keys)
	} else {
		changed, v = d.refreshAll()
	}
	if v != nil {
		return nil, nil, v
	}
	next, active := d.snapshot()
	return next, changed, checkActiveIndex(next, active)
}

// snapshot builds the durable state from the cache, each kind's records in
// key order. A shard record is about 800 bytes (its op-log ring is inline)
// and the state is rebuilt after every write, so the slices are those of
// the state before the previous one, which nothing holds any more (see
// OnChange), grown only when the namespace grew.
func (d *Durable) snapshot() (*coord.Snapshot, []coord.EtcdKey) {
	next := d.spare
	fresh := next == nil || next == d.prev || !d.spareOK
	if next == nil || next == d.prev {
		next = &coord.Snapshot{}
	}
	d.spare, d.spareOK = nil, false
	// A kind whose keys stayed put since spare was built differs from the
	// state now only in the records changed by the step that made prev and
	// by this one; a kind that gained or lost a key is rebuilt.
	var stale [slotActive]bool
	for k := range stale {
		stale[k] = fresh || d.spareLayout[k] != d.layout[k]
		if stale[k] {
			d.rebuildKind(next, k)
		}
	}
	for _, changed := range [2][]*cachedKV{d.prevChanged, d.curChanged} {
		for _, c := range changed {
			if k := slotOf(c.key.Kind); k < slotActive && !stale[k] {
				place(next, c)
			}
		}
	}
	if !d.activeOK || d.activeLayout != d.layout[slotActive] {
		d.active = d.active[:0]
		for _, c := range d.entries {
			if c.key.Kind == coord.KeyActiveRun {
				d.active = append(d.active, c.key)
			}
		}
		d.activeLayout, d.activeOK = d.layout[slotActive], true
	}
	return next, d.active
}

// The kinds of cached records, as indexes of the layout counters.
const (
	slotRun = iota
	slotShard
	slotOwner
	slotClaim
	slotActive
	slotKinds
)

// slotOf returns the layout index of a key kind (slotKinds: none).
func slotOf(k coord.KeyKind) int {
	switch k {
	case coord.KeyRun:
		return slotRun
	case coord.KeyShard:
		return slotShard
	case coord.KeyOwner:
		return slotOwner
	case coord.KeyClaim:
		return slotClaim
	case coord.KeyActiveRun:
		return slotActive
	}
	return slotKinds
}

// place writes c's record into s at its position.
func place(s *coord.Snapshot, c *cachedKV) {
	switch c.key.Kind {
	case coord.KeyRun:
		s.Runs[c.pos] = *c.run
	case coord.KeyShard:
		s.Shards[c.pos] = *c.shard
	case coord.KeyOwner:
		s.Bindings[c.pos] = binding(c)
	case coord.KeyClaim:
		s.Claims[c.pos] = coord.TenantClaim{Tenant: c.key.Tenant, Claim: c.claim}
	}
}

func binding(c *cachedKV) coord.TenantBinding {
	return coord.TenantBinding{Tenant: c.key.Tenant, Shard: coord.ShardKey{Run: c.key.Run, Shard: c.key.Shard}, Binding: c.bind}
}

// rebuildKind fills s's records of one kind (a slot below slotActive)
// from every cached entry of that kind, in key order, noting each
// record's position for place.
func (d *Durable) rebuildKind(s *coord.Snapshot, kind int) {
	n := 0
	for _, c := range d.entries {
		if slotOf(c.key.Kind) == kind {
			n++
		}
	}
	switch kind {
	case slotRun:
		s.Runs = reuse(s.Runs, n)
	case slotShard:
		s.Shards = reuse(s.Shards, n)
	case slotOwner:
		s.Bindings = reuse(s.Bindings, n)
	case slotClaim:
		s.Claims = reuse(s.Claims, n)
	}
	for _, c := range d.entries {
		if slotOf(c.key.Kind) != kind {
			continue
		}
		switch kind {
		case slotRun:
			c.pos = len(s.Runs)
			s.Runs = append(s.Runs, *c.run)
		case slotShard:
			c.pos = len(s.Shards)
			s.Shards = append(s.Shards, *c.shard)
		case slotOwner:
			c.pos = len(s.Bindings)
			s.Bindings = append(s.Bindings, binding(c))
		case slotClaim:
			c.pos = len(s.Claims)
			s.Claims = append(s.Claims, coord.TenantClaim{Tenant: c.key.Tenant, Claim: c.claim})
		}
	}
}

// reuse returns s emptied, with room for n elements: s's own array when
// it is big enough, else a new one. It is not cleared: the appends
// overwrite it, and a tail left over when the namespace shrank only keeps
// some old records' byte slices alive until it is overwritten.
func reuse[T any](s []T, n int) []T {
	if cap(s) < n {
		// A growing namespace grows by a record at a time: doubling
		// keeps the reallocations (and the bytes they copy) few.
		return make([]T, 0, max(n, 2*cap(s)))
	}
	return s[:0]
}

// writtenKeys appends to keys the keys a write request may have changed,
// when the request names them all (the request's own bytes, not copies).
func writtenKeys(keys [][]byte, req simkv.Request, resp simkv.Response) ([][]byte, bool) {
	var ops []simkv.RequestOp
	switch {
	case req.Txn != nil && resp.Txn != nil:
		ops = req.Txn.Failure
		if resp.Txn.Succeeded {
			ops = req.Txn.Success
		}
	case req.Put != nil:
		ops = []simkv.RequestOp{{Put: req.Put}}
	case req.DeleteRange != nil:
		ops = []simkv.RequestOp{{DeleteRange: req.DeleteRange}}
	default:
		return nil, false
	}
	for _, op := range ops {
		switch {
		case op.Put != nil:
			keys = append(keys, op.Put.Key)
		case op.DeleteRange != nil && len(op.DeleteRange.RangeEnd) == 0:
			keys = append(keys, op.DeleteRange.Key)
		case op.Range != nil:
		default:
			return nil, false
		}
	}
	return keys, true
}

// refreshKeys re-reads single keys of the namespace.
func (d *Durable) refreshKeys(keys [][]byte) ([][]byte, *property.Violation) {
	var changed [][]byte
	for _, k := range keys {
		if !bytes.HasPrefix(k, d.ns) || slices.ContainsFunc(changed, func(c []byte) bool { return bytes.Equal(c, k) }) {
			continue
		}
		kv, ok := d.store.Latest(k)
		if !ok {
			if d.forget(string(k)) {
				changed = append(changed, k)
			}
			continue
		}
		learned, v := d.learn(&kv)
		if v != nil {
			return nil, v
		}
		if learned {
			changed = append(changed, k)
		}
	}
	return changed, nil
}

// refreshAll re-reads the whole namespace.
func (d *Durable) refreshAll() ([][]byte, *property.Violation) {
	resp, err := d.store.Apply(0, simkv.Request{Range: &simkv.RangeRequest{Key: d.ns, RangeEnd: prefixEnd(d.ns)}})
	if err != nil {
		return nil, &property.Violation{Property: property.CRecordInvariants, Detail: "cannot read the namespace: " + err.Error()}
	}
	var changed [][]byte
	seen := make(map[string]bool, len(resp.Range.Kvs))
	for i := range resp.Range.Kvs {
		kv := &resp.Range.Kvs[i]
		seen[string(kv.Key)] = true
		ok, v := d.learn(kv)
		if v != nil {
			return nil, v
		}
		if ok {
			changed = append(changed, kv.Key)
		}
	}
	for _, k := range slices.Clone(d.keys) {
		if !seen[k] && d.forget(k) {
			changed = append(changed, []byte(k))
		}
	}
	return changed, nil
}

// learn caches kv, decoding it if its mod revision moved; it reports
// whether it changed.
func (d *Durable) learn(kv *simkv.KeyValue) (bool, *property.Violation) {
	old, ok := d.cache[string(kv.Key)]
	if ok && old.mod == kv.ModRevision {
		return false, nil
	}
	// Decode into scratch storage, and allocate only for a key seen first.
	var dec cachedKV
	if v := d.decode(kv, &dec); v != nil {
		return false, v
	}
	if ok {
		old.keep(&dec)
		d.curChanged = append(d.curChanged, old)
		return true, nil
	}
	d.bumpLayout(dec.key.Kind)
	c := new(cachedKV)
	c.keep(&dec)
	k := string(kv.Key)
	i, _ := slices.BinarySearch(d.keys, k)
	d.keys = slices.Insert(d.keys, i, k)
	d.entries = slices.Insert(d.entries, i, c)
	d.cache[k] = c
	return true, nil
}

// bumpLayout notes that a key of kind joined or left the cache.
func (d *Durable) bumpLayout(kind coord.KeyKind) {
	if k := slotOf(kind); k < slotKinds {
		d.layout[k]++
	}
}

// forget drops a deleted key; it reports whether the key was known.
func (d *Durable) forget(k string) bool {
	c, ok := d.cache[k]
	if !ok {
		return false
	}
	delete(d.cache, k)
	d.bumpLayout(c.key.Kind)
	if i, found := slices.BinarySearch(d.keys, k); found {
		d.keys = slices.Delete(d.keys, i, i+1)
		d.entries = slices.Delete(d.entries, i, i+1)
	}
	return true
}

// decode parses one key-value of the namespace. Run and shard records are
// stored with the etcd backend's write stamp, which decode drops. Records
// are decoded without their invariant check: a buggy backend's states must reach the
// checkers, which name what they break.
func (d *Durable) decode(kv *simkv.KeyValue, c *cachedKV) *property.Violation {
	k, err := coord.ParseEtcdKey(d.nsText, kv.Key)
	if err != nil {
		return &property.Violation{Property: property.CRecordInvariants, Detail: err.Error()}
	}
	*c = cachedKV{mod: kv.ModRevision, key: k}
	switch k.Kind {
	case coord.KeyRun:
		var rec []byte
		if rec, _, err = coord.SplitEtcdRecordValue(kv.Value); err == nil {
			d.scratchRun, err = coord.DecodeRunRecordUnchecked(rec)
			c.run = &d.scratchRun
		}
	case coord.KeyShard:
		var rec []byte
		if rec, _, err = coord.SplitEtcdRecordValue(kv.Value); err == nil {
			d.scratchShard, err = coord.DecodeShardRecordUnchecked(rec)
			c.shard = &d.scratchShard
		}
		if err == nil && (c.shard.Tenant != k.Tenant || c.shard.Run != k.Run || c.shard.Shard != k.Shard) {
			err = fmt.Errorf("shard record stored under another shard's key")
		}
	case coord.KeyOwner:
		c.bind, err = coord.DecodeOwnerBinding(kv.Value)
	case coord.KeyClaim:
		c.claim, err = coord.DecodeClaimRecord(kv.Value)
	case coord.KeyActiveRun:
		_, err = coord.DecodeActiveRunEntry(kv.Value)
	}
	if err != nil {
		return &property.Violation{Property: property.CRecordInvariants, Detail: fmt.Sprintf("undecodable %s record %q: %v", k.Kind, kv.Key, err)}
	}
	return nil
}

// checkActiveIndex requires the active-run index to list exactly the
// Active runs (both lists are in key order: tenant, then run).
func checkActiveIndex(s *coord.Snapshot, active []coord.EtcdKey) *property.Violation {
	n := 0
	for i := range s.Runs {
		if s.Runs[i].Status == coord.RunActive {
			n++
		}
	}
	if n != len(active) {
		return &property.Violation{Property: property.CRecordInvariants, Detail: fmt.Sprintf("active-run index holds %d entries for %d Active runs", len(active), n)}
	}
	j := 0
	for i := range s.Runs {
		if s.Runs[i].Status != coord.RunActive {
			continue
		}
		if want := (coord.EtcdKey{Kind: coord.KeyActiveRun, Tenant: s.Runs[i].Tenant, Run: s.Runs[i].Run}); active[j] != want {
			return &property.Violation{Property: property.CRecordInvariants, Detail: fmt.Sprintf("active-run index disagrees with %s", want.Run)}
		}
		j++
	}
	return nil
}

// touchedRuns lists the runs whose records (run, shard, owner binding) a
// step changed, in the map into (emptied first, then returned).
func touchedRuns(into map[runRef]bool, changed []coord.EtcdKey) map[runRef]bool {
	runs := into
	clear(runs)
	for _, k := range changed {
		switch k.Kind {
		case coord.KeyRun, coord.KeyShard, coord.KeyOwner:
			runs[runRef{k.Tenant, k.Run}] = true
		}
	}
	return runs
}

// parseKeys parses the changed keys once for every use of them in a step;
// keys that do not parse (which decode already reported) are left out.
func (d *Durable) parseKeys(changed [][]byte) []coord.EtcdKey {
	keys := make([]coord.EtcdKey, 0, len(changed))
	for _, k := range changed {
		if key, err := coord.ParseEtcdKey(d.nsText, k); err == nil {
			keys = append(keys, key)
		}
	}
	return keys
}

// subset fills out with the run, shard and claim records of s stored under
// the given keys, for judging one request by what it changed, and returns
// it. out's slices are reused: the subset is valid until the next call on
// the same out.
func subset(out, s *coord.Snapshot, keys []coord.EtcdKey) *coord.Snapshot {
	*out = coord.Snapshot{At: s.At, Runs: out.Runs[:0], Shards: out.Shards[:0], Claims: out.Claims[:0]}
	for _, key := range keys {
		switch key.Kind {
		case coord.KeyRun:
			for i := range s.Runs {
				if s.Runs[i].Tenant == key.Tenant && s.Runs[i].Run == key.Run {
					out.Runs = append(out.Runs, s.Runs[i])
				}
			}
		case coord.KeyShard:
			for i := range s.Shards {
				if r := &s.Shards[i]; r.Tenant == key.Tenant && r.Run == key.Run && r.Shard == key.Shard {
					out.Shards = append(out.Shards, *r)
				}
			}
		case coord.KeyClaim:
			for _, c := range s.Claims {
				if c.Tenant == key.Tenant && c.Claim.Worker == key.Worker {
					out.Claims = append(out.Claims, c)
				}
			}
		}
	}
	return out
}

// prefixEnd is the range end of every key starting with p.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return []byte{0}
}
