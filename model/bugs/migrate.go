package bugs

import "shardsim/property"

// Names of the layer-1 range split and migration bugs (seeds 003 and 000).
// Budgets are what the migrate sweeps measure, with margin: a budget B
// leaves a chance below one in a million of missing a bug caught in a
// fraction p of seeds, (1-p)^B < 1e-6.
const (
	MigrateOverlappingRoutes      = "migrate.overlapping-routes"
	MigrateFenceNeedsVersion      = "migrate.fence-needs-version"
	MigrateNoHLCAdvance           = "migrate.no-hlc-advance"
	MigrateKeyOnlyCursor          = "migrate.key-only-cursor"
	MigrateRawRangeExport         = "migrate.raw-range-export"
	MigrateReadVisibleExport      = "migrate.read-visible-export"
	MigrateStagedFirstRead        = "migrate.staged-first-read"
	MigratePromoteSkipsShadowed   = "migrate.promote-skips-shadowed"
	MigrateCutoverBeforeDelta     = "migrate.cutover-before-delta"
	MigrateCleanupBeforePromotion = "migrate.cleanup-before-promotion"
	MigrateAbandonKeepsFence      = "migrate.abandon-keeps-fence"
)

func init() {
	for _, b := range []Bug{
		{MigrateOverlappingRoutes, "migrate", "BACKFILL publishes the target route while the source route still covers it", []property.Name{property.MCatalogNonOverlap, property.MSingleWriter}, "migrate", 10},
		{MigrateFenceNeedsVersion, "migrate", "the apply-time fence check runs only for requests that carry an observed catalog version", []property.Name{property.MFencedWritesRejected, property.MNoLostWrite}, "migrate", 90},
		{MigrateNoHLCAdvance, "migrate", "import does not raise the target HLC (and CUTOVER neither raises nor enforces a timestamp floor)", []property.Name{property.MHLCMonotone, property.MSnapshotReads, property.MLinearizable}, "migrate", 25},
		{MigrateKeyOnlyCursor, "migrate", "the export cursor records the raw key only", []property.Name{property.MExactlyOnceCopy, property.MNoLostWrite}, "migrate", 10},
		{MigrateRawRangeExport, "migrate", "export scans only the raw [start, end), leaving internal-family rows behind", []property.Name{property.MExactlyOnceCopy}, "migrate", 10},
		{MigrateReadVisibleExport, "migrate", "export uses a read-visible scan, dropping tombstones and older versions", []property.Name{property.MSnapshotReads, property.MExactlyOnceCopy}, "migrate", 10},
		{MigrateStagedFirstRead, "migrate", "reads prefer staged data and fall back to live", []property.Name{property.MSnapshotReads, property.MLinearizable}, "migrate", 60},
		{MigratePromoteSkipsShadowed, "migrate", "promotion drops a staged version when a newer live version exists", []property.Name{property.MSnapshotReads, property.MNoLostWrite}, "migrate", 15},
		{MigrateCutoverBeforeDelta, "migrate", "CUTOVER proceeds before every DELTA_COPY bracket is done", []property.Name{property.MNoLostWrite, property.MExactlyOnceCopy}, "migrate", 25},
		{MigrateCleanupBeforePromotion, "migrate", "source deletion does not wait for durable promotion", []property.Name{property.MCleanupSafe, property.MNoLostWrite}, "migrate", 10},
		{MigrateAbandonKeepsFence, "migrate", "abandon deletes the staged data but leaves the WriteFenced route", []property.Name{property.MJobTerminates}, "migrate-abandon", 25},
	} {
		register(b)
	}
}
