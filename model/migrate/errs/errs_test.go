package errs

import (
	"fmt"
	"testing"
)

// Every error is exactly one of: ambiguous, or retryable (certainly not
// applied), or neither (a protocol error); wrapping keeps the class.
func TestClasses(t *testing.T) {
	ambiguous := []error{ErrTimeout, ErrLeaderChanged}
	retryable := []error{ErrWrongGroup, ErrWriteFenced, ErrBelowFloor, ErrNotLeader, ErrNoLeader, ErrNotReady, ErrBusy,
		ErrLocked, ErrRouteMoved, ErrRouteCutoverPending, ErrRouteOwnershipUnknown, ErrViewStale}
	neither := []error{ErrImportGap, ErrForeignRow, ErrStaleGuard, ErrWriteTooOld, ErrCompacted, ErrTxnConflict, ErrTxnAborted,
		ErrTxnNotFound, ErrTxnCommitted, ErrJobAborted}
	for _, e := range ambiguous {
		w := fmt.Errorf("call: %w", e)
		if !Ambiguous(w) || Retryable(w) {
			t.Errorf("%v: ambiguous=%v retryable=%v", e, Ambiguous(w), Retryable(w))
		}
	}
	for _, e := range retryable {
		if Ambiguous(e) || !Retryable(fmt.Errorf("x: %w", e)) {
			t.Errorf("%v should be retryable only", e)
		}
	}
	for _, e := range neither {
		if Ambiguous(e) || Retryable(e) {
			t.Errorf("%v should be neither", e)
		}
	}
	if !Routing(ErrWriteFenced) || !Routing(ErrRouteMoved) || !Routing(ErrRouteCutoverPending) || Routing(ErrNotLeader) || Routing(ErrRouteOwnershipUnknown) {
		t.Error("routing errors")
	}
}
