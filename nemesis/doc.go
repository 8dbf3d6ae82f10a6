// Package nemesis injects faults into a simulated world: the swarm options a
// run draws (which faults are on and how often), and one nemesis actor,
// Chaos, that carries them out until the heal phase, after which the world
// must converge.
//
// Chaos is the one fault mechanism of every world: crash and restart, pause
// and resume, partition and heal, clock jumps and drift, leader changes,
// and the heal that undoes them all. What differs between worlds is only
// the list of Fault kinds it runs each tick (Standard for worlds of one KV
// server; GroupLeaderMoves and NodeOutages for the migration cluster), each
// choosing its victims and striking through the shared mechanism.
// (Request-level faults, lost or late answers, belong to the networks:
// simkv's server and model/migrate/rpc.)
//
// Every decision is drawn from the nemesis's own Choices fork, so adding a
// fault kind does not shift the workload of old seeds.
package nemesis
