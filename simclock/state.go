package simclock

import (
	"encoding/binary"

	"github.com/zeebo/blake3"
)

// World-state tracking for the model checker (Loop.TrackStates).
//
// A world's state is more than the loop can see: actors keep coroutine
// stacks nobody can read, pending events are closures, and the KV store,
// the histories and the checkers are plain Go values shared by everyone.
// So the loop does not encode that state; it names it by its history. Two
// worlds that reached the same point by the same inputs are in the same
// state, because everything in a world is a deterministic function of its
// inputs (the draws, and virtual time).
//
// Histories are kept as running blake3 digests (chains):
//
//   - the shared chain folds every shared event: its id, the time, the
//     chain of the actor it ran on, and every draw it made. Everything that
//     is not one actor's own (the KV store and its network, the histories
//     and checkers, a scenario's globals, task stacks that touched them) is
//     a function of the shared chain, since only shared events change it.
//   - each actor's chain folds its private events, and is set to the shared
//     chain after each of its shared events: the actor's memory (fields,
//     task stacks) is a function of its chain.
//
// Every event is shared unless the actor it runs on declared it private
// (Context.Private), drew nothing but zeros (the quiet choice, which by the
// design of Choices injects nothing) and touched nothing outside itself
// that the loop or a hooked component (Loop.Shared) can see. Private
// events are what lets two orders of independent events meet in one state:
// a nemesis tick that injects nothing commutes with any other event.
//
// A pending event is named by an id derived from the chain of the event
// that scheduled it, as that chain stands once that event ended (so the id
// determines everything the closure captured), and the scheduling order:
// the k-th event scheduled by one event gets the k-th id. Which of several
// events due at one instant runs first depends on their scheduling order,
// so the state lists pending events by time and, within a time, in
// scheduling order (never by their sequence numbers, which differ between
// orders that are otherwise alike).
//
// AppendState then writes: virtual time; the shared chain; per actor its
// incarnation, whether it is down or paused, its chain, its clock and the
// ids of events held while it is paused; and the pending events in order.
// Virtual time is absolute: durable records of the protocols carry
// absolute logical times and leases, and the heal and the end of a run are
// absolute instants, so two states at different times are different states.

// Digest is a 128-bit digest of a history.
type Digest [16]byte

// stateTrack is the loop's bookkeeping of histories.
type stateTrack struct {
	shared Digest // the shared chain
	visit  func() bool

	// The running event, or the build phase when inEvent is false.
	inEvent  bool
	owner    *actorSlot // the actor the event runs on (nil: a raw event)
	curID    Digest
	private  bool   // the owner asked for a private event
	touched  bool   // something outside the owner was touched: shared
	nonzero  bool   // a draw took a value other than zero
	void     bool   // the event was dropped or held: it changed nothing
	buf      []byte // the event's inputs, in order
	born     []*event
	reborn   []*actorSlot
	ordering bool // the loop is drawing the order of due events

	budgetHit bool     // Run stopped at the event budget
	scratch   []*event // pending events, sorted for AppendState
	hashBuf   []byte

	draws     uint64    // draws made so far (the order's included)
	memo      *FoldMemo // where this run's folds are recorded (nil: nowhere)
	same      uint64    // draws this run makes as memo's last run did
	recalling bool      // folds still come from memo's last run
}

// Chain tags keep the kinds of fold apart, and the kinds of input within
// a fold: after a fold's untagged header, every input is a tag followed by
// self-delimiting values (varints or digests), so the inputs of a fold are
// injective whatever their order.
const (
	tagBuild     = 'B'
	tagShared    = 'S'
	tagRaw       = 'R'
	tagPrivate   = 'P'
	tagEvent     = 'E'
	tagReborn    = 'N'
	tagDraw      = 'D'
	tagRead      = 'r' // an actor's chain read by the event
	tagReadValue = 'v' // a number read from the loop
)

// TrackStates switches on state tracking; visit, when not nil, runs after
// every event, after every OnStep observer, and returning false stops the
// run (Run returns Stopped). Call it on a fresh loop, before anything is
// scheduled or drawn (draws are folded only through TrackDraws). Runs that
// are not model-checked never pay for it.
func (l *Loop) TrackStates(visit func() bool) {
	l.st = &stateTrack{visit: visit}
}

// FoldMemo keeps the results of a run's folds (the blake3 of each event's
// inputs) for the next run of the same world. A model checker's runs
// replay the draws of the run before them up to the draw they change, and
// a run that has made only draws the last one made is the same
// computation so far (worlds are deterministic), whose folds have the same
// results: it takes them over instead of hashing again.
type FoldMemo struct {
	last, cur []memoFold // the last run's folds; this run's so far
	recalled  uint64
}

// Recalled returns how many folds runs took over from the memo.
func (m *FoldMemo) Recalled() uint64 { return m.recalled }

// memoFold is one fold's result and the draws made before it.
type memoFold struct {
	draws uint64
	out   Digest
}

// ReuseFolds makes this run's folds come from m's last run for as long as
// this run has made only the first same draws, which the caller knows are
// those of that run; it records this run's folds in m for the next. Call
// it after TrackStates, before anything is scheduled or drawn.
func (l *Loop) ReuseFolds(m *FoldMemo, same uint64) {
	m.last, m.cur = m.cur, m.last[:0]
	l.st.memo, l.st.same, l.st.recalling = m, same, true
}

// recall returns the result of the next fold from the memo's last run
// while this run has made only draws that run made too. It checks that
// the last run's fold came after as many draws (it always does, worlds
// being deterministic). Once it declines, it declines for the rest of the
// run.
func (st *stateTrack) recall() (Digest, bool) {
	if !st.recalling {
		return Digest{}, false
	}
	m := st.memo
	k := len(m.cur)
	if st.draws > st.same || k >= len(m.last) || m.last[k].draws != st.draws {
		st.recalling = false
		return Digest{}, false
	}
	m.recalled++
	return m.last[k].out, true
}

// Tracking reports whether state tracking is on.
func (l *Loop) Tracking() bool { return l.st != nil }

// TrackDraws returns src with every draw folded into the history of the
// event that made it (or of the world's build phase). Wrap the world's
// root source with it; order draws of the loop itself are left out, since
// which event runs is folded anyway.
func (l *Loop) TrackDraws(src Source) Source { return &trackedSource{inner: src, l: l} }

// EventBudgetHit reports whether Run ever stopped at the event budget: the
// number of events run is not part of the state, so a model checker must
// not let the budget decide a run.
func (l *Loop) EventBudgetHit() bool { return l.st != nil && l.st.budgetHit }

// Shared marks the running event as touching state outside its actor, so
// it can never be private. Components that shared state goes through (the
// KV server's fault controls) call it; it does nothing when tracking is off.
func (l *Loop) Shared() {
	if l.st != nil {
		l.st.touched = true
	}
}

// Private declares that the running event changes nothing but this actor's
// own memory (its fields and tasks) and the events it schedules. The loop
// keeps the event private only if, in addition, every draw it made was
// zero and it touched nothing shared the loop can see (crashing, pausing,
// resuming or restarting actors, the KV server's fault controls);
// otherwise it stays shared, which is always sound. The caller's promise
// is what the soundness of state pruning rests on: a nemesis tick that
// injected nothing makes it.
func (c *Context) Private() {
	st := c.loop.st
	if st != nil && st.inEvent && st.owner == c.loop.actors[c.id] {
		st.private = true
	}
}

// StateDigest returns blake3 of AppendState, truncated to 16 bytes.
func (l *Loop) StateDigest() Digest {
	st := l.st
	st.hashBuf = l.AppendState(st.hashBuf[:0])
	sum := blake3.Sum256(st.hashBuf)
	var d Digest
	copy(d[:], sum[:16])
	return d
}

// AppendState appends the canonical encoding of the world's state (see
// TrackStates). It must be called between events, with tracking on.
//
// Numbers are varints and an actor's chain is left out when it is the
// shared chain (its last event was the last shared one): every field is
// self-delimiting, so the encoding stays injective, and it is about a
// third shorter than in fixed widths, which is a third fewer blake3 blocks
// per state digest.
func (l *Loop) AppendState(b []byte) []byte {
	st := l.st
	st.flushBuild(l)
	b = binary.AppendVarint(b, int64(l.now))
	b = append(b, st.shared[:]...)
	b = binary.AppendUvarint(b, uint64(len(l.actors)))
	for _, s := range l.actors {
		b = s.appendState(b, st.shared)
	}
	pend := st.scratch[:0]
	for _, e := range l.due {
		if !e.cancelled && e.pending {
			pend = append(pend, e)
		}
	}
	pend = l.queue.appendLive(pend)
	b = binary.AppendUvarint(b, uint64(len(pend)))
	for _, e := range pend {
		b = binary.AppendVarint(b, int64(e.at-l.now))
		b = append(b, e.id[:]...)
	}
	clear(pend)
	st.scratch = pend[:0]
	return b
}

// Flags of an actor's encoded state.
const (
	actorDown = 1 << iota
	actorPaused
	actorChainIsShared // its chain is the shared chain, not written again
)

// appendState encodes one actor; shared is the shared chain.
func (s *actorSlot) appendState(b []byte, shared Digest) []byte {
	b = binary.AppendUvarint(b, s.incarnation)
	var flags byte
	if s.down {
		flags |= actorDown
	}
	if s.paused {
		flags |= actorPaused
	}
	if s.chain == shared {
		flags |= actorChainIsShared
	}
	b = append(b, flags)
	if flags&actorChainIsShared == 0 {
		b = append(b, s.chain[:]...)
	}
	b = appendClock(b, s.clock)
	b = binary.AppendUvarint(b, uint64(len(s.held)))
	for _, h := range s.held {
		b = append(b, h.id[:]...)
	}
	return b
}

// appendClock encodes a node clock's whole state (nil: none), in varints.
func appendClock(b []byte, c *NodeClock) []byte {
	if c == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, int64(c.maxSkew))
	b = binary.AppendVarint(b, int64(c.offset))
	b = binary.AppendVarint(b, c.driftPPM)
	return binary.AppendVarint(b, int64(c.anchor))
}

// word folds one value into the running event's (or build's) inputs.
func (st *stateTrack) word(tag byte, v uint64) {
	st.buf = append(st.buf, tag)
	st.buf = binary.AppendUvarint(st.buf, v)
}

// digest folds a digest into the running event's inputs.
func (st *stateTrack) digest(tag byte, d Digest) {
	st.buf = append(st.buf, tag)
	st.buf = append(st.buf, d[:]...)
}

// begin starts the bookkeeping of event e, which runs at l.now.
func (st *stateTrack) begin(l *Loop, e *event) {
	st.flushBuild(l)
	st.inEvent = true
	st.owner = nil
	if e.owner > 0 {
		st.owner = l.actors[e.owner-1]
	}
	st.curID = e.id
	st.private, st.touched, st.nonzero, st.void = false, false, false, false
	// The event's header comes first in its inputs (flushBuild left them
	// empty), so it needs no tags: its id, the time and the owner's clock
	// (a zero byte if none).
	st.buf = append(st.buf, e.id[:]...)
	st.buf = binary.AppendVarint(st.buf, int64(l.now))
	var clock *NodeClock
	if st.owner != nil {
		clock = st.owner.clock
	}
	st.buf = appendClock(st.buf, clock)
}

// end folds the finished event into the chains and names what it
// scheduled and restarted.
func (st *stateTrack) end() {
	st.inEvent = false
	if st.void {
		st.buf, st.born, st.reborn = st.buf[:0], st.born[:0], st.reborn[:0]
		return
	}
	var final Digest
	switch o := st.owner; {
	case o != nil && st.private && !st.touched && !st.nonzero:
		o.chain = st.chain(tagPrivate, o.chain, nil)
		final = o.chain
	case o != nil:
		st.shared = st.chain(tagShared, st.shared, o.chain[:])
		o.chain = st.shared
		final = st.shared
	default:
		st.shared = st.chain(tagRaw, st.shared, nil)
		final = st.shared
	}
	st.name(final)
}

// flushBuild folds what happened outside any event (building the world)
// into the shared chain.
func (st *stateTrack) flushBuild(l *Loop) {
	if st.inEvent || (len(st.buf) == 0 && len(st.born) == 0 && len(st.reborn) == 0) {
		return
	}
	st.word(tagBuild, uint64(l.now))
	st.shared = st.chain(tagBuild, st.shared, nil)
	st.name(st.shared)
}

// chain returns the fold of tag, prev, other and the inputs (hash), or the
// same fold of the memo's last run while recall may take it over; it
// records the result in the memo, if any, and clears the inputs. other is
// the owner's chain of a shared event, nil for the other tags (each tag
// has its fixed layout). Most folds then fit one or two of blake3's
// 64-byte blocks.
func (st *stateTrack) chain(tag byte, prev Digest, other []byte) Digest {
	d, ok := st.recall()
	if !ok {
		d = st.hash(tag, prev, other)
	}
	st.buf = st.buf[:0]
	if st.memo != nil {
		st.memo.cur = append(st.memo.cur, memoFold{draws: st.draws, out: d})
	}
	return d
}

// hash returns blake3(tag, prev, other, inputs), truncated to 16 bytes.
func (st *stateTrack) hash(tag byte, prev Digest, other []byte) Digest {
	h := append(st.hashBuf[:0], tag)
	h = append(h, prev[:]...)
	h = append(h, other...)
	h = append(h, st.buf...)
	st.hashBuf = h
	sum := blake3.Sum256(h)
	var d Digest
	copy(d[:], sum[:16])
	return d
}

// name gives the events scheduled and the actors (re)started since the
// last fold their ids, derived from final, the chain that determines them.
func (st *stateTrack) name(final Digest) {
	for i, e := range st.born {
		e.id = derive(final, tagEvent, i)
	}
	for i, s := range st.reborn {
		s.chain = derive(final, tagReborn, i)
	}
	clear(st.born)
	clear(st.reborn)
	st.born, st.reborn = st.born[:0], st.reborn[:0]
}

// derive returns the i-th name drawn from chain d: distinct for distinct
// (d, tag, i) unless blake3's outputs collide.
func derive(d Digest, tag byte, i int) Digest {
	a := binary.LittleEndian.Uint64(d[0:8])
	b := binary.LittleEndian.Uint64(d[8:16])
	k := uint64(i+1) | uint64(tag)<<56
	a += k * 0x9e3779b97f4a7c15
	b ^= k * 0xc2b2ae3d27d4eb4f
	var out Digest
	binary.LittleEndian.PutUint64(out[0:8], a)
	binary.LittleEndian.PutUint64(out[8:16], b)
	return out
}

// scheduled notes an event scheduled now; its id is given when the
// running event (or the build phase) is folded.
func (st *stateTrack) scheduled(e *event) { st.born = append(st.born, e) }

// read folds a value the running event read from the loop.
func (st *stateTrack) read(v uint64) { st.word(tagReadValue, v) }

// trackedSource folds every draw into the running event's inputs.
type trackedSource struct {
	inner Source
	l     *Loop
}

func (t *trackedSource) Draw(n uint64) uint64 {
	return t.note(n, t.inner.Draw(n))
}

func (t *trackedSource) DrawKind(n uint64, kind DrawKind) uint64 {
	if ks, ok := t.inner.(KindSource); ok {
		return t.note(n, ks.DrawKind(n, kind))
	}
	return t.note(n, t.inner.Draw(n))
}

func (t *trackedSource) note(n, v uint64) uint64 {
	st := t.l.st
	if st == nil {
		return v
	}
	st.draws++
	if st.ordering {
		return v
	}
	st.word(tagDraw, n)
	st.buf = binary.AppendUvarint(st.buf, v)
	if v != 0 {
		st.nonzero = true
	}
	return v
}

func (t *trackedSource) Fork(name string) Source {
	return &trackedSource{inner: t.inner.Fork(name), l: t.l}
}
