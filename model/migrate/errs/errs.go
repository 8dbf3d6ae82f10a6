// Package errs holds the errors the migrating store's groups, network and
// coordinators answer with, and how a caller must treat each: retry (the
// request certainly did not take effect), or resolve (it may have).
package errs

import "errors"

// Errors that say the request was not applied; retrying is safe.
var (
	// ErrWrongGroup: the group does not own the key's route in its applied
	// catalog (a stale coordinator, or a route that moved).
	ErrWrongGroup = errors.New("wrong group for route")
	// ErrWriteFenced: the key's route is WriteFenced by a migration.
	ErrWriteFenced = errors.New("route write-fenced")
	// ErrBelowFloor: the write's commit timestamp is at or below the
	// route's cutover floor.
	ErrBelowFloor = errors.New("commit ts at or below the route floor")
	// ErrNotLeader: the node no longer leads the group.
	ErrNotLeader = errors.New("not the group leader")
	// ErrNoLeader: the group has no leader (an election is running).
	ErrNoLeader = errors.New("group has no leader")
	// ErrNotReady: the leader has not caught up with its log yet.
	ErrNotReady = errors.New("leader not ready")
	// ErrImportGap: an import batch skipped a sequence number.
	ErrImportGap = errors.New("import batch out of sequence")
	// ErrForeignRow: an import or export row maps outside the moving range.
	ErrForeignRow = errors.New("row outside the moving range")
	// ErrBusy: the request must wait (reads in flight, ceiling raise).
	ErrBusy = errors.New("busy, retry later")
	// ErrLocked: a pending transaction lock blocks the read or write.
	ErrLocked = errors.New("key locked by a pending transaction")
	// ErrRouteMoved: the source knows the route moved to another group.
	ErrRouteMoved = errors.New("route moved")
	// ErrRouteCutoverPending: a cutover read fence is armed and the
	// request's catalog version is older than the cutover it waits for.
	ErrRouteCutoverPending = errors.New("route cutover pending")
	// ErrRouteOwnershipUnknown: the node could not establish who owns the
	// route (an ownership query timed out); it fails closed.
	ErrRouteOwnershipUnknown = errors.New("route ownership unknown")
	// ErrViewStale: the leader's catalog view is older than the group
	// requires; it serves once its watcher catches up.
	ErrViewStale = errors.New("leader catalog view too old")
)

// Errors that say the request was not applied and retrying it as it is
// cannot help.
var (
	// ErrWriteTooOld: a commit timestamp at or below an existing version,
	// a read already served, or the compaction watermark.
	ErrWriteTooOld = errors.New("commit ts too old")
	// ErrCompacted: a read below the compaction watermark.
	ErrCompacted = errors.New("read ts below the compaction watermark")
	// ErrTxnConflict: a key changed after the transaction's read.
	ErrTxnConflict = errors.New("transaction conflict")
	// ErrTxnAborted: the transaction was rolled back.
	ErrTxnAborted = errors.New("transaction rolled back")
	// ErrTxnNotFound: neither a lock nor a commit record of the transaction.
	ErrTxnNotFound = errors.New("transaction not found")
	// ErrTxnCommitted: a rollback of a committed transaction.
	ErrTxnCommitted = errors.New("transaction already committed")
	// ErrJobAborted: an import for a job abandoned on this group.
	ErrJobAborted = errors.New("migration job abandoned")
	// ErrStaleGuard: a guard operation older than the group's state of it
	// (an arm after the disarm or release it was overtaken by).
	ErrStaleGuard = errors.New("stale migration guard operation")
)

// Errors that leave open whether the request took effect.
var (
	// ErrTimeout: no answer before the caller's deadline.
	ErrTimeout = errors.New("rpc deadline exceeded")
	// ErrLeaderChanged: leadership moved while the request was in flight.
	ErrLeaderChanged = errors.New("leader changed while in flight")
)

// Ambiguous reports whether err leaves open whether the request applied.
func Ambiguous(err error) bool {
	return errors.Is(err, ErrTimeout) || errors.Is(err, ErrLeaderChanged)
}

// Retryable reports whether err says the request did not apply and may be
// retried (possibly after refreshing the catalog).
func Retryable(err error) bool {
	for _, e := range []error{ErrWrongGroup, ErrWriteFenced, ErrBelowFloor, ErrNotLeader, ErrNoLeader, ErrNotReady, ErrBusy,
		ErrLocked, ErrRouteMoved, ErrRouteCutoverPending, ErrRouteOwnershipUnknown, ErrViewStale} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Routing reports whether err means the caller's catalog may be stale.
func Routing(err error) bool {
	return errors.Is(err, ErrWrongGroup) || errors.Is(err, ErrWriteFenced) || errors.Is(err, ErrBelowFloor) ||
		errors.Is(err, ErrRouteMoved) || errors.Is(err, ErrRouteCutoverPending)
}
