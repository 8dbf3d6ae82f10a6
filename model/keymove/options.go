package keymove

import (
	"fmt"
	"time"
)

// VerificationMode is how a copy is compared with its source.
type VerificationMode uint8

// The seed's verification strategies.
const (
	// VerifyFull compares the two values byte for byte.
	VerifyFull VerificationMode = iota
	// VerifyHash compares blake3 digests of the two values (what a provider
	// that hashes server-side would return).
	VerifyHash
	// VerifySampled compares the lengths and a deterministic sample of byte
	// positions, for large values. It catches torn and truncated copies; it
	// cannot see a changed byte outside the sample.
	VerifySampled
)

// String names the mode as the scenarios print it.
func (m VerificationMode) String() string {
	switch m {
	case VerifyFull:
		return "full"
	case VerifyHash:
		return "hash"
	case VerifySampled:
		return "sampled"
	}
	return fmt.Sprintf("VerificationMode(%d)", int(m))
}

// Options are the seed's ShardMigrationOptions plus the timing knobs a
// simulation needs stated.
type Options struct {
	CopyConcurrency   int
	VerifyConcurrency int
	SwapBatchSize     int
	MaxRetries        int
	RetryBaseDelay    time.Duration
	// RetryMaxDelay caps the exponential backoff.
	RetryMaxDelay           time.Duration
	InterleaveCopyAndVerify bool
	// EnableDryRunHashSampling is accepted for the seed's option set; the
	// executor does not run dry runs (a dry run changes nothing to check).
	EnableDryRunHashSampling       bool
	ForceSwapOnVerificationFailure bool
	Verification                   VerificationMode
	// CheckpointEvery is the longest virtual time between checkpoints while
	// keys are Planned or Copying (whose transitions are not checkpointed).
	CheckpointEvery time.Duration
	// ProgressEvery is the period of the progress stream.
	ProgressEvery time.Duration
	// RaceBudget bounds how often one key is re-copied because its source
	// moved under the copy (client writes racing the move); past it the key
	// is Failed rather than chased forever.
	RaceBudget int
	// RedactShards also redacts shard ids in logs (keys always are).
	RedactShards bool
}

// DefaultOptions are the seed's defaults.
func DefaultOptions() Options {
	return Options{
		CopyConcurrency: 32, VerifyConcurrency: 32, SwapBatchSize: 500, MaxRetries: 5,
		RetryBaseDelay: 100 * time.Millisecond, RetryMaxDelay: 5 * time.Second,
		InterleaveCopyAndVerify: true, EnableDryRunHashSampling: true,
		CheckpointEvery: time.Second, ProgressEvery: time.Second, RaceBudget: 20,
	}
}

// Validate rejects options the executor cannot run with.
func (o Options) Validate() error {
	switch {
	case o.CopyConcurrency < 1, o.VerifyConcurrency < 1:
		return fmt.Errorf("keymove: copy and verify concurrency must be at least 1")
	case o.SwapBatchSize < 1:
		return fmt.Errorf("keymove: swap batch size must be at least 1")
	case o.MaxRetries < 0, o.RaceBudget < 0:
		return fmt.Errorf("keymove: retry budgets must not be negative")
	case o.RetryBaseDelay <= 0, o.RetryMaxDelay < o.RetryBaseDelay:
		return fmt.Errorf("keymove: retry delays must be positive, max >= base")
	case o.CheckpointEvery <= 0, o.ProgressEvery <= 0:
		return fmt.Errorf("keymove: checkpoint and progress periods must be positive")
	case o.Verification > VerifySampled:
		return fmt.Errorf("keymove: unknown verification mode %d", o.Verification)
	}
	return nil
}

// backoff is the wait before retry number n (from 1): base * 2^(n-1),
// capped.
func (o Options) backoff(n int) time.Duration {
	d := o.RetryBaseDelay
	for i := 1; i < n && d < o.RetryMaxDelay; i++ {
		d *= 2
	}
	return min(d, o.RetryMaxDelay)
}
