// Package migrate is range split and cross-group migration (seeds 003 and
// 000; layers 1 and 2 of ../shared/design/MIGRATION.md) over a simulated
// multi-raft data plane.
//
// The pieces, bottom up:
//
//   - keys, hlc, mvcc, catalog, job: value types — the raw key layout and
//     route keys, hybrid timestamps, the multi-version store with chunked
//     export and staged merge reads, the versioned route catalog, and the
//     SplitJob record with its phase machine;
//   - fsm: the state machine every voter of a group applies from its log
//     (MVCC data, transactions, compaction, and the migration's replicated
//     guards);
//   - group: raft by its rules (per-voter logs and apply lag, elections by
//     log freshness, membership changes, deposed leaders that act until
//     told); rpc: the faulty network to group leaders and nodes;
//   - route: each node's routing state — the catalog its watcher pulled,
//     the cutover watermark, cached ownership answers;
//   - this package: the Node actor (voters, the watcher, and for the groups
//     it believes it leads the leader-local state: the clock, the timestamp
//     cache, request admission and the read fence, the promoter, compactor
//     and lock resolver, and on the group-0 leader the migrator, the
//     heartbeats and the hotspot detector); the Coordinator clients route
//     through; the metadata-store access (catalog and jobs in simkv, every
//     change a compare-and-swap); the manual split and abandon APIs.
//
// Where the state lives decides which guards are needed. A node's catalog
// view is node-local: a leader admits writes by its own view, so the write
// fence protects nothing until every voter's node holds it (an all-voter
// barrier; a voter that joins later must first catch up with the view of
// the leader that added it). What the migrator installs through a group's
// log (tracker and retention pin, durable write floor, cutover read fence)
// is replicated and seen by every leader, since a new leader serves only
// after applying everything committed before its term; the migrator still
// waits for every voter before it relies on one.
//
// The migrator runs as a task on the group-0 leader and resumes from the
// job record after any crash or leadership change. PLANNED: arm the
// source's write tracker and retention pin, take snapshot_ts. BACKFILL:
// export every version <= snapshot_ts, bracket by key family (lock rows
// excluded), import into the target's staged keyspace with idempotent
// batch numbers. FENCE: one catalog CAS splits the route, the moving part
// WriteFenced; every source voter's view must show it; prepared
// transactions drain; fence_ts and the tracked minimum come from the
// source's log, delta_floor = min(snapshot_ts, min_admitted-1), the pin
// moves there. DELTA_COPY: copy (delta_floor, fence_ts]. Before CUTOVER:
// the target's durable floor on every target voter, ARMING recorded, the
// cutover read fence armed on every source voter, ARMED, the floor raised
// over the source's horizon. CUTOVER: one O(1) catalog CAS gives the route
// to the target with staged visibility and the floor (a lost answer is
// read back, never taken for a failure). CLEANUP: promotion done, staged
// visibility off (the floor stays), every source view past the cutover,
// reads drained, source versions <= fence_ts deleted, fence disarmed and
// tracker released on every voter; DONE, into a bounded history. Abandon
// works before CUTOVER from the durable ABANDONING witness.
//
// Reads carry the catalog version their coordinator routed by. The source
// refuses a read of a route its view shows moved; a read under an armed
// cutover fence with an older version waits while the node cannot know
// whether the CUTOVER landed; a node that knows of a newer catalog (the
// heartbeat watermark, or the request's version) asks group 0 who owns the
// span, caches the answer by version, and fails closed without one.
//
// Bugs from model/bugs switch on the wrong variants the design reviews
// found; the scenarios' checkers must catch each.
package migrate
