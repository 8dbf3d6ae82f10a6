// Package modelcheck explores the choice streams of a world
// systematically, breadth-first or by iterative deepening, within bounds,
// and prunes every state it has explored before by a fingerprint of the
// world's state. A world is the real scenario (ScenarioWorld): its protocol
// code, nemesis and checkers, driven by an enumerator instead of a seed.
// A path is the list of draws a run made, so a violation's witness encodes
// (Stream) to a choice file that simrun run -choices replays.
// docs/CHECK.md has the measured power of the presets (which registered
// bugs they find, at what depth), the side by side with TLC and the cost.
//
// # The search
//
// A prefix fixes some draws to non-zero values; every other draw takes
// zero, the quiet choice. One world is run per prefix, from the start (a
// task's coroutine stack cannot be copied, so there are no snapshots). Its
// children change one more draw made after the prefix to another value: a
// chance its "yes" (every other value means "no", like zero), an integer
// its lowest values, evenly spaced ones and its largest (a pick's first
// choices, a percentile roll's middle cases), or every value when it picks
// from a short menu (Bounds.Menu), an amount evenly spaced values up to
// its largest (Bounds.Values). Draws tell the enumerator
// their kind (simclock.KindSource). Depth is
// the number of non-zero draws on a path; Bounds also limit the draw
// positions that branch, the forks that branch and the non-zero draws on
// fault forks. BFS finds a violation with the fewest non-zero draws;
// IDDFS finds one of the same depth with a stack instead of a queue.
//
// After every event past the run's prefix the world's state is
// fingerprinted (the digest of simclock.Loop.AppendState); the prefix's
// states are the parent run's, already visited, so they are not digested
// again (a World hands visit a function, called only when needed). A run
// that reaches a state some earlier run reached having spent no more of
// every bound (depth, fault draws, draw positions) is cut there:
// everything it could still do, the earlier run or its children do or
// did. A run that is cut does not run its end-of-run checks (liveness
// after the heal, linearizability of whole histories); they are judged on
// the earlier run, whose history is the same (below).
//
// # Memory
//
// A search keeps two tables: the seen set, 16 bytes a slot (95 bits of the
// 128-bit digest and the packed budget; see seenSet), at most 70% full
// while it may grow and 90% when it may not; and the prefixes generated,
// 24 bytes each, in one slice without pointers that a breadth-first search
// uses as its queue. Bounds.Memory bounds the two, counted as allocated
// (while the seen set doubles, the old table and the new); a search that
// reaches it stops incomplete (Report.MemoryBound), at a point that does
// not depend on the machine. The worlds themselves are a few megabytes,
// garbage after each run.
//
// # Why pruning is sound
//
// Pruning is sound when two states with equal fingerprints have equal
// futures under the same remaining choices: the same events, the same
// draws, the same verdicts, including end-of-run ones. The fingerprint is
// an over-approximation by design: it may tell equal states apart (which
// costs pruning, never correctness) but must not merge different ones.
//
// simclock names a world's state by its history rather than encoding it,
// because most of it cannot be read: coroutine stacks, closures in the
// event queue, plain Go values shared by all (the KV store and its calls in
// flight, the histories and checkers, a scenario's counters). The argument:
//
//  1. A world is a deterministic function of its configuration and its
//     inputs: the draws and virtual time (the project's determinism rules:
//     no goroutines, wall clock, global randomness or map order inside the
//     simulated world). Porcupine's parallel search is outside it and its
//     verdict is a function of the history it is given.
//  2. Every event is shared unless the actor it runs on declares it
//     private (simclock.Context.Private). A shared event folds its name,
//     the time, its actor's history and every draw it made into the shared
//     chain, and the actor's history becomes the shared chain. So
//     everything outside actors' private memory (the store, calls in
//     flight, histories, checkers, effect logs, scenario globals) and every
//     actor's memory after its last shared event are functions of the
//     chains, which a collision-free hash never lets converge once they
//     differ.
//  3. A private event folds its name, the time, the actor's clock and its
//     draws into the actor's own history only. It stays private only if it
//     drew nothing but zeros and touched nothing the loop or a hooked
//     component can see (crash, pause, resume, restart, a clock, the KV
//     server's controls); the actor's promise covers the rest. The one
//     actor that declares private events is the nemesis, for ticks that
//     inject nothing: by the design of Choices a zero draw injects no
//     fault, and a fault that strikes without a draw strikes through a
//     hooked mechanism (nemesis.Chaos, simkv.Server).
//  4. A pending event's effect is determined by its name and the state
//     when it runs: the name derives from the chain of the event that
//     scheduled it, taken when that event ended, and its rank among the
//     events that event scheduled. Events held by a paused actor keep their
//     names. Events dropped because their actor crashed change nothing and
//     fold nothing.
//  5. The fingerprint lists virtual time (absolute), the shared chain,
//     each actor's incarnation, liveness, pause, history, clock state and
//     held events, and the pending events by time and, within one instant,
//     in scheduling order, because the loop's order draw picks among
//     simultaneous events by that order.
//  6. Observers that run after every event (the scenarios' step checkers)
//     only read, fail or stop the run, or reset per-step flags; the event
//     budget (a count not in the state) must never end a run of a search
//     (ScenarioWorld fails the search if it does); the time budget and the
//     heal are absolute instants, covered by absolute time.
//  7. What the checker saves does not change the names. A run takes over
//     the folds of the run before it on the tape (simclock.FoldMemo) only
//     while it has made that run's draws, up to the first position where
//     its prefix differs: by 1 it is the same computation so far, so the
//     folds are the same. The loop drops cancelled timers from the queue
//     once they are most of it, whether or not states are digested (they
//     would be discarded when due; the live events keep their order).
//     TestFoldReuseChangesNothing compares every state digest of coord
//     searches with every fold hashed.
//
// Hence equal fingerprints mean equal configurations, equal histories of
// everything shared, equal actor memories and equal pending work: equal
// futures. TestPruningIsSound (on a toy world) and the scenario soundness
// test compare a pruned search with an unpruned one that collects every
// violation: they must reach the same distinct states and the same
// violated properties; a fingerprint that merges different states (the
// test's deliberately unsound one) loses both.
//
// # What it does not merge, and where symmetry is not used
//
// Naming states by history merges only states reached by the same inputs
// in different orders: a private event and anything else, and equal
// values of a draw. Two runs that wrote the same data in a different
// order, or the same work shifted in time, are different states here,
// though an explicit canonical encoding might merge some of them. In the
// coordination and migration worlds that is the norm, not a loss: every
// write bumps the store's single revision counter, durable records and
// leases carry absolute logical times, the heal is an absolute instant and
// the checkers judge whole histories, so such states really are different
// states (their futures can differ) in all but a few cases.
//
// # Symmetry reduction: not done, and why
//
// Symmetry reduction merges a state with its images under a permutation
// of interchangeable things (TLC's SYMMETRY over workers and op ids): it
// is sound only if the permutation maps the initial state to itself and
// every transition to a transition, and it needs a state encoding to which
// the permutation can be applied. Neither holds here.
//
//   - The fingerprint names a state by its history (a chain of digests),
//     not by its content: there is nothing to rename. Renaming would need
//     an explicit canonical encoding of every actor's memory, including
//     task stacks (coroutines, which cannot be read), the store, the calls
//     in flight and the checkers' state.
//   - Workers are not interchangeable in the worlds as built. The loop
//     runs simultaneous events in scheduling order unless the order draw
//     says otherwise, and w0 is spawned before w1, so the quiet run favours
//     w0; op ids carry the worker's index in their high bits, claim records
//     and snapshots are sorted by worker id, and each worker has its own
//     fork and clock. Measured on coord small bounds at depth 1, branching
//     only worker/w0 explores 107 runs and 24,734 states, only worker/w1 63
//     runs and 9,586 states; under a symmetry the two would be images of
//     each other, equal in size.
//   - Keys are ordered: cursors, split points, C.CursorMonotonicity and
//     C.CursorBounds depend on key order, and migrate's keys sit on
//     different routes and groups. No permutation of keys but the identity
//     preserves the transitions.
//   - Path-level shortcuts (skip a prefix whose first non-zero draw is on
//     w1, as the mirror of one on w0) are unsound for the same reason: the
//     mirror run is not the same run renamed.
//
// What it would take: worker ids as abstract values the protocol never
// orders (op ids without the index, no sort by worker), the order of
// simultaneous events always explored (loop/order branching) so the set of
// runs is closed under renaming, per-worker tapes so a renamed path is a
// path, and an explicit canonical state encoding of the world, minimised
// over the permutations. That is a different checker (TLC's design), not a
// pass on this one.
package modelcheck
