// Package errs holds the errors the migrating store's groups, network and
// coordinators answer with, and how a caller must treat each: retry (the
// request certainly did not take effect), or resolve (it may have).
package errs

import "errors"

// Errors that say the request was not applied; retrying is safe.
var (
	// ErrWrongGroup: the group does not own the key's route in its applied
	// catalog (a stale coordinator, or a route that moved).
	ErrWrongGroup = sentinel("wrong group for route", retryable|routing)
	// ErrWriteFenced: the key's route is WriteFenced by a migration.
	ErrWriteFenced = sentinel("route write-fenced", retryable|routing)
	// ErrBelowFloor: the write's commit timestamp is at or below the
	// route's cutover floor.
	ErrBelowFloor = sentinel("commit ts at or below the route floor", retryable|routing)
	// ErrNotLeader: the node no longer leads the group.
	ErrNotLeader = sentinel("not the group leader", retryable)
	// ErrNoLeader: the group has no leader (an election is running).
	ErrNoLeader = sentinel("group has no leader", retryable)
	// ErrNotReady: the leader has not caught up with its log yet.
	ErrNotReady = sentinel("leader not ready", retryable)
	// ErrImportGap: an import batch skipped a sequence number.
	ErrImportGap = sentinel("import batch out of sequence", 0)
	// ErrForeignRow: an import or export row maps outside the moving range.
	ErrForeignRow = sentinel("row outside the moving range", 0)
	// ErrBusy: the request must wait (reads in flight, ceiling raise).
	ErrBusy = sentinel("busy, retry later", retryable)
	// ErrLocked: a pending transaction lock blocks the read or write.
	ErrLocked = sentinel("key locked by a pending transaction", retryable)
	// ErrRouteMoved: the source knows the route moved to another group.
	ErrRouteMoved = sentinel("route moved", retryable|routing)
	// ErrRouteCutoverPending: a cutover read fence is armed and the
	// request's catalog version is older than the cutover it waits for.
	ErrRouteCutoverPending = sentinel("route cutover pending", retryable|routing)
	// ErrRouteOwnershipUnknown: the node could not establish who owns the
	// route (an ownership query timed out); it fails closed.
	ErrRouteOwnershipUnknown = sentinel("route ownership unknown", retryable)
	// ErrViewStale: the leader's catalog view is older than the group
	// requires; it serves once its watcher catches up.
	ErrViewStale = sentinel("leader catalog view too old", retryable)
)

// Errors that say the request was not applied and retrying it as it is
// cannot help.
var (
	// ErrWriteTooOld: a commit timestamp at or below an existing version,
	// a read already served, or the compaction watermark.
	ErrWriteTooOld = sentinel("commit ts too old", 0)
	// ErrCompacted: a read below the compaction watermark.
	ErrCompacted = sentinel("read ts below the compaction watermark", 0)
	// ErrTxnConflict: a key changed after the transaction's read.
	ErrTxnConflict = sentinel("transaction conflict", 0)
	// ErrTxnAborted: the transaction was rolled back.
	ErrTxnAborted = sentinel("transaction rolled back", 0)
	// ErrTxnNotFound: neither a lock nor a commit record of the transaction.
	ErrTxnNotFound = sentinel("transaction not found", 0)
	// ErrTxnCommitted: a rollback of a committed transaction.
	ErrTxnCommitted = sentinel("transaction already committed", 0)
	// ErrJobAborted: an import for a job abandoned on this group.
	ErrJobAborted = sentinel("migration job abandoned", 0)
	// ErrStaleGuard: a guard operation older than the group's state of it
	// (an arm after the disarm or release it was overtaken by).
	ErrStaleGuard = sentinel("stale migration guard operation", 0)
)

// Errors that leave open whether the request took effect.
var (
	// ErrTimeout: no answer before the caller's deadline.
	ErrTimeout = sentinel("rpc deadline exceeded", ambiguous)
	// ErrLeaderChanged: leadership moved while the request was in flight.
	ErrLeaderChanged = sentinel("leader changed while in flight", ambiguous)
)

// Ambiguous reports whether err leaves open whether the request applied.
func Ambiguous(err error) bool { return is(err, ambiguous) }

// Retryable reports whether err says the request did not apply and may be
// retried (possibly after refreshing the catalog).
func Retryable(err error) bool { return is(err, retryable) }

// Routing reports whether err means the caller's catalog may be stale.
func Routing(err error) bool { return is(err, routing) }

// class is a set of the ways a caller must treat an error.
type class uint8

const (
	retryable class = 1 << iota // certainly not applied: retry
	routing                     // the caller's catalog may be stale
	ambiguous                   // may have applied
)

// classified is an error of this package: it carries its classes, so that
// classifying one (every answer a coordinator or the migrator gets is) is
// a type assertion, not an errors.Is per error of the class.
type classified struct {
	msg   string
	class class
}

func (e *classified) Error() string { return e.msg }

// all lists every error of the package (the classes' members, for is's
// slow path).
var all []*classified

// sentinel returns a new error of classes c.
func sentinel(msg string, c class) error {
	e := &classified{msg: msg, class: c}
	all = append(all, e)
	return e
}

// is reports whether errors.Is(err, e) holds for some error e of this
// package in class c. The errors of this package wrap nothing and have no
// Is method, so along a chain of single wraps the answer is the class of
// the first of them met (errors.Is stops there too); a chain that holds an
// Is method or a multiple wrap is asked through errors.Is, member by member.
func is(err error, c class) bool {
	for e := err; e != nil; {
		switch x := e.(type) {
		case *classified:
			return x.class&c != 0
		case interface{ Is(error) bool }, interface{ Unwrap() []error }:
			return isSlow(err, c)
		case interface{ Unwrap() error }:
			e = x.Unwrap()
		default:
			return false
		}
	}
	return false
}

// isSlow is is by errors.Is against every member of class c.
func isSlow(err error, c class) bool {
	for _, e := range all {
		if e.class&c != 0 && errors.Is(err, e) {
			return true
		}
	}
	return false
}
