// Package migrate is range split and cross-group migration (seeds 003 and
// 000, layer 1 of ../shared/design/MIGRATION.md) over a simulated multi-raft
// data plane.
//
// The pieces, bottom up:
//
//   - keys, hlc, mvcc, catalog, job: value types — the raw key layout and
//     route keys, hybrid timestamps, the multi-version store with chunked
//     export and staged merge reads, the versioned route catalog, and the
//     SplitJob record with its phase machine;
//   - fsm: the state machine every voter of a group applies from the log;
//   - group: the replication layer (log, commit, per-voter apply lag,
//     leadership and elections); rpc: the faulty network to group leaders;
//   - this package: the Node actor that hosts voters and, for the groups
//     it leads, the leader-local state (the clock under its ceiling,
//     waiting requests, the promoter, and on the group-0 leader the
//     migrator and the hotspot detector); the Coordinator clients route
//     through; the metadata-store access (catalog and jobs in simkv, every
//     change a compare-and-swap); and the manual split and abandon APIs.
//
// The migrator runs as a task in direct style on the group-0 leader and
// resumes from the job record after any crash or leadership change:
// PLANNED (snapshot_ts through a source log barrier) -> BACKFILL (export
// every version <= snapshot_ts, bracket by key family, import into the
// target's staged keyspace with idempotent batch numbers) -> FENCE (one
// catalog CAS splits the route; the moving part is WriteFenced) ->
// DELTA_COPY (install the fence in the source's log; fence_ts is its last
// commit ts there; copy (snapshot_ts, fence_ts]) -> CUTOVER (raise the
// target's clock floor, one O(1) catalog CAS gives the route to the target
// with staged visibility; install it on the source, then the target) ->
// CLEANUP (wait for promotion, clear staged visibility, wait a grace period
// and for reads to drain, delete the moved source versions) -> DONE, the
// record moving to a bounded history. Abandon works before CUTOVER.
//
// Two choices the design leaves open matter for whoever extends this
// (layer 2):
//
//   - A group's catalog view (what its state machine enforces at apply
//     time) advances only through catalog entries the migrator installs in
//     the groups a change concerns, in a fixed order: at CUTOVER the source
//     first, then the target. Coordinators have their own lagging watchers.
//     Because the target starts serving only after the source stopped, the
//     equal-stale read window cannot open in layer 1; a design that lets
//     every node's watcher install snapshots into its groups needs the
//     layer-2 read fence instead.
//   - Read timestamps are observed by the serving leader's clock, so the
//     source may serve the moving span at timestamps above fence_ts until it
//     applies CUTOVER. The cutover floor max(max_imported_ts, fence_ts) does
//     not cover those; the migrator therefore also raises the target's clock
//     to the source's timestamp horizon (its ceiling when it applied
//     CUTOVER) before installing CUTOVER on the target.
//
// Bugs from model/bugs switch on the wrong variants the design reviews
// found; the scenarios' checkers must catch each.
package migrate
