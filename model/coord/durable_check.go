package coord

import (
	"bytes"
	"fmt"
	"slices"

	"shardsim/property"
)

// Property checkers over durable state. CheckSnapshot checks what must
// hold in every state; CheckDurableStep checks what must hold between two
// consecutive observations of one coordinator; CheckTenantStep and
// CheckAcceptedLease check one request against the states around it. They
// name the violated property (PROPERTIES.md) and never panic on bad
// input, so they can judge states written by a buggy backend.

// violated reports a broken property as the one violation type of every
// checker.
func violated(p property.Name, format string, args ...any) *property.Violation {
	return property.Violated(p, format, args...)
}

// shardName names a shard in a violation. It formats, so the checkers
// call it only once they report one: building names for every shard of
// every observed state was a tenth of a coordination run's time.
func shardName(t TenantID, k ShardKey) string {
	return fmt.Sprintf("%.8s…/%s/%s", t, k.Run, k.Shard)
}

// nameOf is shardName of r.
func nameOf(r *ShardRecord) string { return shardName(r.Tenant, r.Key()) }

// index builds lookups over a snapshot (maps for lookup only; every loop
// runs over the ordered slices).
type index struct {
	shards map[tenantShardKey]*ShardRecord
	runs   map[tenantRunKey]*RunRecord
}

func indexOf(s *Snapshot) index {
	ix := index{shards: make(map[tenantShardKey]*ShardRecord, len(s.Shards)), runs: make(map[tenantRunKey]*RunRecord, len(s.Runs))}
	for i := range s.Shards {
		r := &s.Shards[i]
		ix.shards[tenantShardKey{r.Tenant, r.Key()}] = r
	}
	for i := range s.Runs {
		r := &s.Runs[i]
		ix.runs[tenantRunKey{r.Tenant, r.Run}] = r
	}
	return ix
}

func (ix index) shard(t TenantID, run RunID, id ShardID) (*ShardRecord, bool) {
	r, ok := ix.shards[tenantShardKey{t, ShardKey{Run: run, Shard: id}}]
	return r, ok
}

// CheckSnapshot checks the properties of a single state:
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
func CheckSnapshot(s *Snapshot) error {
	ix := indexOf(s)
	for i := range s.Runs {
		r := &s.Runs[i]
		if err := r.AssertInvariants(); err != nil {
			return violated(property.CRecordInvariants, "run %s: %v", r.Run, err)
		}
	}
	for i := range s.Shards {
		if err := checkShardAlone(ix, &s.Shards[i]); err != nil {
			return err
		}
	}
	for i := range s.Shards {
		if r := &s.Shards[i]; !r.Shard.IsDerived() {
			if err := checkTiling(ix, r); err != nil {
				return err
			}
		}
	}
	for _, b := range s.Bindings {
		r, ok := ix.shard(b.Tenant, b.Shard.Run, b.Shard.Shard)
		if !ok || !bindingMatches(b.Binding, r) {
			return violated(property.CMutualExclusion, "%s: owner binding %+v disagrees with the record's lease", shardName(b.Tenant, b.Shard), b.Binding)
		}
	}
	return nil
}

func checkShardAlone(ix index, r *ShardRecord) error {
	if r.Status.Terminal() && r.Lease.Set {
		return violated(property.CTerminalUnleased, "%s is %s and leased to %s", nameOf(r), r.Status, r.Lease.Val.Owner)
	}
	if err := r.AssertInvariants(); err != nil {
		return violated(property.CRecordInvariants, "%s: %v", nameOf(r), err)
	}
	run, ok := ix.runs[tenantRunKey{r.Tenant, r.Run}]
	if !ok {
		return violated(property.CRecordInvariants, "%s belongs to no run", nameOf(r))
	}
	if !r.Shard.IsDerived() && !slices.Contains(run.RootShards, r.Shard) {
		return violated(property.CRecordInvariants, "root %s is not in its run's manifest", nameOf(r))
	}
	if r.Cursor.HasKey() && !r.Spec.Contains(r.Cursor.LastKey) {
		return violated(property.CCursorBounds, "%s: cursor outside [%q, %q)", nameOf(r), r.Spec.Start, r.Spec.End)
	}
	for _, id := range r.Spawned {
		c, ok := ix.shard(r.Tenant, r.Run, id)
		if !ok {
			return violated(property.CSplitAtomicity, "%s spawned %s, which does not exist", nameOf(r), id)
		}
		if c.Parent != Some(r.Shard) {
			return violated(property.CSplitAtomicity, "%s spawned %s, which names another parent", nameOf(r), id)
		}
	}
	if r.Parent.Set {
		p, ok := ix.shard(r.Tenant, r.Run, r.Parent.Val)
		if !ok || !slices.Contains(p.Spawned, r.Shard) {
			return violated(property.CSplitAtomicity, "%s is not in its parent's spawned list", nameOf(r))
		}
	}
	return nil
}

// checkTiling checks that the unsplit shards of root's tree tile one
// contiguous range starting at the root's start.
func checkTiling(ix index, root *ShardRecord) error {
	var leaves []ShardSpec
	seen := map[ShardID]bool{}
	var walk func(r *ShardRecord)
	walk = func(r *ShardRecord) {
		if seen[r.Shard] {
			return
		}
		seen[r.Shard] = true
		if r.Status != ShardSplit {
			leaves = append(leaves, r.Spec)
		}
		for _, id := range r.Spawned {
			if c, ok := ix.shard(r.Tenant, r.Run, id); ok {
				walk(c)
			}
		}
	}
	walk(root)
	slices.SortStableFunc(leaves, func(a, b ShardSpec) int { return bytes.Compare(a.Start, b.Start) })
	if len(leaves) == 0 || !bytes.Equal(leaves[0].Start, root.Spec.Start) {
		return violated(property.CSplitCoverage, "the unsplit shards of root %s do not start at its start", nameOf(root))
	}
	for i := 0; i+1 < len(leaves); i++ {
		switch c := compareEndStart(leaves[i].End, leaves[i+1].Start); {
		case c < 0:
			return violated(property.CSplitCoverage, "root %s: gap between %q and %q", nameOf(root), leaves[i].End, leaves[i+1].Start)
		case c > 0:
			return violated(property.CSplitCoverage, "root %s: shards overlap at %q", nameOf(root), leaves[i+1].Start)
		}
	}
	return nil
}

// CheckDurableStep checks next as the successor of prev (next.At >=
// prev.At): CheckSnapshot(next), plus
//
//   - no record disappears, and records keep their identity;
//   - C.TerminalIrreversibility: Done and Split never change status,
//     Parked only becomes Active;
//   - C.FenceMonotonicity: fences never decrease, an unpark raises the
//     fence, and so does every grant of a lease to a new holder;
//   - C.MutualExclusion: a lease live at next.At is never replaced by
//     another worker's;
//   - C.CursorMonotonicity: a cursor never moves back or returns to none;
//   - C.SplitCoverage: a split that happened in the step exactly
//     partitions the range it split;
//   - C.Idempotency: an op-log entry never changes while it is held;
//   - C.RunTerminalIrreversibility: terminal runs never change status, and
//     no shard of a run that had ended returns to Active.
func CheckDurableStep(prev, next *Snapshot) error {
	if err := CheckSnapshot(next); err != nil {
		return err
	}
	ix := indexOf(next)
	for i := range prev.Shards {
		p := &prev.Shards[i]
		n, ok := ix.shards[tenantShardKey{p.Tenant, p.Key()}]
		if !ok {
			return violated(property.CRecordInvariants, "%s disappeared", nameOf(p))
		}
		if err := checkShardStep(ix, p, n, next.At); err != nil {
			return err
		}
		if p.Status != ShardActive && n.Status == ShardActive {
			if run := findRun(prev, p.Tenant, p.Run); run != nil && run.Status.Terminal() {
				return violated(property.CRunTerminalIrreversibility, "%s returned to Active after its run ended %s", nameOf(p), run.Status)
			}
		}
	}
	for i := range prev.Runs {
		p := &prev.Runs[i]
		n, ok := ix.runs[tenantRunKey{p.Tenant, p.Run}]
		if !ok {
			return violated(property.CRecordInvariants, "run %s disappeared", p.Run)
		}
		if p.Status.Terminal() && n.Status != p.Status {
			return violated(property.CRunTerminalIrreversibility, "run %s went from %s to %s", p.Run, p.Status, n.Status)
		}
		if err := CheckRunSuccession(p, n); err != nil {
			return violated(property.CRecordInvariants, "run %s: %v", p.Run, err)
		}
		if err := checkOpLogKept(p.OpLog.Entries(), n.OpLog.Entries()); err != nil {
			return violated(property.CIdempotency, "run %s: %v", p.Run, err)
		}
	}
	return nil
}

// findRun returns s's record of run, or nil.
func findRun(s *Snapshot, t TenantID, run RunID) *RunRecord {
	for i := range s.Runs {
		if s.Runs[i].Tenant == t && s.Runs[i].Run == run {
			return &s.Runs[i]
		}
	}
	return nil
}

func checkShardStep(ix index, p, n *ShardRecord, at LogicalTime) error {
	switch {
	case p.Status == n.Status, p.Status == ShardActive:
	case p.Status == ShardParked && n.Status == ShardActive:
		if n.Fence <= p.Fence {
			return violated(property.CFenceMonotonicity, "%s unparked without a fence bump", nameOf(p))
		}
	default:
		return violated(property.CTerminalIrreversibility, "%s went from %s to %s", nameOf(p), p.Status, n.Status)
	}
	if n.Fence < p.Fence {
		return violated(property.CFenceMonotonicity, "%s fence went from %d to %d", nameOf(p), p.Fence, n.Fence)
	}
	if p.Cursor.HasKey() && (!n.Cursor.HasKey() || bytes.Compare(n.Cursor.LastKey, p.Cursor.LastKey) < 0) {
		return violated(property.CCursorMonotonicity, "%s cursor moved backwards", nameOf(p))
	}
	if err := checkLeaseHandover(p, n, at); err != nil {
		return err
	}
	if err := checkOpLogKept(p.OpLog.Entries(), n.OpLog.Entries()); err != nil {
		return violated(property.CIdempotency, "%s: %v", nameOf(p), err)
	}
	if err := CheckShardSuccession(p, n); err != nil {
		return violated(property.CRecordInvariants, "%s: %v", nameOf(p), err)
	}
	return checkSplitStep(ix, p, n)
}

// checkLeaseHandover checks a change of lease between two states observed
// at time at (the time of the later one).
func checkLeaseHandover(p, n *ShardRecord, at LogicalTime) error {
	if !n.Lease.Set || n.Lease == p.Lease {
		return nil
	}
	prevLive := p.Lease.Set && p.Lease.Val.Live(at)
	newHolder := !prevLive || p.Lease.Val.Owner != n.Lease.Val.Owner
	if prevLive && p.Lease.Val.Owner != n.Lease.Val.Owner && n.Lease.Val.Live(at) {
		return violated(property.CMutualExclusion, "%s leased to %s at %d while %s's lease ran until %d",
			nameOf(p), n.Lease.Val.Owner, at, p.Lease.Val.Owner, p.Lease.Val.Deadline)
	}
	if newHolder && n.Fence <= p.Fence {
		return violated(property.CFenceMonotonicity, "%s leased to %s without raising fence %d", nameOf(p), n.Lease.Val.Owner, p.Fence)
	}
	return nil
}

// checkSplitStep checks the shards p spawned in the step.
func checkSplitStep(ix index, p, n *ShardRecord) error {
	added := n.Spawned[len(p.Spawned):] // succession checked the prefix
	var pieces []ShardSpec
	for _, id := range added {
		c, ok := ix.shard(n.Tenant, n.Run, id)
		if !ok {
			return violated(property.CSplitAtomicity, "%s spawned %s, which does not exist", nameOf(p), id)
		}
		pieces = append(pieces, c.Spec)
	}
	switch {
	case p.Status == ShardActive && n.Status == ShardSplit:
		slices.SortStableFunc(pieces, func(a, b ShardSpec) int { return bytes.Compare(a.Start, b.Start) })
		if len(pieces) < 2 {
			return violated(property.CSplitCoverage, "%s split into %d pieces", nameOf(p), len(pieces))
		}
		if v := coverage(p.Spec, pieces, false); v != SplitOK {
			return violated(property.CSplitCoverage, "%s split_replace: %s", nameOf(p), v)
		}
	case !n.Spec.SameRange(p.Spec):
		if len(pieces) != 1 {
			return violated(property.CSplitCoverage, "%s shrank while spawning %d shards", nameOf(p), len(pieces))
		}
		if v := coverage(p.Spec, []ShardSpec{n.Spec, pieces[0]}, false); v != SplitOK {
			return violated(property.CSplitCoverage, "%s split_residual: %s", nameOf(p), v)
		}
	case len(pieces) > 0:
		return violated(property.CSplitCoverage, "%s spawned shards without splitting", nameOf(p))
	}
	return nil
}

// checkOpLogKept reports an op id held by both logs with different
// entries: the same op id was executed again.
func checkOpLogKept(prev, next []OpLogEntry) error {
	for _, n := range next {
		for _, p := range prev {
			if p.Op == n.Op && p != n {
				return fmt.Errorf("op %s re-executed (payload %x, then %x)", n.Op, p.PayloadHash, n.PayloadHash)
			}
		}
	}
	return nil
}

// CheckTenantStep checks C.TenantIsolation for one request scoped to
// caller: no run, shard or claim record of another tenant changed. (Owner
// bindings are left out: etcd deletes them on lease expiry, whoever asks.)
func CheckTenantStep(prev, next *Snapshot, caller TenantID) error {
	foreign := func(s *Snapshot) [][]byte {
		var out [][]byte
		for i := range s.Runs {
			if s.Runs[i].Tenant != caller {
				out = append(out, EncodeRunRecord(&s.Runs[i]))
			}
		}
		for i := range s.Shards {
			if s.Shards[i].Tenant != caller {
				out = append(out, EncodeShardRecord(&s.Shards[i]))
			}
		}
		for _, c := range s.Claims {
			if c.Tenant != caller {
				out = append(out, append(append([]byte(nil), c.Tenant[:]...), EncodeClaimRecord(&c.Claim)...))
			}
		}
		return out
	}
	if !slices.EqualFunc(foreign(prev), foreign(next), bytes.Equal) {
		return violated(property.CTenantIsolation, "a request of tenant %.8s… changed another tenant's records", caller)
	}
	return nil
}

// CheckAcceptedLease checks C.ZombieRejection for a lease-gated operation
// that executed (not a replay) between prev and the next state: the lease
// must carry the fence the shard had before.
func CheckAcceptedLease(prev *Snapshot, l Lease) error {
	r, ok := indexOf(prev).shard(l.Tenant, l.Run, l.Shard)
	if !ok {
		return violated(property.CZombieRejection, "%s accepted a lease on a shard that did not exist", shardName(l.Tenant, l.Key()))
	}
	if r.Fence != l.Fence {
		return violated(property.CZombieRejection, "%s accepted a lease of fence %d while the shard was at %d", shardName(l.Tenant, l.Key()), l.Fence, r.Fence)
	}
	return nil
}
