package keymove

import (
	"errors"
	"fmt"

	"shardsim/simkv"
)

var (
	// ErrNotFound: the key has no data at its source, a permanent failure.
	ErrNotFound = errors.New("keymove: key not found at source")
	// ErrSuperseded: the checkpoint was written by someone else since this
	// executor read it; it stops rather than overwrite.
	ErrSuperseded = errors.New("keymove: checkpoint superseded by another writer")
	// ErrUnknownOutcome: a swap or fence could not be resolved; the executor
	// stops and a resumed run settles it from durable state.
	ErrUnknownOutcome = errors.New("keymove: outcome of a store request could not be learned")
	// ErrStuck: the rounds bound was reached (a budget is broken).
	ErrStuck = errors.New("keymove: plan did not converge within its rounds bound")
)

// TransientError is a failure that retries did not cure within MaxRetries.
type TransientError struct {
	Op  string
	Err error
}

// Error says which operation kept failing and how.
func (e *TransientError) Error() string {
	return fmt.Sprintf("keymove: %s: transient failure persisted: %v", e.Op, e.Err)
}

// Unwrap returns the last transport error.
func (e *TransientError) Unwrap() error { return e.Err }

// IsTransient reports whether err is (or wraps) a transient failure.
func IsTransient(err error) bool {
	var t *TransientError
	return errors.As(err, &t) || simkv.IsTransport(err)
}
