package coord

import (
	"bytes"

	"shardsim/model/bugs"
)

// SplitReplacePlan replaces a shard by children that exactly partition its
// range, listed in key order.
type SplitReplacePlan struct {
	Children []ShardSpec
}

// SplitResidualPlan shrinks a shard to Parent, keeping the lower part of
// its range (and its start), and hands the upper part to a new Residual
// shard.
type SplitResidualPlan struct {
	Parent   ShardSpec
	Residual ShardSpec
}

// SplitViolation is why a split plan was refused.
type SplitViolation uint8

const (
	SplitOK              SplitViolation = iota // the plan is valid
	SplitTooFewChildren                        // split_replace needs at least 2 children
	SplitTooManyChildren                       // more than MaxSplitChildren
	SplitEmptyRange                            // a piece has an empty range
	SplitGap                                   // the pieces leave keys uncovered
	SplitOverlap                               // two pieces share keys
	SplitOutOfRange                            // a piece covers keys outside the old range
	SplitStartMoved                            // split_residual's parent must keep its start
	SplitCursorOutside                         // the parent's cursor lies outside its shrunk range
)

// String describes the violation without revealing any key.
func (v SplitViolation) String() string {
	switch v {
	case SplitOK:
		return "ok"
	case SplitTooFewChildren:
		return "fewer than 2 children"
	case SplitTooManyChildren:
		return "more children than allowed"
	case SplitEmptyRange:
		return "a piece has an empty key range"
	case SplitGap:
		return "pieces leave a gap in the range"
	case SplitOverlap:
		return "pieces overlap"
	case SplitOutOfRange:
		return "a piece extends outside the range"
	case SplitStartMoved:
		return "the shrunk parent must keep its start"
	case SplitCursorOutside:
		return "the parent's cursor lies outside its shrunk range"
	}
	return "split violation(?)"
}

// compareEnd orders range ends, where an empty end is +infinity.
func compareEnd(a, b []byte) int {
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0:
		return 1
	case len(b) == 0:
		return -1
	}
	return bytes.Compare(a, b)
}

// compareEndStart orders the end of one piece against the start of the
// next: negative is a gap, positive an overlap.
func compareEndStart(end, start []byte) int {
	if len(end) == 0 {
		return 1 // an unbounded piece overlaps anything after it
	}
	return bytes.Compare(end, start)
}

// coverage checks that pieces, in order, partition old. With allowGaps
// (bug coord.split-gap) it still refuses overlaps and pieces outside old,
// but lets keys go uncovered.
func coverage(old ShardSpec, pieces []ShardSpec, allowGaps bool) SplitViolation {
	for _, p := range pieces {
		if !p.WellFormed() {
			return SplitEmptyRange
		}
	}
	switch c := bytes.Compare(pieces[0].Start, old.Start); {
	case c < 0:
		return SplitOutOfRange
	case c > 0 && !allowGaps:
		return SplitGap
	}
	for i := 0; i+1 < len(pieces); i++ {
		switch c := compareEndStart(pieces[i].End, pieces[i+1].Start); {
		case c > 0:
			return SplitOverlap
		case c < 0 && !allowGaps:
			return SplitGap
		}
	}
	switch c := compareEnd(pieces[len(pieces)-1].End, old.End); {
	case c > 0:
		return SplitOutOfRange
	case c < 0 && !allowGaps:
		return SplitGap
	}
	return SplitOK
}

// validateSplitReplace checks a split_replace plan against the parent's
// range: between 2 and MaxSplitChildren children, each non-empty, exactly
// partitioning the parent in key order. Bug coord.split-gap lets gaps
// through.
func validateSplitReplace(parent ShardSpec, p SplitReplacePlan, b bugs.Set) SplitViolation {
	switch {
	case len(p.Children) < 2:
		return SplitTooFewChildren
	case len(p.Children) > MaxSplitChildren:
		return SplitTooManyChildren
	}
	return coverage(parent, p.Children, b.Has(bugs.CoordSplitGap))
}

// validateSplitResidual checks a split_residual plan against the parent's
// current range and cursor: the shrunk parent keeps its start, parent and
// residual (in that order) exactly partition the old range with neither
// empty, and the parent's cursor stays inside the shrunk range. Bug
// coord.split-gap lets a gap between or after the two through.
func validateSplitResidual(old ShardSpec, cursor Cursor, p SplitResidualPlan, b bugs.Set) SplitViolation {
	if !bytes.Equal(p.Parent.Start, old.Start) {
		return SplitStartMoved
	}
	if v := coverage(old, []ShardSpec{p.Parent, p.Residual}, b.Has(bugs.CoordSplitGap)); v != SplitOK {
		return v
	}
	if cursor.HasKey() && !p.Parent.Contains(cursor.LastKey) {
		return SplitCursorOutside
	}
	return SplitOK
}

// spawnFits reports whether a shard that has spawned spawned shards may
// spawn adding more.
func spawnFits(spawned, adding int) bool { return spawned+adding <= maxSpawnedPerShard }
