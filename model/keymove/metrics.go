package keymove

import (
	"encoding/hex"
	"fmt"

	"github.com/zeebo/blake3"
)

// Metrics are the seed's counters and gauges (IShardMigrationMetrics), plus
// the counters a simulation uses to show that the failure paths ran.
type Metrics struct {
	KeysPlanned  int64
	KeysCopied   int64
	KeysVerified int64
	KeysSwapped  int64
	KeysFailed   int64
	Retries      int64

	// Gauges, and the highest value each reached.
	ActiveCopyConcurrency      int
	ActiveVerifyConcurrency    int
	MaxActiveCopyConcurrency   int
	MaxActiveVerifyConcurrency int

	Rollbacks            int64 // swap batches (or keys of one) rolled back to Copied
	Resumes              int64 // runs that started from an existing checkpoint
	VerificationFailures int64 // copies that did not match their source
	RacingWrites         int64 // copies whose source moved under them (re-copied)
	Forced               int64 // keys swapped by ForceSwapOnVerificationFailure
	Checkpoints          int64 // checkpoint writes that landed
	SwapBatches          int64 // swap transactions that landed
}

// Add accumulates o into m (gauge maxima take the larger).
func (m *Metrics) Add(o Metrics) {
	m.KeysPlanned += o.KeysPlanned
	m.KeysCopied += o.KeysCopied
	m.KeysVerified += o.KeysVerified
	m.KeysSwapped += o.KeysSwapped
	m.KeysFailed += o.KeysFailed
	m.Retries += o.Retries
	m.MaxActiveCopyConcurrency = max(m.MaxActiveCopyConcurrency, o.MaxActiveCopyConcurrency)
	m.MaxActiveVerifyConcurrency = max(m.MaxActiveVerifyConcurrency, o.MaxActiveVerifyConcurrency)
	m.Rollbacks += o.Rollbacks
	m.Resumes += o.Resumes
	m.VerificationFailures += o.VerificationFailures
	m.RacingWrites += o.RacingWrites
	m.Forced += o.Forced
	m.Checkpoints += o.Checkpoints
	m.SwapBatches += o.SwapBatches
}

// Progress is one event of the progress stream (IProgress of
// MigrationProgressEvent): how many keys are in which phase.
type Progress struct {
	PlanID   string
	At       int64 // executor clock, nanoseconds
	Total    int
	Copied   int // at or past Copied (and not Failed)
	Verified int // at or past Verified (and not Failed)
	Done     int
	Failed   int
	Final    bool
}

// String renders the event for logs.
func (p Progress) String() string {
	return fmt.Sprintf("plan=%s total=%d copied=%d verified=%d done=%d failed=%d final=%v",
		p.PlanID, p.Total, p.Copied, p.Verified, p.Done, p.Failed, p.Final)
}

// Hooks are the executor's outputs besides the stores: the progress stream
// and a log. Nil hooks are skipped.
type Hooks struct {
	Progress func(Progress)
	// Log receives one line per event. Key values never appear in it (they
	// are redacted to a short digest); shard ids too when
	// Options.RedactShards is set.
	Log func(kind, detail string)
}

// RedactKey is how a key appears in logs: a short digest that lets an
// operator correlate lines without learning the key.
func RedactKey(key string) string {
	sum := blake3.Sum256([]byte("shardsim/keymove/redact/v1\x00" + key))
	return "key#" + hex.EncodeToString(sum[:4])
}

func redactShard(s ShardID, on bool) string {
	if !on {
		return string(s)
	}
	sum := blake3.Sum256([]byte("shardsim/keymove/redact-shard/v1\x00" + string(s)))
	return "shard#" + hex.EncodeToString(sum[:3])
}
