package coord

import (
	"shardsim/model/bugs"
	"shardsim/property"
)

// selfCheckFailure is the panic value of a failed commit-time self-check:
// a violation of C.RecordInvariants (the invariants and succession rules
// the self-check asserts), so a world that recovers the panic reports the
// property the assertion guards rather than a bare panic.
func selfCheckFailure(backend, what string, err error) *property.Violation {
	return property.Violated(property.CRecordInvariants, "coord: %s self-check failed on %s: %v", backend, what, err)
}

// selfCheckBlindingBugs are the bugs whose wrong states the reference's
// own commit-time assertions (AssertInvariants and the succession checks)
// would refuse. With one of them on, the reference must store the wrong
// state so that the harness's checkers, not the reference, find it.
var selfCheckBlindingBugs = []string{
	bugs.CoordAcquireTerminal,    // a terminal shard holds a lease
	bugs.CoordCompleteKeepsLease, // a Done shard holds a lease
	bugs.CoordUnparkDone,         // Done -> Active
	bugs.CoordCursorRegression,   // cursor moves backwards
	bugs.CoordRunReopen,          // terminal run -> Done
	bugs.CoordUnparkBumpsFirst,   // a Done or Split record changes
	bugs.CoordParkDropsReason,    // a Parked record without a reason
}

// selfCheckBlinded reports whether b holds a bug that the commit-time
// self-check would otherwise turn into a panic.
func selfCheckBlinded(b bugs.Set) bool {
	for _, n := range selfCheckBlindingBugs {
		if b.Has(n) {
			return true
		}
	}
	return false
}

// shardSelfCheck is the commit-time self-check of a shard record: next's
// invariants and, unless it is new (old nil), its succession from old.
// Backends name the record only when it fails.
func shardSelfCheck(old, next *ShardRecord) error {
	if err := next.AssertInvariants(); err != nil || old == nil {
		return err
	}
	return checkShardSuccession(old, next)
}

// runSelfCheck is shardSelfCheck for a run record.
func runSelfCheck(old, next *RunRecord) error {
	if err := next.AssertInvariants(); err != nil || old == nil {
		return err
	}
	return checkRunSuccession(old, next)
}
