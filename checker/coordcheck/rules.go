package coordcheck

import (
	"bytes"
	"fmt"
	"slices"

	"shardsim/model/coord"
	"shardsim/property"
)

// The durable-state rules. CheckState judges what must hold in every
// state; CheckStep what must hold between two consecutive observations;
// CheckTenantStep and CheckAcceptedLease judge one request against the
// states around it. They never panic on bad input, so they can judge
// states a buggy backend wrote.
//
// They are written from the property catalog and seed 004's invariant
// list, not with model/coord's helpers: model/coord's records are read as
// plain data, and nothing here calls the protocol's own invariant checks,
// succession checks, split coverage, range or lease predicates, or its
// limits. A mistake in one of those would otherwise blind the protocol and
// its judge alike.
//
// What they cannot see: the op-log is judged on what it holds (an evicted
// entry is gone, so an op id executed again after eviction is allowed, as
// the protocol intends); an owner binding is only compared with its
// record, not with etcd's lease; run records are judged without the shards
// a manifest promised but registration never wrote.

// Limits of seed 004 (limits.rs and the invariant list), kept apart from
// model/coord's constants on purpose.
const (
	specShardOpLogCap = 16
	specRunOpLogCap   = 8
	specMaxSpawned    = 1024
	specInitialFence  = 1
	specDerivedBit    = uint64(1) << 63
)

// shardSubject names a shard for reports. It formats, so the rules call it
// only once they report something.
func shardSubject(k coord.ShardKey) string { return k.Run.String() + "/" + k.Shard.String() }

// shardName names a shard in a violation's detail.
func shardName(t coord.TenantID, k coord.ShardKey) string {
	return fmt.Sprintf("%.8s…/%s/%s", t, k.Run, k.Shard)
}

// onShard reports a violation about shard r.
func onShard(r *coord.ShardRecord, p property.Name, format string, args ...any) *property.Violation {
	detail := shardName(r.Tenant, r.Key()) + fmt.Sprintf(format, args...)
	return (&property.Violation{Property: p, Detail: detail}).About(property.SubjectShard, shardSubject(r.Key()))
}

// The lifecycle, as the catalog states it.
func shardTerminal(s coord.ShardStatus) bool {
	return s == coord.ShardDone || s == coord.ShardSplit || s == coord.ShardParked
}

func runTerminal(s coord.RunStatus) bool {
	return s == coord.RunDone || s == coord.RunFailed || s == coord.RunCancelled
}

func derived(id coord.ShardID) bool { return uint64(id)&specDerivedBit != 0 }

// live reports whether a lease with deadline d is live at now: it
// expires at its deadline.
func live(d, now coord.LogicalTime) bool { return now < d }

// inRange reports whether key lies in [start, end), end empty meaning no
// upper bound.
func inRange(key, start, end []byte) bool {
	return bytes.Compare(key, start) >= 0 && (len(end) == 0 || bytes.Compare(key, end) < 0)
}

// nonEmpty reports whether [start, end) holds a key.
func nonEmpty(start, end []byte) bool { return len(end) == 0 || bytes.Compare(start, end) < 0 }

// stateIndex looks records up by identity (maps for lookup only; every loop
// runs over the ordered slices).
type stateIndex struct {
	shards map[ShardRef]*coord.ShardRecord
	runs   map[runRef]*coord.RunRecord
	tiling *tilingWalk // checkTiling's scratch, reused from root to root
}

type runRef struct {
	tenant coord.TenantID
	run    coord.RunID
}

func indexState(s *coord.Snapshot) stateIndex {
	ix := stateIndex{shards: make(map[ShardRef]*coord.ShardRecord, len(s.Shards)), runs: make(map[runRef]*coord.RunRecord, len(s.Runs)),
		tiling: &tilingWalk{}}
	ix.fill(s)
	return ix
}

// reindex makes ix the index of s, reusing its maps (a checker that judges
// state after state indexes each one).
func (ix *stateIndex) reindex(s *coord.Snapshot) {
	if ix.shards == nil {
		*ix = indexState(s)
		return
	}
	clear(ix.shards)
	clear(ix.runs)
	ix.fill(s)
}

func (ix stateIndex) fill(s *coord.Snapshot) {
	for i := range s.Shards {
		r := &s.Shards[i]
		ix.shards[ShardRef{r.Tenant, r.Key()}] = r
	}
	for i := range s.Runs {
		r := &s.Runs[i]
		ix.runs[runRef{r.Tenant, r.Run}] = r
	}
}

func (ix stateIndex) shard(t coord.TenantID, run coord.RunID, id coord.ShardID) (*coord.ShardRecord, bool) {
	r, ok := ix.shards[ShardRef{t, coord.ShardKey{Run: run, Shard: id}}]
	return r, ok
}

// CheckState checks the properties of a single state:
//
//   - C.RecordInvariants: every record's structural invariants; every
//     shard belongs to an existing run, and a root shard to its manifest;
//   - C.TerminalUnleased: no Done, Split or Parked shard holds a lease;
//   - C.CursorBounds: a cursor's last key lies in its shard's range;
//   - C.SplitAtomicity: every spawned shard exists and names its parent,
//     and every derived shard is in its parent's spawned list;
//   - C.SplitCoverage: the unsplit shards of each root's tree tile one
//     contiguous range from the root's start, without overlap;
//   - C.MutualExclusion: an owner binding agrees with its record's lease.
func CheckState(s *coord.Snapshot) *property.Violation { return checkState(s, indexState(s)) }

// checkState is CheckState over an index of s already built.
func checkState(s *coord.Snapshot, ix stateIndex) *property.Violation {
	return checkRunsState(s, ix, nil)
}

// checkRunsState is checkState on the records of the runs in only (nil:
// every run), in the same order. Every state property of a record involves
// only records of its own run (its run record, parent, children, the
// tiling of its root, its owner binding), so when a state passed
// CheckState and a step changed records of some runs only, checking those
// runs finds exactly what checking the whole state would.
func checkRunsState(s *coord.Snapshot, ix stateIndex, only map[runRef]bool) *property.Violation {
	in := func(t coord.TenantID, run coord.RunID) bool { return only == nil || only[runRef{t, run}] }
	if len(only) == 1 { // the common step: one run touched, compared rather than hashed
		var one runRef
		for r := range only {
			one = r
		}
		in = func(t coord.TenantID, run coord.RunID) bool { return run == one.run && t == one.tenant }
	}
	for i := range s.Runs {
		r := &s.Runs[i]
		if !in(r.Tenant, r.Run) {
			continue
		}
		if why := runInvariant(r); why != "" {
			return property.Violated(property.CRecordInvariants, "run %s: %s", r.Run, why)
		}
	}
	for i := range s.Shards {
		if r := &s.Shards[i]; in(r.Tenant, r.Run) {
			if v := checkShardAlone(ix, r); v != nil {
				return v
			}
		}
	}
	for i := range s.Shards {
		if r := &s.Shards[i]; !derived(r.Shard) && in(r.Tenant, r.Run) {
			if v := checkTiling(ix, r); v != nil {
				return v
			}
		}
	}
	for _, b := range s.Bindings {
		if !in(b.Tenant, b.Shard.Run) {
			continue
		}
		r, ok := ix.shard(b.Tenant, b.Shard.Run, b.Shard.Shard)
		if !ok || !r.Lease.Set || b.Binding.Worker != r.Lease.Val.Owner || b.Binding.Fence != r.Fence || b.Binding.Deadline != r.Lease.Val.Deadline {
			return property.Violated(property.CMutualExclusion, "%s: owner binding %+v disagrees with the record's lease",
				shardName(b.Tenant, b.Shard), b.Binding).About(property.SubjectShard, shardSubject(b.Shard))
		}
	}
	return nil
}

func checkShardAlone(ix stateIndex, r *coord.ShardRecord) *property.Violation {
	if shardTerminal(r.Status) && r.Lease.Set {
		return onShard(r, property.CTerminalUnleased, " is %s and leased to %s", r.Status, r.Lease.Val.Owner)
	}
	if why := shardInvariant(r); why != "" {
		return onShard(r, property.CRecordInvariants, ": %s", why)
	}
	run, ok := ix.runs[runRef{r.Tenant, r.Run}]
	if !ok {
		return onShard(r, property.CRecordInvariants, " belongs to no run")
	}
	if !derived(r.Shard) && !slices.Contains(run.RootShards, r.Shard) {
		return onShard(r, property.CRecordInvariants, " (a root) is not in its run's manifest")
	}
	if len(r.Cursor.LastKey) > 0 && !inRange(r.Cursor.LastKey, r.Spec.Start, r.Spec.End) {
		return onShard(r, property.CCursorBounds, ": cursor outside [%q, %q)", r.Spec.Start, r.Spec.End)
	}
	for _, id := range r.Spawned {
		c, ok := ix.shard(r.Tenant, r.Run, id)
		if !ok {
			return onShard(r, property.CSplitAtomicity, " spawned %s, which does not exist", id)
		}
		if !c.Parent.Set || c.Parent.Val != r.Shard {
			return onShard(r, property.CSplitAtomicity, " spawned %s, which names another parent", id)
		}
	}
	if r.Parent.Set {
		p, ok := ix.shard(r.Tenant, r.Run, r.Parent.Val)
		if !ok || !slices.Contains(p.Spawned, r.Shard) {
			return onShard(r, property.CSplitAtomicity, " is not in its parent's spawned list")
		}
	}
	return nil
}

// shardInvariant returns why r breaks a structural invariant of seed 004
// (C.RecordInvariants), or "". The lease of a terminal shard is judged
// before, as C.TerminalUnleased.
func shardInvariant(r *coord.ShardRecord) string {
	switch {
	case r.Status > coord.ShardParked:
		return fmt.Sprintf("unknown shard status %d", r.Status)
	case r.Semantics > coord.SemanticsDispatched:
		return fmt.Sprintf("unknown cursor semantics %d", r.Semantics)
	case r.ParkReason.Set != (r.Status == coord.ShardParked):
		return fmt.Sprintf("park reason present=%t with status %s", r.ParkReason.Set, r.Status)
	case r.ParkReason.Set && r.ParkReason.Val > coord.ParkOther:
		return fmt.Sprintf("unknown park reason %d", r.ParkReason.Val)
	case r.Fence < specInitialFence:
		return fmt.Sprintf("fence %d below the initial epoch", r.Fence)
	case r.OpLog.Len() > specShardOpLogCap:
		return fmt.Sprintf("op-log holds %d entries, more than %d", r.OpLog.Len(), specShardOpLogCap)
	case r.Status == coord.ShardSplit && len(r.Spawned) == 0:
		return "split shard has spawned nothing"
	case r.Parent.Set != derived(r.Shard):
		return fmt.Sprintf("parent present=%t for a shard whose id derived=%t", r.Parent.Set, derived(r.Shard))
	case len(r.Spawned) > specMaxSpawned:
		return fmt.Sprintf("spawned list holds %d ids, more than %d", len(r.Spawned), specMaxSpawned)
	case !nonEmpty(r.Spec.Start, r.Spec.End):
		return "key range is empty"
	}
	for _, id := range r.Spawned {
		if !derived(id) {
			return fmt.Sprintf("spawned shard %s is not a derived id", id)
		}
	}
	return opLogInvariant(r.OpLog.Len(), r.OpLog.At, true)
}

// opLogInvariant checks the n entries at(0..n-1) of an op-log: known kinds
// of the log's side (shard or run), known results, unique op ids.
func opLogInvariant(n int, at func(int) coord.OpLogEntry, shardLog bool) string {
	for i := 0; i < n; i++ {
		e := at(i)
		shardKind := e.Kind <= coord.OpKindUnpark
		runKind := e.Kind >= coord.OpKindRegisterShards && e.Kind <= coord.OpKindCancelRun
		if shardLog && !shardKind || !shardLog && !runKind {
			return fmt.Sprintf("op-log entry of kind %d does not belong in this log", e.Kind)
		}
		if e.Result > coord.OpSuperseded {
			return fmt.Sprintf("op-log entry with unknown result %d", e.Result)
		}
		for j := 0; j < i; j++ {
			if at(j).Op == e.Op {
				return fmt.Sprintf("op-log holds %s twice", e.Op)
			}
		}
	}
	return ""
}

// runInvariant returns why a run record breaks a structural invariant, or "".
func runInvariant(r *coord.RunRecord) string {
	switch {
	case r.Status > coord.RunCancelled:
		return fmt.Sprintf("unknown run status %d", r.Status)
	case r.Config.Semantics > coord.SemanticsDispatched:
		return fmt.Sprintf("unknown cursor semantics %d", r.Config.Semantics)
	case r.Config.LeaseDuration == 0:
		return "lease duration is zero"
	case r.CompletedAt.Set != runTerminal(r.Status):
		return fmt.Sprintf("completion time present=%t with status %s", r.CompletedAt.Set, r.Status)
	case r.CompletedAt.Set && r.CompletedAt.Val < r.CreatedAt:
		return "completed before it was created"
	case r.Status == coord.RunInitializing && len(r.RootShards) != 0:
		return "initializing run has root shards"
	case (r.Status == coord.RunActive || r.Status == coord.RunDone || r.Status == coord.RunFailed) && len(r.RootShards) == 0:
		return fmt.Sprintf("%s run has no root shards", r.Status)
	case r.OpLog.Len() > specRunOpLogCap:
		return fmt.Sprintf("op-log holds %d entries, more than %d", r.OpLog.Len(), specRunOpLogCap)
	}
	for i, id := range r.RootShards {
		if derived(id) {
			return fmt.Sprintf("root shard %s is a derived id", id)
		}
		if slices.Contains(r.RootShards[:i], id) {
			return fmt.Sprintf("root shard %s listed twice", id)
		}
	}
	return opLogInvariant(r.OpLog.Len(), r.OpLog.At, false)
}

// piece is one key range [start, end) of a tiling.
type piece struct{ start, end []byte }

// tiles reports whether pieces, sorted by start, exactly partition
// [start, end): no gap, no overlap, none empty, nothing outside. It says
// what is wrong, or "".
func tiles(start, end []byte, pieces []piece) string {
	if len(pieces) == 0 || !bytes.Equal(pieces[0].start, start) {
		return "the pieces do not start at the range's start"
	}
	for i, p := range pieces {
		if !nonEmpty(p.start, p.end) {
			return fmt.Sprintf("piece [%q, %q) is empty", p.start, p.end)
		}
		if i+1 == len(pieces) {
			break
		}
		next := pieces[i+1].start
		switch {
		case len(p.end) == 0 || bytes.Compare(p.end, next) > 0:
			return fmt.Sprintf("pieces overlap at %q", next)
		case bytes.Compare(p.end, next) < 0:
			return fmt.Sprintf("gap between %q and %q", p.end, next)
		}
	}
	if last := pieces[len(pieces)-1].end; !bytes.Equal(last, end) {
		return fmt.Sprintf("the pieces end at %q, the range at %q", last, end)
	}
	return ""
}

// tilingWalk collects the unsplit shards of a root's tree, depth first in
// spawned order, each shard once.
type tilingWalk struct {
	ix     stateIndex
	seen   []coord.ShardID // the shards visited (a tree holds a handful)
	leaves []piece
}

func (w *tilingWalk) walk(r *coord.ShardRecord) {
	if slices.Contains(w.seen, r.Shard) {
		return
	}
	w.seen = append(w.seen, r.Shard)
	if r.Status != coord.ShardSplit {
		w.leaves = append(w.leaves, piece{r.Spec.Start, r.Spec.End})
	}
	for _, id := range r.Spawned {
		if c, ok := w.ix.shard(r.Tenant, r.Run, id); ok {
			w.walk(c)
		}
	}
}

// checkTiling checks that the unsplit shards of root's tree tile one
// contiguous range starting at the root's start, without overlap.
func checkTiling(ix stateIndex, root *coord.ShardRecord) *property.Violation {
	w := ix.tiling
	w.ix, w.seen, w.leaves = ix, w.seen[:0], w.leaves[:0]
	w.walk(root)
	leaves := w.leaves
	slices.SortStableFunc(leaves, func(a, b piece) int { return bytes.Compare(a.start, b.start) })
	if len(leaves) == 0 || !bytes.Equal(leaves[0].start, root.Spec.Start) {
		return onShard(root, property.CSplitCoverage, " (a root): its unsplit shards do not start at its start")
	}
	// The leaves must be contiguous; where they end is the residual
	// chain's business, which shrinks the root's own range.
	last := leaves[len(leaves)-1].end
	if why := tiles(root.Spec.Start, last, leaves); why != "" {
		return onShard(root, property.CSplitCoverage, " (a root): %s", why)
	}
	return nil
}

// CheckStep checks next as the successor of prev (next.At >= prev.At):
// CheckState(next), plus
//
//   - no record disappears, and records keep their identity;
//   - C.TerminalIrreversibility: a Done or Split record never changes at
//     all (status, cursor, fence, op-log: the whole record), a Parked one
//     only by becoming Active;
//   - C.FenceMonotonicity: fences never decrease, an unpark raises the
//     fence, and so does every grant of a lease to a new holder;
//   - C.MutualExclusion: a lease live at next.At is never replaced by a
//     new grant (another worker's, or its own holder's at a new fence:
//     seed 004 leases only an unleased shard or one whose lease expired);
//   - C.CursorMonotonicity: a cursor never moves back or returns to none;
//   - C.SplitCoverage: a split that happened in the step exactly
//     partitions the range it split;
//   - C.Idempotency: an op-log entry never changes while it is held;
//   - C.RunTerminalIrreversibility: terminal runs never change status, and
//     no shard record of a run that had ended changes (none returns to
//     Active, none is leased, none takes progress);
//   - C.RecordInvariants: a shard keeps its start, never grows, and only
//     appends to its spawned list; a run keeps its configuration and
//     manifest and takes only its lifecycle's transitions.
func CheckStep(prev, next *coord.Snapshot) *property.Violation {
	return CheckChangedStep(prev, prev, next)
}

// CheckChangedStep is CheckStep for a step known to change only the
// records of changed (a part of prev: the records the step wrote, as they
// were before it). Only those are judged as steps, but every lookup (the
// run of a changed shard) is made in the whole of prev: a rule that looked
// only at the changed records could not see that an untouched run had
// ended before one of its shards changed.
func CheckChangedStep(prev, changed, next *coord.Snapshot) *property.Violation {
	return checkChangedStep(prev, changed, next, nil, indexState(next))
}

// checkChangedStep is CheckChangedStep judging next as a state only on
// the runs in only (nil: every run; see checkRunsState).
// ix is the index of next, built once for the state and the step checks.
func checkChangedStep(prev, changed, next *coord.Snapshot, only map[runRef]bool, ix stateIndex) *property.Violation {
	if v := checkRunsState(next, ix, only); v != nil {
		return v
	}
	for i := range changed.Shards {
		p := &changed.Shards[i]
		n, ok := ix.shards[ShardRef{p.Tenant, p.Key()}]
		if !ok {
			return onShard(p, property.CRecordInvariants, " disappeared")
		}
		if v := checkShardStep(ix, p, n, next.At); v != nil {
			return v
		}
		if v := checkEndedRunShard(prev, p, n); v != nil {
			return v
		}
	}
	for i := range changed.Runs {
		p := &changed.Runs[i]
		n, ok := ix.runs[runRef{p.Tenant, p.Run}]
		if !ok {
			return property.Violated(property.CRecordInvariants, "run %s disappeared", p.Run)
		}
		if runTerminal(p.Status) && n.Status != p.Status {
			return property.Violated(property.CRunTerminalIrreversibility, "run %s went from %s to %s", p.Run, p.Status, n.Status)
		}
		if why := runSuccession(p, n); why != "" {
			return property.Violated(property.CRecordInvariants, "run %s: %s", p.Run, why)
		}
		if why := opLogKept(p.OpLog.Len(), p.OpLog.At, n.OpLog.Len(), n.OpLog.At, false); why != "" {
			return property.Violated(property.CIdempotency, "run %s: %s", p.Run, why)
		}
	}
	return nil
}

// checkEndedRunShard is the shard clause of C.RunTerminalIrreversibility:
// a shard of a run that had ended (in prev) does not change.
func checkEndedRunShard(prev *coord.Snapshot, p, n *coord.ShardRecord) *property.Violation {
	run := findRun(prev, p.Tenant, p.Run)
	if run == nil || !runTerminal(run.Status) || sameShard(p, n) {
		return nil
	}
	if p.Status != coord.ShardActive && n.Status == coord.ShardActive {
		return onShard(p, property.CRunTerminalIrreversibility, " returned to Active after its run ended %s", run.Status)
	}
	return onShard(p, property.CRunTerminalIrreversibility, " changed after its run ended %s (status %s, fence %d -> %s, fence %d)",
		run.Status, p.Status, p.Fence, n.Status, n.Fence)
}

// findRun returns s's record of run, or nil.
func findRun(s *coord.Snapshot, t coord.TenantID, run coord.RunID) *coord.RunRecord {
	for i := range s.Runs {
		if s.Runs[i].Tenant == t && s.Runs[i].Run == run {
			return &s.Runs[i]
		}
	}
	return nil
}

func checkShardStep(ix stateIndex, p, n *coord.ShardRecord, at coord.LogicalTime) *property.Violation {
	switch {
	case shardTerminal(p.Status) && p.Status == n.Status && !sameShard(p, n):
		return onShard(p, property.CTerminalIrreversibility, " is %s and its record changed (fence %d -> %d, %d -> %d op-log entries)",
			p.Status, p.Fence, n.Fence, p.OpLog.Len(), n.OpLog.Len())
	case p.Status == n.Status, p.Status == coord.ShardActive:
	case p.Status == coord.ShardParked && n.Status == coord.ShardActive:
		if n.Fence <= p.Fence {
			return onShard(p, property.CFenceMonotonicity, " unparked without a fence bump")
		}
	default:
		return onShard(p, property.CTerminalIrreversibility, " went from %s to %s", p.Status, n.Status)
	}
	if n.Fence < p.Fence {
		return onShard(p, property.CFenceMonotonicity, " fence went from %d to %d", p.Fence, n.Fence)
	}
	if len(p.Cursor.LastKey) > 0 && (len(n.Cursor.LastKey) == 0 || bytes.Compare(n.Cursor.LastKey, p.Cursor.LastKey) < 0) {
		return onShard(p, property.CCursorMonotonicity, " cursor moved backwards")
	}
	if v := checkLeaseHandover(p, n, at); v != nil {
		return v
	}
	if why := opLogKept(p.OpLog.Len(), p.OpLog.At, n.OpLog.Len(), n.OpLog.At, supersedes(p, n)); why != "" {
		return onShard(p, property.CIdempotency, ": %s", why)
	}
	if why := shardSuccession(p, n); why != "" {
		return onShard(p, property.CRecordInvariants, ": %s", why)
	}
	return checkSplitStep(ix, p, n)
}

// shardSuccession returns why n cannot follow p as the same shard's record
// (what the other step rules leave to C.RecordInvariants), or "".
func shardSuccession(p, n *coord.ShardRecord) string {
	switch {
	case p.Parent != n.Parent:
		return "parent changed"
	case p.Semantics != n.Semantics:
		return "cursor semantics changed"
	case len(n.Spawned) < len(p.Spawned) || !slices.Equal(p.Spawned, n.Spawned[:len(p.Spawned)]):
		return "spawned list was rewritten"
	case !bytes.Equal(p.Spec.Start, n.Spec.Start):
		return "range start changed"
	case len(p.Spec.End) > 0 && (len(n.Spec.End) == 0 || bytes.Compare(n.Spec.End, p.Spec.End) > 0):
		return "range grew"
	}
	return ""
}

// runSuccession returns why n cannot follow p as the same run's record, or "".
func runSuccession(p, n *coord.RunRecord) string {
	legal := p.Status == n.Status ||
		p.Status == coord.RunInitializing && (n.Status == coord.RunActive || n.Status == coord.RunCancelled) ||
		p.Status == coord.RunActive && runTerminal(n.Status)
	switch {
	case p.Config != n.Config || p.CreatedAt != n.CreatedAt:
		return "configuration or creation time changed"
	case !legal:
		return fmt.Sprintf("illegal transition %s -> %s", p.Status, n.Status)
	case p.Status != coord.RunInitializing && !slices.Equal(p.RootShards, n.RootShards):
		return "root shards changed after registration"
	}
	return ""
}

// checkLeaseHandover checks a change of lease between two states observed
// at time at (the time of the later one).
func checkLeaseHandover(p, n *coord.ShardRecord, at coord.LogicalTime) *property.Violation {
	if !n.Lease.Set || n.Lease == p.Lease {
		return nil
	}
	prevLive := p.Lease.Set && live(p.Lease.Val.Deadline, at)
	newHolder := !prevLive || p.Lease.Val.Owner != n.Lease.Val.Owner
	// A renewal keeps the holder and the fence; anything else that sets a
	// lease is a new grant, which needs the old lease to have ended. Its
	// own holder is no exception: a second grant inside one lease window
	// would raise the fence under the first grant's feet.
	regranted := p.Lease.Val.Owner != n.Lease.Val.Owner || n.Fence != p.Fence
	if prevLive && regranted && live(n.Lease.Val.Deadline, at) {
		return onShard(p, property.CMutualExclusion, " leased to %s at fence %d at %d while %s's lease of fence %d ran until %d",
			n.Lease.Val.Owner, n.Fence, at, p.Lease.Val.Owner, p.Fence, p.Lease.Val.Deadline)
	}
	if newHolder && n.Fence <= p.Fence {
		return onShard(p, property.CFenceMonotonicity, " leased to %s without raising fence %d", n.Lease.Val.Owner, p.Fence)
	}
	return nil
}

// checkSplitStep checks the shards p spawned in the step.
func checkSplitStep(ix stateIndex, p, n *coord.ShardRecord) *property.Violation {
	added := n.Spawned[len(p.Spawned):] // shardSuccession checked the prefix
	var pieces []piece
	for _, id := range added {
		c, ok := ix.shard(n.Tenant, n.Run, id)
		if !ok {
			return onShard(p, property.CSplitAtomicity, " spawned %s, which does not exist", id)
		}
		pieces = append(pieces, piece{c.Spec.Start, c.Spec.End})
	}
	sameRange := bytes.Equal(p.Spec.Start, n.Spec.Start) && bytes.Equal(p.Spec.End, n.Spec.End)
	switch {
	case p.Status == coord.ShardActive && n.Status == coord.ShardSplit:
		slices.SortStableFunc(pieces, func(a, b piece) int { return bytes.Compare(a.start, b.start) })
		if len(pieces) < 2 {
			return onShard(p, property.CSplitCoverage, " split into %d pieces", len(pieces))
		}
		if why := tiles(p.Spec.Start, p.Spec.End, pieces); why != "" {
			return onShard(p, property.CSplitCoverage, " split_replace: %s", why)
		}
	case !sameRange:
		if len(pieces) != 1 {
			return onShard(p, property.CSplitCoverage, " shrank while spawning %d shards", len(pieces))
		}
		if why := tiles(p.Spec.Start, p.Spec.End, []piece{{n.Spec.Start, n.Spec.End}, pieces[0]}); why != "" {
			return onShard(p, property.CSplitCoverage, " split_residual: %s", why)
		}
	case len(pieces) > 0:
		return onShard(p, property.CSplitCoverage, " spawned shards without splitting")
	}
	return nil
}

// supersedes reports whether the step from p to n ends the shard (seed
// 004's terminal operations), which marks its logged checkpoints
// superseded.
func supersedes(p, n *coord.ShardRecord) bool {
	return p.Status == coord.ShardActive && shardTerminal(n.Status)
}

// opLogKept reports an op id held by both logs with different entries:
// the same op id was executed again. The one change allowed is a logged
// checkpoint turning from completed to superseded when the step ends the
// shard (ending is true).
func opLogKept(np int, prev func(int) coord.OpLogEntry, nn int, next func(int) coord.OpLogEntry, ending bool) string {
	for i := 0; i < nn; i++ {
		n := next(i)
		for j := 0; j < np; j++ {
			p := prev(j)
			if p.Op != n.Op || p == n {
				continue
			}
			if q := p; ending && q.Kind == coord.OpKindCheckpoint && q.Result == coord.OpCompleted && n.Result == coord.OpSuperseded {
				if q.Result = n.Result; q == n {
					continue
				}
			}
			return fmt.Sprintf("op %s re-executed (payload %x, then %x; result %s, then %s)", n.Op, p.PayloadHash, n.PayloadHash, p.Result, n.Result)
		}
	}
	return ""
}

// CheckTenantStep checks C.TenantIsolation for one request scoped to
// caller: no run, shard or claim record of another tenant changed, came
// or went. (Owner bindings are left out: etcd deletes them on lease
// expiry, whoever asks.)
func CheckTenantStep(prev, next *coord.Snapshot, caller coord.TenantID) *property.Violation {
	foreignRuns := func(s *coord.Snapshot) []*coord.RunRecord {
		var out []*coord.RunRecord
		for i := range s.Runs {
			if s.Runs[i].Tenant != caller {
				out = append(out, &s.Runs[i])
			}
		}
		return out
	}
	foreignShards := func(s *coord.Snapshot) []*coord.ShardRecord {
		var out []*coord.ShardRecord
		for i := range s.Shards {
			if s.Shards[i].Tenant != caller {
				out = append(out, &s.Shards[i])
			}
		}
		return out
	}
	foreignClaims := func(s *coord.Snapshot) []coord.TenantClaim {
		var out []coord.TenantClaim
		for _, c := range s.Claims {
			if c.Tenant != caller {
				out = append(out, c)
			}
		}
		return out
	}
	if !slices.EqualFunc(foreignRuns(prev), foreignRuns(next), sameRun) ||
		!slices.EqualFunc(foreignShards(prev), foreignShards(next), sameShard) ||
		!slices.Equal(foreignClaims(prev), foreignClaims(next)) {
		return property.Violated(property.CTenantIsolation, "a request of tenant %.8s… changed another tenant's records", caller)
	}
	return nil
}

// sameShard compares two shard records field by field (the op-log by its
// entries, not its layout).
func sameShard(a, b *coord.ShardRecord) bool {
	return a.Tenant == b.Tenant && a.Run == b.Run && a.Shard == b.Shard &&
		bytes.Equal(a.Spec.Start, b.Spec.Start) && bytes.Equal(a.Spec.End, b.Spec.End) && bytes.Equal(a.Spec.Metadata, b.Spec.Metadata) &&
		a.Status == b.Status && a.ParkReason == b.ParkReason && a.Lease == b.Lease && a.Fence == b.Fence &&
		bytes.Equal(a.Cursor.LastKey, b.Cursor.LastKey) && bytes.Equal(a.Cursor.Token, b.Cursor.Token) &&
		a.Semantics == b.Semantics && a.Parent == b.Parent && slices.Equal(a.Spawned, b.Spawned) &&
		sameLog(a.OpLog.Len(), a.OpLog.At, b.OpLog.Len(), b.OpLog.At)
}

// sameRun compares two run records field by field.
func sameRun(a, b *coord.RunRecord) bool {
	return a.Tenant == b.Tenant && a.Run == b.Run && a.Config == b.Config && a.Status == b.Status &&
		a.CreatedAt == b.CreatedAt && a.CompletedAt == b.CompletedAt && slices.Equal(a.RootShards, b.RootShards) &&
		sameLog(a.OpLog.Len(), a.OpLog.At, b.OpLog.Len(), b.OpLog.At)
}

func sameLog(na int, a func(int) coord.OpLogEntry, nb int, b func(int) coord.OpLogEntry) bool {
	if na != nb {
		return false
	}
	for i := 0; i < na; i++ {
		if a(i) != b(i) {
			return false
		}
	}
	return true
}

// CheckAcceptedLease checks C.ZombieRejection for a lease-gated operation
// that executed (not a replay) between prev and the next state: the lease
// must carry the fence the shard had before.
func CheckAcceptedLease(prev *coord.Snapshot, l coord.Lease) *property.Violation {
	var rec *coord.ShardRecord
	for i := range prev.Shards {
		if r := &prev.Shards[i]; r.Tenant == l.Tenant && r.Run == l.Run && r.Shard == l.Shard {
			rec = r
			break
		}
	}
	k := coord.ShardKey{Run: l.Run, Shard: l.Shard}
	switch {
	case rec == nil:
		return property.Violated(property.CZombieRejection, "%s accepted a lease on a shard that did not exist",
			shardName(l.Tenant, k)).About(property.SubjectShard, shardSubject(k))
	case rec.Fence != l.Fence:
		return property.Violated(property.CZombieRejection, "%s accepted a lease of fence %d while the shard was at %d",
			shardName(l.Tenant, k), l.Fence, rec.Fence).About(property.SubjectShard, shardSubject(k))
	}
	return nil
}
