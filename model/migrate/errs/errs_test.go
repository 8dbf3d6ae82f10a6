package errs

import (
	"errors"
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

// The classes as lists of errors, classified by errors.Is, as the package
// did before its errors carried their classes: is must agree with them.
var (
	refAmbiguous = []error{ErrTimeout, ErrLeaderChanged}
	refRetryable = []error{ErrWrongGroup, ErrWriteFenced, ErrBelowFloor, ErrNotLeader, ErrNoLeader, ErrNotReady, ErrBusy,
		ErrLocked, ErrRouteMoved, ErrRouteCutoverPending, ErrRouteOwnershipUnknown, ErrViewStale}
	refRouting = []error{ErrWrongGroup, ErrWriteFenced, ErrBelowFloor, ErrRouteMoved, ErrRouteCutoverPending}
)

func refIs(err error, class []error) bool {
	for _, e := range class {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// isAs is an error whose Is method claims one error of the package.
type isAs struct{ target error }

func (e isAs) Error() string        { return "claims " + e.target.Error() }
func (e isAs) Is(target error) bool { return target == e.target }

// TestClassesAgreeWithErrorsIs checks Ambiguous, Retryable and Routing
// against errors.Is over the class lists, for every error of the package
// bare, wrapped once and twice, joined with another, behind an Is method,
// and for foreign errors.
func TestClassesAgreeWithErrorsIs(t *testing.T) {
	foreign := []error{nil, errors.New("wrong group for route"), fmt.Errorf("plain"), isAs{errors.New("x")}}
	cases := append([]error(nil), foreign...)
	for _, e := range all {
		cases = append(cases, e, fmt.Errorf("a: %w", e), fmt.Errorf("b: %w", fmt.Errorf("a: %w", e)),
			errors.Join(errors.New("other"), e), errors.Join(ErrWriteTooOld, e), fmt.Errorf("c: %w", errors.Join(e)),
			isAs{e}, fmt.Errorf("d: %w", isAs{e}), fmt.Errorf("two: %w %w", ErrTxnConflict, e))
	}
	if len(all) != 24 {
		t.Fatalf("%d errors registered, want 24", len(all))
	}
	for _, err := range cases {
		if got, want := Ambiguous(err), refIs(err, refAmbiguous); got != want {
			t.Errorf("Ambiguous(%v) = %v, errors.Is says %v", err, got, want)
		}
		if got, want := Retryable(err), refIs(err, refRetryable); got != want {
			t.Errorf("Retryable(%v) = %v, errors.Is says %v", err, got, want)
		}
		if got, want := Routing(err), refIs(err, refRouting); got != want {
			t.Errorf("Routing(%v) = %v, errors.Is says %v", err, got, want)
		}
	}
}
