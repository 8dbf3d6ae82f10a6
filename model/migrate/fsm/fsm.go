package fsm

import (
	"fmt"
	"maps"
	"slices"

	"shardsim/model/bugs"
	"shardsim/model/migrate/errs"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// importKey identifies one import stream.
type importKey struct {
	job     uint64
	bracket uint32
}

type importState struct {
	seq    uint64
	cursor []byte
}

// tracker is a job's write tracker: the lowest timestamp admitted in the
// span since it was armed (0: none yet).
type tracker struct {
	Guard
	min hlc.TS
}

// FSM is one voter's applied state of a group. Everything but the applied
// data (Group, the bug set) must be the same for all voters of a group:
// group.Cluster.Bootstrap applies initial data on one voter and copies its
// whole state over the others (it checks with BuiltAlike).
type FSM struct {
	Group       int
	Store       *mvcc.Store
	LastCommit  hlc.TS
	Ceiling     uint64 // physical ms
	Applied     uint64 // index of the last applied entry
	CompactedTS hlc.TS // reads below it are refused
	MinView     uint64 // a leader must judge by a catalog view at least this new

	imports  map[importKey]importState
	promoted map[uint64]bool // job -> every staged row promoted
	cleaned  map[uint64]bool // job -> source versions deleted
	aborted  map[uint64]bool // job -> abandoned here: its late imports are refused
	floors   []Guard         // durable write floors (target readiness)
	trackers []tracker
	pins     []Guard
	fences   []Guard           // armed cutover read fences
	disarmed map[uint64]uint64 // job -> the highest expected cutover version disarmed: an older arm is stale
	released map[uint64]bool   // job -> tracker and pin released: a later arm is stale
	bugs     bugs.Set
	// own is the decision of the state's own applies (ApplyEntry), reset
	// before each, so that the next one reuses its lists' room.
	own Decision
	// staged is the staged keyspace of the job last asked about (stageSpan).
	staged struct {
		job  uint64
		span keys.Span
	}
}

// cut is where compaction trims one key: its versions older than at go.
type cut struct {
	key string
	at  hlc.TS
}

// New returns the state of a fresh voter of group. Its migration maps
// start nil (reads of a nil map find nothing) and are made on their first
// write (setIn): most voters of a run meet one migration or none.
func New(group int, set bugs.Set) *FSM {
	return &FSM{Group: group, Store: mvcc.New(), bugs: set}
}

// BuiltAlike reports whether f and o were built for the same group with
// the same bugs, the fields a whole-state copy between voters carries over.
func (f *FSM) BuiltAlike(o *FSM) bool {
	return f.Group == o.Group && f.bugs.Equal(o.bugs)
}

// Pristine reports whether f is as New made it: nothing applied, nothing
// stored. Two pristine states built alike (BuiltAlike) are equal.
func (f *FSM) Pristine() bool {
	return f.Applied == 0 && f.Store.Len() == 0 && f.Store.Keys() == 0 && f.LastCommit == 0 && f.Ceiling == 0 &&
		f.CompactedTS == 0 && f.MinView == 0 && len(f.imports) == 0 && len(f.promoted) == 0 && len(f.cleaned) == 0 &&
		len(f.aborted) == 0 && len(f.floors) == 0 && len(f.trackers) == 0 && len(f.pins) == 0 && len(f.fences) == 0 &&
		len(f.disarmed) == 0 && len(f.released) == 0
}

// setIn stores v under k in *m, making the map on its first write.
func setIn[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = make(map[K]V)
	}
	(*m)[k] = v
}

// Clone returns a deep copy of the state (a snapshot for a joining voter).
func (f *FSM) Clone() *FSM {
	n := *f
	n.Store = f.Store.Clone()
	if f.imports != nil {
		n.imports = make(map[importKey]importState, len(f.imports))
		for k, v := range f.imports {
			n.imports[k] = importState{seq: v.seq, cursor: append([]byte(nil), v.cursor...)}
		}
	}
	n.promoted = maps.Clone(f.promoted)
	n.cleaned = maps.Clone(f.cleaned)
	n.aborted = maps.Clone(f.aborted)
	n.floors = slices.Clone(f.floors)
	n.trackers = slices.Clone(f.trackers)
	n.pins = slices.Clone(f.pins)
	n.fences = slices.Clone(f.fences)
	n.disarmed = maps.Clone(f.disarmed)
	n.released = maps.Clone(f.released)
	n.own = Decision{} // never share the original's scratch
	return &n
}

// Apply applies the next entry. Entries must come in index order.
func (f *FSM) Apply(e Entry) Result { return f.ApplyEntry(&e) }

// ApplyEntry is Apply of *e, which it does not keep and whose fields it does
// not change (the groups apply the entries their logs share in place
// instead of copying each), but for what an entry derives from itself
// alone and keeps for every voter that applies it: a write's row (see
// Write.put), which every apply sets to the same row, an import batch's
// staged keys (Import.stagedKey), made by its first apply, and a
// transaction step's lock value and row keys (Txn.lockValue, Txn.rowKeys).
// One more: a fence disarm raises its Guard.Expected to the fence it
// drops (fences are replicated state, so every voter raises it alike, and
// the observers and traces after the first apply see the raised value).
func (f *FSM) ApplyEntry(e *Entry) Result {
	f.own.Reset()
	return f.ApplyDecided(e, &f.own)
}

// ApplyDecided is ApplyEntry by decision d. If d is not made, the apply
// decides and records its decision in d; if it is, the apply follows d
// and reads nothing to decide again, so d must have been made by applying
// this entry to a state equal to f's (see Decision). The caller keeps d
// and must not change it while it may be followed.
func (f *FSM) ApplyDecided(e *Entry, d *Decision) Result {
	if e.Index != f.Applied+1 {
		panic(fmt.Sprintf("fsm: group %d applying %d after %d", f.Group, e.Index, f.Applied))
	}
	f.Applied = e.Index
	r := f.apply(e, d)
	d.made = true
	r.LastCommit = f.LastCommit
	r.Horizon = f.Horizon()
	return r
}

func (f *FSM) apply(e *Entry, d *Decision) Result {
	switch e.Kind {
	case KindWrite:
		return f.applyWrite(e.Write, d)
	case KindCeiling:
		f.raiseCeiling(e.Ceiling)
	case KindImport:
		return f.applyImport(e.Import)
	case KindFloor:
		f.applyFloor(*e.Guard)
	case KindPromote:
		return f.applyPromote(e.Promote, d)
	case KindCleanup:
		return f.applyCleanup(e.Cleanup, d)
	case KindAbandonStaged:
		return f.applyAbandon(e.Job)
	case KindBarrier:
		if e.Job != 0 {
			return Result{Tracked: f.TrackedMin(e.Job)}
		}
	case KindConfig:
		if e.Config.MinView > f.MinView {
			f.MinView = e.Config.MinView
		}
	case KindArmTracker:
		if f.released[e.Guard.Job] {
			return Result{Err: errs.ErrStaleGuard}
		}
		return f.armTracker(*e.Guard)
	case KindPin:
		f.movePin(*e.Guard)
	case KindRelease:
		f.release(e.Job)
		setIn(&f.released, e.Job, true)
	case KindCompact:
		return f.compact(e.TS, d)
	case KindArmFence:
		if e.Guard.Expected <= f.disarmed[e.Guard.Job] {
			return Result{Err: errs.ErrStaleGuard} // a late or repeated arm of a fence already disarmed
		}
		f.fences = upsert(f.fences, *e.Guard)
	case KindDisarmFence:
		if g, ok := f.Fence(e.Guard.Job); ok && g.Expected > e.Guard.Expected {
			e.Guard.Expected = g.Expected
		}
		setIn(&f.disarmed, e.Guard.Job, max(f.disarmed[e.Guard.Job], e.Guard.Expected))
		f.fences = drop(f.fences, e.Guard.Job)
	case KindPrepare:
		return f.applyPrepare(e.Txn)
	case KindCommit:
		return f.applyCommit(e.Txn)
	case KindRollback:
		return f.applyRollback(e.Txn)
	case KindDeleteRange:
		return f.applyDeleteRange(e.DelRange)
	default:
		panic("fsm: unknown entry kind")
	}
	return Result{}
}

// Horizon returns the highest timestamp any leader of the group can have
// issued or observed (a read timestamp) so far: leaders stay at or below
// the ceiling, and commits at or below the last commit ts.
func (f *FSM) Horizon() hlc.TS {
	h := hlc.CeilingTop(f.Ceiling)
	if f.LastCommit > h {
		h = f.LastCommit
	}
	return h
}

func (f *FSM) raiseCeiling(ms uint64) {
	if ms > f.Ceiling {
		f.Ceiling = ms
	}
}

// observe makes t durable as a lower bound of every later commit ts.
func (f *FSM) observe(t hlc.TS) {
	if t > f.LastCommit {
		f.LastCommit = t
	}
	f.raiseCeiling(t.Phys())
}

// committed records t as a commit ts the group issued or admitted.
func (f *FSM) committed(t hlc.TS) {
	if t > f.LastCommit {
		f.LastCommit = t
	}
}

// upsert replaces g's job entry in gs (or adds it).
func upsert(gs []Guard, g Guard) []Guard {
	for i := range gs {
		if gs[i].Job == g.Job {
			gs[i] = g
			return gs
		}
	}
	return append(gs, g)
}

// drop removes job's entry from gs.
func drop(gs []Guard, job uint64) []Guard {
	return slices.DeleteFunc(gs, func(g Guard) bool { return g.Job == job })
}
