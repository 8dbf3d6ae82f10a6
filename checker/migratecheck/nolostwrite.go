package migratecheck

import (
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
	"shardsim/property"
)

// Owner is where M.NoLostWrite reads a key back: the store of the key's
// owner, whether (and from which job) its route merges staged rows, and the
// oldest timestamp the owner answers for.
type Owner struct {
	Store   *mvcc.Store
	Staging mvcc.Staging
	Floor   hlc.TS
}

// Owners resolves keys to their owners for one pass, in two steps: the
// route serving a key (ok false: none, and no owner answers), and the
// route's owner. Routing answers depend only on the key and a routing
// table whose changes bump RoutingGen, so a checker may remember them
// between passes while RoutingGen stays the same.
type Owners struct {
	RoutingGen uint64
	Route      func(key string) (route int, ok bool)
	Owner      func(route int) Owner
}

// ownerOf resolves key's owner.
func (o Owners) ownerOf(key string) (Owner, bool) {
	r, ok := o.Route(key)
	if !ok {
		return Owner{}, false
	}
	return o.Owner(r), true
}

// ReadFrom is the OwnerRead of owners: the owner's store read with the
// correct merge of staged and live versions (MergeNewest).
func ReadFrom(owners Owners) OwnerRead {
	return func(key string, ts hlc.TS) (mvcc.Read, hlc.TS, bool) {
		own, ok := owners.ownerOf(key)
		if !ok {
			return mvcc.Read{}, 0, false
		}
		return own.Read(key, ts), own.Floor, true
	}
}

// Read reads key at ts from the owner's store.
func (own Owner) Read(key string, ts hlc.TS) mvcc.Read {
	return own.Store.Get(key, ts, own.Staging, mvcc.MergeNewest)
}

// NoLostWriteChecker is CheckNoLostWrite for a world that checks it pass
// after pass over a growing list of acknowledged writes: it judges exactly
// what CheckNoLostWrite(acked, ReadFrom(owners), when, spans...) judges and
// returns the same first violation, but judges a write again only when its
// answer could differ from a pass that found it readable.
//
// Why that is exact. readBack's verdict on a write w is a function of w and
// of what it reads: whether the key has an owner; the owner's store, its
// floor and its staging; that store's versions of w's key and, with
// staging on, of the key's staged twin (all Owner.Read looks at); and the
// oracle's versions of the key (consulted below the floor). A pass computes
// for each key a stamp of all but the last: the store's identity, the
// floor, the staging, the store's generations of the two keys
// (mvcc.Store.Gen: equal generations on one store mean equal versions),
// and whether there is an owner. The oracle's versions are left out
// because they only grow, and readBack consults them for one thing only:
// to excuse a write below the floor that a newer version at or below the
// floor supersedes. More versions can excuse more writes, never fewer, so
// a write that read back under fewer still does.
//
// Each key remembers the stamp all its indexed versions last read back
// under (settled) and, per store it was read from (storeMemo, a few), the
// stamp they read back under there. A pass carries those versions over
// without judging them when this pass's view reads as the remembered
// stamp's (the same source, or another store or staging holding the same
// versions: sameContent) at the same floor; at another floor it still
// carries those at or above both floors (read where they were) and those
// readBack now excuses below the floor (excusedBelow). Every other version
// is judged again (judgeWrite: readBack's own steps through the pass's
// view, and readBack itself for any that fails, so a violation is
// readBack's), and whether each acknowledged write was applied at its
// timestamp is judged until it passes (then it always does: the oracle's
// versions only grow, and the first stays). So the first violation is
// the same. A stamp holds its store's pointer, which keeps the store
// alive: no other store can take its address. Which route serves a key is
// remembered while Owners.RoutingGen stays the same (it depends on nothing
// else); the route's owner is asked every pass. A store memo's probe
// (mvcc.Store.Probe) is reused without a lookup while mvcc.Store.Current
// says it is.
//
// A pass walks keys, not acknowledged writes (checkKeys): each key's
// versions of acknowledged writes are indexed under it. Only when that
// walk meets a violation (or an entry of the acknowledged writes changed)
// does the pass judge again in CheckNoLostWrite's order (checkOrdered),
// which finds the same first violation as the full check.
//
// Nor does a pass walk the acknowledged writes to bring that index up to
// date (registerAcks): it compares them, as words, with a copy of those
// the last pass saw (sameEntries; any change drops the index and every
// memo of them), judges only the entries not yet known applied (a new one
// or one whose write the oracle does not hold yet), and indexes the
// versions the oracle added since the last pass to operations of entries
// known applied (VersionOracle.grown; an entry's versions are those of
// its operation, which may grow after it was acknowledged).
//
// What it cannot see, beyond what CheckNoLostWrite cannot (it reads each
// key from its route's owner only, never from other voters): a store
// changed other than through mvcc.Store's methods (say, by writing into a
// slice Versions handed out), which leaves generations as they were.
//
// The acknowledged writes may change in any way between passes, but only
// appending is cheap: any other change (an entry rewritten, even with
// equal strings held elsewhere, removed, swapped or cut off) is noticed
// by sameEntries, and the pass drops every memo of the entries and judges
// in CheckNoLostWrite's order (TestNoLostWriteCheckerMatchesFull edits the
// list in all those ways).
type NoLostWriteChecker struct {
	oracle  *VersionOracle
	pass    uint64
	keys    keyMemos   // by the oracle's key number
	keyed   []*keyMemo // the memos of keys with indexed versions, in the order they got their first (memos never move)
	refSlab []writeRef // where keys' version indexes get their room (addRef)

	// acks are the memos of the acknowledged writes, by index; seen, the
	// acknowledged writes as the last pass saw them; unapplied, the
	// indexes of those not known applied (in order); opFirst, by
	// operation number, 1 + the first entry known applied of the
	// operation (0: none; ackMemo.next chains the rest); grown, how much
	// of the oracle's log of added versions is indexed.
	acks      []ackMemo
	seen      []AckedWrite
	unapplied []int32
	opFirst   []int32
	grown     int

	// same remembers, while checkKeys judges one key, which other sources'
	// content of it reads as its view in the pass (sameContent).
	same  [2]sameAs
	nsame int
}

// keyMemo is what the current pass found about one key, its route under
// routing table routingGen, and the key's versions of acknowledged writes
// with the stamp they all last read back under.
type keyMemo struct {
	id         int32 // the key's number (the oracle's)
	routingGen uint64
	route      int
	routeKey   string // the key's route key (routeKeyOf), found once

	// The flags sit together: one word, not a padded word for each group.
	routed        bool // routingGen is set: route and hasRoute are known
	hasRoute      bool
	routeKnown    bool // routeKey and routeKeyed are set
	routeKeyed    bool // the key has a route key
	spansDone     bool // inSpans is set for the pass
	inSpans       bool
	stampComputed bool
	excusedDone   bool // excused is set for the pass

	pass  uint64
	cur   *storeMemo // the owner's store in this pass; its probe's view is what reading the key there reads
	stamp readStamp

	excused hlc.TS // readBack excuses the key's writes older than this in the pass (excusedBelow)

	key      string     // the raw key (set with its first indexed version)
	refs     []writeRef // the key's versions of acknowledged writes
	settled  readStamp  // the stamp refs[:settledN] all read back under
	settledN int

	seen [storeSlots]storeMemo // the stores the key was last read from
}

// storeMemo is what the checker remembers of one key in one store it was
// read from (under one staging): a probe of it, which a later pass
// revalidates without looking the key up (mvcc.Store.Current), and the
// stamp the key's first n indexed versions all read back under there (n
// 0: none). The owner of a route moves between its group's voters (the
// most advanced one reads), so a key is read from a few stores in turn; a
// key back on a store whose content did not change since it was last read
// there is judged from this memo, with no lookup and no read-back.
type storeMemo struct {
	store   *mvcc.Store
	staging mvcc.Staging
	probe   mvcc.Probe
	used    uint64 // the last pass that read the key here
	passed  readStamp
	n       int
}

// storeSlots is how many stores a key memo remembers, the least recently
// read forgotten first: the owner moves back and forth between two voters
// most of the time. More slots saved no instructions on migrate 1-30 (4:
// within 0.4M of 2, 6 and 8 slightly more) and cost memory (about 190
// bytes a slot per key: 4 slots gave the migrate benchmark 2% more B/op).
const storeSlots = 2

// memoIn returns the key's memo of store under staging, probed afresh
// unless its probe is still current; a store not remembered takes the
// slot read least recently.
func (k *keyMemo) memoIn(key string, store *mvcc.Store, st mvcc.Staging, pass uint64) *storeMemo {
	if m := k.cur; m != nil && m.store == store && m.staging == st && store.Current(&m.probe) {
		m.used = pass // the last pass's store, unchanged: the common case
		return m
	}
	slot := &k.seen[0]
	for i := range k.seen {
		m := &k.seen[i]
		if m.store == store && m.staging == st {
			if !store.Current(&m.probe) {
				m.probe = store.Probe(key, st)
			}
			m.used = pass
			return m
		}
		if m.used < slot.used {
			slot = m
		}
	}
	*slot = storeMemo{store: store, staging: st, probe: store.Probe(key, st), used: pass}
	return slot
}

// currentIn returns the view of key in store under st if the key's memo
// of that store holds a current probe (no lookup, no slot taken).
func (k *keyMemo) currentIn(store *mvcc.Store, st mvcc.Staging) (mvcc.KeyView, bool) {
	for i := range k.seen {
		if m := &k.seen[i]; m.store == store && m.staging == st && store.Current(&m.probe) {
			return m.probe.View, true
		}
	}
	return mvcc.KeyView{}, false
}

// keyMemos holds the key memos of the keys the checker met, in chunks of
// keyChunk, so that a memo never moves (no copying of them all as keys
// appear, pass after pass), and only for those keys: a quarter of an
// oracle's keys never have a version of an acknowledged write (bootstrap
// rows, keys only read), and a memo is large (about 600 bytes).
type keyMemos struct {
	slot   []int32 // by key number: 1 + the memo's place, 0 while it has none
	chunks []*[keyChunk]keyMemo
	n      int32 // memos handed out
}

// keyChunk is how many key memos are allocated at once.
const keyChunk = 16

// at returns memo id, a zero memo when the key is met first.
func (m *keyMemos) at(id int32) *keyMemo {
	if int(id) >= len(m.slot) {
		m.slot = append(m.slot, make([]int32, int(id)+1-len(m.slot))...)
	}
	i := m.slot[id] - 1
	if i < 0 {
		i = m.n
		if int(i) == len(m.chunks)*keyChunk {
			m.chunks = append(m.chunks, new([keyChunk]keyMemo))
		}
		m.n++
		m.slot[id] = i + 1
		m.chunks[i/keyChunk][i%keyChunk].id = id
	}
	return &m.chunks[i/keyChunk][i%keyChunk]
}

// sameAs remembers, while checkKeys judges a key, whether a store's content of a key
// (src) reads as the key's view in the pass.
type sameAs struct {
	src viewSource
	ok  bool
}

// ackMemo is what earlier passes found about one acknowledged write (the
// entry at its index as the checker last saw it: seen).
type ackMemo struct {
	writes     *opWrites
	registered int32 // writes.ws[:registered] are indexed under their keys
	next       int32 // 1 + the next entry known applied of the same operation (0: none)
	applied    bool  // it passed ackApplied, which it then always passes
}

// readStamp is everything a key's read-back depends on (see
// NoLostWriteChecker). The zero stamp is no stamp.
type readStamp struct {
	valid bool
	owned bool
	src   viewSource
	floor hlc.TS
}

// equal reports whether s and o are the same stamp (as s == o would, field
// by field, the generations first since they differ most often, and
// inlined where the generated comparison is a call per stamp).
func (s *readStamp) equal(o *readStamp) bool {
	return s.src.equal(&o.src) && s.floor == o.floor && s.valid == o.valid && s.owned == o.owned
}

// viewSource names one content of a key as the owner's reads see it: the
// store, its generations of the key and of its staged twin, the staging.
type viewSource struct {
	store        *mvcc.Store
	live, staged uint64
	staging      bool
	job          uint64
}

// equal reports whether s and o name the same content (s == o).
func (s *viewSource) equal(o *viewSource) bool {
	return s.live == o.live && s.staged == o.staged && s.store == o.store && s.staging == o.staging && s.job == o.job
}

// NewNoLostWriteChecker returns a checker reading the truth from oracle.
func NewNoLostWriteChecker(oracle *VersionOracle) *NoLostWriteChecker {
	return &NoLostWriteChecker{oracle: oracle}
}

// Check judges M.NoLostWrite as CheckNoLostWrite(acked, ReadFrom(owners),
// when, spans...) does.
func (c *NoLostWriteChecker) Check(acked []AckedWrite, owners Owners, when string, spans ...keys.Span) *property.Violation {
	c.pass++
	if c.registerAcks(acked) && c.checkKeys(owners, when, spans) == nil {
		return nil
	}
	return c.checkOrdered(acked, owners, when, spans)
}

// checkOrdered is a pass in CheckNoLostWrite's order: acknowledged write
// after acknowledged write, each one's versions in order, returning the
// first violation.
func (c *NoLostWriteChecker) checkOrdered(acked []AckedWrite, owners Owners, when string, spans []keys.Span) *property.Violation {
	for i := range acked {
		a, m := &acked[i], &c.acks[i] // registerAcks made every memo that of its entry
		ws, skip, v := c.ackVersions(a, m)
		if v != nil {
			return v
		}
		if skip {
			continue
		}
		if v := c.checkWrites(a.Key, m, ws, owners, when, spans); v != nil {
			return v
		}
	}
	return nil
}

// ackVersions returns the oracle's versions of acknowledged write a (memo
// m) and ackApplied's verdict on them. Once a write passes ackApplied it
// always does (its operation's versions only grow, and the first stays),
// which m remembers.
func (c *NoLostWriteChecker) ackVersions(a *AckedWrite, m *ackMemo) (ws []AppliedWrite, skip bool, v *property.Violation) {
	if m.writes == nil {
		m.writes = c.oracle.ops[a.Op]
	}
	if m.writes != nil {
		ws = m.writes.ws
	}
	if m.applied {
		return ws, false, nil
	}
	skip, v = ackApplied(*a, ws)
	m.applied = !skip && v == nil
	return ws, skip, v
}

// checkWrites judges the versions ws of one acknowledged write (only those
// of key, unless key is empty) as CheckNoLostWrite does.
func (c *NoLostWriteChecker) checkWrites(key string, m *ackMemo, ws []AppliedWrite, owners Owners, when string, spans []keys.Span) *property.Violation {
	for j := range ws {
		w := &ws[j]
		if key != "" && w.Key != key {
			continue
		}
		k := c.keys.at(m.writes.ids[j])
		if !c.inPass(k, w.Key, owners, spans) {
			continue
		}
		if v := c.judgeWrite(k, w, when); v != nil {
			return v
		}
	}
	return nil
}

// inPass reports whether this pass judges key (memo k): whether it lies
// in spans, if there are any. When it does, k holds the key's
// view and stamp for the pass.
func (c *NoLostWriteChecker) inPass(k *keyMemo, key string, owners Owners, spans []keys.Span) bool {
	if !c.inSpans(k, key, spans) {
		return false
	}
	if !k.stampComputed {
		c.resolve(k, key, owners)
		k.stampComputed = true
	}
	return true
}

// inSpans reports whether this pass judges key (memo k): whether it lies in
// spans, if there are any. A key first met in a pass forgets what the last
// one found (what that computed is overwritten before it is read again).
func (c *NoLostWriteChecker) inSpans(k *keyMemo, key string, spans []keys.Span) bool {
	if k.pass != c.pass {
		k.pass, k.spansDone, k.stampComputed, k.excusedDone = c.pass, false, false, false
	}
	if len(spans) == 0 {
		return true
	}
	if !k.spansDone {
		if !k.routeKnown {
			k.routeKey, k.routeKeyed = routeKeyOf(key)
			k.routeKnown = true
		}
		k.inSpans, k.spansDone = k.routeKeyed && routeInAny(k.routeKey, spans), true
	}
	return k.inSpans
}

// untouched reports, before the key is resolved, whether this pass would
// find exactly the stamp all its indexed versions were settled under, so
// that it has nothing to judge: no version was indexed since, the routing
// table is the same (so is the route), and the route's owner is the
// settled stamp's store, at its floor and staging, whose memo's probe is
// still current at the settled generations. That is what resolve would
// compute (memoIn returns that memo), and checkKeys would then carry every
// version; the key is left unresolved in this pass (a later inPass
// resolves it if needed).
func (c *NoLostWriteChecker) untouched(k *keyMemo, owners Owners) bool {
	s, m := &k.settled, k.cur
	if m == nil || !s.valid || !s.owned || k.settledN != len(k.refs) || !k.routed || k.routingGen != owners.RoutingGen || !k.hasRoute {
		return false
	}
	own := owners.Owner(k.route)
	src := &s.src
	return own.Store == src.store && own.Floor == s.floor && own.Staging.Active == src.staging && own.Staging.Job == src.job &&
		m.store == own.Store && m.staging == own.Staging &&
		m.probe.View.LiveGen == src.live && m.probe.View.StagedGen == src.staged && own.Store.Current(&m.probe)
}

// judgeWrite judges version w of an acknowledged write on key k (its
// memo) in this pass as readBack does. It reads through the pass's view of
// the key (readsBack); only a write that does not pass there is handed to
// readBack itself, whose verdict (and message) is the one returned.
func (c *NoLostWriteChecker) judgeWrite(k *keyMemo, w *AppliedWrite, when string) *property.Violation {
	if c.readsBack(k, w) {
		return nil
	}
	return c.oracle.readBack(w, k.read, when)
}

// readsBack reports whether readBack passes w in this pass, step for step
// as readBack judges it but with the superseded case answered by
// excusedBelow: no owner answers; or w lies below the floor and a newer
// version supersedes it there, or the read at the floor chooses w's version
// or nothing while w hides nothing there; or the read at w's timestamp
// chooses w's version.
func (c *NoLostWriteChecker) readsBack(k *keyMemo, w *AppliedWrite) bool {
	if !k.stamp.owned {
		return true
	}
	at := w.TS
	if at < k.stamp.floor {
		if at < c.excusedBelow(k) {
			return true
		}
		at = k.stamp.floor
		if r := k.cur.probe.View.Get(at, mvcc.MergeNewest); r.Chosen || w.VisibleAt(at) {
			return r.Chosen && r.Version == w.Version
		}
		return true
	}
	r := k.cur.probe.View.Get(at, mvcc.MergeNewest)
	return r.Chosen && r.Version == w.Version
}

// resolve finds key's owner (its route remembered while the routing
// table stays the same), what reading it there reads (the key's memo of
// that store: one store lookup for every write of the key in this pass,
// none while the memo's probe is current), and the stamp of that.
func (c *NoLostWriteChecker) resolve(k *keyMemo, key string, owners Owners) {
	if !k.routed || k.routingGen != owners.RoutingGen {
		k.route, k.hasRoute = owners.Route(key)
		k.routingGen, k.routed = owners.RoutingGen, true
	}
	k.stamp = readStamp{valid: true, owned: k.hasRoute}
	if !k.hasRoute {
		k.cur = nil
		return
	}
	own := owners.Owner(k.route)
	k.cur = k.memoIn(key, own.Store, own.Staging, c.pass)
	view := &k.cur.probe.View
	k.stamp.floor = own.Floor
	k.stamp.src = viewSource{store: own.Store, live: view.LiveGen, staged: view.StagedGen, staging: own.Staging.Active, job: own.Staging.Job}
}

// excusedBelow returns the timestamp below which readBack excuses, in
// this pass, every write of the key (memo k) without reading it:
// the newest of the oracle's versions of the key at or below the owner's
// floor (0, which excuses nothing, if there is none or no owner). readBack
// excuses a write below the floor that a version newer than it, at or
// below the floor, supersedes (compaction may drop it): such a version
// exists exactly when the write is older than the newest version at or
// below the floor. Found once per key and pass.
func (c *NoLostWriteChecker) excusedBelow(k *keyMemo) hlc.TS {
	if !k.excusedDone {
		k.excused, k.excusedDone = 0, true
		if k.stamp.owned {
			if v, ok := c.oracle.byID[k.id].newestAtOrBelow(k.stamp.floor); ok {
				k.excused = v.TS
			}
		}
	}
	return k.excused
}

// sameView reports whether reading under stamp old, whose key had an owner,
// reads what the key's view in this pass reads, the floor aside: the key
// has an owner now too, and old's source is this pass's or holds the same
// versions (sameContent).
func (c *NoLostWriteChecker) sameView(k *keyMemo, key string, old *readStamp) bool {
	now := &k.stamp
	if !old.valid || !old.owned || !now.owned {
		return false
	}
	return old.src.equal(&now.src) || c.sameContent(k, key, old.src)
}

// sameContent reports whether the key's content in src (if src's store
// still holds it) reads as the key's view in this pass; remembered while
// checkKeys judges the key (carried forgets it). A source on the store and staging of this pass's view, with other
// generations, no longer holds its content: its store now reads as the
// view, at the view's generations. Another store's view comes from the
// key's memo of it while that memo's probe is current (no lookup), else
// from the store.
func (c *NoLostWriteChecker) sameContent(k *keyMemo, key string, src viewSource) bool {
	now := &k.stamp.src
	if src.store == now.store && src.staging == now.staging && src.job == now.job {
		return src.equal(now)
	}
	for i := range c.same[:c.nsame] {
		if s := &c.same[i]; s.src.equal(&src) {
			return s.ok
		}
	}
	ok := false
	st := mvcc.StagingOf(src.staging, src.job)
	then, known := k.currentIn(src.store, st)
	if !known {
		then = src.store.View(key, st)
	}
	if then.LiveGen == src.live && then.StagedGen == src.staged {
		ok = then.Same(k.cur.probe.View)
	}
	if c.nsame < len(c.same) {
		c.same[c.nsame] = sameAs{src: src, ok: ok}
		c.nsame++
	}
	return ok
}

// read is the key's OwnerRead in this pass, as readBack uses it:
// Owner.Read through the view at or above the floor. Below the floor it
// reads nothing (a zero Read): readBack asks there first only to learn the
// floor, then reads again at the floor and never looks at that answer.
func (k *keyMemo) read(_ string, ts hlc.TS) (mvcc.Read, hlc.TS, bool) {
	if !k.stamp.owned {
		return mvcc.Read{}, 0, false
	}
	if ts < k.stamp.floor {
		return mvcc.Read{}, k.stamp.floor, true
	}
	return k.cur.probe.View.Get(ts, mvcc.MergeNewest), k.stamp.floor, true
}
