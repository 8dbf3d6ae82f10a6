// Package nemesis injects faults into a simulated world: the swarm options a
// run draws (which faults are on and how often), and the actors that carry
// them out (partitions, leader changes, crashes, pauses, clock skew) until the
// heal phase, after which the world must converge.
//
// Every decision is drawn from the nemesis's own Choices fork, so adding a
// fault kind does not shift the workload of old seeds.
package nemesis
