// Package simclock is shardsim's deterministic kernel: virtual time, an event
// loop with cancellable timers, actors that handle one event at a time,
// per-node clocks with bounded skew, the Choices stream that is the single
// source of nondeterminism, coroutine tasks for direct-style protocol code,
// and the trace whose blake3 digest identifies a run.
//
// Nothing in this package reads the wall clock, starts a goroutine or uses
// global randomness: a run is a pure function of its inputs and its choices.
package simclock
