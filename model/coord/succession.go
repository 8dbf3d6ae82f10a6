package coord

import (
	"bytes"
	"slices"
)

// checkShardSuccession checks that next may follow old as the state of the
// same shard: identity is fixed; status moves only out of Active, or from
// Parked back to Active with a fence bump; the fence never decreases; the
// spawned list only grows at its end; the cursor never moves back or
// returns to no progress; and the range keeps its start and never grows.
// The reference asserts it on every committed change; checkers may use it
// on any two consecutive observations.
func checkShardSuccession(old, next *ShardRecord) error {
	if old.Tenant != next.Tenant || old.Run != next.Run || old.Shard != next.Shard || old.Parent != next.Parent {
		return invariantf("shard identity changed")
	}
	if old.Semantics != next.Semantics {
		return invariantf("cursor semantics changed")
	}
	if err := checkShardStatusStep(old, next); err != nil {
		return err
	}
	if next.Fence < old.Fence {
		return invariantf("fence epoch decreased from %d to %d", old.Fence, next.Fence)
	}
	if len(next.Spawned) < len(old.Spawned) || !slices.Equal(old.Spawned, next.Spawned[:len(old.Spawned)]) {
		return invariantf("spawned list was rewritten")
	}
	if old.Cursor.HasKey() && (!next.Cursor.HasKey() || bytes.Compare(next.Cursor.LastKey, old.Cursor.LastKey) < 0) {
		return invariantf("cursor moved backwards")
	}
	if !bytes.Equal(old.Spec.Start, next.Spec.Start) {
		return invariantf("range start changed")
	}
	if !old.Spec.Unbounded() && (next.Spec.Unbounded() || bytes.Compare(next.Spec.End, old.Spec.End) > 0) {
		return invariantf("range grew")
	}
	return nil
}

func checkShardStatusStep(old, next *ShardRecord) error {
	switch {
	case (old.Status == ShardDone || old.Status == ShardSplit) && !sameRecord(old, next):
		return invariantf("%s record changed", old.Status)
	case old.Status == next.Status, old.Status == ShardActive:
		return nil
	case old.Status == ShardParked && next.Status == ShardActive:
		if next.Fence <= old.Fence {
			return invariantf("unpark without a fence bump")
		}
		return nil
	}
	return invariantf("illegal transition %s -> %s", old.Status, next.Status)
}

// sameRecord reports whether two shard records are equal field by field.
func sameRecord(a, b *ShardRecord) bool {
	return bytes.Equal(EncodeShardRecord(a), EncodeShardRecord(b))
}

// checkRunSuccession checks that next may follow old as the state of the
// same run: identity, configuration and creation time are fixed; status
// follows Initializing -> Active -> {Done, Failed, Cancelled} or
// Initializing -> Cancelled, and terminal states never change; root shards
// are set once, on activation.
func checkRunSuccession(old, next *RunRecord) error {
	if old.Tenant != next.Tenant || old.Run != next.Run || old.Config != next.Config || old.CreatedAt != next.CreatedAt {
		return invariantf("run identity or configuration changed")
	}
	if old.Status != next.Status && !runStepLegal(old.Status, next.Status) {
		return invariantf("illegal run transition %s -> %s", old.Status, next.Status)
	}
	if old.Status != RunInitializing && !slices.Equal(old.RootShards, next.RootShards) {
		return invariantf("root shards changed after registration")
	}
	return nil
}

func runStepLegal(from, to RunStatus) bool {
	switch from {
	case RunInitializing:
		return to == RunActive || to == RunCancelled
	case RunActive:
		return to.Terminal()
	}
	return false
}
