// Package keymove is the key-level migration of seed 002: an immutable plan
// of key moves {Key, Source, Target} built from an old and a new topology,
// and an executor that takes every key through the seed's state machine
//
//	Planned -> Copying -> Copied -> Verifying -> Verified -> Swapping -> Done | Failed
//
// with copy and verify concurrency bounded by semaphores, verification in
// full, hash or sampled mode, transient failures retried with exponential
// backoff up to MaxRetries and permanent ones (not found at source) Failed
// at once, the shard map swapped in batches of SwapBatchSize keys per etcd
// transaction (all or nothing), an unrecoverable batch rolled back to
// Copied, ForceSwapOnVerificationFailure, checkpoints {plan id, key states,
// last processed index} after every transition beyond Copying and
// periodically, and resume from the checkpoint after a crash. It reports the
// seed's counters and gauges and a progress stream, and never logs a key.
//
// # Stores
//
// The shard map and the checkpoint live in etcd (simkv.KV) and are written
// only by transactions with compares (meta.go). Each shard is a separate
// store with its own failures; a key's data is d/<key> and its control word
// c/<key> says whether the shard serves the key (keys.go). Clients (Router)
// route by the map they last read and read or write a key only on a shard
// whose control word for it is "open".
//
// # What the seed did not say: writes that race a move
//
// The seed rejects dual reads and is silent about client writes. Simulated
// with live writers, its design loses data in two ways. A write that lands
// on the source between the copy and the swap is not in the copy: after the
// swap the key's newest acknowledged value is gone. And a client whose map
// is stale keeps writing (and reading) the source after the swap: the seed's
// invariant 4, "either old or new visible, never both", fails as soon as
// one reader routes by the old map and another by the new.
//
// What changed, in the seed's words:
//
//   - Swapping fences the source first. The fence is a transaction on the
//     source shard that sets the key's control word to "moved" and compares
//     the source data's mod revision with the one that was copied and
//     verified. A write since then fails the compare; the key goes back to
//     Copying and is re-copied, verified and fenced again at once (counted
//     as a racing write, bounded by RaceBudget), so a busy key is caught
//     between two writes rather than chased round after round. After the fence the source refuses the key, so a stale
//     router re-reads the map: old or new is visible, never both.
//   - The swap transaction compares each key's map entry with its source and
//     the plan's swap epoch. Before "rollback batch to Copied" releases the
//     fences, the executor bumps the epoch and reads the map: a swap still in
//     flight can no longer land, and one that already landed is Done, not
//     rolled back. Releases compare the fence's own revision, so a late
//     release cannot undo a later fence.
//   - A copy is written with a compare on the target's mod revision, so a
//     copy attempt delayed in the network cannot overwrite a newer one.
//   - Resuming (and re-running) starts by bumping the epoch and reading the
//     map: a key already assigned to its target is Done whatever the
//     checkpoint says, so every step may be redone from any checkpoint.
//
// Between the fence and the swap the key is unavailable for writes on both
// shards (clients retry): the price of never showing both.
//
// Everything is deterministic: time comes from the Runtime's clock, nothing
// starts goroutines (SimRuntime runs workers as simclock tasks), and no map
// iteration order reaches a request, a checkpoint or a log line.
package keymove
