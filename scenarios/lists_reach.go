package scenarios

import (
	"shardsim/model/listdelta"
	"shardsim/reach"
)

// listsReach are the paths of the delta and claim design a lists sweep
// must reach: each is where one of the design's hard cases lives, so a
// checker only guards it if some run goes there. (A pop skipping a claimed
// position is not among them: with the design as fixed, a claim inside
// [Head, Tail) only survives under the push-keeps-stale-claim variant.)
var listsReach = []reach.Point{
	{Name: "compaction.folded", Doc: "a compaction folded deltas into the base metadata"},
	{Name: "compaction.collected", Doc: "a compaction deleted popped item and claim rows"},
	{Name: "compaction.conflict", Doc: "a compaction lost a race with a command and was retried"},
	{Name: "compaction.tombstone", Doc: "a list emptied into a Len = 0 base row (seed 001 round 4)"},
	{Name: "resolve.truncated", Doc: "a metadata resolution met MaxDeltaScanLimit deltas"},
	{Name: "command.truncated", Doc: "a command failed with the truncation error"},
	{Name: "pop.claim_conflict", Doc: "two pops contended on one claim row"},
	{Name: "txn.conflict", Doc: "a collection transaction was refused on a conflict and retried"},
	{Name: "exec.committed", Doc: "a MULTI/EXEC committed"},
	{Name: "command.ambiguous", Doc: "a list command's outcome was lost"},
	{Name: "counted.committed", Doc: "a hash, set or sorted-set command committed"},
}

func init() { reach.Declare("lists", listsReach...) }

// reachCounts records the points a lists run reached from its counters.
func (p *listsPart) reachCounts(st listdelta.Stats) {
	for _, r := range []struct {
		name string
		n    int64
	}{
		{"compaction.folded", int64(st.DeltasFolded)}, {"compaction.collected", int64(st.RowsCollected)},
		{"compaction.conflict", int64(st.CompactConflict)}, {"compaction.tombstone", p.counts["tombstones_written"]},
		{"resolve.truncated", int64(st.Truncated)}, {"command.truncated", p.counts["list_ops_truncated"] + p.counts["counted_ops_truncated"]},
		{"pop.claim_conflict", int64(st.ClaimConflicts)},
		{"txn.conflict", int64(st.Conflicts)}, {"exec.committed", int64(st.Execs)},
		{"command.ambiguous", p.counts["list_ops_unknown"]}, {"counted.committed", p.counts["counted_ops_done"]},
	} {
		p.m.w.ReachN(r.name, r.n)
	}
}
