package coord

import (
	"fmt"
	"strconv"
	"strings"
)

// Code classifies a coordination error. Code is itself an error, so
// errors.Is(err, CodeStaleFence) tests a returned error's class.
type Code uint8

const (
	codeNone Code = iota
	// CodeTenantMismatch: the request's tenant does not own the lease or
	// record it names.
	CodeTenantMismatch
	// CodeShardNotFound: no such shard in the caller's tenant.
	CodeShardNotFound
	// CodeRunNotFound: no such run in the caller's tenant.
	CodeRunNotFound
	// CodeShardTerminal: the shard is Done, Split or Parked.
	CodeShardTerminal
	// CodeStaleFence: the lease's fence is not the shard's current fence.
	CodeStaleFence
	// CodeLeaseExpired: the shard's lease is expired or released.
	CodeLeaseExpired
	// CodeOwnerMismatch: the epochs agree but the lease names another
	// worker.
	CodeOwnerMismatch
	// CodeAlreadyLeased: acquire found a live lease held by another worker.
	CodeAlreadyLeased
	// CodeOpIDConflict: the op id was used before with another payload.
	CodeOpIDConflict
	// CodeCheckpointMissingKey: a checkpoint carried no last key.
	CodeCheckpointMissingKey
	// CodeCursorReset: the cursor would return to no progress.
	CodeCursorReset
	// CodeCursorRegression: the cursor's last key would move backwards.
	CodeCursorRegression
	// CodeCursorOutOfBounds: the cursor's last key lies outside the range.
	CodeCursorOutOfBounds
	// CodeSplitInvalid: a split plan failed validation (see SplitViolation).
	CodeSplitInvalid
	// CodeSpawnCapExceeded: the split would exceed maxSpawnedPerShard.
	CodeSpawnCapExceeded
	// CodeShardLimit: the request would exceed a shard-count ceiling.
	CodeShardLimit
	// CodeIDCollision: a derived or registered shard id already exists.
	CodeIDCollision
	// CodeFenceExhausted: the fence epoch cannot be raised further.
	CodeFenceExhausted
	// CodeInvalidArgument: a parameter is malformed (unknown park reason,
	// bad run configuration).
	CodeInvalidArgument
	// CodeManifestInvalid: register_shards' manifest failed validation.
	CodeManifestInvalid
	// CodeRunExists: create_run named an existing run.
	CodeRunExists
	// CodeRunState: the run's status does not allow the operation.
	CodeRunState
	// CodeShardNotParked: unpark named a shard that is not Parked.
	CodeShardNotParked
	// CodeNoShardAvailable: claim found nothing to acquire.
	CodeNoShardAvailable
	// CodeClaimCooldown: the worker claimed too recently.
	CodeClaimCooldown
	// CodeBackendTransient: a retryable infrastructure failure.
	CodeBackendTransient
	// CodeBackendCorruption: a non-retryable infrastructure failure.
	CodeBackendCorruption
	codeEnd
)

var codeNames = [codeEnd]string{
	codeNone:                 "none",
	CodeTenantMismatch:       "tenant mismatch",
	CodeShardNotFound:        "shard not found",
	CodeRunNotFound:          "run not found",
	CodeShardTerminal:        "shard is terminal",
	CodeStaleFence:           "stale fence",
	CodeLeaseExpired:         "lease expired",
	CodeOwnerMismatch:        "lease owner mismatch",
	CodeAlreadyLeased:        "shard already leased",
	CodeOpIDConflict:         "op id reused with a different payload",
	CodeCheckpointMissingKey: "checkpoint without a last key",
	CodeCursorReset:          "cursor reset",
	CodeCursorRegression:     "cursor regression",
	CodeCursorOutOfBounds:    "cursor out of bounds",
	CodeSplitInvalid:         "invalid split",
	CodeSpawnCapExceeded:     "spawn cap exceeded",
	CodeShardLimit:           "shard limit exceeded",
	CodeIDCollision:          "shard id collision",
	CodeFenceExhausted:       "fence epoch exhausted",
	CodeInvalidArgument:      "invalid argument",
	CodeManifestInvalid:      "invalid manifest",
	CodeRunExists:            "run already exists",
	CodeRunState:             "run state does not allow the operation",
	CodeShardNotParked:       "shard is not parked",
	CodeNoShardAvailable:     "no shard available",
	CodeClaimCooldown:        "claim cooldown active",
	CodeBackendTransient:     "transient backend failure",
	CodeBackendCorruption:    "backend corruption",
}

// String names the code.
func (c Code) String() string {
	if c < codeEnd {
		return codeNames[c]
	}
	return "code(?)"
}

// Error makes Code usable as an errors.Is target.
func (c Code) Error() string { return "coord: " + c.String() }

// Operation names a protocol operation, for error messages and routing.
type Operation uint8

const (
	OpAcquire        Operation = iota // acquire_and_restore
	OpRenew                           // renew
	OpCheckpoint                      // checkpoint
	OpComplete                        // complete
	OpPark                            // park_shard
	OpSplitReplace                    // split_replace
	OpSplitResidual                   // split_residual
	OpUnpark                          // unpark_shard
	OpCreateRun                       // create_run
	OpRegisterShards                  // register_shards
	OpGetRun                          // get_run
	OpRunProgress                     // get_run_progress
	OpListShards                      // list_shards
	OpCompleteRun                     // complete_run
	OpFailRun                         // fail_run
	OpCancelRun                       // cancel_run
	OpClaim                           // claim_next_available
	OpListActiveRuns                  // list_active_runs
	OpGCStaleRuns                     // gc_stale_initializing_runs
	operationEnd
)

var operationNames = [operationEnd]string{
	"acquire_and_restore", "renew", "checkpoint", "complete", "park_shard",
	"split_replace", "split_residual", "unpark_shard", "create_run",
	"register_shards", "get_run", "get_run_progress", "list_shards",
	"complete_run", "fail_run", "cancel_run", "claim_next_available",
	"list_active_runs", "gc_stale_initializing_runs",
}

// String names the operation as the protocol does.
func (o Operation) String() string {
	if o < operationEnd {
		return operationNames[o]
	}
	return "operation(?)"
}

// InfraError is an infrastructure failure of a backend (the reference has
// none). Operation labels the failing step, e.g. "acquire.load_shard".
type InfraError struct {
	Transient bool
	Operation string
	Message   string
}

// Error describes the failure.
func (e *InfraError) Error() string {
	kind := "corruption"
	if e.Transient {
		kind = "transient"
	}
	return fmt.Sprintf("%s failure in %s: %s", kind, e.Operation, e.Message)
}

// CoordError is the shared body of every operation-specific error. Its
// fields carry only what the caller may see:
//
//   - a tenant mismatch names the caller's own tenant, never the other;
//   - an AlreadyLeased error never names the current owner;
//   - an op id conflict never shows either payload hash;
//   - no error shows key bytes.
type CoordError struct {
	Op     Operation
	Code   Code
	Tenant TenantID // TenantMismatch: the caller's tenant
	Shard  ShardKey // the shard concerned, when there is one
	// ShardStatus is the shard's status for CodeShardTerminal and
	// CodeShardNotParked.
	ShardStatus ShardStatus
	// RunStatus is the run's status for CodeRunState.
	RunStatus RunStatus
	// Presented and Current are the lease's and the shard's fence epochs
	// for CodeStaleFence.
	Presented, Current FenceEpoch
	// At is the expired deadline (CodeLeaseExpired) or the earliest time a
	// retry can succeed (CodeAlreadyLeased, CodeClaimCooldown).
	At LogicalTime
	// Split, Manifest and Limit detail CodeSplitInvalid,
	// CodeManifestInvalid and CodeShardLimit.
	Split    SplitViolation
	Manifest ManifestViolation
	Limit    ShardLimitViolation
	// Detail is a fixed, non-secret explanation (for CodeInvalidArgument).
	Detail string
	// Infra is the underlying failure for the CodeBackend* codes.
	Infra *InfraError
}

// Error renders the error deterministically and without secrets.
func (e CoordError) Error() string {
	// Built piece by piece rather than with fmt: checkers read the
	// message of every refusal, and formatting dominated that.
	var b strings.Builder
	str := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	num := func(v uint64) string { return strconv.FormatUint(v, 10) }
	str("coord: ", e.Op.String(), ": ", e.Code.Error()) // a Code is an error: fmt's %s printed Error()
	switch e.Code {
	case CodeTenantMismatch:
		str(" (caller tenant ", e.Tenant.String(), ")")
	case CodeShardTerminal, CodeShardNotParked:
		str(" (", e.Shard.Run.String(), " ", e.Shard.Shard.String(), " is ", e.ShardStatus.String(), ")")
	case CodeStaleFence:
		str(" (lease epoch ", num(uint64(e.Presented)), ", shard epoch ", num(uint64(e.Current)), ")")
	case CodeLeaseExpired:
		str(" (deadline ", num(uint64(e.At)), ")")
	case CodeAlreadyLeased, CodeClaimCooldown:
		str(" (retry at ", num(uint64(e.At)), ")")
	case CodeRunState:
		str(" (run is ", e.RunStatus.String(), ")")
	case CodeSplitInvalid:
		str(" (", e.Split.String(), ")")
	case CodeManifestInvalid:
		str(" (", e.Manifest.String(), ")")
	case CodeShardLimit:
		str(" (", e.Limit.String(), ")")
	case CodeShardNotFound, CodeSpawnCapExceeded, CodeIDCollision, CodeFenceExhausted:
		str(" (", e.Shard.Run.String(), " ", e.Shard.Shard.String(), ")")
	case CodeBackendTransient, CodeBackendCorruption:
		if e.Infra != nil {
			str(": ", e.Infra.Error())
		}
	}
	if e.Detail != "" {
		str(": ", e.Detail)
	}
	return b.String()
}

// Is matches a Code target, so errors.Is(err, CodeStaleFence) works.
func (e CoordError) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}

// Unwrap exposes the infrastructure failure, if any.
func (e CoordError) Unwrap() error {
	if e.Infra == nil {
		return nil
	}
	return e.Infra
}

// ErrorCode returns the error's class.
func (e CoordError) ErrorCode() Code { return e.Code }

// CodeOf returns the Code of a coordination error, or 0 for nil and for
// errors from elsewhere.
func CodeOf(err error) Code {
	for err != nil {
		if c, ok := err.(interface{ ErrorCode() Code }); ok {
			return c.ErrorCode()
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return codeNone
		}
		err = u.Unwrap()
	}
	return codeNone
}
