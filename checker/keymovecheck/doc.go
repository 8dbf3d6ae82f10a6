// Package keymovecheck judges key-level migration worlds (model/keymove,
// seed 002) by the KM.* properties of the property catalog, plus per-key
// linearizability of client reads and writes across the move.
//
// It observes the stores, not the executor: a Durable checker is a
// simkv.Observer of the metadata store and of every shard store, and after
// each apply re-reads the records the request named. Its oracle of a key's
// value is the sequence of client writes the shard stores applied, in the
// order they applied them (client requests are told apart from the
// executor's by the calling actor's name). The executor's own durable
// claims (its checkpoints) are read only where a property is about them:
// KM.VerifiedBeforeSwap requires a recorded verification before a swap, and
// KM.Completes requires the final checkpoint to account for every key.
//
// What it cannot see: a key swapped under ForceSwapOnVerificationFailure
// after a persistent mismatch is exempt from the value comparisons of
// KM.VerifiedBeforeSwap and KM.NoLoss and from linearizability (the operator
// accepted that copy); a verification that ran but compared the wrong thing
// is only caught when a differing copy is swapped.
//
// It reads the protocol's wire formats (key names, the checkpoint's
// encoding) through model/keymove's exported names, and KM.Idempotent runs
// model/keymove's executor, since re-running the plan is the property; the
// judgements themselves (what a reader would see, what the oracle says the
// value is) are this package's own.
package keymovecheck
