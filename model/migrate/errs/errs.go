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
	for _, e := range []error{ErrWrongGroup, ErrWriteFenced, ErrBelowFloor, ErrNotLeader, ErrNoLeader, ErrNotReady, ErrBusy} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Routing reports whether err means the caller's catalog may be stale.
func Routing(err error) bool {
	return errors.Is(err, ErrWrongGroup) || errors.Is(err, ErrWriteFenced) || errors.Is(err, ErrBelowFloor)
}
