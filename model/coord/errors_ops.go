package coord

// Operation-specific error types. Each wraps the shared CoordError; newError
// routes a CoordError to its operation's type and refuses (panics on) a code
// the operation cannot produce, so adding a code forces a decision about
// which operations may return it.

// AcquireError is returned by AcquireAndRestore.
type AcquireError struct{ CoordError }

// RenewError is returned by Renew.
type RenewError struct{ CoordError }

// CheckpointError is returned by Checkpoint.
type CheckpointError struct{ CoordError }

// CompleteError is returned by Complete.
type CompleteError struct{ CoordError }

// ParkError is returned by ParkShard.
type ParkError struct{ CoordError }

// SplitError is returned by SplitReplace and SplitResidual.
type SplitError struct{ CoordError }

// SplitReplaceError is the error of SplitReplace.
type SplitReplaceError = SplitError

// SplitResidualError is the error of SplitResidual.
type SplitResidualError = SplitError

// UnparkError is returned by UnparkShard.
type UnparkError struct{ CoordError }

// RunError is returned by the run-management operations.
type RunError struct{ CoordError }

// ClaimError is returned by ClaimNextAvailable.
type ClaimError struct{ CoordError }

var (
	backendCodes = []Code{CodeBackendTransient, CodeBackendCorruption}
	leaseCodes   = []Code{CodeTenantMismatch, CodeShardNotFound, CodeRunState, CodeShardTerminal, CodeStaleFence, CodeLeaseExpired, CodeOwnerMismatch}
	runCodes     = []Code{CodeRunNotFound, CodeRunExists, CodeRunState, CodeInvalidArgument, CodeManifestInvalid, CodeShardLimit, CodeIDCollision, CodeOpIDConflict}
)

// allowedCodes returns the codes op may return, in code order.
func allowedCodes(op Operation) []Code {
	var cs []Code
	switch op {
	case OpAcquire:
		cs = []Code{CodeShardNotFound, CodeRunState, CodeShardTerminal, CodeAlreadyLeased, CodeFenceExhausted}
	case OpClaim:
		cs = []Code{CodeClaimCooldown, CodeNoShardAvailable, CodeFenceExhausted}
	case OpRenew:
		cs = leaseCodes
	case OpCheckpoint:
		cs = append(append(cs, leaseCodes...), CodeOpIDConflict, CodeCheckpointMissingKey, CodeCursorRegression, CodeCursorOutOfBounds)
	case OpComplete:
		cs = append(append(cs, leaseCodes...), CodeOpIDConflict, CodeCursorReset, CodeCursorRegression, CodeCursorOutOfBounds)
	case OpPark:
		cs = append(append(cs, leaseCodes...), CodeOpIDConflict, CodeInvalidArgument)
	case OpSplitReplace, OpSplitResidual:
		cs = append(append(cs, leaseCodes...), CodeOpIDConflict, CodeSplitInvalid, CodeSpawnCapExceeded, CodeShardLimit, CodeIDCollision)
	case OpUnpark:
		cs = []Code{CodeShardNotFound, CodeOpIDConflict, CodeFenceExhausted, CodeRunState, CodeShardNotParked}
	case OpCreateRun, OpRegisterShards, OpGetRun, OpRunProgress, OpListShards, OpCompleteRun, OpFailRun, OpCancelRun,
		OpListActiveRuns, OpGCStaleRuns:
		cs = runCodes
	}
	return append(append([]Code(nil), cs...), backendCodes...)
}

func codeAllowed(op Operation, c Code) bool {
	for _, a := range allowedCodes(op) {
		if a == c {
			return true
		}
	}
	return false
}

// newError wraps e in op's error type. A code op cannot produce is a
// programming error in the coordinator, not a runtime condition.
func newError(op Operation, e CoordError) error {
	e.Op = op
	if !codeAllowed(op, e.Code) {
		panic("coord: " + op.String() + " cannot return " + e.Code.String())
	}
	switch op {
	case OpAcquire:
		return &AcquireError{e}
	case OpRenew:
		return &RenewError{e}
	case OpCheckpoint:
		return &CheckpointError{e}
	case OpComplete:
		return &CompleteError{e}
	case OpPark:
		return &ParkError{e}
	case OpSplitReplace, OpSplitResidual:
		return &SplitError{e}
	case OpUnpark:
		return &UnparkError{e}
	case OpClaim:
		return &ClaimError{e}
	}
	return &RunError{e}
}

// BackendError builds op's error for an infrastructure failure; backends
// other than the reference use it.
func BackendError(op Operation, infra *InfraError) error {
	code := CodeBackendCorruption
	if infra.Transient {
		code = CodeBackendTransient
	}
	return newError(op, CoordError{Code: code, Infra: infra})
}
