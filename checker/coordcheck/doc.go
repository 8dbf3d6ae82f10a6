// Package coordcheck judges the shard coordination protocol (model/coord)
// from outside: what its durable records became after every KV write, what
// workers did with the leases it granted, whether each shard's history of
// requests linearizes, and whether the world converged after the heal.
//
//   - Durable observes the etcd backend's namespace on the simkv server and
//     judges each change (every per-state and per-step C.* property of the
//     records, C.TenantIsolation, C.ZombieRejection, C.Cooldown);
//   - EffectLog judges the work workers published (C.Idempotency,
//     C.MutualExclusion, C.ZombieRejection);
//   - Liveness judges C.EventuallyLeased and C.Convergence after the heal;
//   - Linearizable checks each shard's requests with porcupine against the
//     protocol's pure step functions.
//
// The history it consumes (History, Request, Answer, Effect) is filled in
// by the scenario that makes the requests.
//
// What it cannot see: records are decoded with model/coord's own codec, so
// a codec mistake that encode and decode share is invisible; the per-shard
// linearizability model replays the protocol's own step functions, so it
// finds histories no single-shard order explains, not a wrong rule in the
// step functions themselves (the durable rules catch those); and a shard's
// model does not hold its run's status.
package coordcheck
