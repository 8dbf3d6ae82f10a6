package bugs

// Names of the layer-2 range migration bugs: the six of BUGS.md, then the
// wrong designs seed 000's review rounds name (each registration's Source
// says which round). Registered in migrate2_registry.go.
const (
	MigrateNoReadFence            = "migrate.no-read-fence"
	MigrateReadFenceLessThan      = "migrate.read-fence-less-than"
	MigrateOwnershipTimeoutServes = "migrate.ownership-timeout-serves"
	MigrateFenceTSNoBarrier       = "migrate.fence-ts-no-barrier"
	MigrateQuorumFenceAck         = "migrate.quorum-fence-ack"
	MigrateDeltaFromSnapshot      = "migrate.delta-from-snapshot"

	MigrateFenceAckFromWatcher      = "migrate.fence-ack-from-watcher"
	MigrateFrozenVoterSet           = "migrate.frozen-voter-set"
	MigrateFloorPrimariesOnly       = "migrate.floor-primaries-only"
	MigrateRangeDeleteAsPoint       = "migrate.range-delete-as-point"
	MigrateScanStartKeyOnly         = "migrate.scan-start-key-only"
	MigrateAmbiguousCutoverAborts   = "migrate.ambiguous-cutover-aborts"
	MigrateRetryClearsGuards        = "migrate.retry-clears-guards"
	MigrateArmedBoolNoIntent        = "migrate.armed-bool-no-intent"
	MigrateExportLocks              = "migrate.export-locks"
	MigrateRollbackProvesCommit     = "migrate.rollback-proves-commit"
	MigrateCommitBypassesFence      = "migrate.commit-bypasses-fence"
	MigrateNoLockDrain              = "migrate.no-lock-drain"
	MigrateNoRetentionPin           = "migrate.no-retention-pin"
	MigratePinRelaxedEarly          = "migrate.pin-relaxed-early"
	MigrateTrackerAfterSnapshot     = "migrate.tracker-after-snapshot"
	MigrateLiveOnlyTxnProbe         = "migrate.live-only-txn-probe"
	MigrateFloorImportedOnly        = "migrate.floor-imported-only"
	MigrateFloorClearedAtCleanup    = "migrate.floor-cleared-at-cleanup"
	MigrateScanLiveOnly             = "migrate.scan-live-only"
	MigrateDisarmBeforeViews        = "migrate.disarm-before-views"
	MigrateFailedJobCollected       = "migrate.failed-job-collected"
	MigrateOwnershipCacheAnyVersion = "migrate.ownership-cache-any-version"
	MigrateTargetTrustsCoordinator  = "migrate.target-trusts-coordinator"
	MigrateDrainFenceTSOnly         = "migrate.drain-fence-ts-only"
	MigrateImportAfterAbandon       = "migrate.import-after-abandon"
)
