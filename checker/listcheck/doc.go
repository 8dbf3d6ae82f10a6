// Package listcheck judges delta-forming collection metadata
// (model/listdelta, seed 001) from what a world reports: every list
// operation as its client saw it (Op), every transaction a command sent
// and each one's first commit on the group that owns the collection
// (Truth.Register, Truth.Committed), and the owning group's rows
// (Snapshot).
//
//   - Truth: the checker's own deque of every list, replaying the
//     committed commands in commit order; CheckList judges
//     L.MetaConsistent against it after every commit (base metadata plus
//     the unapplied deltas give its length, and the positions they name
//     hold exactly its items, none claimed), decoding the rows with its
//     own reading of the key layout;
//   - CheckCount: L.CountConsistent (this project's addition), a hash's,
//     set's or sorted set's count against its member rows;
//   - CheckNoDoublePop: L.NoDoublePop over the answered pops;
//   - CheckNoLostItem: L.NoLostItem at the end, every acknowledged push
//     against the final rows, the answered pops and the truth's record of
//     how each value left;
//   - CheckLinearizable: L.Linearizable per list with porcupine over a
//     deque model (a MULTI/EXEC is one operation).
//
// What it cannot see: which transaction a command committed under is
// reported by the world (the protocol's attempt hook); an operation whose
// answer was lost counts as applied exactly when the truth saw one of its
// transactions commit; the rows are read through the world's Snapshot of
// the owning group (its most advanced voter, staged rows merged as the
// catalog says), not through a client; values are told apart because the
// world makes every pushed value unique.
package listcheck
