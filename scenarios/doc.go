// Package scenarios names the worlds shardsim can run: each scenario is a
// topology, a workload, a nemesis and the checkers that judge the run. A run
// is a pure function of (scenario, options, choice stream), so any result can
// be reproduced from its seed or recorded choice bytes.
package scenarios
