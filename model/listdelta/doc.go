// Package listdelta is delta-forming collection metadata (seed 001): Redis
// lists, hashes, sets and sorted sets on the migrating store's
// transactional MVCC data plane, with no write-write conflict on a
// collection's metadata between commands that change it.
//
// A collection's metadata (a list's head position and length, a counted
// collection's length) is a base row plus append-only delta rows, one per
// command, each keyed by the collection's key, the commit timestamp of the
// command's transaction (filled in by the group leader that issues it, so
// unique per transaction) and the delta's number inside the transaction.
// Reading the metadata ("resolution") reads the base row and every delta
// at one snapshot and sums them; more than MaxDeltaScanLimit deltas is an
// error, not a guess. A compactor folds deltas into the base row. Pops
// claim the position they take with a claim row, so two pops of one item
// conflict and one retries. Every command is one optimistic transaction
// of the data plane (package fsm: first committer wins on the rows it
// writes, and the read set it registers must be unchanged at commit).
//
// The review rounds of the thread each named a bug of an earlier draft;
// the final design here is their sum, and model/bugs switches each bug
// back on (the registry names the round):
//
//   - rounds 1 and 4: keys length-prefix the user key (a prefix scan of
//     "foo" must not find "foobar", and a NUL separator still collides for
//     keys holding NUL): the nul-separator variant;
//   - rounds 1, 2 and 4: resolution fails when the delta scan is
//     truncated: no-truncation-check;
//   - round 3: a push deletes a stale claim left at the position it reuses
//     (push-keeps-stale-claim); the compactor collects only contiguous
//     claimed runs; RPOP searches back from the tail and the compactor
//     collects the tail side too;
//   - rounds 4 and 8: the Len = 0 base row is a tombstone the compactor
//     never deletes (delete-meta-at-zero);
//   - rounds 5 and 9: the delta key's timestamp is the transaction's
//     commit timestamp, issued by the group leader and unique across
//     leader changes (shared-commit-ts stamps the writer's own clock);
//   - round 6: pops never search past the other end; the compactor never
//     deletes a counted collection's members (compact-deletes-members);
//   - the implementation reviews: MULTI/EXEC writes the base row and
//     deletes the deltas it folded, guarding the delta range in its read
//     set (exec-stale-snapshot, exec-keeps-deltas), and a read resolves
//     and reads its rows at one snapshot (range-torn-snapshot).
//
// One race the thread's final flows keep: a concurrent RPUSH and RPOP (or
// LPUSH and LPOP) write different rows and both commit, leaving the
// pushed item outside the list and the popped one in it. Each command
// here also registers the row the other side would write (listView), so
// one of the two retries; no-boundary-read removes that.
package listdelta
