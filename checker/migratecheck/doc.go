// Package migratecheck judges range split and cross-group migration
// (model/migrate) from the events a world reports: catalog snapshots and
// job records written to the metadata store, every apply of every group,
// what clients saw, and the groups' state at chosen instants.
//
//   - CatalogChecker: M.CatalogNonOverlap, M.CatalogVersionMonotone;
//   - CheckSingleWriter: M.SingleWriter;
//   - PhaseChecker: M.PhaseOrder, with its own copy of the job state machine;
//   - JobChecker: M.FencedWritesRejected, M.HLCMonotone, M.ExactlyOnceCopy,
//     M.CleanupSafe;
//   - VersionOracle: M.SnapshotReads, M.NoLostWrite, against every version
//     write-like steps created;
//   - CheckNoStaleRead: M.NoStaleRead, source reads against the target's
//     acknowledged writes in real time;
//   - CheckTxns: M.TxnSerializable, an Elle-style dependency graph;
//   - CheckLinearizable: M.Linearizable per key with porcupine.
//
// What it cannot see: catalog snapshots are decoded with the protocol's
// codec; the versions a group holds are read through model/migrate/mvcc;
// which node of a group served a read (only which group).
package migratecheck
