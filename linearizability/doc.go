// Package linearizability judges runs: porcupine models of the simulated
// systems, recorders that turn what the world did into histories, and the
// property checkers named in ../shared/design/PROPERTIES.md.
//
// Checkers only observe. They never feed back into the world, so they may be
// as slow or as parallel as they like (porcupine uses goroutines) without
// touching determinism.
package linearizability
