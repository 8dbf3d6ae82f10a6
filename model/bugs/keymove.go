package bugs

import "shardsim/property"

// Names of the key-level migration bugs (seed 002). Budgets follow the
// registry's rule (see migrate.go), from rates measured on seeds 1-1000:
// compensating-rollback needs a swap batch that lands with its answer lost
// and is caught in 3.2% of keymove seeds, so its budget is 450
// (0.968^450 < 1e-6).
const (
	KeymoveSwapBeforeVerify       = "keymove.swap-before-verify"
	KeymoveMapBeforeCopy          = "keymove.map-before-copy"
	KeymoveCheckpointBeforeEffect = "keymove.checkpoint-before-effect"
	KeymoveRetryUnbounded         = "keymove.retry-unbounded"
	// KeymoveSwapIgnoresSourceRevision removes the race fix of model/keymove.
	KeymoveSwapIgnoresSourceRevision = "keymove.swap-ignores-source-revision"
	KeymoveCompensatingRollback      = "keymove.compensating-rollback"
)

func init() {
	for _, b := range []Bug{
		{KeymoveSwapBeforeVerify, "keymove", "swap does not wait for verification", []property.Name{property.KMVerifiedBeforeSwap, property.KMNoLoss, property.KMCompletes}, "keymove", 100},
		{KeymoveMapBeforeCopy, "keymove", "the shard map is updated before the copy completes", []property.Name{property.KMNoDualMapping, property.KMNoLoss, property.KMVerifiedBeforeSwap}, "keymove", 50},
		{KeymoveCheckpointBeforeEffect, "keymove", "the checkpoint is written before the step it records", []property.Name{property.KMNoLoss, property.KMIdempotent, property.KMVerifiedBeforeSwap, property.KMCompletes}, "keymove-resume", 200},
		{KeymoveRetryUnbounded, "keymove", "transient failures are retried forever", []property.Name{property.KMCompletes}, "keymove", 100},
		{KeymoveSwapIgnoresSourceRevision, "keymove", "the swap's fence does not compare the source's mod revision with the copied and verified one, so a client write between verification and swap is lost", []property.Name{property.KMNoLoss, property.KMLinearizable, property.KMIdempotent}, "keymove", 100},
		{KeymoveCompensatingRollback, "keymove", "an unrecoverable swap batch is rolled back by writing the old assignments back, without reading whether an ambiguous swap landed", []property.Name{property.KMSingleSwap, property.KMNoDualMapping}, "keymove", 450},
	} {
		register(b)
	}
}
